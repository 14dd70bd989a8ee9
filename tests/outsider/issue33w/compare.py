"""Print hostile class 33w's table: per submission, deserved vs got, HELD / BROKE, and the grader-level checks."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

BASE = Path("/tmp/hostile33w")
CLASS, OUT = BASE / "class", BASE / "out"


def _rows(lesson: str) -> dict[str, list[dict]]:
    path = OUT / f"{lesson}.csv"
    rows: dict[str, list[dict]] = {}
    if not path.exists():
        return rows
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            rows.setdefault(row["student"].lstrip("'"), []).append(row)
    return rows


def main() -> None:
    manifest = json.loads((CLASS / "manifest.json").read_text())
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    counts = {"graded": 0, "HELD": 0, "BROKE": 0, "WRONGLY FAILED": 0, "UNGRADED": 0}
    print(f"{'submission':38} {'deserved':28} {'got':28} verdict")
    for name, m in manifest.items():
        rows = _rows(m["lesson"])
        mine = [r for student, rs in rows.items() for r in rs if student == name or Path(r["file"]).stem == name]
        notes = []
        if not rows:
            print(f"{name:38} {'':28} {'(lesson not graded)':28} UNGRADED")
            counts["UNGRADED"] += 1
            continue
        if len(mine) != 1:
            notes.append(f"BROKE: {len(mine)} rows")
        got = []
        if mine:
            row = mine[0]
            got = [e for e in m["exercises"] if row.get(f"ex {e}", "").lower().startswith("pass")]
        path = CLASS / m["lesson"] / f"{name}.ipynb"
        if hashlib.sha256(path.read_bytes()).hexdigest() != m["sha256"]:
            notes.append("BROKE: submission modified")
        folder = OUT / f"feedback_{m['lesson']}"
        feedback = [p for p in folder.glob("*.md") if p.stem == name]  # one .md (and its .html) per student
        if len(feedback) != 1:
            notes.append(f"BROKE?: {len(feedback)} feedback files")
        undeserved = sorted(set(got) - set(m["deserved"]))
        wrongly = sorted(set(m["deserved"]) - set(got))
        if undeserved:
            notes.append("BROKE: passed " + ",".join(undeserved))
        if wrongly:
            notes.append("wrongly failed " + ",".join(wrongly))
        counts["graded"] += 1
        if any(n.startswith("BROKE:") for n in notes):
            verdict = "BROKE"
        elif wrongly and (not name.startswith(("a", "r")) or set(m["deserved"]) == set(m["exercises"])):
            verdict = "WRONGLY FAILED"
        else:
            verdict = "HELD"
        counts[verdict] += 1
        extra = "; ".join(n for n in notes if not n.startswith(verdict)) if notes else ""
        print(f"{name:38} {','.join(m['deserved']) or '-':28} {','.join(got) or '-':28} {verdict} {extra}")
    print()
    print("counts:", counts)
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    print("planted modules imported:", markers or "none")
    if secret:
        leaks = [str(p) for p in OUT.rglob("*") if p.is_file() and secret in p.read_text(errors="replace")]
        print("secret leaked into:", leaks or "none")
    names = [p.name for lesson in sorted({m["lesson"] for m in manifest.values()})
             for p in (OUT / f"feedback_{lesson}").glob("*")]  # fmt: skip
    print("feedback files:", len(names), "distinct:", len(set(names)))


if __name__ == "__main__":
    main()
