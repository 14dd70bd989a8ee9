#!/usr/bin/env bash
# Grade hostile class 33v with the real grader: one run per lesson, --jobs 1 --timeout 60, from a folder of planted
# modules (each writes a marker if imported) as the current folder, a secret variable in the grader's environment.
set -u
WT=$(cd "$(dirname "$0")/../../.." && pwd)
BASE=/tmp/hostile33v
CLASS=$BASE/class
OUT=$BASE/out
PLANT=$BASE/plant
MARK=$BASE/markers
mkdir -p "$OUT" "$PLANT" "$MARK"
for mod in json sitecustomize usercustomize secrets nbclient nbformat torch numpy course_lib jupyter_client zmq \
    ipykernel traitlets subprocess_tee bubblewrap csv pathlib typing enum ast; do
    printf 'import os\nopen(%s, "a").write("imported from " + os.getcwd() + "\\n")\n' \
        "\"$MARK/$mod.imported\"" >"$PLANT/$mod.py"
done
export HOSTILE33V_SECRET="s3cret-33v-$(date +%s)"
echo "$HOSTILE33V_SECRET" >"$BASE/secret.txt"
python3 "$WT/tests/outsider/issue33v/compare.py" "$BASE" >/dev/null  # records the notebooks' hashes
cd "$PLANT" || exit 1
for dir in "$CLASS"/L*; do
    lesson=${dir##*/L}
    target=$dir
    [ -d "$dir/submitted" ] && target=$dir/submitted  # nbgrader's layout
    cp "$PLANT"/*.py "$target"/ 2>/dev/null || true  # planted beside the notebooks too
    echo "== lesson $lesson $(date -u +%H:%M:%S)"
    start=$(date +%s)
    timeout 1500 "$WT/.venv/bin/course-lib" grade "$target" --lesson "$lesson" --out "$OUT/L$lesson.csv" \
        --feedback "$OUT/feedback_L$lesson" --jobs 1 --timeout 60 >"$OUT/L$lesson.stdout" 2>"$OUT/L$lesson.stderr"
    echo "   exit $? after $(($(date +%s) - start)) s"
    rm -f "$target"/*.py
done
echo "markers:"; ls -la "$MARK"
