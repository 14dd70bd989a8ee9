"""Per submission of hostile class 33q: the exercises it deserves vs the ones it got; HELD or BROKE.

Reads /tmp/hostile33q/manifest.json and the grader's CSVs and feedback in /tmp/hostile33q/out.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from pathlib import Path

BASE = Path("/tmp/hostile33q")
PASSED = "passed"


def rows(lesson: str) -> list[dict]:
    path = BASE / "out" / f"{lesson}.csv"
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def unquoted(text: str) -> str:
    return text[1:] if text[:1] == "'" else text


def main() -> int:
    manifest = json.loads((BASE / "manifest.json").read_text())
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    by_lesson: dict[str, list[dict]] = {}
    counts = {"graded": 0, "held": 0, "broke": 0, "wrong_fail": 0, "ungraded": 0}
    lines = []
    for name, info in manifest.items():
        lesson = info["lesson"]
        if lesson not in by_lesson:
            by_lesson[lesson] = rows(lesson)
        mine = [r for r in by_lesson[lesson] if unquoted(r["student"]) == name]
        fb = [p for p in (BASE / "out" / f"feedback_{lesson}").glob("*.md") if p.stem == name]
        problems = []
        if len(mine) != 1:
            problems.append(f"{len(mine)} rows")
        if len(fb) != 1:
            problems.append(f"{len(fb)} feedback files")
        if not mine:
            counts["ungraded"] += 1
            lines.append((name, lesson, ",".join(info["deserve"]), "-", "UNGRADED", "; ".join(problems)))
            continue
        counts["graded"] += 1
        row = mine[0]
        got = [e for e in info["exercises"] if row.get(f"ex {e}") == PASSED]
        extra = [e for e in got if e not in info["deserve"]]
        missing = [e for e in info["deserve"] if e not in got]
        if extra or problems:
            verdict = "BROKE"
            counts["broke"] += 1
        else:
            verdict = "HELD"
            counts["held"] += 1
        note = []
        if extra:
            note.append("undeserved " + ",".join(extra))
        if missing:
            note.append("deserved but failed " + ",".join(missing))
            if info["kind"] in ("honest", "control"):
                counts["wrong_fail"] += 1
        lines.append((name, lesson, ",".join(info["deserve"]), ",".join(got), verdict, "; ".join(note + problems)))
    width = max(len(x[0]) for x in lines)
    print(f"{'submission':{width}}  L   {'deserved':24} {'got':24} verdict  notes")
    for name, lesson, deserve, got, verdict, note in lines:
        print(f"{name:{width}}  {lesson}  {deserve:24} {got:24} {verdict:7}  {note}")
    print()
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    # the submissions must be left as make_class wrote them (no grader writes into them)
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    print(f"planted imports: {len(markers)} {markers[:10]}")
    if secret:
        leaked = [str(p) for p in (BASE / "out").rglob("*") if p.is_file() and secret in p.read_text(errors="replace")]
        print(f"secret leaks: {len(leaked)} {leaked[:5]}")
    digest = hashlib.sha256()
    for p in sorted((BASE / "class").rglob("*.ipynb")):
        digest.update(p.read_bytes())
    print(f"class notebooks sha256 now: {digest.hexdigest()[:16]} (compare with make_class's: {_written()})")
    return 0


def _written() -> str:
    path = BASE / "class.sha256"
    return path.read_text().strip() if path.exists() else "?"


if __name__ == "__main__":
    sys.exit(main())
