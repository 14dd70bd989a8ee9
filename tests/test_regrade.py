"""Points in the CSV of a graded class, and grades that do not drift: the same class graded twice (once with
checks the instructor accepted as changed) gets the same points, also for submissions that call exit(), use
randomness, or print past the output cap while fully solved (lesson 06, the cheapest lesson to grade)."""

import csv
from pathlib import Path

import nbformat
import pytest

from course_lib import checks
from course_lib.instructor import fingerprint, grading, sandbox
from course_lib.instructor.points import exercise_points

ROOT = Path(__file__).resolve().parents[1]
LESSON, NAME = "06", "06_masked_attention"
SOLUTION = ROOT / "solutions" / f"{NAME}.ipynb"
EXERCISES = list(checks.exercises(LESSON))

pytestmark = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no bubblewrap sandbox on this machine")


def _cell(nb, exercise):
    gid = f"ex-{exercise.replace('.', '-')}"
    return next(c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == gid)


def _solved(release: Path, *exercises, extra: str = "", at_end: bool = True):
    nb = nbformat.read(release, as_version=4)
    solution = nbformat.read(SOLUTION, as_version=4)
    for e in exercises:
        _cell(nb, e).source = _cell(solution, e).source
    if extra:
        cell = nbformat.v4.new_code_cell(extra)
        nb.cells.insert(len(nb.cells) if at_end else 1, cell)
    return nb


def _grade(subs: Path, out: Path, release: Path, accept: bool = False, course=None) -> dict:
    grading.grade(
        [subs], LESSON, out, release=release, jobs=2, cell_timeout=60, budget=300,
        limits=sandbox.Limits(memory_mb=1500), progress=None, accept_changed_checks=accept,
        nbgrader_course=course, assignment="ps1" if course else None,
    )  # fmt: skip
    return {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}


def _small_release(folder: Path) -> Path:
    """Lesson 06's exercise notebook as `course-lib release` hands it out (stamped), kept to its setup, answer
    and check cells so that grading stays cheap (the lesson's other cells are left out)."""
    nb = nbformat.read(ROOT / "exercises" / f"{NAME}.ipynb", as_version=4)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    nb.cells = [c for c in nb.cells if c is setup or (c.metadata.get("nbgrader") or {}).get("grade_id")]
    fingerprint.stamp(nb, LESSON)
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NAME}.ipynb")
    return folder / f"{NAME}.ipynb"


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("regrade")
    release = _small_release(tmp / "handout")
    subs = tmp / "subs"
    subs.mkdir()
    everything = EXERCISES
    class_ = {
        "solved": _solved(release, *everything),
        "partial": _solved(release, "6.1", "6.3"),
        "random": _solved(
            release,
            *everything,
            extra="import random, numpy, torch\nrandom.seed(); numpy.random.seed(); torch.seed()\n"
            "print(random.random(), numpy.random.rand(), torch.rand(2))",
            at_end=False,
        ),
        "loud": _solved(release, *everything, extra="print('x' * 3_000_000)"),
        # (a solved notebook that calls exit() between cells, full marks: test_grading_answers.py's class,
        # test_exit_between_cells_keeps_every_answer; not graded twice here, each grade being two sandboxed Pythons)
    }
    for name, nb in class_.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    first = _grade(subs, tmp / "first.csv", release, course=tmp / "course")  # also into nbgrader's gradebook
    # the instructor's checks changed since release (a fingerprint that differs), accepted: every row says so
    changed = tmp / "changed" / release.name
    changed.parent.mkdir()
    nb = nbformat.read(release, as_version=4)
    nb.metadata["course_lib"]["release"]["checks"]["6.2"] = "0" * 16
    nbformat.write(nb, changed)
    second = _grade(subs, tmp / "second.csv", changed, accept=True)
    worth = exercise_points(nbformat.read(release, as_version=4), EXERCISES)
    return first, second, worth, tmp


def test_the_class_lands_in_nbgraders_gradebook_with_the_csvs_points(twice):
    from nbgrader.api import Gradebook

    first, _, worth, tmp = twice
    course = tmp / "course"
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student, row in first.items():
            notebook = gb.find_submission_notebook(NAME, "ps1", student)
            checks_score = sum(g.auto_score for g in notebook.grades if g.name.startswith("check-"))
            assert checks_score == float(row["points"]), student
            assert notebook.needs_manual_grade  # the lesson's written answer (6.4), for formgrader
    for student in first:  # formgrader's copy is the submission, byte for byte; the feedback page is there
        copy = course / "autograded" / student / "ps1" / f"{NAME}.ipynb"
        assert copy.read_bytes() == (tmp / "subs" / f"{student}.ipynb").read_bytes()
        assert (course / "feedback" / student / "ps1" / f"{NAME}.html").read_text().startswith("<!DOCTYPE html>")


def test_rows_carry_points_per_exercise_the_total_and_the_maximum(twice):
    first, _, worth, _ = twice
    maximum = sum(worth.values())
    for row in first.values():
        assert float(row["max points"]) == maximum
        assert [float(row[f"points {e}"]) for e in EXERCISES] == [
            worth[e] if row[f"ex {e}"] == "passed" else 0 for e in EXERCISES
        ]
    assert float(first["solved"]["points"]) == maximum and first["solved"]["problems"] == ""
    assert float(first["partial"]["points"]) == worth["6.1"] + worth["6.3"]  # partial credit, by the release


def test_the_same_submissions_graded_twice_get_the_same_points(twice):
    first, second, _, _ = twice
    assert set(first) == set(second)
    columns = ["points", "max points", "score"] + [f"ex {e}" for e in EXERCISES]
    for student in first:
        assert [first[student][c] for c in columns] == [second[student][c] for c in columns], student


@pytest.mark.parametrize(
    "student",
    [
        "random",
        "loud",
    ],
)
def test_a_fully_solved_submission_gets_every_point_whatever_else_it_does(twice, student):
    first, _, worth, _ = twice
    assert float(first[student]["points"]) == sum(worth.values()), first[student]


def test_each_row_says_whether_the_checks_were_those_released(twice):
    first, second, _, _ = twice
    assert {r["checks"] for r in first.values()} == {fingerprint.AS_RELEASED}
    assert {r["checks"] for r in second.values()} == {"changed since release: 6.2 (accepted)"}
