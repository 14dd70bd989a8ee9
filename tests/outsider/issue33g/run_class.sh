#!/usr/bin/env bash
# Grade the hostile class once with main's grader against main's released exercises, in the sandbox.
# Started from a folder of planted modules (json.py, sitecustomize.py, ...: none may be imported), with a
# secret in the grader's environment that no submission may read back.
#   bash tests/outsider/issue33g/run_class.sh [/tmp/hostile33g/class] [lessons...]
set -u
CLASS=${1:-/tmp/hostile33g/class}
shift || true
LESSONS=${*:-06 02 03 04 05 07 06nb}
GRADER=${GRADER:-/work/main/.venv/bin/course-lib}
ROOT=${ROOT:-/work/main}
OUT=$CLASS/out
mkdir -p "$OUT"
cd "$CLASS/cwd" || exit 2
for lesson in $LESSONS; do
    [ -d "$CLASS/$lesson" ] || continue
    echo "== lesson $lesson $(date -u +%T)"
    start=$(date +%s)
    HOSTILE33G_SECRET=HOSTILE33G_SECRET_d41d8cd98f timeout 1500 "$GRADER" grade "$CLASS/$lesson" --lesson "${lesson:0:2}" \
        --root "$ROOT" --out "$OUT/grades$lesson.csv" --feedback "$OUT/feedback$lesson" --jobs 2 --timeout 60 \
        >"$OUT/stdout$lesson.txt" 2>"$OUT/stderr$lesson.txt"
    echo "exit $? after $(($(date +%s) - start)) s"
done
ls "$CLASS/PWNED" 2>/dev/null && echo "PWNED: a planted module was imported" || echo "no planted module imported"
