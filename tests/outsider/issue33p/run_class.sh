#!/usr/bin/env bash
# Grade hostile class 33p with the real grader: --jobs 1 --timeout 60, from a folder of planted modules (each
# writes a marker if imported) as the current folder, a secret variable in the grader's environment, the same
# modules planted beside the submissions. Writes /tmp/hostile33p/out/<lesson>/{grades.csv,feedback/,log.txt}.
set -u
WT="$(cd "$(dirname "$0")/../../.." && pwd)"
BASE=/tmp/hostile33p
CLASS="$BASE/class"
OUT="$BASE/out"
PLANT="$BASE/planted"
MARKS="$BASE/markers"
export HOSTILE33P_SECRET="s3cret-33p-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
echo "$HOSTILE33P_SECRET" >>"$BASE/secret.txt"
if [ -z "${KEEP:-}" ]; then rm -rf "$OUT" "$MARKS"; fi
rm -rf "$PLANT"
mkdir -p "$OUT" "$PLANT" "$MARKS"
MODULES="json sitecustomize usercustomize secrets nbclient nbformat jupyter_client ipykernel zmq tempfile csv
  shutil subprocess signal torch numpy pandas sympy course_lib traitlets tornado asyncio logging bubblewrap typing"
plant() {  # plant <folder>
  for m in $MODULES; do
    printf 'import os as _os\nopen(%s, "a").write(%s)\n' \
      "\"$MARKS/$m.imported\"" "\"imported from $1 by pid \" + str(_os.getpid()) + \"\\n\"" >"$1/$m.py"
  done
}
plant "$PLANT"
for dir in "$CLASS"/*/; do plant "$dir"; done
# the submissions' digests before grading (the grader must not modify them)
(cd "$CLASS" && find . -name '*.ipynb' -type f -print0 | sort -z | xargs -0 sha256sum) >"$BASE/before.sha256"
LESSONS="${LESSONS:-02 06 05 07 01 03}"
for lesson in $LESSONS; do
  rm -rf "${OUT:?}/$lesson"
  mkdir -p "$OUT/$lesson"
  echo "== lesson $lesson start $(date -u +%T)"
  start=$(date +%s)
  (cd "$PLANT" && timeout 1500 "$WT/.venv/bin/course-lib" grade "$CLASS/$lesson" --lesson "$lesson" \
    --out "$OUT/$lesson/grades.csv" --feedback "$OUT/$lesson/feedback" --jobs 1 --timeout 60) \
    >"$OUT/$lesson/log.txt" 2>&1
  echo "$?" >"$OUT/$lesson/rc"
  echo "== lesson $lesson rc $(cat "$OUT/$lesson/rc") in $(($(date +%s) - start)) s"
done
(cd "$CLASS" && find . -name '*.ipynb' -type f -print0 | sort -z | xargs -0 sha256sum) >"$BASE/after.sha256"
echo "== done $(date -u +%T)"
