"""Points per exercise: the builder's defaults, read back from the released notebook, and the CSV's cells."""

import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import build as notebooks
from course_lib.instructor.build import make_exercise
from course_lib.instructor.ids import exercise_of
from course_lib.instructor.points import cells, columns, default_points, exercise_points

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "lines,points",
    # a point per 4 lines, started; at least 1, at most 5 (docs/instructors.md states the rule)
    [(0, 1), (1, 1), (3, 1), (4, 1), (5, 2), (8, 2), (12, 3), (13, 4), (20, 5), (21, 5), (60, 5)],
)
def test_default_points_grow_with_the_lines_the_student_writes(lines, points):
    assert default_points(lines) == points


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True, None])
def test_default_points_refuse_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match="lines must be an int >= 0"):
        default_points(bad)


def _exercise_nb(source: str, tmp_path):
    path = Path(tmp_path) / "99_test.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return make_exercise(notebooks.read_source(path, "solutions/99_test.py"))


def _check_points(nb) -> dict[str, int]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
        for c in nb.cells
        if (c.metadata.get("nbgrader") or {}).get("grade_id", "").startswith("check-")
    }


def test_the_builder_gives_a_build_more_points_than_a_helper(tmp_path):
    nb = _exercise_nb(
        """\
        # %%
        # Exercise 9.1: a helper
        def helper(x):
            ### BEGIN SOLUTION
            # a comment is not a line of code
            y = x + 1

            return y
            ### END SOLUTION

        # %%
        check_helper(helper)

        # %%
        # Exercise 9.2: a build in two cells
        def first(x):
            ### BEGIN SOLUTION
        """
        + "".join(f"    a{i} = x + {i}\n" for i in range(7))
        + """\
            return a0
            ### END SOLUTION

        # %%
        # Exercise 9.2: a build in two cells
        def second(x):
            ### BEGIN SOLUTION
        """
        + "".join(f"    b{i} = x * {i}\n" for i in range(5))
        + """\
            return b0
            ### END SOLUTION

        # %%
        check_build(first, second)

        # %%
        check_build_again(first, second)
        """,
        tmp_path,
    )
    # 9.1: 2 lines -> 1 point; 9.2: 8 + 6 = 14 lines over two cells -> 4 points, on its first check cell only
    # (nbgrader adds the check cells' points up, so a second one carries none)
    assert _check_points(nb) == {"check-9-1": 1, "check-9-2": 4, "check-9-2-2": 0}
    assert exercise_points(nb, ["9.1", "9.2"]) == {"9.1": 1, "9.2": 4}


def test_lesson_07s_build_in_parts_is_worth_each_parts_points():
    """The released notebook's points are the stubs' "about N lines" under the rule: partial credit per module."""
    nb = nbformat.read(ROOT / "exercises" / "07_transformer.ipynb", as_version=4)
    lines: dict[str, int] = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for exercise, n in re.findall(
                r'NotImplementedError\("Exercise (\d+\.\d+)[^"]*\(about (\d+) lines?\)', cell.source
            ):
                lines[exercise] = lines.get(exercise, 0) + int(n)
    got = exercise_points(nb, sorted(lines, key=lambda e: [int(p) for p in e.split(".")]))
    assert got == {e: max(1, min(5, -(-n // 4))) for e, n in lines.items()}
    parts = ["7.3", "7.4", "7.5", "7.6", "7.7"]  # Head, MultiHeadAttention, ..., GPT: each its own points
    assert all(got[e] >= 1 for e in parts) and sum(got[e] for e in parts) > max(got[e] for e in parts)
    assert max(got.values()) > min(got.values())  # not every exercise is worth the same


def _release_with(points_value):
    nb = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("def f(): ...")
    answer.metadata["nbgrader"] = {"grade": False, "grade_id": "ex-1-1", "locked": False, "solution": True}
    check = nbformat.v4.new_code_cell("check(f)")
    check.metadata["nbgrader"] = {"grade": True, "grade_id": "check-1-1", "locked": True, "solution": False}
    if points_value is not ...:
        check.metadata["nbgrader"]["points"] = points_value
    nb.cells = [answer, check]
    return nb


@pytest.mark.parametrize("bad", ["3", -1, True, float("nan"), float("inf"), None])
def test_points_that_are_not_a_number_name_the_cell(bad):
    with pytest.raises(ValueError, match=r"check cell check-1-1: nbgrader's points must be a number >= 0"):
        exercise_points(_release_with(bad), ["1.1"])


def test_an_exercise_without_a_check_cell_is_named():
    with pytest.raises(ValueError, match=r"exercise\(s\) 1.2 have no locked check cell"):
        exercise_points(_release_with(2), ["1.1", "1.2"])


def test_points_an_instructor_set_in_the_release_are_the_ones_used():
    assert exercise_points(_release_with(2.5), ["1.1"]) == {"1.1": 2.5}
    assert exercise_points(_release_with(2.0), ["1.1"]) == {"1.1": 2}


def test_a_row_earns_the_points_of_the_exercises_it_passed():
    worth = {"1.1": 2, "1.2": 3, "1.3": 0.5}
    statuses = {"1.1": {"status": "passed"}, "1.2": {"status": "failed"}, "1.3": {"status": "passed"}}
    assert columns(list(worth)) == ["points", "max points", "points 1.1", "points 1.2", "points 1.3"]
    assert cells(statuses, worth, "passed") == [2.5, 5.5, 2, 0, 0.5]
    assert cells({}, worth, "passed") == [0, 5.5, 0, 0, 0]  # nothing graded (not a notebook): none earned


def test_every_released_exercise_has_points_for_nbgrader_and_the_grader():
    from course_lib import checks

    for path in sorted((ROOT / "exercises").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        graded = list(checks.exercises(path.name[:2]))
        got = exercise_points(nb, graded)
        assert all(p >= 1 for p in got.values()), (path.name, got)
        checked = {exercise_of(g) for g in _check_points(nb)}
        assert set(graded) <= checked, path.name
