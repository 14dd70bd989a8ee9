#!/usr/bin/env bash
# Grade hostile class 33s with the real grader: --jobs 1, --timeout 60, from a folder of planted modules (each
# writes a marker if imported), with a secret variable in the grader's environment. Lessons in order of interest.
# Usage: bash run_class.sh [LESSON ...]   (default: 07 06 05 02 01 03 04)
set -u
WT=/work/wt/hostile33s
BASE=/tmp/hostile33s
CLASS=$BASE/class
OUT=$BASE/out
PLANT=$BASE/plant
MARK=$BASE/markers
SECRET=hostile33s-secret-5b1e0c
GRADER=$WT/.venv/bin/course-lib
LESSONS=${*:-07 06 05 02 01 03 04}

mkdir -p "$OUT" "$MARK" "$PLANT"
MODULES="json sitecustomize usercustomize secrets nbclient nbformat jupyter_client zmq csv tempfile subprocess
  torch numpy course_lib typing traitlets tornado ipykernel IPython logging shutil signal platform"
for m in $MODULES; do
  printf 'open("%s/%s.imported", "a").write(__file__ + "\\n")\n' "$MARK" "$m" >"$PLANT/$m.py"
done
for L in $LESSONS; do  # the submissions' folders get them too
  cp "$PLANT"/*.py "$CLASS/$L/" 2>/dev/null
done
# what the grader must not modify
(cd "$CLASS" && find . -name '*.ipynb' -print0 | sort -z | xargs -0 sha256sum) >"$OUT/before.sha256"

for L in $LESSONS; do
  start=$(date +%s)
  (cd "$PLANT" && env HOSTILE33S_SECRET="$SECRET" AWS_SECRET_ACCESS_KEY="$SECRET" \
    timeout 1500 "$GRADER" grade "$CLASS/$L" --lesson "$L" --out "$OUT/$L.csv" --feedback "$OUT/fb$L" \
    --jobs 1 --timeout 60 >"$OUT/$L.stdout" 2>"$OUT/$L.stderr")
  rc=$?
  echo "lesson $L rc=$rc seconds=$(($(date +%s) - start)) at $(date -u +%H:%M:%S)" | tee -a "$OUT/run.log"
done
(cd "$CLASS" && find . -name '*.ipynb' -print0 | sort -z | xargs -0 sha256sum) >"$OUT/after.sha256"
ls "$MARK" >"$OUT/markers.txt"
echo "markers (planted modules imported): $(wc -l <"$OUT/markers.txt")" | tee -a "$OUT/run.log"
