"""Compare what the grader gave each submission of make_class.py's class with what it deserves.

    python tests/outsider/issue33b/summarize.py CLASS_DIR SECRET...

reads CLASS_DIR/class.json and the grader's outputs (CLASS_DIR/out06, outnames, out02, outnbg: grades.csv,
grades_feedback/, grades.log, run.log) and prints one markdown row per submission: expected points per
exercise, the points got, the line of the feedback for each exercise that differs or was attacked, and a
first verdict (held: the points equal what it deserves; BROKE: more; unclear: fewer, or no row). It also
says whether any SECRET (a value planted in the grader's environment) appears in anything the grader wrote.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

# in order: a later folder's row for the same student replaces an earlier one (out06c: the subprocess attacks
# graded again with the default --timeout of 120 s, since 30 s was too short for a fresh Python on this machine;
# out02r: the lesson-02 solved control graded again alone, --jobs 1; out02s: the server variant of 2.2)
OUTS = {"06": ["out06", "outnames", "outnbg", "out06b", "out06c"], "02": ["out02", "out02r", "out02s"]}


def rows(out: Path) -> list[dict]:
    path = out / "grades.csv"
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main(root: str, secrets: list[str]) -> None:
    root = Path(root)
    meta = json.loads((root / "class.json").read_text())
    table = {}
    for out in sum(OUTS.values(), []):
        for row in rows(root / out):
            table[row["student"]] = [(out, row)]  # one row per student in each run: a rerun replaces
    print("| student | intent | expected | got | verdict | evidence |")
    print("| --- | --- | --- | --- | --- | --- |")
    counts = {"held": 0, "BROKE": 0, "unclear": 0}
    for entry in meta:
        student = entry["student"]  # as the CSV shows it: a formula quoted with ', a line break escaped
        shown = [student, "'" + student, student.replace("\n", "\\x0a")]
        found = next((table[s] for s in shown if s in table), [])
        expected = entry["expected"]
        if len(found) != 1:
            verdict, got, evidence = "unclear", f"{len(found)} rows", ""
        else:
            out, row = found[0]
            got_points = {k.split()[1]: int(v or 0) for k, v in row.items() if k.startswith("points ")}
            got = ", ".join(f"{k}:{v}" for k, v in got_points.items() if v) or "0"
            more = [k for k, v in got_points.items() if v > expected.get(k, 0)]
            fewer = [k for k, v in got_points.items() if v < expected.get(k, 0)]
            verdict = "BROKE" if more else "unclear" if fewer else "held"
            statuses = "; ".join(f"{k.split()[1]} {v}" for k, v in row.items() if k.startswith("ex "))
            evidence = f"({out}) {statuses}. problems: {row['problems'][:300]}"
        counts[verdict] += 1
        exp = ", ".join(f"{k}:{v}" for k, v in expected.items()) or "0"
        cell = evidence.replace("|", "\\|").replace("\n", " ")
        name = entry["student"].encode("unicode_escape").decode()[:40]
        print(f"| {name} | {entry['intent']} | {exp} | {got} | {verdict} | {cell} |")
    print()
    print("counts:", counts, "of", len(meta))
    leaks = []
    for out in sum(OUTS.values(), []):
        for path in (root / out).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                leaks += [f"{path}: {s}" for s in secrets if s.encode() in data]
    print("secret in the grader's outputs:", leaks or "none")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
