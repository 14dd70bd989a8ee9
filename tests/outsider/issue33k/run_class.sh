#!/usr/bin/env bash
# Grades the hostile33k class with the real sandboxed grader, from a folder of planted modules, with a secret
# in the grader's environment.  Usage: run_class.sh [lesson ...]   (default: 07 02 04 05 03 06 nbgrader)
set -u
WT=/work/wt/hostile33k
CL=$WT/.venv/bin/course-lib
BASE=/tmp/hostile33k
CWD=$BASE/cwd
MARK=$BASE/markers
mkdir -p "$CWD" "$MARK" "$BASE/out"
# planted modules in the folder the grader starts in: each writes a marker if imported
for m in json sitecustomize usercustomize secrets nbclient nbformat jupyter_client zmq traitlets tornado \
         dask csv hashlib uuid bwrap typing_extensions psutil yaml course_lib_local; do
  cat > "$CWD/$m.py" <<PY
import os, sys
open("$MARK/$m." + str(os.getpid()), "w").write(repr(sys.argv))
PY
done
mkdir -p "$CWD/course_lib" && cp "$CWD/json.py" "$CWD/course_lib/__init__.py" && sed -i 's/json\./course_lib_pkg./' "$CWD/course_lib/__init__.py"
export HOSTILE33K_SECRET=hostile33k-s3cr3t-$(date +%s)
echo "$HOSTILE33K_SECRET" > $BASE/secret.txt
lessons=("$@"); [ ${#lessons[@]} -eq 0 ] && lessons=(07 02 04 05 03 06 nbgrader)
cd "$CWD"
for L in "${lessons[@]}"; do
  if [ "$L" = nbgrader ]; then src=$BASE/nbgrader/submitted; les=06; else src=$BASE/class/$L; les=$L; fi
  out=$BASE/out/$L; rm -rf "$out"; mkdir -p "$out"
  echo "== grading $L ($(date -u +%T))"
  "$CL" grade "$src" --lesson "$les" --root "$WT" --out "$out/grades.csv" --feedback "$out/fb" \
      --jobs 2 --timeout 60 > "$out/stdout.txt" 2> "$out/stderr.txt"
  echo "   exit $? ($(date -u +%T))"
done
