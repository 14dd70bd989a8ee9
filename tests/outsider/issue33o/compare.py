"""Print hostile class 33o's table: per submission, the exercises it deserved against those it got.

BROKE: a mark it does not deserve (got - deserved), an untouched notebook above 0, not exactly one row, not
exactly one feedback (a .md and its .html), a notebook changed by the grader. UNDER: a deserved mark not given
(an honest answer wrongly failed, or an attack that only cost its author). Then the leaks: the secret variable in
any output, the planted modules' markers.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

CLASS = Path("/tmp/hostile33o/class")
OUT = Path("/tmp/hostile33o/out")
MARKERS = Path("/tmp/hostile33o/markers")


def rows_of(lesson: str) -> list[dict]:
    path = OUT / f"lesson{lesson}" / "grades.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def main() -> int:
    manifest = json.loads((CLASS / "manifest.json").read_text())
    counts = Counter()
    lines = []
    for name, m in manifest.items():
        lesson = m["lesson"]
        folder = OUT / f"lesson{lesson}"
        if not (folder / "grades.csv").exists():
            counts["ungraded"] += 1
            lines.append((name, lesson, m["kind"], "-", "-", "UNGRADED", "no CSV for this lesson"))
            continue
        rows = [r for r in rows_of(lesson) if Path(r.get("file", "")).stem == name or r.get("student") == name]
        feedback = sorted((folder / "grades_feedback").glob(f"{name}.*"))
        notes = []
        if len(rows) != 1:
            notes.append(f"{len(rows)} rows")
        if [p.suffix for p in feedback] != [".html", ".md"]:
            notes.append(f"feedback files {[p.name for p in feedback]}")
        text = Path(m["path"]).read_text() if Path(m["path"]).exists() else ""
        if hashlib.sha256(text.encode()).hexdigest() != m["sha256"]:
            notes.append("notebook changed")
        got = sorted(k[3:] for k, v in (rows[0] if rows else {}).items() if k.startswith("ex ") and v == "passed")
        deserved = sorted(m["deserved"])
        extra = sorted(set(got) - set(deserved))
        missing = sorted(set(deserved) - set(got))
        if extra:
            notes.append(f"undeserved {extra}")
        if m["kind"] == "control" and m["intent"] == "untouched" and rows and rows[0].get("score") not in ("0", ""):
            notes.append(f"untouched scored {rows[0].get('score')}")
        broke = bool(notes)
        verdict = "BROKE" if broke else "HELD"
        if missing:
            verdict += " UNDER"
            notes.append(f"deserved but not given {missing}")
        counts[verdict.split()[0]] += 1
        counts["under"] += bool(missing)
        lines.append((name, lesson, m["kind"], ",".join(deserved), ",".join(got), verdict, "; ".join(notes)))
    width = max(len(x[0]) for x in lines)
    print(f"{'submission':{width}}  L   kind     {'deserved':24} {'got':24} verdict      notes")
    for name, lesson, kind, deserved, got, verdict, note in sorted(lines, key=lambda x: (x[1], x[0])):
        print(f"{name:{width}}  {lesson}  {kind:8} {deserved:24} {got:24} {verdict:12} {note}")
    print()
    print("counts:", dict(counts))
    secret_file = Path("/tmp/hostile33o/secret.txt")
    secret = secret_file.read_text().strip() if secret_file.exists() else ""
    leaks = []
    if secret:
        for path in OUT.rglob("*"):
            if path.is_file() and secret in path.read_text(errors="replace"):
                leaks.append(str(path))
        for path in OUT.rglob("*"):  # the variable's name alone, in a student's output
            if path.is_file() and re.search("HOSTILE33O", path.read_text(errors="replace")):
                leaks.append(f"{path} (the variable's name)")
    print("secret leaks:", sorted(set(leaks)) or "none")
    markers = sorted(p.name for p in MARKERS.glob("*")) if MARKERS.exists() else []
    print("planted imports:", markers or "none")
    crashes = [
        str(p)
        for p in OUT.rglob("grade.log")
        if re.search(r"Traceback \(most recent call last\)", p.read_text(errors="replace"))
    ]
    print("grader tracebacks in its output:", crashes or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
