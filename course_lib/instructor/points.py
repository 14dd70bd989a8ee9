"""Points: what each exercise is worth, read from the released notebook as nbgrader reads it.

The builder gives every check cell nbgrader's ``points``; the grader reads them back from the notebook the
instructor handed out (where nbgrader's ``create_assignment`` or a text editor may have changed them), so
the notebook is the one place that says what an exercise is worth, for ``course-lib grade`` and nbgrader alike.

The default (:func:`default_points`) follows what the student writes: one point for every four lines of
the solution, started (lines neither blank nor comments, the "about N lines" of the stub), at least 1 and at
most 5. A 3-line helper is worth 1, a 20-line build 5; a build checked in parts (lesson 07's Head,
MultiHeadAttention, ... GPT) gets each part's points, so a student whose first three modules pass has their
points. An exercise with several check cells is worth the sum of their points, as in nbgrader. A written
answer (a markdown answer cell) is graded by hand and its points are nbgrader's, not the CSV's.
"""

from __future__ import annotations

import math
import numbers

from course_lib.instructor.ids import exercise_of

LINES_PER_POINT = 4
MAX_DEFAULT_POINTS = 5


def default_points(lines: int) -> int:
    """The points of an exercise whose solution is ``lines`` lines long (see the module docstring)."""
    if not isinstance(lines, int) or isinstance(lines, bool) or lines < 0:
        raise ValueError(f"lines must be an int >= 0, got {lines!r}")
    return max(1, min(MAX_DEFAULT_POINTS, math.ceil(lines / LINES_PER_POINT)))


def _check_meta(cell) -> dict | None:
    meta = (cell.get("metadata") or {}).get("nbgrader")
    if not isinstance(meta, dict) or cell.get("cell_type") != "code":
        return None
    if not (meta.get("grade") and meta.get("locked") and not meta.get("solution")):
        return None
    return meta


def exercise_points(release_nb, exercises) -> dict[str, float]:
    """Each of ``exercises`` -> its points: the sum of the ``points`` of its locked check cells in the release.

    Raises ``ValueError`` naming the cell for points that are not a number >= 0 (a typo in the release is the
    instructor's to fix, before anyone is graded) and for an exercise with no check cell carrying points.
    """
    points: dict[str, float] = {}
    for cell in release_nb.cells:
        meta = _check_meta(cell)
        exercise = exercise_of(meta.get("grade_id")) if meta else None
        if exercise is None:
            continue
        value = meta.get("points")
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise ValueError(
                f"check cell {meta.get('grade_id')}: nbgrader's points must be a number >= 0, got {value!r}"
            )
        points[exercise] = points.get(exercise, 0) + value
    missing = [e for e in exercises if e not in points]
    if missing:
        raise ValueError(f"exercise(s) {', '.join(missing)} have no locked check cell with points in the release")
    return {e: _tidy(points[e]) for e in exercises}


def _tidy(value: float):
    """2.0 -> 2 (a CSV cell reads "2", not "2.0"); 2.5 stays."""
    return int(value) if float(value).is_integer() else round(float(value), 6)


def earned(exercises: dict[str, dict], points: dict[str, float], passed: str) -> dict[str, float]:
    """Each exercise's points earned: all of them when its status is ``passed``, else none."""
    return {e: (p if (exercises.get(e) or {}).get("status") == passed else 0) for e, p in points.items()}


def columns(exercises: list[str]) -> list[str]:
    """The CSV's point columns: the total, the maximum, then one per exercise."""
    return ["points", "max points"] + [f"points {e}" for e in exercises]


def cells(exercises: dict[str, dict], points: dict[str, float], passed: str) -> list:
    """The point cells of one row, in the order of :func:`columns` (``points`` in exercise order)."""
    got = earned(exercises, points, passed)
    return [_tidy(sum(got.values())), _tidy(sum(points.values()))] + [got[e] for e in points]
