#!/usr/bin/env bash
# Install bubblewrap (Debian's `bubblewrap` package), the sandbox `course-lib grade` runs each
# submission's kernel in. Without it grading still works, says "NO SANDBOX" and applies limits only;
# the tests that need the sandbox are skipped.
set -euo pipefail
if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    if command -v apt-get >/dev/null 2>&1; then
        $SUDO apt-get update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y bubblewrap
    else
        echo "no apt-get: install bubblewrap with your package manager for sandboxed grading" >&2
    fi
fi
echo "bubblewrap: $(bwrap --version 2>/dev/null || echo missing)"
