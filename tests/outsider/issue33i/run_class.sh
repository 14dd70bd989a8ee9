#!/bin/bash
# Grade hostile class 33i with the real grader (after make_class.py), started from /tmp/hostile33i/plant with a
# secret in the grader's environment; then compare.py. Usage: bash tests/outsider/issue33i/run_class.sh [folder...]
set -u
WT=/work/wt/hostile33i
TMP=/tmp/hostile33i
OUT=$TMP/out
mkdir -p "$OUT"
if [ ! -s "$TMP/secret.txt" ]; then
  echo "s3cr3t-33i-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" > "$TMP/secret.txt"
fi
export HOSTILE33I_SECRET="$(cat "$TMP/secret.txt")"
FOLDERS=("$@")
if [ ${#FOLDERS[@]} -eq 0 ]; then FOLDERS=(07 06 04 05 02 rows06 nbg); fi
cd "$TMP/plant" || exit 2
for key in "${FOLDERS[@]}"; do
  case $key in
    rows06) src=$TMP/class/rows06; lesson=06 ;;
    nbg) src=$TMP/nbg/submitted; lesson=06 ;;
    *) src=$TMP/class/$key; lesson=$key ;;
  esac
  start=$(date -u +%s)
  echo "$(date -u +%H:%M:%S) grading $key ($src, lesson $lesson)"
  timeout 1800 "$WT/.venv/bin/course-lib" grade "$src" --lesson "$lesson" --root "$WT" --out "$OUT/class_$key.csv" \
    --feedback "$OUT/fb_$key" --jobs 2 --timeout 60 > "$OUT/class_$key.stdout" 2> "$OUT/class_$key.stderr"
  rc=$?
  echo "$key exit $rc, $(( $(date -u +%s) - start )) s" | tee -a "$OUT/exit_codes.txt"
done
"$WT/.venv/bin/python" "$WT/tests/outsider/issue33i/compare.py" --out "$OUT" | tee "$OUT/compare.txt"
