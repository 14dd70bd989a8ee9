"""Print hostile class 33t's table: per submission and exercise, deserved against got, HELD or BROKE.

    python tests/outsider/issue33t/compare.py

Reads /tmp/hostile33t/class/manifest.json and the grader's CSVs and feedback in /tmp/hostile33t/out/. An exercise
passed that the submission does not deserve is BROKE; one it deserves that fails is a WRONG FAIL (an honest
answer failed); anything else HELD. Also: rows and feedback files per student, submissions changed on disk, the
grader's secret anywhere in its output, and the planted modules' markers.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from pathlib import Path

BASE = Path("/tmp/hostile33t")
PASSED = "passed"


def _rows(lesson: str) -> dict:
    path = BASE / "out" / f"lesson{lesson}.csv"
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    header, rows = table[0], table[1:]
    out: dict = {}
    for row in rows:
        out.setdefault(row[0], []).append(dict(zip(header, row)))
    return out


def main() -> int:
    manifest = json.loads((BASE / "class" / "manifest.json").read_text(encoding="utf-8"))
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    counts = {"graded": 0, "ungraded": 0, "held": 0, "broke": 0, "wrong_fail": 0}
    broke, wrong, other = [], [], []
    rows_by_lesson: dict = {}
    print(f"{'submission':26} {'lesson':6} {'deserved':34} {'got':34} verdict")
    for m in manifest:
        lesson = m["lesson"]
        rows = rows_by_lesson.setdefault(lesson, _rows(lesson)).get(m["name"], [])
        data = Path(m["path"]).read_bytes() if Path(m["path"]).exists() else b""
        if hashlib.sha256(data).hexdigest() != m["sha256"]:
            other.append(f"{m['name']}: the submission changed on disk")
        feedback = BASE / "out" / f"feedback{lesson}" / f"{m['name']}.md"
        if not rows:
            counts["ungraded"] += 1
            print(f"{m['name']:26} {lesson:6} {' '.join(m['deserved']):34} {'(no row)':34} UNGRADED")
            continue
        counts["graded"] += 1
        if len(rows) != 1:
            other.append(f"{m['name']}: {len(rows)} rows")
        if not feedback.exists():
            other.append(f"{m['name']}: no feedback file {feedback.name}")
        row = rows[0]
        got = [e for e in m["exercises"] if row.get(f"ex {e}") == PASSED]
        bad = [e for e in got if e not in m["deserved"]]
        missed = [e for e in m["deserved"] if e not in got]
        verdict = "BROKE " + " ".join(bad) if bad else "HELD"
        if missed:
            verdict += "; WRONG FAIL " + " ".join(missed)
        counts["broke" if bad else "held"] += 1
        counts["wrong_fail"] += bool(missed)
        if bad:
            broke.append((m["name"], bad))
        if missed:
            wrong.append((m["name"], missed, {e: row.get(f"ex {e}") for e in missed}))
        print(f"{m['name']:26} {lesson:6} {' '.join(m['deserved']):34} {' '.join(got):34} {verdict}")
    names = {m["name"] for m in manifest}
    for lesson, rows in rows_by_lesson.items():
        for student in rows:
            if student not in names:
                other.append(f"lesson {lesson}: a row for {student!r}, no submission of the manifest")
    leaks = []
    if secret:
        for path in [*(BASE / "out").rglob("*"), *(BASE / "class").rglob("*")]:
            if path.is_file() and secret.encode() in path.read_bytes():
                leaks.append(str(path))
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    logs = sorted(str(p) for p in (BASE / "out").glob("*.log"))
    print()
    print(
        f"graded {counts['graded']}, ungraded {counts['ungraded']}, held {counts['held']}, BROKE {counts['broke']}, "
        f"with a wrong fail {counts['wrong_fail']}"
    )
    for name, bad in broke:
        print(f"  BROKE {name}: {' '.join(bad)}")
    for name, _missed, status in wrong:
        print(f"  WRONG FAIL {name}: {status}")
    print(f"leaks of the grader's secret: {len(leaks)} {leaks[:5]}")
    print(f"planted modules imported (markers): {len(markers)} {markers[:10]}")
    print(f"grader logs: {logs}")
    for line in other:
        print(f"  PROBLEM {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
