#!/usr/bin/env bash
# Grade the seventh hostile class with the real grader, in the sandbox, --jobs 2, one lesson at a time.
#   bash tests/outsider/issue33f/run_class.sh CLASS_DIR GRADES_DIR [ROOT]
# CLASS_DIR: what make_class.py wrote; GRADES_DIR: where NN.csv, NN.csv.log and the feedback go;
# ROOT: the clone whose grader and released exercises are used (default /work/main).
set -u
CLASS=$(realpath -m "${1:?class dir}")
GRADES=$(realpath -m "${2:?grades dir}")
ROOT=${3:-/work/main}
# SNAPSHOT (optional): a folder holding course_lib/ and exercises/ exported from a commit of ROOT
# (git -C ROOT archive COMMIT course_lib exercises | tar -x -C SNAPSHOT): graded with ROOT's venv but that commit's
# grader, so edits in ROOT's working tree during the run change nothing.
SNAPSHOT=${SNAPSHOT:-}
if [ -n "$SNAPSHOT" ]; then
  grader() {
    "$ROOT/.venv/bin/python" -I -c "import sys; sys.path.insert(0, '$SNAPSHOT'); from course_lib.instructor.cli import main; sys.exit(main(sys.argv[1:]))" "$@"
  }
  RELEASE_ROOT="$SNAPSHOT"
else
  grader() { "$ROOT/.venv/bin/course-lib" "$@"; }
  RELEASE_ROOT="$ROOT"
fi
mkdir -p "$GRADES"
export HOSTILE33F_CANARY="canary-$(date +%s)"  # the submissions search for it (l06_env_canary)
rm -f /tmp/hostile33f_cwd_pwned
for dir in "$CLASS"/*/; do
  lesson=$(basename "$dir")
  # lesson 06 is graded from inside its own folder, where json.py, secrets.py, ... are planted; the rest from /tmp
  if [ "$lesson" = 06 ]; then cd "$dir" || exit 1; else cd /tmp || exit 1; fi
  echo "== lesson $lesson: $(ls "$dir" | wc -l) submissions, $(date -u +%H:%M:%S)"
  start=$(date +%s)
  grader grade "$dir" --lesson "$lesson" --out "$GRADES/$lesson.csv" --feedback "$GRADES/feedback-$lesson" \
    --root "$RELEASE_ROOT" --jobs 2 --timeout 60 > "$GRADES/$lesson.stdout" 2> "$GRADES/$lesson.stderr"
  echo "   exit $?, $(( $(date +%s) - start )) s"
done
if [ -e /tmp/hostile33f_cwd_pwned ]; then echo "PLANTED FILE RAN: $(cat /tmp/hostile33f_cwd_pwned)"; else echo "no planted file ran"; fi
