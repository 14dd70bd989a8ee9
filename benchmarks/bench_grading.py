"""Grading throughput: submissions per minute for copies of a solved exercise notebook.

    python benchmarks/bench_grading.py --lesson 01 --copies 100 --jobs 2

Each copy is the exercise notebook with every answer cell replaced by the solution's (a student who
solved everything: the slowest honest case). Prints submissions per minute and what a class of 500 costs.
"""

import argparse
import csv
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib.instructor import grading  # noqa: E402
from course_lib.instructor.release import _grade_id  # noqa: E402


def solved_copy(lesson: str) -> nbformat.NotebookNode:
    release = nbformat.read(grading.release_notebook(lesson, ROOT), as_version=4)
    solution = nbformat.read(next((ROOT / "solutions").glob(f"{lesson}_*.ipynb")), as_version=4)
    answers = {_grade_id(c): c.source for c in solution.cells if _grade_id(c)}
    for cell in release.cells:
        gid = _grade_id(cell)
        if gid and gid.startswith("ex-"):
            cell.source = answers[gid]
    return release


def write_class(subs: Path, lesson: str, copies: int) -> None:
    """``copies`` identical solved submissions of ``lesson`` in a new folder ``subs``."""
    subs.mkdir()
    nb = solved_copy(lesson)
    for i in range(copies):
        nbformat.write(nb, subs / f"student{i:03d}.ipynb")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lesson", default="01")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    try:
        write_class(work / "subs", args.lesson, args.copies)
        start = time.perf_counter()
        grading.grade([work / "subs"], args.lesson, work / "g.csv", root=ROOT, jobs=args.jobs, progress=None)
        seconds = time.perf_counter() - start
        rows = list(csv.DictReader(open(work / "g.csv", encoding="utf-8")))
        full = sum(r["score"] == r["total"] for r in rows)
        per_minute = args.copies / seconds * 60
        print(
            f"lesson {args.lesson}: {args.copies} copies, --jobs {args.jobs}: {seconds:.0f} s, "
            f"{per_minute:.1f} submissions/min ({full}/{len(rows)} graded full marks); "
            f"500 students: {500 / per_minute:.0f} min"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
