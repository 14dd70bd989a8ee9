#!/usr/bin/env bash
# Grade hostile class 33w with the real grader: --jobs 1, --timeout 60, from a folder of planted modules as the
# grader's current folder, with a secret variable in its environment. Run from anywhere after `make setup sandbox`.
set -u
WT="$(cd "$(dirname "$0")/../../.." && pwd)"
BASE=/tmp/hostile33w
CLASS="$BASE/class"
OUT="$BASE/out"
PLANT="$BASE/planted"
MARK="$BASE/markers"
mkdir -p "$OUT" "$PLANT" "$MARK"
chmod 777 "$MARK" 2>/dev/null || true
for mod in json sitecustomize usercustomize secrets nbclient nbformat csv zmq jupyter_client torch numpy \
    course_lib bubblewrap subprocess tempfile signal logging shutil pathlib typing; do
    cat >"$PLANT/$mod.py" <<PY
import os as _os, sys as _sys
try:
    with open("$MARK/$mod." + str(_os.getpid()), "w") as _f:
        _f.write(repr(_sys.argv))
except OSError:
    pass
# then step aside: the real module, from the rest of sys.path
_here = _os.path.dirname(_os.path.abspath(__file__))
del _sys.modules[__name__]
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
import importlib as _il
_sys.modules[__name__] = _il.import_module(__name__)
PY
done
for dir in "$CLASS"/0?; do  # planted beside the notebooks too: the submissions folder
    cp "$PLANT/json.py" "$PLANT/sitecustomize.py" "$PLANT/secrets.py" "$dir/"
done
export H33W_SECRET="h33w-secret-$(date +%s)-7f3a"
echo "$H33W_SECRET" >"$BASE/secret.txt"
cd "$PLANT" || exit 1
for dir in ${ORDER:-"$CLASS"/0?}; do
    lesson="$(basename "$dir")"
    [ -n "${LESSONS:-}" ] && case " $LESSONS " in *" $lesson "*) ;; *) continue ;; esac
    echo "== lesson $lesson  $(date -u +%H:%M:%S)"
    /usr/bin/time -f "lesson $lesson: %e s" "$WT/.venv/bin/course-lib" grade "$dir" --lesson "$lesson" \
        --out "$OUT/$lesson.csv" --feedback "$OUT/feedback_$lesson" --jobs 1 --timeout 60 \
        >"$OUT/$lesson.stdout" 2>"$OUT/$lesson.stderr"
    echo "exit $? $(tail -1 "$OUT/$lesson.stderr")"
done
echo "== markers (planted modules imported):"
ls "$MARK"
echo "== secret in outputs:"
grep -rl "$H33W_SECRET" "$OUT" "$MARK" || echo "none"
