#!/usr/bin/env bash
# Install bubblewrap (Debian's `bubblewrap` package), the sandbox `course-lib grade` runs each
# submission's kernel in. Without a working one `course-lib grade` refuses to run student code (unless
# the instructor passes --no-sandbox), and the tests that need the sandbox are skipped.
# `course-lib doctor --for instructor` makes a trial run and says whether it works here (in a container,
# user namespaces must be allowed too).
set -euo pipefail
if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    if command -v apt-get >/dev/null 2>&1; then
        $SUDO apt-get update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y bubblewrap
    else
        echo "no apt-get here: bubblewrap is not installed, so the tests that grade in the sandbox are skipped (the" >&2
        echo "test run ends with what it skipped, by reason) and \`course-lib grade\` refuses to run. Install" >&2
        echo "bubblewrap with your package manager (dnf install bubblewrap; none on macOS), then rm .venv/.sandbox" >&2
    fi
fi
echo "bubblewrap: $(bwrap --version 2>/dev/null || echo missing)"
