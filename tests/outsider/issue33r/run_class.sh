#!/usr/bin/env bash
# Grade hostile class 33r with the real grader (the worktree's .venv), one lesson folder at a time, --jobs 1,
# --timeout 60, from a folder of planted modules (each writes a marker if the grader imports it) as the current
# folder, with a planted secret variable in the grader's environment. Results in /tmp/hostile33r/out.
# Usage: tests/outsider/issue33r/run_class.sh [LESSON ...]   (default: every lesson folder of the class)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
WT="$(cd "$HERE/../../.." && pwd)"
CLASS=/tmp/hostile33r/class
OUT=/tmp/hostile33r/out
PLANT=/tmp/hostile33r/plant
MARKERS=/tmp/hostile33r/markers
mkdir -p "$OUT" "$PLANT" "$MARKERS"

# planted modules: a marker, then the real module (so an import by the grader is seen, not a crash)
for mod in json sitecustomize usercustomize secrets nbclient nbformat torch numpy course_lib jupyter_client \
    subprocess csv signal tempfile shutil pathlib typing enum re zmq traitlets IPython ipykernel; do
    cat >"$PLANT/$mod.py" <<EOF
import os as _os, sys as _sys
open("$MARKERS/$mod." + str(_os.getpid()), "w").write(repr(_sys.argv))
_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if p not in ("", ".", _here)]
del _sys.modules[__name__]
__import__("$mod")
EOF
done
mkdir -p "$PLANT/course_lib" && cp "$PLANT/course_lib.py" "$PLANT/course_lib/__init__.py"

SECRET="hostile33r-secret-$(date +%s%N | sha256sum | cut -c1-16)"
echo "$SECRET" >"$OUT/secret.txt"

LESSONS=("$@")
if [ ${#LESSONS[@]} -eq 0 ]; then
    mapfile -t LESSONS < <(cd "$CLASS" && ls -d [0-9][0-9] | sort)
fi
(cd "$CLASS" && find . -name '*.ipynb' -type f -exec sha256sum {} + | sort) >"$OUT/before.sha256"
for lesson in "${LESSONS[@]}"; do
    start=$(date +%s)
    echo "== lesson $lesson start $(date -u +%H:%M:%S)" | tee -a "$OUT/run.log"
    (
        cd "$PLANT" &&
            env HOSTILE33R_SECRET="$SECRET" \
                timeout --signal=TERM --kill-after=30 1500 \
                "$WT/.venv/bin/course-lib" grade "$CLASS/$lesson" --lesson "$lesson" \
                --out "$OUT/$lesson.csv" --feedback "$OUT/feedback_$lesson" --jobs 1 --timeout 60
    ) >"$OUT/$lesson.stdout" 2>"$OUT/$lesson.stderr"
    rc=$?
    echo "== lesson $lesson rc=$rc seconds=$(($(date +%s) - start))" | tee -a "$OUT/run.log"
    echo "$lesson $rc $(($(date +%s) - start))" >>"$OUT/rc.txt"
done
(cd "$CLASS" && find . -name '*.ipynb' -type f -exec sha256sum {} + | sort) >"$OUT/after.sha256"
ls "$MARKERS" >"$OUT/markers.txt"
echo "markers: $(wc -l <"$OUT/markers.txt")"
