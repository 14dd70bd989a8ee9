#!/usr/bin/env bash
# Grade hostile class 33t with the real grader: --jobs 1, --timeout 60, from a folder of planted modules (each
# writes a marker if imported) as the current folder, with a secret variable in the grader's environment.
#   bash tests/outsider/issue33t/run_class.sh [LESSON ...]   (default: 07 04 03 02 05, in that order)
set -u
WT="$(cd "$(dirname "$0")/../../.." && pwd)"
BASE=/tmp/hostile33t
CLASS="$BASE/class"
OUT="$BASE/out"
PLANT="$BASE/plant"
MARKS="$BASE/markers"
mkdir -p "$OUT" "$PLANT" "$MARKS"
[ -s "$BASE/secret.txt" ] || echo "h33t-secret-$(date +%s)-grader-only" >"$BASE/secret.txt"
export H33T_SECRET="$(cat "$BASE/secret.txt")"

plant() {  # a module that leaves a marker when imported
    local dir="$1" name="$2"
    cat >"$dir/$name.py" <<PY
import os as _os
open(_os.path.join("$MARKS", "$name" + "." + str(_os.getpid())), "w").write(__file__)
PY
}
for name in json sitecustomize usercustomize secrets nbclient nbformat jupyter_client csv course_lib numpy \
    zmq traitlets ipykernel IPython bubblewrap harness _pytest yaml; do
    plant "$PLANT" "$name"
done
for d in "$CLASS"/lesson*; do
    for name in json sitecustomize secrets nbclient nbformat course_lib; do plant "$d" "$name"; done
done

LESSONS=("$@")
[ ${#LESSONS[@]} -eq 0 ] && LESSONS=(07 04 03 02 05)
cd "$PLANT" || exit 1
for lesson in "${LESSONS[@]}"; do
    [ -d "$CLASS/lesson$lesson" ] || continue
    echo "=== lesson $lesson: $(date -u +%H:%M:%S)"
    "$WT/.venv/bin/course-lib" grade "$CLASS/lesson$lesson" --lesson "$lesson" --jobs 1 --timeout 60 \
        --out "$OUT/lesson$lesson.csv" --feedback "$OUT/feedback$lesson" --root "$WT" \
        >"$OUT/lesson$lesson.stdout" 2>"$OUT/lesson$lesson.stderr"
    echo "    exit $? at $(date -u +%H:%M:%S)"
    tail -n 3 "$OUT/lesson$lesson.stdout"
done
echo "markers: $(ls "$MARKS" | wc -l)"
grep -rl "$H33T_SECRET" "$OUT" "$CLASS" 2>/dev/null | sed 's/^/LEAK: /'
