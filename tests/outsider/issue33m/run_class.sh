#!/usr/bin/env bash
# Grade the hostile class 33m with the real, sandboxed grader: one pass per lesson folder.
# Usage: bash tests/outsider/issue33m/run_class.sh [folder ...]   (default: every folder of the class)
# The grader is started from /tmp/hostile33m/cwd, which holds planted modules (json.py, sitecustomize.py,
# secrets.py, nbclient.py, ...) that leave a marker in /tmp/hostile33m/markers if anything imports them, and with
# HOSTILE33M_SECRET in its environment: nothing may bring it back into a CSV, feedback file or log.
set -u
ROOT=/work/wt/hostile33m
OUT=/tmp/hostile33m
CLASS=$OUT/class
export HOSTILE33M_SECRET="hs33m-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo "$HOSTILE33M_SECRET" > $OUT/secret.txt
cd $OUT/cwd || exit 1
folders=("$@")
if [ ${#folders[@]} -eq 0 ]; then folders=(04 06nb 06flat 02 05 07 06 03); fi
mkdir -p $OUT/results
for f in "${folders[@]}"; do
  lesson=${f:0:2}
  src=$CLASS/$f
  [ "$f" = "06nb" ] && src=$CLASS/06nb/submitted   # nbgrader's layout: the submitted/ folder itself
  rm -rf $OUT/results/$f; mkdir -p $OUT/results/$f
  echo "=== $f (lesson $lesson) $(date -u +%T)"
  /usr/bin/time -f "%e s" $ROOT/.venv/bin/course-lib grade "$src" --lesson "$lesson" --root $ROOT \
      --out $OUT/results/$f/grades.csv --feedback $OUT/results/$f/fb --jobs 2 --timeout 60 \
      > $OUT/results/$f/stdout.txt 2> $OUT/results/$f/stderr.txt
  echo "exit $?"; tail -3 $OUT/results/$f/stdout.txt
done
echo "secret found in:"; grep -rl "$HOSTILE33M_SECRET" $OUT/results || echo "  (nowhere)"
echo "markers:"; ls $OUT/markers
