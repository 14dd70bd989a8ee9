#!/usr/bin/env bash
# Grade the class written by make_class.py with the real, sandboxed grader, from a folder of planted modules,
# with a secret in the grader's environment. Usage: bash tests/outsider/issue33h/run_class.sh [lesson ...]
# (default: 02 03 04 05 06 07 nbg; then, after `make_class.py --round2`: run_class.sh r2_04 r2_07)
set -u
WT=/work/wt/hostile33h
OUT=/tmp/hostile33h
LESSONS=${*:-"02 03 04 05 06 07 nbg"}
# one secret per class (kept for a second run, so compare.py looks for the one the grader had)
[ -s "$OUT/secret.txt" ] || echo "s3cr3t-$(date +%s)-hostile33h" > "$OUT/secret.txt"
export HOSTILE33H_SECRET="$(cat "$OUT/secret.txt")"
mkdir -p "$OUT/results"
cd "$OUT/plant" || exit 1   # json.py, sitecustomize.py, ... write $OUT/markers/<name> when imported
for L in $LESSONS; do
    if [ "$L" = nbg ]; then
        src="$OUT/nbg/submitted"; lesson=06
    elif [ "${L#r2_}" != "$L" ]; then   # round 2 (make_class.py --round2): r2_04, r2_07
        src="$OUT/class2/${L#r2_}"; lesson=${L#r2_}
    else
        src="$OUT/class/$L"; lesson=$L
    fi
    echo "== $L $(date -u +%T)"
    "$WT/.venv/bin/course-lib" grade "$src" --lesson "$lesson" --root "$WT" \
        --out "$OUT/results/$L.csv" --feedback "$OUT/results/fb$L" --jobs 2 --timeout 60 \
        > "$OUT/results/$L.stdout" 2> "$OUT/results/$L.stderr"
    echo "   exit $? $(date -u +%T)"
done
