#!/usr/bin/env bash
# Grade hostile class 33o with the real grader: one `course-lib grade` per lesson folder, --jobs 1, --timeout 60,
# run from a folder of planted modules (each writes a marker if imported) with a secret variable in the
# environment. Output: /tmp/hostile33o/out/lessonNN/{grades.csv,grades_feedback/,grade.log,time}.
# Usage: run_class.sh [lesson ...]   (default: every lesson folder of the class)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CLASS=/tmp/hostile33o/class
OUT=/tmp/hostile33o/out
PLANT=/tmp/hostile33o/plant
MARKERS=/tmp/hostile33o/markers
mkdir -p "$OUT" "$PLANT" "$MARKERS"

# planted modules: the names the grader, its launcher, the kernel and the harness import (and a few Python
# imports at start-up on its own: sitecustomize, usercustomize)
for name in json sitecustomize usercustomize secrets nbclient nbformat jupyter_client zmq ipykernel subprocess \
    signal select selectors tempfile shutil csv html re ast typing numpy torch course_lib traitlets hashlib \
    platform pathlib random socket threading uuid; do
    cat >"$PLANT/$name.py" <<EOF
import os as _os
with open("$MARKERS/$name." + str(_os.getpid()), "w") as _f:
    _f.write("imported from " + __file__ + " cwd " + _os.getcwd())
raise ImportError("planted module $name imported")
EOF
done
# the same trap in every submissions folder (the grader must import nothing from there either)
for lesson_dir in "$CLASS"/lesson*; do
    for name in json sitecustomize secrets nbclient; do
        cp "$PLANT/$name.py" "$lesson_dir/$name.py"
    done
done

export HOSTILE33O_SECRET="s3cr3t-33o-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo "$HOSTILE33O_SECRET" >/tmp/hostile33o/secret.txt
lessons=("$@")
if [ ${#lessons[@]} -eq 0 ]; then
    for d in "$CLASS"/lesson*; do lessons+=("${d##*lesson}"); done
fi
cd "$PLANT" || exit 1
for lesson in "${lessons[@]}"; do
    dest="$OUT/lesson$lesson"
    rm -rf "$dest"
    mkdir -p "$dest"
    start=$(date +%s)
    echo "=== lesson $lesson $(date -u +%H:%M:%S)"
    timeout 1500 "$REPO/.venv/bin/course-lib" grade "$CLASS/lesson$lesson" --lesson "$lesson" \
        --out "$dest/grades.csv" --jobs 1 --timeout 60 >"$dest/grade.log" 2>&1
    echo "exit $? after $(($(date +%s) - start)) s" | tee "$dest/time"
    tail -3 "$dest/grade.log"
done
echo "markers:"
ls -la "$MARKERS"
