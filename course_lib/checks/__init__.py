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

Checks not yet split into the three steps are written with :func:`exercise` and
:func:`expect`; ``exercises()`` wraps them too, with ``trusted=False`` (their verdict is
computed where the student's code runs).

Every result is kept in :data:`RESULTS` and, when the environment variable
``COURSE_LIB_RESULTS`` names a file, appended to it as one JSON line; :func:`summary`
lists the latest result of each exercise (the last cell of every exercises notebook).
"""

from __future__ import annotations

import functools
import json
import os
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass

PASSED = "passed"
NOT_IMPLEMENTED = "not implemented yet"
FAILED = "failed"
RESULTS_ENV = "COURSE_LIB_RESULTS"

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


def expect(condition: bool, hint: str) -> None:
    """Fail the check with ``hint`` unless ``condition`` holds."""
    if not condition:
        raise Mistake(hint)


def close(actual, expected, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True when two numbers or arrays agree (shapes too); never raises on odd input."""
    import numpy as np

    try:
        a = np.asarray(_to_numpy(actual), dtype=float)
        b = np.asarray(_to_numpy(expected), dtype=float)
    except (TypeError, ValueError):
        return False
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False))


def _to_numpy(x):
    if hasattr(x, "detach"):  # a torch tensor, without importing torch here
        return x.detach().cpu().numpy()
    return x


def is_number(x) -> bool:
    """A real, finite-or-infinite Python/NumPy/0-d torch number (not a bool, not a list)."""
    try:
        import numpy as np

        if isinstance(x, (str, bytes, bool)):
            return False
        if hasattr(x, "detach"):
            x = x.detach().cpu().numpy()
        return not isinstance(x, bool) and np.ndim(x) == 0 and isinstance(float(x), float)
    except (TypeError, ValueError):
        return False


def expect_value(got, expected, wrong: dict | None = None, what: str = "the result", **tolerance) -> None:
    """Pass when ``got`` is close to ``expected``; otherwise name the mistake it matches.

    ``wrong`` maps a hint to the value a known mistake would give: when the
    student's answer equals one of those, that hint is the message.
    """
    if close(got, expected, **tolerance):
        return
    for hint, value in (wrong or {}).items():
        if close(got, value, **tolerance):
            raise Mistake(hint)
    raise Mistake(f"{what} should be {_show(expected)}, got {_show(got)}")


def expect_values(
    got: list, expected: list, wrong: dict | None = None, what: list[str] | None = None, **tolerance
) -> None:
    """``expect_value`` over several cases at once: a hint is given only when its
    mistake explains every one of the student's answers, so two mistakes that agree
    on one input are still told apart."""
    if len(got) != len(expected):
        raise ValueError(f"got has {len(got)} answers but expected has {len(expected)}")
    if all(close(g, e, **tolerance) for g, e in zip(got, expected)):
        return
    for hint, values in (wrong or {}).items():
        if all(close(g, v, **tolerance) for g, v in zip(got, values)):
            raise Mistake(hint)
    i = next(i for i, (g, e) in enumerate(zip(got, expected)) if not close(g, e, **tolerance))
    label = what[i] if what else f"answer {i + 1}"
    raise Mistake(f"{label} should be {_show(expected[i])}, got {_show(got[i])}")


def _show(x) -> str:
    text = repr(_to_numpy(x))
    return text if len(text) < 200 else text[:200] + "..."


def record(result: CheckResult) -> None:
    RESULTS.append(result)
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(result)) + "\n")


def _student_frame(exc: BaseException) -> str:
    """Where in the student's code an exception came from (the last frame outside course_lib)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "course_lib" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f" (at line {f.lineno}: {f.line.strip()!r})" if f.line else ""


def exercise(exercise_id: str, title: str) -> Callable:
    """Turn a check body ``body(student_fn)`` into ``check(student_fn) -> CheckResult``."""

    def decorate(body: Callable) -> Callable:
        @functools.wraps(body)
        def check(student_fn: Callable, *, quiet: bool = False) -> CheckResult:
            if not callable(student_fn):
                result = CheckResult(
                    exercise_id,
                    title,
                    FAILED,
                    f"pass your function itself, e.g. check(my_fn), not {type(student_fn).__name__}",
                )
            else:
                result = _run(body, student_fn, exercise_id, title)
            record(result)
            if not quiet:
                print(result)
            return result

        check.exercise_id = exercise_id
        check.title = title
        return check

    return decorate


def _run(body: Callable, student_fn: Callable, exercise_id: str, title: str) -> CheckResult:
    from course_lib.checks.protocol import global_random_state_kept

    try:
        with global_random_state_kept():  # a check never moves the notebook's random numbers
            body(student_fn)
    except NotImplementedError:
        return CheckResult(
            exercise_id,
            title,
            NOT_IMPLEMENTED,
            "Replace `raise NotImplementedError(...)` with your code, then run this cell again.",
        )
    except Mistake as mistake:
        return CheckResult(exercise_id, title, FAILED, f"Hint: {mistake}")
    except RecursionError:
        return CheckResult(exercise_id, title, FAILED, "Your function recursed without end.")
    except Exception as exc:  # the student's code crashed: say where and with what
        return CheckResult(
            exercise_id, title, FAILED, f"Your function raised {type(exc).__name__}: {exc}{_student_frame(exc)}"
        )
    return CheckResult(exercise_id, title, PASSED, "")


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

    if not isinstance(lesson, str) or not re.fullmatch(r"\d\d(_\w+)?", lesson):
        raise ValueError(f"lesson must be two digits such as '01' (or '01_ngrams'), got {lesson!r}")
    try:
        module = importlib.import_module(f"course_lib.checks.lesson{lesson[:2]}")
    except ModuleNotFoundError:
        raise ValueError(f"there are no exercises for lesson {lesson!r}") from None
    found = {}
    for name, obj in vars(module).items():
        if isinstance(obj, Exercise):
            found[obj.id] = obj
        elif name.startswith("check_") and callable(obj) and hasattr(obj, "exercise_id"):
            found[obj.exercise_id] = _legacy(obj, name.removeprefix("check_"))
    return dict(sorted(found.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]))


def _legacy(check: Callable, function: str):
    """A check written as one body, in the three steps: run computes the verdict (not forge-proof)."""

    def run(fn, cases):
        from course_lib.checks.protocol import global_random_state_kept

        with global_random_state_kept():
            body = check.__wrapped__
            result = _run(body, fn, check.exercise_id, check.title)
        return [{"status": result.status, "message": result.message}]

    def judge(cases, records):
        if not (isinstance(records, list) and len(records) == 1 and isinstance(records[0], dict)):
            return FAILED, "the check's records are malformed"
        status, message = records[0].get("status"), records[0].get("message", "")
        if status not in (PASSED, NOT_IMPLEMENTED, FAILED) or not isinstance(message, str):
            return FAILED, "the check's records are malformed"
        return status, message

    return _LegacyExercise(check.exercise_id, check.title, function, check, run, judge)


@dataclass(frozen=True)
class _LegacyExercise:
    id: str
    title: str
    function: str
    _check: Callable
    run: Callable
    judge: Callable
    params: tuple = ()
    trusted: bool = False

    def draw(self, seed: int) -> list:
        return [[seed]]

    def check(self, student_fn, *, quiet: bool = False, seed=None):
        return self._check(student_fn, quiet=quiet)


from course_lib.checks.plain import from_plain, to_plain  # noqa: E402
from course_lib.checks.protocol import Exercise  # noqa: E402

__all__ = [
    "CheckResult",
    "Exercise",
    "exercises",
    "to_plain",
    "from_plain",
    "Mistake",
    "expect",
    "expect_value",
    "expect_values",
    "close",
    "is_number",
    "exercise",
    "record",
    "summary",
    "RESULTS",
    "PASSED",
    "NOT_IMPLEMENTED",
    "FAILED",
]
