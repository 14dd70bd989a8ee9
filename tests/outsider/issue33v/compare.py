"""Print hostile class 33v's table: per submission, the exercises it deserves against those it got, HELD or BROKE.

Also: every student has exactly one row and one feedback file, no two share one, the secret of the grader's
environment appears in no CSV, feedback or log, no planted module was imported, and no submission was modified.
"""

import csv
import hashlib
import json
import sys
from pathlib import Path

BASE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33v")
CLASS, OUT = BASE / "class", BASE / "out"


def main() -> int:
    manifest = json.loads((CLASS / "manifest.json").read_text())
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    rows = {}
    for path in sorted(OUT.glob("L*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                rows.setdefault(row["student"], []).append((path.stem, row))
    print(f"{'submission':32} {'deserved':28} {'got':28} verdict")
    counts = {"HELD": 0, "BROKE": 0, "WRONG-FAIL": 0, "UNGRADED": 0}
    for name, info in manifest.items():
        got_rows = [r for lesson, r in rows.get(name, []) if lesson == f"L{info['lesson']}"]
        deserve = set(info["deserve"])
        if len(got_rows) != 1:
            verdict = "UNGRADED" if not got_rows else "BROKE"
            print(f"{name:32} {','.join(sorted(deserve)):28} {len(got_rows)} rows{'':21} {verdict}")
            counts[verdict] += 1
            continue
        row = got_rows[0]
        got = {k[3:] for k, v in row.items() if k.startswith("ex ") and v == "passed"}
        extra, missing = got - deserve, deserve - got
        verdict = "BROKE" if extra else ("WRONG-FAIL" if missing else "HELD")
        counts[verdict] += 1
        note = ""
        if extra:
            note += " undeserved " + ",".join(sorted(extra))
        if missing:
            note += " missing " + ",".join(sorted(missing))
        print(f"{name:32} {','.join(sorted(deserve)):28} {','.join(sorted(got)):28} {verdict}{note}")
    extra_students = sorted(set(rows) - set(manifest))
    if extra_students:
        print("rows for students not in the manifest:", extra_students)
    print("counts:", counts)
    # feedback files: one per student (its .md, and the same as .html), none shared, none for anyone else
    bad = 0
    for lesson in sorted({info["lesson"] for info in manifest.values()}):
        folder = OUT / f"feedback_L{lesson}"
        stems = sorted(f.stem for f in folder.glob("*.md")) if folder.exists() else []
        names = sorted(n for n, info in manifest.items() if info["lesson"] == lesson)
        if stems != names:
            bad += 1
            print(f"lesson {lesson}: feedback files {stems}, students {names}")
    print("feedback: one file per student" if not bad else f"feedback: {bad} lessons differ")
    # the secret
    leaks = []
    if secret:
        for path in OUT.rglob("*"):
            if path.is_file() and secret in path.read_text(errors="replace"):
                leaks.append(str(path))
    print("secret leaks:", leaks or "none")
    markers = sorted((BASE / "markers").glob("*.imported"))
    print("planted imports:", [m.name for m in markers] or "none")
    # the submissions unmodified
    sums = BASE / "class.sha256.json"
    now = {str(p.relative_to(CLASS)): hashlib.sha256(p.read_bytes()).hexdigest() for p in CLASS.rglob("*.ipynb")}
    if sums.exists():
        before = json.loads(sums.read_text())
        changed = sorted(k for k in before if before[k] != now.get(k))
        print("modified submissions:", changed or "none")
    else:
        sums.write_text(json.dumps(now))
        print("submission hashes recorded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
