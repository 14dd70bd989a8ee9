"""Print hostile class 33p's table: per submission, deserved vs got, HELD / BROKE / WRONG-FAIL.

Reads /tmp/hostile33p/manifest.json and /tmp/hostile33p/out/<lesson>/{grades.csv,feedback/}; also the leak of the
planted secret, the planted modules' markers and the submissions' digests before and after grading.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

BASE = Path("/tmp/hostile33p")
PASSED = "passed"


def rows_of(lesson: str) -> list[dict] | None:
    path = BASE / "out" / lesson / "grades.csv"
    if not path.exists():
        return None
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def feedback_files(lesson: str, name: str) -> list[Path]:
    folder = BASE / "out" / lesson / "feedback"
    return (
        sorted(p for p in folder.glob("*.md") if p.stem == name or p.stem.startswith(name + "-"))
        if folder.exists()
        else []
    )


def main() -> None:
    manifest = json.loads((BASE / "manifest.json").read_text())
    counts = {"graded": 0, "HELD": 0, "BROKE": 0, "WRONG-FAIL": 0, "GREY-PASS": 0, "UNGRADED": 0}
    print(f"{'submission':24} {'kind':8} {'deserved':28} {'got':28} verdict")
    for entry in manifest:
        name, lesson = entry["name"], entry["lesson"]
        rows = rows_of(lesson)
        if rows is None:
            counts["UNGRADED"] += 1
            print(f"{name:24} {entry['kind']:8} {'':28} {'(not graded)':28} UNGRADED")
            continue
        counts["graded"] += 1
        mine = [r for r in rows if r.get("student") == name]
        feedback = feedback_files(lesson, name)
        exercises = [k[3:] for k in (rows[0] if rows else {}) if k.startswith("ex ")]
        got = sorted(e for e in exercises if mine and mine[0].get(f"ex {e}") == PASSED)
        deserved, either = set(entry["deserved"]), set(entry["either"])
        notes = []
        if len(mine) != 1:
            notes.append(f"{len(mine)} rows")
        if len(feedback) != 1:
            notes.append(f"{len(feedback)} feedback files")
        unearned = sorted(set(got) - deserved - either)
        missed = sorted(deserved - set(got) - either)
        if entry["kind"] == "control" and not deserved and mine and mine[0].get("score") not in ("0", "0.0"):
            notes.append(f"score {mine[0].get('score')}")
        if unearned and entry["kind"] == "grey":
            verdict = "GREY-PASS"
        elif unearned or notes:
            verdict = "BROKE"
        elif missed and entry["kind"] in ("honest", "control", "baseline"):
            verdict = "WRONG-FAIL"  # an attack's other exercises failing is collateral (shown, not counted)
        else:
            verdict = "HELD"
        counts[verdict] += 1
        detail = ", ".join(
            notes + ([f"unearned {unearned}"] if unearned else []) + ([f"missed {missed}"] if missed else [])
        )
        print(f"{name:24} {entry['kind']:8} {','.join(sorted(deserved)):28} {','.join(got):28} {verdict} {detail}")
    print()
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    secrets = (BASE / "secret.txt").read_text().split() if (BASE / "secret.txt").exists() else []
    leaks = []
    for path in (BASE / "out").rglob("*"):
        if path.is_file() and any(s in path.read_text(errors="replace") for s in secrets):
            leaks.append(str(path))
    print(f"secret leaks into CSV/feedback: {leaks or 'none'}")
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    print(f"planted modules imported: {markers or 'none'}")
    before, after = BASE / "before.sha256", BASE / "after.sha256"
    if before.exists() and after.exists():
        same = before.read_text() == after.read_text()
        print(f"submissions unchanged by the grader: {same}")


if __name__ == "__main__":
    main()
