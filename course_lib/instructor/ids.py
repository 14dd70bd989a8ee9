"""The one parser of exercise ids in nbgrader metadata, shared by the builder and the grader.

The builder names an exercise's answer cell ``ex-<lesson>-<n>`` and its check cell ``check-<lesson>-<n>``;
when an exercise has a second answer cell it gets ``ex-<lesson>-<n>-2`` (grade ids must be unique), which
is still exercise ``<lesson>.<n>``, never ``<lesson>.<n>.2``.
"""

from __future__ import annotations

import re

GRADE_ID = re.compile(r"^(ex|check)-(\d+)-(\d+)(?:-\d+)?$")


def exercise_of(grade_id) -> str | None:
    """``"ex-1-2"``, ``"ex-1-2-2"`` and ``"check-1-2"`` -> ``"1.2"``; anything else -> None."""
    match = GRADE_ID.match(grade_id) if isinstance(grade_id, str) else None
    return f"{int(match.group(2))}.{int(match.group(3))}" if match else None


def answer_exercise(grade_id) -> str | None:
    """The exercise an answer cell (``ex-...``) belongs to, or None for any other cell."""
    return exercise_of(grade_id) if isinstance(grade_id, str) and grade_id.startswith("ex-") else None


def sort_key(exercise: str) -> list[int]:
    """Order "1.10" after "1.9"."""
    return [int(part) for part in exercise.split(".")]
