"""`course-lib grade` and nbgrader give the same marks (issue 24, point 6).

A tiny nbgrader course is made from one lesson's solutions notebook (``source/``), then three
submissions are graded by both: the solutions (full marks), the exercises notebook as handed out
(no marks) and the solutions with one exercise's answer cell put back to its stub (every mark but
that exercise's). nbgrader marks each locked ``check-N-M`` cell (its hidden ``assert result.passed``
decides); `course-lib grade` marks each exercise as passed or not. They must agree exercise by
exercise.

nbgrader is not a dependency of the course (instructors who use it install it themselves), but the
``dev`` extra installs it, so this test runs wherever the tests do.
``COURSE_LIB_NBGRADER_LESSONS="03 06"`` (or ``all``) chooses the lessons; the default is lesson 06,
whose solutions run fastest.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib import checks
from course_lib.instructor import cli
from course_lib.instructor.ids import exercise_of

ROOT = Path(__file__).resolve().parents[1]
ALL = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
_chosen = os.environ.get("COURSE_LIB_NBGRADER_LESSONS", "06").split()
LESSONS = ALL if _chosen == ["all"] else [name for name in ALL if name[:2] in _chosen]
ASSIGNMENT = "a1"
# Exercises whose answer uses another's (lesson 07's Block holds the student's FeedForward, the GPT holds
# Blocks): with that one unsolved they cannot pass either, in either grader.
BUILDS_ON = {"7.5": ("7.6", "7.7")}


def _grade_id(cell) -> str:
    return (cell.metadata.get("nbgrader") or {}).get("grade_id", "")


def _partly_solved(lesson: str, exercise: str):
    """The solutions notebook with the answer cells of ``exercise`` as the exercises notebook has them."""
    solution = nbformat.read(ROOT / "solutions" / f"{lesson}.ipynb", as_version=4)
    stubs = {_grade_id(c): c.source for c in nbformat.read(ROOT / "exercises" / f"{lesson}.ipynb", as_version=4).cells}
    swapped = 0
    for cell in solution.cells:
        gid = _grade_id(cell)
        if gid.startswith("ex-") and exercise_of(gid) == exercise:
            cell.source = stubs[gid]
            swapped += 1
    assert swapped, f"no answer cell of Exercise {exercise} in {lesson}"
    return solution


def _nbgrader(course: Path, *args: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args, "--force", f"--CourseDirectory.root={course}"],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            # nbgrader runs the `alembic` command beside its Python
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        },
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def _nbgrader_passed(course: Path, lesson: str, student: str) -> dict[str, bool]:
    """Exercise -> every one of its check cells got full marks, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(lesson, ASSIGNMENT, student)
        passed: dict[str, bool] = {}
        for grade in notebook.grades:
            exercise = exercise_of(grade.name)
            if grade.name.startswith("check-"):
                full = grade.score == grade.max_score and grade.max_score > 0
                passed[exercise] = passed.get(exercise, True) and full
        return passed


def _nbgrader_check_points(course: Path, lesson: str, student: str) -> float:
    """The points nbgrader's autograde gave a student's check cells, from its gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(lesson, ASSIGNMENT, student)
        return sum(g.score for g in notebook.grades if g.name.startswith("check-"))


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_course_lib_grade_and_nbgrader_autograde_agree(lesson, tmp_path):
    exercises = list(checks.exercises(lesson[:2]))
    partial = exercises[len(exercises) // 2]  # an exercise in the middle: cells before and after it still count
    submissions = {
        "full": nbformat.read(ROOT / "solutions" / f"{lesson}.ipynb", as_version=4),
        "none": nbformat.read(ROOT / "exercises" / f"{lesson}.ipynb", as_version=4),
        "partial": _partly_solved(lesson, partial),
    }
    course = tmp_path / "course"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(
        nbformat.read(ROOT / "solutions" / f"{lesson}.ipynb", as_version=4),
        course / "source" / ASSIGNMENT / f"{lesson}.ipynb",
    )
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'agreement'\n"
        "c.ExecutePreprocessor.timeout = 300\nc.Execute.timeout = 300\n",
        encoding="utf-8",
    )
    flat = tmp_path / "flat"
    flat.mkdir()
    for student, nb in submissions.items():
        (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
        nbformat.write(nb, course / "submitted" / student / ASSIGNMENT / f"{lesson}.ipynb")
        nbformat.write(nb, flat / f"{student}.ipynb")

    _nbgrader(course, "generate_assignment", ASSIGNMENT)
    _nbgrader(course, "autograde", ASSIGNMENT)
    out = tmp_path / "grades.csv"
    code = cli.main(
        ["grade", str(flat), "--lesson", lesson[:2], "--out", str(out), "--root", str(ROOT)]
        + ["--jobs", "2", "--timeout", "120", "--budget", "300", "--memory", "2000"]
    )
    assert code == 0
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}

    expected = {
        "full": dict.fromkeys(exercises, True),
        "none": dict.fromkeys(exercises, False),
        "partial": {e: e != partial and e not in BUILDS_ON.get(partial, ()) for e in exercises},
    }
    for student in submissions:
        ours = {e: rows[student][f"ex {e}"] == "passed" for e in exercises}
        theirs = _nbgrader_passed(course, lesson, student)
        assert set(theirs) == set(exercises), (student, theirs)  # nbgrader sees a check cell for every exercise
        assert ours == expected[student], (student, rows[student])
        assert theirs == ours, f"{student}: nbgrader {theirs}, course-lib grade {ours}"
        # and the same points: nbgrader's autograded check cells add up to the CSV's points
        assert _nbgrader_check_points(course, lesson, student) == float(rows[student]["points"]), student


@pytest.mark.parametrize("lesson", ALL)
def test_every_exercise_has_nbgrader_cells_that_nbgraders_own_validator_accepts(lesson):
    """Fast, on every lesson: nbgrader's schema accepts our metadata, and each check is a locked, pointed cell."""
    from nbgrader.nbgraderformat import MetadataValidator, ValidationError

    for folder in ("solutions", "exercises"):
        nb = nbformat.read(ROOT / folder / f"{lesson}.ipynb", as_version=4)
        MetadataValidator().validate_nb(nb)
        cells = {_grade_id(c): c for c in nb.cells if _grade_id(c)}
        for exercise in checks.exercises(lesson[:2]):
            answers = [g for g in cells if g.startswith("ex-") and exercise_of(g) == exercise]
            tests = [cells[g].metadata.nbgrader for g in cells if g.startswith("check-") and exercise_of(g) == exercise]
            assert answers, f"{folder}/{lesson}: Exercise {exercise} has no answer cell"
            assert tests and all(t["locked"] and t["grade"] and t["points"] > 0 for t in tests), (folder, exercise)
        broken = nbformat.from_dict(nb)  # the validator is not a formality: a graded cell without points fails
        del next(c for c in broken.cells if _grade_id(c).startswith("check-")).metadata.nbgrader["points"]
        with pytest.raises(ValidationError):
            MetadataValidator().validate_nb(broken)
