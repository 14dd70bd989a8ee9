"""Print hostile class 33s's table: per submission, the exercises it deserves against those it got, HELD/BROKE.

BROKE: a pass it does not deserve (an attack), a control or honest entry graded wrong, no row or not exactly one
feedback file, the secret in a CSV or feedback, a planted module imported, a submission modified.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

BASE = Path("/tmp/hostile33s")
OUT = BASE / "out"
SECRET = "hostile33s-secret-5b1e0c"


def _rows(lesson: str) -> list[dict]:
    path = OUT / f"{lesson}.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _passed(value: str) -> bool:
    return value.strip().lower().startswith("pass")


def main() -> int:
    manifest = json.loads((BASE / "manifest.json").read_text())
    counts = {"graded": 0, "HELD": 0, "BROKE": 0, "ungraded": 0, "wrong fail": 0}
    print(f"{'submission':34} {'kind':8} {'deserves':28} {'got':28} verdict")
    for name, entry in manifest.items():
        lesson = entry["lesson"]
        rows = [r for r in _rows(lesson) if Path(r.get("file", "")).stem == name or r.get("student") == name]
        fb = OUT / f"fb{lesson}"
        feedback = [p for p in fb.glob("*.md") if p.stem == name] if fb.exists() else []  # .html is its twin
        deserves = set(entry["deserves"])
        if not (OUT / f"{lesson}.csv").exists():
            counts["ungraded"] += 1
            print(f"{name:34} {entry['kind']:8} {','.join(sorted(deserves)):28} {'(lesson not graded)':28} -")
            continue
        counts["graded"] += 1
        notes = []
        if len(rows) != 1:
            notes.append(f"{len(rows)} rows")
        if len(feedback) != 1:
            notes.append(f"{len(feedback)} feedback files")
        got = set()
        if rows:
            got = {k[3:] for k, v in rows[0].items() if k.startswith("ex ") and _passed(v or "")}
        undeserved = got - deserves
        missing = deserves - got
        if undeserved:
            notes.append("undeserved pass " + ",".join(sorted(undeserved)))
        if missing and entry["kind"] in ("control", "honest"):
            notes.append("wrongly failed " + ",".join(sorted(missing)))
            counts["wrong fail"] += 1
        broke = bool(undeserved) or len(rows) != 1 or len(feedback) != 1
        if entry["kind"] == "control" and missing:
            broke = True
        verdict = "BROKE" if broke else "HELD"
        if entry["kind"] == "honest":
            verdict = "WRONG-FAIL" if missing else "OK"
            broke = bool(undeserved) or len(rows) != 1 or len(feedback) != 1
            verdict = "BROKE" if broke else verdict
        if verdict in ("HELD", "BROKE"):
            counts[verdict] += 1
        judgement = " (judgement call)" if entry.get("judgement") and undeserved else ""
        print(
            f"{name:34} {entry['kind']:8} {','.join(sorted(deserves)):28} {','.join(sorted(got)):28} "
            f"{verdict}{judgement} {'; '.join(notes)}"
        )
    # leaks, planted imports, modified submissions
    leaks = [str(p) for p in OUT.rglob("*") if p.is_file() and p.suffix in (".csv", ".md", ".txt", ".html", "")]
    leaked = [p for p in leaks if SECRET in Path(p).read_text(errors="replace")]
    leaked = [p for p in leaked if not p.endswith((".stdout", ".stderr"))]
    markers = (OUT / "markers.txt").read_text().split() if (OUT / "markers.txt").exists() else []
    # modified: a submission's bytes differ from what make_class writes for it (deterministic)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from attacks_src import ENTRIES
    from make_class import build

    modified = [
        name
        for name, entry in ENTRIES.items()
        if (BASE / "class" / entry["lesson"] / f"{name}.ipynb").read_text() != json.dumps(build(name, entry), indent=1)
    ]
    print()
    print("counts:", counts)
    print("secret found in:", leaked or "nowhere")
    print("planted modules imported:", markers or "none")
    print("submissions modified:", modified or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
