"""Exercise checks: every exercise in every lesson ends with one.

A check calls the student's function on fresh inputs and says one of three things:

- **passed**;
- **not implemented yet**: the function still raises ``NotImplementedError``
  (no exception escapes, so the rest of the notebook keeps running);
- **failed**, with a hint aimed at the likely mistake (wrong log base, missing
  vocabulary size, input changed in place, ...).

The protocol (what a grader uses)
---------------------------------
``exercises("01")`` maps exercise ids to :class:`~course_lib.checks.protocol.Exercise`
objects (``{"1.1": Exercise(...), ...}``). Each has ``id``, ``title``, ``function`` (the
name of the student's function in the notebook), ``params`` and three steps:

- ``draw(seed) -> cases``: the inputs as plain data, one list of positional arguments per
  case. Inputs that are objects (a model, a generator) travel as a recipe (a seed, a state
  dict) that the exercise's ``materialise`` builds just before the call.
- ``run(fn, cases) -> records``: runs where the student's code runs. One record per case:
  ``{"returned", "type", "inputs"}`` (the value, its type name, the inputs after the call)
  or ``{"raised", "message", "where"}``. Plain data only; global random state untouched.
- ``judge(cases, records) -> (status, hint)``: computes the right answers itself from the
  cases and compares, in the grader's own process. It checks first that no input was changed
  in place (against the cases it drew), then the answers.

:func:`to_plain` / :func:`from_plain` (``course_lib.checks.plain``) are the strict JSON
encoding records and cases cross a process boundary in: tensors and arrays as
``{dtype, shape, data}``, everything that is not plain data refused. ``check(fn)`` in the
notebook goes draw -> to_plain -> from_plain -> run -> to_plain -> from_plain -> judge, so
every notebook run exercises the boundary code. Checks never touch torch's, NumPy's or
Python's global random state: draws use local generators seeded from the seed, and ``run``
restores the global generators after the student's function (``torch.random.fork_rng``).

Every result is kept in :data:`RESULTS`; :func:`summary` lists the latest result of each
exercise (the last cell of every exercises notebook). Graders never read results written in
the student's kernel: they call ``draw`` and ``judge`` themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

PASSED = "passed"
NOT_IMPLEMENTED = "not implemented yet"
FAILED = "failed"

_SYMBOL = {PASSED: "✅", NOT_IMPLEMENTED: "⏳", FAILED: "❌"}


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check; truthy only when it passed."""

    exercise: str
    title: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{_SYMBOL[self.status]} Exercise {self.exercise} ({self.title}): {self.status}. {self.message}".rstrip()


RESULTS: list[CheckResult] = []


class Mistake(AssertionError):
    """Raised inside a check: its message is the hint the student sees."""


def record(result: CheckResult) -> None:
    RESULTS.append(result)


def summary(results=None, lesson: str | None = None) -> str:
    """One line per exercise, the latest result of each, in the order first checked.

    With ``lesson`` ("01"), every exercise of the lesson is listed in order, and one whose
    check has not run yet says so, so a student sees at a glance what is left.
    """
    latest: dict[str, CheckResult] = {}
    for r in RESULTS if results is None else results:
        latest[r.exercise] = r
    if lesson is None:
        return "\n".join(str(r) for r in latest.values())
    lines = []
    for exercise_id, ex in exercises(lesson).items():
        r = latest.get(exercise_id)
        lines.append(
            str(r) if r is not None else f"⬜ Exercise {exercise_id} ({ex.title}): not checked yet. Run its check cell."
        )
    done = sum(latest.get(i) is not None and latest[i].passed for i in exercises(lesson))
    lines.append(f"{done} of {len(lines)} exercises passed.")
    return "\n".join(lines)


def exercises(lesson: str) -> dict:
    """The exercises of a lesson ("01" or "01_ngrams"), by id: ``{"1.1": Exercise, ...}``, in order."""
    import importlib
    import re
    import sys

    if not isinstance(lesson, str) or not re.fullmatch(r"\d\d(_\w+)?", lesson):
        raise ValueError(f"lesson must be two digits such as '01' (or '01_ngrams'), got {lesson!r}")
    try:
        module = importlib.import_module(f"course_lib.checks.lesson{lesson[:2]}")
    except ModuleNotFoundError:
        raise ValueError(f"there are no exercises for lesson {lesson!r}") from None
    if "torch" in sys.modules:  # the checks' reader of tensors binds torch's C methods now, before student code
        importlib.import_module("course_lib.checks.tensors")
    found = {obj.id: obj for obj in vars(module).values() if isinstance(obj, Exercise)}
    return dict(sorted(found.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]))


from course_lib.checks.plain import from_plain, to_plain  # noqa: E402
from course_lib.checks.protocol import Exercise  # noqa: E402

__all__ = [
    "CheckResult",
    "Exercise",
    "exercises",
    "to_plain",
    "from_plain",
    "Mistake",
    "record",
    "summary",
    "RESULTS",
    "PASSED",
    "NOT_IMPLEMENTED",
    "FAILED",
]
