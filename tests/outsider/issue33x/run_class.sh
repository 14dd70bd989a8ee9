#!/usr/bin/env bash
# Grade hostile class 33x with the real grader: one run per lesson, --jobs 1, --timeout 60, from a folder of planted
# modules (each writes a marker if imported) as the grader's current folder, with a secret variable in its
# environment. Results go to /tmp/hostile33x/out/<lesson>/.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
WT="$(cd "$HERE/../../.." && pwd)"
BASE=/tmp/hostile33x
CLASS="$BASE/class"
OUT="$BASE/out"
PLANT="$BASE/plant"
MARKERS="$BASE/markers"
mkdir -p "$OUT" "$PLANT" "$MARKERS"
for mod in json sitecustomize usercustomize secrets nbclient nbformat torch numpy course_lib zmq jupyter_client \
    ipykernel csv ast pathlib typing encodings re os_helper dask pickle tempfile; do
    cat >"$PLANT/$mod.py" <<EOF
import os as _os
open("$MARKERS/$mod." + str(_os.getpid()), "w").write("imported from " + __file__)
EOF
done
# the same planted modules in the submissions folders too (the grader must import nothing from there)
for d in "$CLASS"/0*; do
    cp "$PLANT"/json.py "$PLANT"/sitecustomize.py "$PLANT"/secrets.py "$PLANT"/nbclient.py "$d/" 2>/dev/null
done
python3 - "$CLASS" "$BASE/hashes.json" <<'PY'
import hashlib, json, sys
from pathlib import Path
root = Path(sys.argv[1])
json.dump({str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.ipynb")}, open(sys.argv[2], "w"))
PY
export HOSTILE33X_SECRET="s3cr3t-33x-$(date +%s)"
echo "$HOSTILE33X_SECRET" >"$BASE/secret.txt"
cd "$PLANT" || exit 1
for d in "$CLASS"/0*; do
    lesson="$(basename "$d")"
    mkdir -p "$OUT/$lesson"
    echo "=== lesson $lesson $(date -u +%T)"
    start=$(date +%s)
    timeout 1500 "$WT/.venv/bin/course-lib" grade "$d" --lesson "$lesson" --jobs 1 --timeout 60 \
        --out "$OUT/$lesson/grades.csv" --feedback "$OUT/$lesson/feedback" >"$OUT/$lesson/stdout.txt" \
        2>"$OUT/$lesson/stderr.txt"
    echo "exit $? after $(($(date +%s) - start)) s" | tee "$OUT/$lesson/exit.txt"
done
echo "markers:"
ls "$MARKERS"
