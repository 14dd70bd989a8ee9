"""Load the solution functions of a lesson, and realistic wrong versions of them.

A mutant is the solution's own source with one edit a student could plausibly make
(``old`` replaced by ``new``), so every mutant is a real, runnable wrong answer.
"""

from __future__ import annotations

from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[2]


def exercise_cells(lesson: str, folder: str = "solutions") -> list[str]:
    """Source of every code cell that holds an exercise (solution markers or a stub)."""
    path = ROOT / folder / (f"{lesson}.py" if folder == "solutions" else f"{lesson}.ipynb")
    nb = jupytext.read(path)
    return [c.source for c in nb.cells if c.cell_type == "code"
            and ("### BEGIN SOLUTION" in c.source or "NotImplementedError(" in c.source)]


def load(sources: list[str]) -> dict:
    namespace: dict = {}
    for source in sources:
        exec(compile(source, "<exercise cell>", "exec"), namespace)
    return namespace


def solution(lesson: str, name: str):
    return load(exercise_cells(lesson))[name]


def stub(lesson: str, name: str):
    """The function as students receive it in exercises/ (generated from the solution)."""
    return load(exercise_cells(lesson, "exercises"))[name]


def mutant(lesson: str, name: str, old: str, new: str):
    sources = exercise_cells(lesson)
    matching = [s for s in sources if f"def {name}(" in s]
    assert len(matching) == 1, f"no single cell defines {name} in {lesson}"
    source = matching[0]
    assert source.count(old) == 1, f"mutant edit {old!r} must occur exactly once in {name}'s solution"
    return load([source.replace(old, new)])[name]
