"""Grade a sample of entries with the real grader: each entry goes into a copy of its lesson's exercises
notebook whose other answer cells hold the right answers (right.py); one more copy per lesson holds only
right answers (the baseline, full marks expected). Then `course-lib grade` per lesson (sandboxed, default limits
but --budget 300 s per notebook). A first try with --timeout 60 also cut the grader's own calls of the checks
(graded/grades02.csv: exercises 2.2, 2.3, 2.5 'ran past the time limit (60 s)'), so only its 2.1 row counts.

Usage: python grade_sample.py ID [ID ...]   -> graded/<lesson>/*.ipynb, graded/grades<lesson>.csv, grades.jsonl
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))
from entries import ENTRIES  # noqa: E402
from right import RIGHT  # noqa: E402
from run_entry import NOTEBOOKS  # noqa: E402

COURSE_LIB = ROOT / ".venv" / "bin" / "course-lib"


def filled(lesson, replace=None):
    nb = nbformat.read(ROOT / "exercises" / f"{NOTEBOOKS[lesson]}.ipynb", as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and gid.startswith("ex-"):
            ex = gid[3:].replace("-", ".")
            cell.source = replace["code"] if replace and replace["exercise"] == ex else RIGHT[ex].strip() + "\n"
    return nb


def main(ids):
    by_id = {e["id"]: e for e in ENTRIES}
    lessons = {}
    for i in ids:
        e = by_id[i]
        lessons.setdefault(e["exercise"].split(".")[0].zfill(2), []).append(e)
    for lesson, entries in sorted(lessons.items()):
        folder = HERE / "graded" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(filled(lesson), folder / "all_right.ipynb")
        for e in entries:
            nbformat.write(filled(lesson, e), folder / f"{e['id'].replace('.', '_')}.ipynb")
        csv_path = HERE / "graded" / f"grades{lesson}.csv"
        csv_path.unlink(missing_ok=True)
        cmd = [
            str(COURSE_LIB),
            "grade",
            str(folder),
            "--lesson",
            lesson,
            "--out",
            str(csv_path),
            "--jobs",
            "1",
            "--root",
            str(ROOT),
            "--budget",
            "300",
        ]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=False)
    collect()


def collect():
    """grades.jsonl: every row of every graded/grades<lesson>.csv."""
    with open(HERE / "grades.jsonl", "w") as f:
        for csv_path in sorted((HERE / "graded").glob("grades*.csv")):
            for row in csv.DictReader(open(csv_path)):
                f.write(json.dumps({"lesson": csv_path.stem[len("grades") :], **row}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
