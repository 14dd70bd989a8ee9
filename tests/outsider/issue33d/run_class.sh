#!/bin/sh
# Grade the class with the real grader, sandboxed, one run per lesson, --jobs 2; a secret planted in the grader's
# environment (H33D_SECRET) so that a leak can be searched for in every output.
# usage: sh tests/outsider/issue33d/run_class.sh [lesson ...]   (from the worktree's root)
set -u
HERE=tests/outsider/issue33d
OUT=${OUT:-/tmp/h33d/results}
for lesson in ${@:-06 02 03 04 05 07}; do
    mkdir -p "$OUT/$lesson"
    rm -f "$OUT/$lesson/grades.csv"
    ( cd "$HERE/class/$lesson" && H33D_SECRET=hunter2-h33d-secret timeout 1500 ../../../../../.venv/bin/course-lib grade . \
        --lesson "$lesson" --out "$OUT/$lesson/grades.csv" --jobs 2 --timeout 60 ) > "$OUT/$lesson/terminal.txt" 2>&1
    echo "lesson $lesson: exit $?"
done
