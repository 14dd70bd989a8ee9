#!/bin/bash
# Grade the hostile class 33l with the real, sandboxed grader, started from a folder of planted modules, with a
# secret in its environment. Usage: run_class.sh [folder ...]   (default: every folder of the class)
# Results: /tmp/hostile33l/results/<folder>/grades.csv, fb/, run.log
set -u
WT=/work/wt/hostile33l
CL=/tmp/hostile33l/class
RES=/tmp/hostile33l/results
export HOSTILE33L_SECRET="HOSTILE33L-s3cr3t-$(date +%s)-instructor-only"
echo "$HOSTILE33L_SECRET" > /tmp/hostile33l/secret.txt
mkdir -p "$RES"
cd /tmp/hostile33l/cwd || exit 2   # the planted folder: json.py, sitecustomize.py, secrets.py, nbclient.py, ...
folders=("$@")
[ ${#folders[@]} -eq 0 ] && folders=(06 04 02 03 dos_nbg06 dos_flat06 07 resume06 nbg06 05 02w2 02w3 07w2 07w3)
for f in "${folders[@]}"; do
  if [ "$f" = resume06 ]; then
    # interrupted after its first row (Ctrl-C: SIGINT to the grader's process group), then the same call again
    out="$RES/$f"; rm -rf "$out"; mkdir -p "$out"
    echo "=== $f (lesson 06, interrupted then resumed) $(date -u +%T)"
    setsid "$WT/.venv/bin/course-lib" grade "$CL/resume06" --lesson 06 --root "$WT" --out "$out/grades.csv" \
      --feedback "$out/fb" --jobs 1 --timeout 60 > "$out/run1.log" 2>&1 &
    pid=$!
    for i in $(seq 1 3000); do
      [ "$(cat "$out/grades.csv" 2>/dev/null | wc -l)" -ge 2 ] && break
      sleep 0.2
    done
    # a background job of a script ignores SIGINT, so the interruption is a SIGTERM to the grader's process group
    # (rows already written stay: each is flushed and fsynced as it is written)
    kill -TERM -- -"$pid" 2>/dev/null; wait "$pid"; echo "first run ended ($?) with $(($(wc -l < "$out/grades.csv") - 1)) row(s)" | tee -a "$out/run.log"
    "$WT/.venv/bin/course-lib" grade "$CL/resume06" --lesson 06 --root "$WT" --out "$out/grades.csv" \
      --feedback "$out/fb" --jobs 1 --timeout 60 >> "$out/run.log" 2>&1
    echo "exit $? $(date -u +%T)" | tee -a "$out/run.log"
    continue
  fi
  case "$f" in
    nbg06) src="$CL/nbg06/submitted"; lesson=06 ;;
    dos_nbg06) src="$CL/dos_nbg06/submitted"; lesson=06 ;;
    dos_flat06) src="$CL/dos_flat06"; lesson=06 ;;
    *) src="$CL/$f"; lesson="${f:0:2}" ;;
  esac
  out="$RES/$f"
  rm -rf "$out"; mkdir -p "$out"
  echo "=== $f (lesson $lesson) $(date -u +%T)"
  "$WT/.venv/bin/course-lib" grade "$src" --lesson "$lesson" --root "$WT" --out "$out/grades.csv" \
    --feedback "$out/fb" --jobs 2 --timeout 60 > "$out/run.log" 2>&1
  echo "exit $? $(date -u +%T)" | tee -a "$out/run.log"
done
echo "planted markers:"; ls /tmp/hostile33l/markers/ 2>/dev/null
