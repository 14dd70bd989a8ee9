#!/usr/bin/env bash
# Grade the class with the grader under attack (main's), one lesson after the other, --jobs 2.
#   bash tests/outsider/issue33e/run_class.sh [CLASS_DIR] [LESSONS...]     (LESSONS among 06 02 03 04 07 nbg)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CLASS="${1:-/tmp/class33e}"
shift || true
LESSONS="${*:-06 07 02 03 04 06x nbg}"
GRADER="${GRADER:-/work/main/.venv/bin/course-lib}"
OUT="$HERE/results"
mkdir -p "$OUT"
for l in $LESSONS; do
  start=$(date +%s)
  echo "== $l: $(date -u +%T)"
  if [ "$l" = nbg ]; then
    src="$CLASS/nbg/submitted"; lesson=06
  else
    src="$CLASS/$l"; lesson=${l:0:2}
  fi
  timeout 1500 "$GRADER" grade "$src" --lesson "$lesson" --out "$OUT/grades_$l.csv" --feedback "$OUT/feedback_$l" \
    --jobs 2 --timeout 30 --budget 240 > "$OUT/terminal_$l.txt" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/terminal_$l.txt"
done
