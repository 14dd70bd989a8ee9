# Used while writing the class: one notebook's answer cells graded by the real harness (no kernel run).
"""Quick trial: grade only the answer cells of a notebook (no kernel run), with the real harness in the sandbox.
usage: try.py LESSON NOTEBOOK [exercise ids...]"""

import logging
import sys
from pathlib import Path

import nbformat

from course_lib.instructor import sandbox
from course_lib.instructor import submission as S
from course_lib.instructor.release import expected_exercises, restore_checks

logging.basicConfig(level=logging.ERROR)
lesson, path = sys.argv[1], sys.argv[2]
only = sys.argv[3:]
root = Path("/work/wt/hostile33i")
release = next((root / "exercises").glob(f"{lesson}_*.ipynb"))
rel = nbformat.read(release, as_version=4)
nb = nbformat.read(path, as_version=4)
graded, notes = restore_checks(nb, rel)
expected = [e for e in expected_exercises(rel) if not only or e in only]
res = S.Submission(student="t", path=path)
for e in expected:
    res.exercises[e] = {"status": "-", "message": "", "title": ""}
sup = sandbox.detect()
S._grade_answers(
    graded,
    rel,
    res,
    lesson=lesson,
    expected=expected,
    exercises=S.protocol(lesson),
    bwrap=sup.bwrap,
    limits=sandbox.Limits(),
    cell_timeout=60,
    budget=600,
)
for e, v in res.exercises.items():
    print(e, v["status"], "|", v["message"][:300])
