#!/usr/bin/env bash
# Grade hostile class 33q with the real grader: --jobs 1, --timeout 60, from a folder of planted modules
# (each writes a marker if the grader imports it) as the current folder, with a secret in the environment.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
WT="$(cd "$HERE/../../.." && pwd)"
BASE=/tmp/hostile33q
CLASS="$BASE/class"
OUT="$BASE/out"
PLANT="$BASE/plant"
MARKERS="$BASE/markers"
ONLY="${*:-}"  # lessons to grade (default: all, from a clean output folder)
if [ -z "$ONLY" ]; then rm -rf "$OUT" "$MARKERS"; fi
rm -rf "$PLANT"
mkdir -p "$OUT" "$PLANT" "$MARKERS"
chmod 777 "$MARKERS"

# planted modules: in the grader's current folder and in every submissions folder
for mod in json sitecustomize usercustomize secrets nbclient nbformat jupyter_client zmq torch numpy course_lib \
    csv subprocess tempfile shutil signal socket ssl typing_extensions traitlets tornado psutil encodings_c33q; do
    body="import os as _o
open('$MARKERS/$mod.' + str(_o.getpid()), 'w').write(__file__)"
    echo "$body" > "$PLANT/$mod.py"
    for lesson in "$CLASS"/*/; do echo "$body" > "$lesson/$mod.py"; done
done

export C33Q_SECRET="c33q-secret-$(date +%s)-planted"
echo "$C33Q_SECRET" > "$BASE/secret.txt"
cd "$PLANT" || exit 1
for lesson_dir in "$CLASS"/*/; do
    lesson="$(basename "$lesson_dir")"
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $lesson "* ]]; then continue; fi
    rm -rf "$OUT/$lesson.csv" "$OUT/feedback_$lesson"
    echo "== lesson $lesson: $(date -u +%H:%M:%S)"
    start=$(date +%s)
    "$WT/.venv/bin/course-lib" grade "$lesson_dir" --lesson "$lesson" --jobs 1 --timeout 60 \
        --out "$OUT/$lesson.csv" --feedback "$OUT/feedback_$lesson" >"$OUT/$lesson.stdout" 2>"$OUT/$lesson.stderr"
    echo "$?" > "$OUT/$lesson.rc"
    echo "   rc $(cat "$OUT/$lesson.rc"), $(($(date +%s) - start)) s"
done
# remove the planted modules from the class folders (the submissions are compared with make_class's output)
for lesson in "$CLASS"/*/; do rm -f "$lesson"/*.py; done
echo "markers: $(ls "$MARKERS" | wc -l)"
grep -rl "$C33Q_SECRET" "$OUT" && echo "SECRET LEAKED" || echo "secret: not in any output"
