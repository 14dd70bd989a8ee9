#!/usr/bin/env bash
# Install what the real-browser test (tests/browser/, pytest -m browser) needs:
# Debian's chromium (apt) and the playwright Python package (pip, into .venv).
# We never run `playwright install`: it downloads a browser build from outside the
# package registries. The test drives /usr/bin/chromium instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi
"$PY" -m pip install --quiet -c constraints.txt playwright
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo missing)"
echo "playwright: $("$PY" -c 'import importlib.metadata as m; print(m.version("playwright"))')"
