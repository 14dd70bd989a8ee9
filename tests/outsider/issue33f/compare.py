"""Every row of the graded class against what it deserved.

    python tests/outsider/issue33f/compare.py CLASS_DIR GRADES_DIR

CLASS_DIR is what make_class.py wrote (expected.json and NN/*.ipynb); GRADES_DIR holds NN.csv per lesson (what
run_class.sh writes). For each submission: the exercises it deserved to pass, what the grader passed, and a
first verdict: "held" (passed exactly what it deserved), "BROKE" (an exercise passed that it did not deserve),
"UNDER" (an exercise it deserved was not passed: an honest answer refused, or a control graded wrong), or
"NO ROW" / "ROWS: n" (not exactly one row). The final verdict, with the evidence, is written in results.md.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path


def _shown(text: str) -> str:
    """The grader's own escaping of a student name (course_lib.instructor.submission.shown), imported when possible."""
    try:
        from course_lib.instructor.submission import shown

        return shown(text)
    except Exception:
        return text


def _feedback(grades_dir: Path, lesson: str, student: str) -> list[str]:
    """The lines of the student's feedback file (found by its title, markdown escapes removed)."""
    import re

    want = _shown(student)
    for path in sorted((grades_dir / f"feedback-{lesson}").glob("*.md")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        title = re.sub(r"\\(.)", r"\1", lines[0]) if lines else ""
        if title == f"# Feedback for {want}":
            return [path.name, *lines]
    return []


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    class_dir, grades_dir = Path(argv[0]), Path(argv[1])
    expected = json.loads((class_dir / "expected.json").read_text())
    rows_by_lesson: dict[str, list[dict]] = {}
    for csv_path in sorted(grades_dir.glob("*.csv")):
        with open(csv_path, newline="", encoding="utf-8") as f:
            rows_by_lesson[csv_path.stem[:2]] = list(csv.DictReader(f))
    counts = {"held": 0, "BROKE": 0, "UNDER": 0, "NO ROW": 0, "ROWS": 0}
    for info in expected.values():
        lesson, student = info["lesson"], info["student"]
        name = _shown(student)
        rows = [r for r in rows_by_lesson.get(lesson, []) if r["student"].lstrip("'") == name]
        deserved = set(info["passes"])
        if len(rows) != 1:
            verdict = "NO ROW" if not rows else f"ROWS: {len(rows)}"
            counts["NO ROW" if not rows else "ROWS"] += 1
            print(f"{verdict:7} {lesson} {student!r}: {info['intent']}")
            continue
        row = rows[0]
        statuses = {k[3:]: v for k, v in row.items() if k.startswith("ex ")}
        passed = {e for e, s in statuses.items() if s == "passed"}
        over, under = passed - deserved, deserved - passed
        verdict = "BROKE" if over else "UNDER" if under else "held"
        counts[verdict] += 1
        got = ", ".join(f"{e}={s}" for e, s in sorted(statuses.items()))
        print(f"{verdict:7} {lesson} {student!r}: score {row['score']}/{row['total']}, deserved {sorted(deserved)}")
        print(f"          intent: {info['intent']}")
        print(f"          got: {got}")
        if over:
            print(f"          passed without deserving: {sorted(over)}")
        if under:
            print(f"          deserved but not passed: {sorted(under)}")
        if row.get("problems"):
            print(f"          problems: {row['problems'][:300]}")
        fb = _feedback(grades_dir, lesson, student)
        if not fb:
            print("          NO FEEDBACK FILE FOUND")
        for line in fb[:1] + [ln for ln in fb[1:] if ln.startswith(("- Exercise", "Score"))]:
            print(f"          | {line[:260]}")
    print()
    print("counts:", ", ".join(f"{k} {v}" for k, v in counts.items()), f"(of {len(expected)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
