#!/usr/bin/env bash
# Install what the real-browser test (tests/browser/, pytest -m browser) needs:
# Debian's chromium (apt), the playwright Python package (pip, into .venv) and axe-core, the
# accessibility engine the site's test runs in each page (npm, into .venv/node_modules; never a CDN).
# We never run `playwright install`: it downloads a browser build from outside the
# package registries. The test drives /usr/bin/chromium instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}  # where tests/browser/conftest.py looks for it

if [ ! -x "$CHROMIUM" ] && ! command -v apt-get >/dev/null 2>&1; then
    # macOS, Fedora, ...: say what will not run instead of failing `make test` at its first step
    echo "no apt-get here: chromium and axe-core are not installed, so the real-browser tests (pytest -m browser)" >&2
    echo "will be skipped (make test-more lists them). To run them: install chromium at $CHROMIUM and npm, then" >&2
    echo "rm .venv/.browser" >&2
    exit 0
fi
if [ ! -x "$CHROMIUM" ]; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi
"$PY" -m pip install --quiet -c constraints.txt playwright
AXE_VERSION=4.14.1
VENV_DIR=$(dirname "$(dirname "$PY")")
if [ ! -f "$VENV_DIR/node_modules/axe-core/axe.min.js" ] || ! grep -q "axe v$AXE_VERSION" "$VENV_DIR/node_modules/axe-core/axe.min.js"; then
    if ! command -v npm >/dev/null && ! command -v apt-get >/dev/null 2>&1; then
        echo "no npm and no apt-get: axe-core is not installed, the accessibility checks of the browser tests are skipped" >&2
        exit 0
    fi
    if ! command -v npm >/dev/null; then
        if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
        $SUDO apt-get update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y npm
    fi
    npm install --prefix "$VENV_DIR" --no-save --no-audit --no-fund --silent "axe-core@$AXE_VERSION"
fi
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo missing)"
echo "playwright: $("$PY" -c 'import importlib.metadata as m; print(m.version("playwright"))')"
echo "axe-core: $(head -1 "$VENV_DIR/node_modules/axe-core/axe.min.js" | sed 's|/\*! axe v||')"
