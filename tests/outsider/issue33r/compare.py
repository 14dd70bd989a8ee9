"""Compare what hostile class 33r deserved with what the grader gave; print the table and the checks around it.

Per submission: deserved (manifest.json) vs passed (the lesson's CSV): BROKE when it got a mark it does not
deserve, WRONG-FAIL when an honest answer that deserves a mark did not get it, HELD otherwise (NOT GRADED when
its lesson has no CSV). Also: one row and one feedback file per student, the planted secret anywhere in the
output, markers of planted modules imported, submissions changed by grading, the grader's exit codes.

Usage: python tests/outsider/issue33r/compare.py [CLASS] [OUT]
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path

CLASS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33r/class")
OUT = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("/tmp/hostile33r/out")
PASSED = "passed"


def rows_of(lesson: str) -> list[dict] | None:
    path = OUT / f"{lesson}.csv"
    if not path.exists():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main() -> None:
    manifest = json.loads((CLASS / "manifest.json").read_text())
    lessons = sorted({e["lesson"] for e in manifest.values()})
    rows = {lesson: rows_of(lesson) for lesson in lessons}
    secret_file = OUT / "secret.txt"
    secret = secret_file.read_text().strip() if secret_file.exists() else None
    verdicts: Counter = Counter()
    problems: list[str] = []
    print(f"{'submission':28} {'les':3} {'family':8} {'verdict':11} deserved -> got (undeserved / wrongly failed)")
    for name, entry in manifest.items():
        lesson = entry["lesson"]
        deserved = set(entry["deserved"])
        table = rows[lesson]
        if table is None:
            verdict, got, mine = "NOT GRADED", set(), []
        else:
            mine = [r for r in table if r["student"] == name]
            if len(mine) != 1:
                problems.append(f"{name}: {len(mine)} rows in {lesson}.csv")
            got = {k[3:] for r in mine[:1] for k, v in r.items() if k.startswith("ex ") and v == PASSED}
            extra, missing = got - deserved, deserved - got
            if extra:
                verdict = "BROKE"
            elif missing and entry["family"] == "honest":
                verdict = "WRONG-FAIL"
            else:
                verdict = "HELD"
            feedback = OUT / f"feedback_{lesson}" / f"{name}.md"
            if not feedback.exists():
                problems.append(f"{name}: no feedback file {feedback}")
        verdicts[verdict] += 1
        extra, missing = sorted(got - deserved), sorted(deserved - got)
        note = f"{sorted(deserved)} -> {sorted(got)}"
        if extra or missing:
            note += f"  (undeserved {extra} / not given {missing})"
        print(f"{name:28} {lesson:3} {entry['family']:8} {verdict:11} {note}")
        if table is not None and mine and verdict != "HELD":
            for r in mine[:1]:
                for k, v in r.items():
                    if k.startswith("ex ") and v != PASSED and k[3:] in deserved:
                        print(f"{'':44}{k}: {v}")
    for lesson in lessons:
        table = rows[lesson]
        if table is None:
            continue
        names = Counter(r["student"] for r in table)
        for student, n in names.items():
            if n != 1:
                problems.append(f"{lesson}.csv: student {student!r} has {n} rows")
            if student not in manifest:
                problems.append(f"{lesson}.csv: unexpected student {student!r}")
        fb = OUT / f"feedback_{lesson}"
        files = sorted(p.name for p in fb.glob("*")) if fb.exists() else []
        expected = sorted(f"{n}.md" for n, e in manifest.items() if e["lesson"] == lesson)
        if [f for f in files if f.endswith(".md")] != expected:
            problems.append(f"feedback_{lesson}: {files} != {expected}")
    if secret:
        for path in OUT.rglob("*"):
            if path.is_file() and path.name != "secret.txt":
                if secret in path.read_text(encoding="utf-8", errors="replace"):
                    problems.append(f"LEAK: the planted secret is in {path}")
    markers = OUT / "markers.txt"
    planted = [m for m in markers.read_text().split() if m] if markers.exists() else []
    for m in planted:
        problems.append(f"PLANTED IMPORT: {m}")
    before, after = OUT / "before.sha256", OUT / "after.sha256"
    if before.exists() and after.exists() and before.read_text() != after.read_text():
        problems.append("a submission changed during grading (before.sha256 != after.sha256)")
    rc = OUT / "rc.txt"
    if rc.exists():
        for line in rc.read_text().splitlines():
            lesson, code, seconds = line.split()
            if code != "0":
                problems.append(f"grader exit code {code} for lesson {lesson} after {seconds} s")
    print()
    print("counts:", dict(verdicts), f"of {len(manifest)}")
    print("planted imports:", len(planted), "| secret checked:", bool(secret))
    print("other findings:" if problems else "other findings: none")
    for p in problems:
        print("  -", p)


if __name__ == "__main__":
    main()
