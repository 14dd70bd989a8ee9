#!/usr/bin/env bash
# Grades hostile class 33n with the real sandboxed grader, one pass per folder, --jobs 1.
# Usage: bash run_class.sh [TAG ...]   (TAG: 02 07 06 04 05 06_rows 06_nbgrader 06_flatcourse 06_wave2; default: all, in that order)
# A single notebook: ONE=path/to/x.ipynb ONE_LESSON=06 bash run_class.sh one
set -u
WT=/work/wt/hostile33n
CLASS=/tmp/hostile33n/class
OUTS=/tmp/hostile33n/out
CWD=/tmp/hostile33n/cwd          # the grader is started here: planted modules that leave a marker if imported
MARKS=/tmp/hostile33n/markers
export HOSTILE33N_SECRET="HOSTILE33N_SECRET=s3cr3t-$(date +%s)-do-not-leak"
echo "$HOSTILE33N_SECRET" > /tmp/hostile33n/secret.txt
mkdir -p "$OUTS" "$CWD" "$MARKS"
for mod in json sitecustomize usercustomize secrets nbclient nbformat csv hashlib subprocess jupyter_client \
           course_lib torch numpy bwrap zmq tempfile shutil signal; do
  cat > "$CWD/$mod.py" <<PY
import os
open(os.path.join("$MARKS", "$mod." + str(os.getpid())), "w").write("imported from the grader's current folder\n")
PY
done
mkdir -p "$CWD/course_lib" && cp "$CWD/course_lib.py" "$CWD/course_lib/__init__.py"
declare -A LESSON=([02]=02 [04]=04 [05]=05 [07]=07 [06]=06 [06_rows]=06 [06_wave2]=06 [06_nbgrader]=06 [06_flatcourse]=06)
declare -A FOLDER=([02]=$CLASS/02 [04]=$CLASS/04 [05]=$CLASS/05 [07]=$CLASS/07 [06]=$CLASS/06 [06_rows]=$CLASS/06_rows [06_wave2]=$CLASS/06_wave2
                   [06_nbgrader]=$CLASS/06_nbgrader/submitted [06_flatcourse]=$CLASS/06_flatcourse)
TAGS=("$@"); [ ${#TAGS[@]} -eq 0 ] && TAGS=(02 07 06 04 05 06_rows 06_nbgrader 06_flatcourse 06_wave2)
for tag in "${TAGS[@]}"; do
  if [ "$tag" = one ]; then src="$ONE"; lesson="$ONE_LESSON"; out="$OUTS/one-$(basename "$ONE" .ipynb)"
  else src="${FOLDER[$tag]}"; lesson="${LESSON[$tag]}"; out="$OUTS/$tag"; fi
  rm -rf "$out"; mkdir -p "$out"
  echo "== $tag ($src, lesson $lesson) start $(date -u +%H:%M:%S)"
  ( cd "$CWD" && "$WT/.venv/bin/course-lib" grade "$src" --lesson "$lesson" --root "$WT" --out "$out/grades.csv" \
      --feedback "$out/fb" --jobs 1 --timeout 60 ) > "$out/stdout.txt" 2> "$out/stderr.txt"
  echo "== $tag exit $? end $(date -u +%H:%M:%S)"
done
