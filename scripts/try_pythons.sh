#!/usr/bin/env bash
# Try the course on every Python from 3.10 to 3.13 this machine has (pyenv or python3.X on PATH):
#   bash scripts/try_pythons.sh            (make pythons)
# For each: (1) every source compiles and `import course_lib` gives its version (no torch needed);
# (2) when a CPU build of torch 2.13.0 installs without downloading CUDA (pip's find-links and indexes, no
# PyPI), a venv in build/py<version> with the tested set (-c constraints.txt), the fast unit tests
# (UNIT, default tests/, with PYTEST_ARGS, default: -m "not slow and not browser") and one lesson (LESSON, default 06) under nbval.
# A Python without such a torch is reported as such, not failed: PyPI's torch for Linux is the CUDA build
# (TORCH_FROM_PYPI=1 installs it all the same, torch==2.13.0: about 4.7 GB with its nvidia-* packages).
# Where constraints.txt has no solution for a Python (3.10: numpy 2.4.6, ipython 9, matplotlib 3.11 and others
# need 3.11 or newer), the venv gets pyproject's ranges with torch==2.13.0, and the summary says so.
# Exit 1 when a stage that ran failed.
set -u
cd "$(dirname "$0")/.."
LESSON=${LESSON:-06_masked_attention}
UNIT=${UNIT:-tests}
PYTEST_ARGS=${PYTEST_ARGS:-'-m "not slow and not browser" -q -x'}  # quoted whole: eval splits it below
TORCH_FROM_PYPI=${TORCH_FROM_PYPI:-0}
status=0
summary=()
for minor in ${MINORS:-10 11 12 13}; do  # MINORS="10 12": only those
    py=""
    if command -v pyenv >/dev/null 2>&1; then
        v=$(pyenv versions --bare 2>/dev/null | grep -E "^3\.$minor\.[0-9]+$" | sort -V | tail -1)
        [ -n "$v" ] && py="$(pyenv root)/versions/$v/bin/python3"
    fi
    [ -z "$py" ] && command -v "python3.$minor" >/dev/null 2>&1 && py=$(command -v "python3.$minor")
    if [ -z "$py" ]; then summary+=("3.$minor: not on this machine"); continue; fi
    version=$("$py" -c 'import platform; print(platform.python_version())')
    echo "== Python $version ($py)"
    if ! "$py" -c "
import compileall, sys
ok = all(compileall.compile_dir(d, quiet=1, legacy=False) for d in ('course_lib', 'scripts', 'tests'))
sys.path.insert(0, '.')
import course_lib
print('compiled; course_lib', course_lib.__version__)
sys.exit(0 if ok else 1)"; then
        summary+=("$version: FAILED to compile or import"); status=1; continue
    fi
    probe=$(mktemp -d)
    if [ "$TORCH_FROM_PYPI" != 1 ] && { ! PIP_NO_INDEX=1 "$py" -m pip download --quiet --no-deps --only-binary :all: \
        -d "$probe" "torch==2.13.0" >/dev/null 2>&1 || ! ls "$probe" | grep -q '+cpu'; }; then
        rm -rf "$probe"
        summary+=("$version: compiles and imports; unit tests and lesson NOT run: no CPU torch 2.13.0 for it offline (TORCH_FROM_PYPI=1: PyPI's CUDA build)")
        continue
    fi
    rm -rf "$probe"
    venv="build/py$version"
    start=$(date +%s)
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    versions="constraints.txt"
    if ! "$venv/bin/python" -m pip install --quiet -c constraints.txt -e '.[dev]'; then
        # constraints.txt pins what 3.11 tested; some of those releases need a newer Python than this one
        torch_only=$(mktemp)
        echo "torch==2.13.0" > "$torch_only"
        versions="pyproject's ranges and torch==2.13.0 (constraints.txt has no solution for $version)"
        if ! "$venv/bin/python" -m pip install --quiet -c "$torch_only" -e '.[dev]'; then
            rm -f "$torch_only"; summary+=("$version: install FAILED"); status=1; continue
        fi
        rm -f "$torch_only"
    fi
    installed=$(( $(date +%s) - start ))
    start=$(date +%s)
    export REUSE=0  # run everything here, whatever passed in the clone's own venv (conftest.py)
    eval "\"$venv/bin/python\" -m pytest $UNIT $PYTEST_ARGS"; unit=$?
    unit_s=$(( $(date +%s) - start ))
    start=$(date +%s)
    "$venv/bin/python" -m pytest -q --nbval-lax --nbval-current-env --nbval-cell-timeout=180 "notebooks/$LESSON.ipynb"; lesson=$?
    lesson_s=$(( $(date +%s) - start ))
    [ $unit -eq 0 ] && [ $lesson -eq 0 ] || status=1
    summary+=("$version ($versions): install ${installed}s; unit tests $([ $unit -eq 0 ] && echo passed || echo FAILED) (${unit_s}s); lesson $LESSON $([ $lesson -eq 0 ] && echo passed || echo FAILED) (${lesson_s}s)")
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
