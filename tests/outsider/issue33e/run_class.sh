#!/usr/bin/env bash
# Grade the class with the grader under attack (main's), one lesson after the other, --jobs 2.
#   bash tests/outsider/issue33e/run_class.sh [CLASS_DIR] [LESSONS...]
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CLASS="${1:-/tmp/class33e}"
shift || true
LESSONS="${*:-06 02 03 04 07}"
GRADER="${GRADER:-/work/main/.venv/bin/course-lib}"
OUT="$HERE/results"
mkdir -p "$OUT"
for l in $LESSONS; do
  start=$(date +%s)
  echo "== lesson $l: $(date -u +%T)"
  timeout 1500 "$GRADER" grade "$CLASS/$l" --lesson "$l" --out "$OUT/grades_$l.csv" --feedback "$OUT/feedback_$l" \
    --jobs 2 --timeout 30 --budget 300 > "$OUT/terminal_$l.txt" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/terminal_$l.txt"
done
