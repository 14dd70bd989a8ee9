"""Load the solution functions of a lesson, and realistic wrong versions of them.

A mutant is the solution's own source with one edit a student could plausibly make
(``old`` replaced by ``new``), so every mutant is a real, runnable wrong answer.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import os
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[2]
# MUTANT_STRESS=k repeats every draw k times: a hunt for the rare draw a check mishandles (CI uses 1)
STRESS = int(os.environ.get("MUTANT_STRESS", "1"))


def exercise_cells(lesson: str, folder: str = "solutions") -> list[str]:
    """Source of every code cell that holds an exercise (solution markers or a stub)."""
    return list(_exercise_cells(lesson, folder))


@functools.cache  # read once per test process: every mutant and solution test of a lesson reads the same file
def _exercise_cells(lesson: str, folder: str) -> tuple[str, ...]:
    path = ROOT / folder / (f"{lesson}.py" if folder == "solutions" else f"{lesson}.ipynb")
    nb = jupytext.read(path)
    return tuple(
        c.source
        for c in nb.cells
        if c.cell_type == "code" and ("### BEGIN SOLUTION" in c.source or "NotImplementedError(" in c.source)
    )


def load(sources: list[str], *, with_source: bool = True) -> dict:
    """Run exercise cells in a fresh namespace. ``with_source``: as in a notebook (IPython keeps each cell's
    text in linecache), ``inspect.getsource`` finds the functions, so a check's look at the source sees them."""
    namespace: dict = {}
    for source in sources:
        filename = f"<exercise cell {next(_CELLS)}>"
        if with_source:
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace


_CELLS = itertools.count()


def solution(lesson: str, name: str):
    return load(exercise_cells(lesson))[name]


def stub(lesson: str, name: str):
    """The function as students receive it in exercises/ (generated from the solution)."""
    return load(exercise_cells(lesson, "exercises"))[name]


def mutant(lesson: str, name: str, old: str, new: str, *, with_source: bool = True):
    sources = exercise_cells(lesson)
    matching = [s for s in sources if f"def {name}(" in s or f"class {name}(" in s or f"class {name}:" in s]
    assert len(matching) == 1, f"no single cell defines {name} in {lesson}"
    source = matching[0]
    assert source.count(old) == 1, f"mutant edit {old!r} must occur exactly once in {name}'s solution"
    return load([source.replace(old, new)], with_source=with_source)[name]


# every refusal's hint: "Hint: write it yourself: your function may not call `X`, which this exercise asks you to replace."
BORROWED_HINT = "write it yourself: your function may not call"


def lesson_suite(
    lesson: str,
    exercises: dict,
    mutants: list,
    alternatives: list = (),
    *,
    borrowed: list = (),
    solution_repeats: int = 3,
    mutant_repeats: int = 5,
):
    """The tests every lesson's checks must pass, by name; a lesson's test module installs them with
    ``globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES))`` so pytest collects them there.

    ``exercises`` maps a function name to its check; ``mutants`` lists
    ``(function, edit from, edit to, words the hint must contain)``; ``alternatives`` lists
    ``(function, edit from, edit to)``: different but right code that must pass;
    ``borrowed`` lists ``(function, edit from, edit to, called name)``: an answer that calls what the
    exercise asks the student to write (a name in its ``Exercise.forbidden``, or what the check's observer
    sees run: the same code reached by another name, autograd's engine, a fused kernel, the observer switched
    off), which must be refused with "write it yourself" and that name, both by the look at its source and,
    with the source hidden, when run.
    Every exercise needs at least six mutants and one alternative, and one borrowed answer when it
    declares ``forbidden`` names.
    """
    import pytest

    from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED

    solution_repeats, mutant_repeats = solution_repeats * STRESS, mutant_repeats * STRESS

    @pytest.mark.parametrize("name", exercises)
    def test_solution_passes(name):
        for _ in range(solution_repeats):  # checks draw fresh inputs every time
            result = exercises[name](solution(lesson, name), quiet=True)
            assert result.status == PASSED, result

    @pytest.mark.parametrize("name", exercises)
    def test_stub_is_not_implemented(name):
        result = exercises[name](stub(lesson, name), quiet=True)
        assert result.status == NOT_IMPLEMENTED, result

    @pytest.mark.parametrize("name,old,new,hint", mutants, ids=[f"{m[0]}-{i}" for i, m in enumerate(mutants)])
    def test_mutant_is_rejected_with_a_targeted_hint(name, old, new, hint):
        wrong = mutant(lesson, name, old, new)
        # A mistake must be caught, with its hint, on every draw of fresh inputs.
        for _ in range(mutant_repeats):
            result = exercises[name](wrong, quiet=True)
            assert result.status == FAILED, result
            hints = hint if isinstance(hint, tuple) else (hint,)  # a mutant that makes two mistakes: either named
            assert any(h in result.message for h in hints), result.message

    @pytest.mark.parametrize("name", exercises)
    def test_every_exercise_has_enough_mutants(name):
        assert sum(m[0] == name for m in mutants) >= 6
        assert sum(a[0] == name for a in alternatives) >= 1

    @pytest.mark.parametrize("name", exercises)
    def test_every_exercise_that_forbids_names_has_a_borrowed_answer(name):
        forbidden = exercises[name].forbidden
        # a borrowed answer names what it called: a forbidden name, or what the observer saw run (a torch or
        # course_lib function reached by another name, the engine, a kernel, the hooks switched off)
        assert all(
            b[3] in forbidden or b[3].startswith(("torch.", "course_lib.", "sys.", "threading."))
            for b in borrowed
            if b[0] == name
        ), f"{name}: BORROWED names what it calls"
        if forbidden:
            assert any(b[0] == name and b[3] in forbidden for b in borrowed), (
                f"{name} forbids {forbidden}: add a borrowed answer that calls one of them"
            )

    @pytest.mark.parametrize("name,old,new,called", borrowed, ids=[f"{b[0]}-{i}" for i, b in enumerate(borrowed)])
    def test_borrowed_answer_is_refused(name, old, new, called):
        for with_source in (True, False):  # the look at the source, then the run alone
            answer = mutant(lesson, name, old, new, with_source=with_source)
            result = exercises[name](answer, quiet=True)
            assert result.status == FAILED, result
            assert BORROWED_HINT in result.message and f"`{called}`" in result.message, result.message

    @pytest.mark.parametrize("name", exercises)
    def test_a_crash_in_student_code_is_reported_not_raised(name):
        def broken(*args, **kwargs):
            return [][1]

        result = exercises[name](broken, quiet=True)
        assert result.status == FAILED and result.message, result  # reported (the hint may name the cause)

    @pytest.mark.parametrize("name,old,new", alternatives, ids=[f"{a[0]}-{i}" for i, a in enumerate(alternatives)])
    def test_alternative_solution_passes(name, old, new):
        right = mutant(lesson, name, old, new)
        for _ in range(mutant_repeats):
            result = exercises[name](right, quiet=True)
            assert result.status == PASSED, result

    @pytest.mark.parametrize("name", exercises)
    def test_check_leaves_global_random_state_alone(name):
        import random

        import numpy as np
        import torch

        fn = solution(lesson, name)
        before = torch.random.get_rng_state(), np.random.get_state()[1].copy(), random.getstate()
        exercises[name](fn, quiet=True)
        after = torch.random.get_rng_state(), np.random.get_state()[1], random.getstate()
        assert torch.equal(before[0], after[0]) and np.array_equal(before[1], after[1]) and before[2] == after[2]

    return {
        "test_solution_passes": test_solution_passes,
        "test_stub_is_not_implemented": test_stub_is_not_implemented,
        "test_mutant_is_rejected_with_a_targeted_hint": test_mutant_is_rejected_with_a_targeted_hint,
        "test_every_exercise_has_enough_mutants": test_every_exercise_has_enough_mutants,
        "test_a_crash_in_student_code_is_reported_not_raised": test_a_crash_in_student_code_is_reported_not_raised,
        "test_alternative_solution_passes": test_alternative_solution_passes,
        "test_every_exercise_that_forbids_names_has_a_borrowed_answer": (
            test_every_exercise_that_forbids_names_has_a_borrowed_answer
        ),
        "test_borrowed_answer_is_refused": test_borrowed_answer_is_refused,
        "test_check_leaves_global_random_state_alone": test_check_leaves_global_random_state_alone,
    }
