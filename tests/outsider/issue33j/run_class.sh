#!/usr/bin/env bash
# Grade class 33j with the real grader, one folder at a time, started from the plant folder with a secret
# exported. Writes /tmp/hostile33j/out/<name>.csv, feedback folders, logs and times.tsv.
set -u
WT=/work/wt/hostile33j
H=/tmp/hostile33j
OUT=$H/out
rm -rf "$OUT"
mkdir -p "$OUT" "$H/planted"
export HOSTILE33J_SECRET="s3cr3t-33j-$(date +%s)-do-not-leak"
echo "$HOSTILE33J_SECRET" >"$OUT/secret.txt"
printf 'name\tlesson\texit\tseconds\n' >"$OUT/times.tsv"
cd "$H/plant" || exit 1
run() { # name lesson folder
  local name=$1 lesson=$2 folder=$3 start end rc
  start=$(date +%s)
  "$WT/.venv/bin/course-lib" grade "$folder" --lesson "$lesson" --root "$WT" --out "$OUT/$name.csv" \
    --feedback "$OUT/fb_$name" --jobs 2 --timeout 60 >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
  rc=$?
  end=$(date +%s)
  printf '%s\t%s\t%s\t%s\n' "$name" "$lesson" "$rc" "$((end - start))" | tee -a "$OUT/times.tsv"
}
run rows 06 "$H/class/06rows"
run nbgrader 06 "$H/class/06nbgrader/submitted"
run l05 05 "$H/class/05"
run l06 06 "$H/class/06"
run l02 02 "$H/class/02"
run l03 03 "$H/class/03"
run l04 04 "$H/class/04"
run l07 07 "$H/class/07"
git -C "$WT" rev-parse HEAD >"$OUT/graded_commit.txt"
ls "$H/planted" >"$OUT/planted.txt"
