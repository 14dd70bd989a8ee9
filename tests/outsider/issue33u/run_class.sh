#!/usr/bin/env bash
# Grade hostile class 33u with the real grader: one run per lesson, --jobs 1, --timeout 60, from a folder of
# planted modules (each writes a marker if imported) as the current folder, with a secret in the environment.
# Usage: bash run_class.sh [L01 L03 ...]   (default: every lesson folder of the class)
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WT="$(cd "$HERE/../../.." && pwd)"
BASE=/tmp/hostile33u
CLASS="$BASE/class"
PLANT="$BASE/plant"
MARKERS="$BASE/markers"
OUT="$BASE/out"
SECRET="$(cat "$BASE/out/secret.txt" 2>/dev/null || echo "S3CRET-33u-$(date +%s)-do-not-leak")"
mkdir -p "$PLANT" "$MARKERS" "$OUT"
echo "$SECRET" >"$OUT/secret.txt"

# planted modules: each notes that it was imported (and by whom), then hands over to the real module
for mod in json sitecustomize usercustomize secrets nbclient nbformat jupyter_client ipykernel zmq numpy torch \
    course_lib_helper typing_extensions traitlets tornado pexpect psutil bubblewrap; do
    cat >"$PLANT/$mod.py" <<EOF
import os as _os, sys as _sys
with open("$MARKERS/$mod." + str(_os.getpid()), "w") as _f:
    _f.write(" ".join(_sys.argv) + "\\n" + _os.getcwd() + "\\n")
_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
del _sys.modules[__name__]
import importlib as _importlib
try:
    _real = _importlib.import_module("$mod")
    globals().update(vars(_real))
except ImportError:
    pass
EOF
done
# the same planted modules beside the notebooks (the submissions folder)
for d in "$CLASS"/L0*; do
    cp "$PLANT"/*.py "$d"/
done

lessons=("$@")
if [ ${#lessons[@]} -eq 0 ]; then
    lessons=()
    for d in "$CLASS"/L0*; do lessons+=("$(basename "$d")"); done
fi

cd "$PLANT" || exit 1
for L in "${lessons[@]}"; do
    NN="${L#L}"
    echo "=== $(date -u +%H:%M:%S) grading $L"
    start=$(date +%s)
    env HOSTILE33U_SECRET="$SECRET" AWS_SECRET_ACCESS_KEY="$SECRET" \
        "$WT/.venv/bin/course-lib" grade "$CLASS/$L" --lesson "$NN" --out "$OUT/$L.csv" \
        --feedback "$OUT/feedback_$L" --jobs 1 --timeout 60 >"$OUT/$L.stdout" 2>"$OUT/$L.stderr"
    echo "exit $? after $(($(date +%s) - start)) s" | tee "$OUT/$L.exit"
done
echo "markers: $(ls "$MARKERS" | wc -l)"
