"""An exercise check in three steps, so the grade can be decided outside the graded code.

``draw(seed) -> cases``
    The inputs, as plain data (see :mod:`course_lib.checks.plain`): each case is a list of the
    function's positional arguments. Objects (a model, a generator) travel as a recipe (a seed,
    a state dict) that ``materialise`` turns into the object just before the call.
``run(fn, cases) -> records``
    Calls the student's function once per case, on a fresh copy of the inputs, and records
    ``{"returned": ..., "type": ..., "inputs": ...}`` (what came back, its type name, and the
    inputs as they were after the call) or ``{"raised": ..., "message": ..., "where": ...}``.
    Plain data only. It runs where the student's code runs (the notebook's kernel) and never
    moves torch's, NumPy's or Python's global random state.
``judge(cases, records) -> (status, hint)``
    Compares the records with the answers it computes itself from the cases: "passed",
    "not implemented yet" or "failed" with a hint. In grading it runs in the grader's process,
    on cases the grader drew, so nothing the student's code does can change the verdict
    except the records it returns.

In the notebook, ``check(fn)`` goes through exactly the same path: draw, send the cases
through :func:`to_plain`/:func:`from_plain`, run, send the records back the same way, judge.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import math
import os
import random
import re
import secrets
import sys
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED, CheckResult, Mistake, record
from course_lib.checks.borrowed import (
    Borrowed,
    Rules,
    course_code_in,
    graphless,
    guard,
    is_refused_library,
    notebook_uses_forbidden,
    observing,
    refusing,
    tampered,
    uses_forbidden,
)
from course_lib.checks.plain import _is_tensor, from_plain, same, to_plain
from course_lib.checks.probes import crash_mistake

BORROWED = "Borrowed"  # the record of a call to a forbidden name: {"raised": BORROWED, "message": name}


@contextlib.contextmanager
def global_random_state_kept():
    """Whatever runs inside (the student's function included) leaves the global generators as they were."""
    import torch

    py_state, np_state = random.getstate(), np.random.get_state()
    # torch.manual_seed in the student's code reseeds the GPU's generators too: fork those the
    # notebook uses (CUDA once initialised, MPS when present) along with the CPU's
    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    mps = getattr(torch.backends, "mps", None)
    mps_state = torch.mps.get_rng_state() if mps is not None and mps.is_available() else None
    with torch.random.fork_rng(devices=cuda):
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
            if mps_state is not None:
                torch.mps.set_rng_state(mps_state)


@contextlib.contextmanager
def seeded(seed: int):
    """Draw from the CPU generator seeded with ``seed``, then put it back (a check's model is the same on
    every draw). The CPU's only: torch.manual_seed would also reseed the CUDA and MPS generators, which
    fork_rng(devices=[]) does not put back."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        yield


class NotPlain(TypeError):
    """What the student's function returned is not one of the exact types a check reads (see :func:`_plainify`)."""


_name_of = type.__dict__["__name__"].__get__  # a class's name by C's own getter (a metaclass may define __name__)
_mro_of = type.__dict__["__mro__"].__get__
# compared by identity, looked up by id: ``==`` or a hash of a class would run its metaclass's methods
_DICTS = {id(t): t for t in (dict, collections.Counter, collections.defaultdict, collections.OrderedDict)}
_NUMPY_SCALARS = {id(t): t for t in np.sctypeDict.values()}
_KINDS = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (list, "list"), (tuple, "tuple"))
_KINDS += ((dict, "dict"), (np.ndarray, "NumPy array"), (np.generic, "NumPy number"))


def type_name(x) -> str:
    """The name of ``x``'s class, read without running anything of the class's own (a str subclass's characters)."""
    return "".join([_name_of(type(x))])[:80]


def _plain_base(classes) -> str:
    """The name of the first plain kind among ``classes`` (a class's MRO as C stores it), or "" if none is."""
    import torch

    kinds = ((torch.Tensor, "tensor"), *_KINDS)
    return next((name for base in classes for kind, name in kinds if base is kind), "")


def _not_plain(x) -> NotPlain:
    """ "returned a MyList (a subclass of list), expected a list": the nearest plain base of ``x``'s class, from its MRO
    as C stores it."""
    expected = _plain_base(_mro_of(type(x)))
    if not expected:
        return NotPlain(f"returned a {type_name(x)}, which a check does not read (plain data, arrays and tensors only)")
    article = "an" if expected[0] in "aeiou" else "a"
    return NotPlain(f"returned a {type_name(x)} (a subclass of {expected}), expected {article} {expected}")


def _exact(x, _depth: int = 0) -> None:
    """Raise :class:`NotPlain` if what the student returned is, or (inside plain tuples and lists) holds, an object
    of a subclass of a plain kind (a ``typing.NamedTuple``, a list or tensor subclass): the rule
    :func:`_plainify` keeps, kept also for the checks whose ``describe`` reads the returned object itself. Read
    through C's own structures: nothing of the subclass runs."""
    import torch

    kind = type(x)
    if kind is tuple or kind is list:  # builtin iteration: C's
        if _depth < 3:
            for v in x:
                _exact(v, _depth + 1)
        return
    if kind is bool or kind is torch.Size or kind is torch.nn.Parameter or _DICTS.get(id(kind)) is kind:
        return
    if _NUMPY_SCALARS.get(id(kind)) is kind:  # NumPy's own float64 and str_ subclass float and str
        return
    if _plain_base(_mro_of(kind)[1:]):  # a plain kind among its bases: a subclass of it
        raise _not_plain(x)


def _plainify(x, _depth: int = 0):
    """What the student returned, as plain data: containers and NumPy/torch values copied out.

    Exact types only, read through their own C structure: no method of an object of the student's runs in the
    check's frames (a subclass's ``__iter__``, ``__int__`` or ``__class__`` is the student's code, and may be a
    chain of C callables with no frame of the student's). Anything else raises :class:`NotPlain` naming it."""
    import torch

    if _depth > 32:
        raise TypeError("nested too deeply")
    kind = type(x)
    if x is None or kind is bool or kind is int or kind is float or kind is str:
        return x
    if kind is list or kind is tuple or kind is torch.Size:  # builtin (immutable) types: their iteration is C's
        items = [_plainify(v, _depth + 1) for v in x]
        return items if kind is list else tuple(items)
    if _DICTS.get(id(kind)) is kind:  # dict's own items (Counter's and the others' are Python: replaceable)
        return {_plainify(k, _depth + 1): _plainify(v, _depth + 1) for k, v in dict.items(x)}
    if kind is np.ndarray:
        return np.array(x)
    if _NUMPY_SCALARS.get(id(kind)) is kind:
        return np.asarray(x).copy()
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        from course_lib.checks import tensors  # torch's C methods, bound before any student code

        return tensors.read(x, "a tensor")
    raise _not_plain(x)


_PATHS = sysconfig.get_paths()
# Python's, the installed packages' (torch, numpy) and course_lib's own: frames there are not the student's
_LIBRARY_DIRS = tuple(
    {
        str(Path(d).resolve())
        for d in (_PATHS["stdlib"], _PATHS["purelib"], _PATHS["platlib"], Path(__file__).parents[1])
    }
)


def _in_library(filename: str) -> bool:
    """Is this frame's file Python's, an installed package's (torch, numpy) or course_lib's, not the student's?"""
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return any(path == d or path.startswith(d + os.sep) for d in _LIBRARY_DIRS)


def _where(exc: BaseException) -> str:
    """The student's line the crash came from (the last frame outside Python, torch and course_lib)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _in_library(f.filename)]
    if not frames or not frames[-1].line:
        return ""
    return f" (at line {frames[-1].lineno}: {frames[-1].line.strip()!r})"


def is_stub(exc: NotImplementedError) -> bool:
    """Did the student's own code raise this (the exercise's stub, or their own placeholder), not a library that
    does not support what it was given (torch: "... not implemented for 'Long'")?"""
    frames = traceback.extract_tb(exc.__traceback__)
    message = str(exc)
    return (not frames or not _in_library(frames[-1].filename)) and (not message or message.startswith("Exercise"))


def crash_record(exc: Exception) -> dict:
    """The record of an exception from the student's code: the stub (NotImplementedError, no message), or a
    crash with its exception, its message and the student's line."""
    if isinstance(exc, NotImplementedError) and is_stub(exc):
        return {"raised": "NotImplementedError", "message": "", "where": ""}
    message = str(exc)[:300] or ("(no message)" if isinstance(exc, NotImplementedError) else "")  # not the stub's ""
    return {"raised": type(exc).__name__, "message": message, "where": _where(exc)}


def call(
    fn: Callable,
    args: list,
    materialise: Callable | None = None,
    observe: Callable | None = None,
    describe: Callable | None = None,
    forbidden: tuple[str, ...] = (),
    rules: Rules | None = None,
) -> dict:
    """One call of the student's function on a fresh copy of ``args``: the record of what happened.

    While the student's function (and ``describe``, which may run the object it returned) runs, the
    ``forbidden`` names raise (:func:`course_lib.checks.borrowed.refusing`) and every call made is observed
    (:func:`course_lib.checks.borrowed.observing`, with ``rules``, by default those ``forbidden`` implies).
    A refused call is recorded as ``{"raised": "Borrowed", "message": name}``, even when the student's code
    caught the exception. Every record carries ``"observed"``: the observation as plain data.
    """
    rules = Rules.of(forbidden) if rules is None else rules
    args = copy.deepcopy(args)
    live = materialise(copy.deepcopy(args)) if materialise else args
    own = course_code_in(fn, rules)  # the student's function is course_lib's own code: the check would call it
    if own:
        return {"raised": BORROWED, "message": own, "where": "", "observed": {"refused": [own], "intact": True}}
    with refusing(forbidden, fn) as called, observing(rules, live) as seen, graphless(rules):
        rec = _call(fn, live, describe)
    observed = seen.to_plain()
    # the observer switched off; else the first forbidden name called (the names the exercise declares, which the
    # look at the source reports too); else the first call the observer refused
    name = seen.tampered or (called[0] if called else "") or (seen.refused[0] if seen.refused else "")
    if name:
        return {"raised": BORROWED, "message": name, "where": "", "observed": observed}
    if "raised" in rec:
        return {**rec, "observed": observed}
    try:
        inputs = _plainify(observe(args, live) if observe else live)
    except TypeError:
        inputs = None
    return {**rec, "inputs": inputs, "observed": observed}


def _call(fn, live, describe) -> dict:
    try:
        returned = fn(*live)
    except Borrowed as exc:
        return {"raised": BORROWED, "message": exc.name, "where": ""}
    except RecursionError:
        return {"raised": "RecursionError", "message": "your function recursed without end", "where": ""}
    except Exception as exc:  # the stub, or the student's code crashed: the record says where and with what
        return crash_record(exc)
    try:
        _exact(returned)  # before a describe unpacks it: a subclass's methods would run in the check's frames
        value = _plainify(describe(returned, live) if describe else returned)
        to_plain(value)
    except Borrowed as exc:
        return {"raised": BORROWED, "message": exc.name, "where": ""}
    except NotPlain as exc:  # judged before anything else (see Exercise.judge): the hint names the type
        return {"returned": None, "type": type_name(returned), "not_plain": str(exc)}
    except TypeError:
        value = None
    return {"returned": value, "type": type_name(returned)}


@dataclass(frozen=True)
class Exercise:
    """One exercise's check in three steps (see the module docstring); calling it checks a function."""

    id: str
    title: str
    function: str
    params: tuple[str, ...]
    draw: Callable[[int], list]
    body: Callable[[list, list], None] = field(repr=False)  # raises Mistake(hint) on a wrong answer
    materialise: Callable | None = field(default=None, repr=False)
    observe: Callable | None = field(default=None, repr=False)
    errors: Callable | None = field(default=None, repr=False)  # (case, record) -> a hint for a known crash, or ""
    allowed_errors: tuple[str, ...] = ()  # exceptions the exercise asks for: judged by body, not crashes
    describe: Callable | None = field(default=None, repr=False)  # (returned, live args) -> plain: for objects
    # what the student's function may not call: dotted names such as "course_lib.parentheses.is_balanced",
    # "torch.Tensor.backward", "torch.autograd.grad", "torch.nn.LSTM" (the answer borrowed instead of written)
    forbidden: tuple[str, ...] = ()
    # the course_lib helpers this exercise lets the student call (dotted names): the observer refuses the rest
    allowed: tuple[str, ...] = ()

    def __post_init__(self):
        for what in ("forbidden", "allowed"):
            names = getattr(self, what)
            if not isinstance(names, tuple) or not all(isinstance(n, str) and "." in n for n in names):
                raise ValueError(
                    f"Exercise {self.id}: {what} must be a tuple of dotted names such as ('torch.autograd.grad',), "
                    f"got {names!r}"
                )
        # what runs is refused by these rules; editing the exercise's declarations later is itself a refusal
        guard(self, "forbidden", f"{__name__}.Exercise.forbidden")
        guard(self, "allowed", f"{__name__}.Exercise.allowed")

    @property
    def rules(self) -> Rules:
        return Rules.of(self.forbidden, self.allowed)

    def run(self, fn: Callable, cases: list) -> list:
        if self.forbidden:
            used = uses_forbidden(fn, self.forbidden)  # the look at the source: no need to run it
            if used:
                observed = {"refused": [used], "intact": True}
                return [{"raised": BORROWED, "message": used, "where": "source", "observed": observed} for _ in cases]
        switched_off = tampered()  # a check function replaced (or a declaration edited) before this check ran
        if switched_off:
            observed = {"refused": [switched_off], "intact": False}
            return [{"raised": BORROWED, "message": switched_off, "where": "", "observed": observed} for _ in cases]
        rules = self.rules
        with global_random_state_kept():
            return [
                call(fn, list(case), self.materialise, self.observe, self.describe, self.forbidden, rules)
                for case in cases
            ]

    def judge(self, cases: list, records: list) -> tuple[str, str]:
        if not isinstance(records, list) or len(records) != len(cases) or not all(isinstance(r, dict) for r in records):
            return FAILED, "the check's records are malformed (one record per case was expected)"
        for r in records:
            if r.get("raised") == BORROWED:
                return FAILED, self._borrowed_hint(r)
            if r.get("raised") == "NameError" and r.get("message") == "name 'checks' is not defined":
                # the grader's process has no `checks`: only an answer that calls the checks' own code meets this
                return FAILED, self._borrowed_hint({"message": "checks"})
            observed = r.get("observed")
            if isinstance(observed, dict) and (observed.get("refused") or observed.get("intact") is False):
                refused = observed.get("refused")
                first = refused[0] if isinstance(refused, list) and refused else ""
                return FAILED, self._borrowed_hint({"message": first})
        for r in records:
            if isinstance(r.get("not_plain"), str):  # an object the check does not read: named, nothing of it run
                return FAILED, f"Hint: your function {r['not_plain'][:200]}."
        for r in records:
            if r.get("raised") == "NotImplementedError" and not r.get("message"):  # the stub (see is_stub)
                return (
                    NOT_IMPLEMENTED,
                    "Replace `raise NotImplementedError(...)` with your code, then run this cell again.",
                )
        crashed = next(
            (i for i, r in enumerate(records) if "raised" in r and r["raised"] not in self.allowed_errors), None
        )
        if crashed:  # the cases before the crash may already show a known mistake: name it
            try:
                self.body(cases[:crashed], records[:crashed])
            except Mistake as mistake:
                return FAILED, f"Hint: {mistake}"
            except Exception:  # noqa: S110 - the crash itself is reported below
                pass
        for case, r in zip(cases, records):
            hint = (
                self.errors(case, r) if "raised" in r and self.errors and r["raised"] not in self.allowed_errors else ""
            )
            if hint:
                return FAILED, f"Hint: {hint}"
        for r in records:
            if "raised" in r and r["raised"] not in self.allowed_errors:
                if crash_mistake(r):  # a crash that names a property (two dtypes met)
                    return FAILED, f"Hint: {crash_mistake(r)}"
                if r["raised"] == "RecursionError":
                    return FAILED, "Your function recursed without end."
                return FAILED, f"Your function raised {r['raised']}: {r.get('message', '')}{r.get('where', '')}"
        for case, r in zip(cases, records):
            if "raised" in r:
                continue
            changed = _changed_input(self.params, case, r.get("inputs"))
            if changed:
                return FAILED, f"Hint: {changed}"
        try:
            self.body(cases, records)
        except Mistake as mistake:
            return FAILED, f"Hint: {mistake}"
        except Exception as exc:  # an answer so malformed the comparison itself failed
            return FAILED, f"Hint: your answer has an unexpected form ({type(exc).__name__}: {str(exc)[:120]})"
        return PASSED, ""

    def _borrowed_hint(self, record: dict) -> str:
        name = record.get("message")
        # the record crossed from the student's kernel: echo only our own names, or a name the observer gives
        # (a dotted name of torch, course_lib or the hooks, letters, digits and dots only)
        if name == "checks":
            return "Hint: write it yourself: your function may not call the course's checks (`checks`)."
        # a forbidden library's other code, or a package no build exercise allows (sympy, pandas, ...); a function's
        # inner code (``f.<locals>.g``, ``<listcomp>``) is named by what holds it
        tops = {n.split(".")[0] for n in self.forbidden}
        shown = _INNER.sub("", name) if isinstance(name, str) else ""
        top = shown.split(".")[0] if _DOTTED.fullmatch(shown) else ""
        if top and self.forbidden and top not in tops and is_refused_library(top):
            return (
                f"Hint: write it yourself: your function called {top} (`{shown}`); here use only Python's standard "
                "library, torch and numpy."
            )
        if name not in self.forbidden and not (_OBSERVED_NAME.fullmatch(shown) or (top and top in tops)):
            return "Hint: write it yourself: your function may not call what this exercise asks you to replace."
        return (
            f"Hint: write it yourself: your function may not call `{shown}`, which this exercise asks you to replace."
        )

    def judge_source(self, sources: list[str]) -> str:
        """The grader's look at a submission's code cells, in its own process (nothing is run): a hint or ""."""
        name = notebook_uses_forbidden(sources, self.function, self.forbidden) if self.forbidden else ""
        return self._borrowed_hint({"message": name, "where": "source"}) if name else ""

    def check(self, student_fn: Callable, *, quiet: bool = False, seed: int | None = None) -> CheckResult:
        if not callable(student_fn):
            status, message = FAILED, f"pass your function itself, e.g. check(my_fn), not {type(student_fn).__name__}"
        else:
            seed = secrets.randbits(32) if seed is None else seed
            cases = self.draw(seed)
            sent = from_plain(_json_round_trip(to_plain(cases)))
            records = self.run(student_fn, sent)
            switched_off = tampered()  # run itself replaced: its records are not the observer's
            if switched_off:
                records = [{"raised": BORROWED, "message": switched_off, "where": ""} for _ in cases]
            try:
                back = from_plain(_json_round_trip(to_plain(records)))
            except TypeError as exc:
                back = [{"raised": "TypeError", "message": f"your answer is not plain data: {exc}", "where": ""}]
            status, message = self.judge(cases, back)
        result = CheckResult(self.id, self.title, status, message)
        record(result)
        if not quiet:
            print(result)
        return result

    __call__ = check


_OBSERVED_NAME = re.compile(r"(torch|numpy|course_lib|sys|threading)(\.[A-Za-z_][A-Za-z0-9_]*){1,8}")
_INNER = re.compile(r"\.<[a-z]+>")  # .<locals>, .<listcomp>, .<lambda>, ...
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){1,8}")
# the check's own steps, as imported: a student's code that replaces one has switched the check off
for _name in ("call", "_call", "crash_record", "global_random_state_kept"):
    guard(sys.modules[__name__], _name, f"{__name__}.{_name}")
for _name in ("run", "judge", "check", "__call__", "_borrowed_hint", "judge_source", "rules"):
    guard(Exercise, _name, f"{__name__}.Exercise.{_name}")


def _json_round_trip(data):
    import json

    return json.loads(json.dumps(data, allow_nan=False))


def _changed_input(params, case, after) -> str:
    for i, (before, now) in enumerate(zip(case, after if isinstance(after, list) else [None] * len(case))):
        if not same(before, now):
            name = params[i] if i < len(params) else f"argument {i + 1}"
            return (
                f"your function changed its input `{name}` in place ({_what_changed(before, now)}): "
                "the caller's data must stay as it was, so work on a copy (e.g. x = x + ..., not x += ...)"
            )
    return ""


def _what_changed(before, now) -> str:
    """Where an array or tensor first changed (its first entries may be untouched), else both in short."""
    if isinstance(before, dict) and isinstance(now, dict):  # e.g. params: name the entry that changed
        for key in before:
            if key not in now:
                return f"its entry {key!r} was removed"
            if not same(before[key], now[key]):
                return f"its entry {key!r}: {_what_changed(before[key], now[key])}"
        added = [k for k in now if k not in before]
        if added:
            return f"an entry {added[0]!r} was added"
    b, n = as_array(before), as_array(now)
    if b is not None and n is not None and b.shape == n.shape and b.ndim:
        changed = np.argwhere(~((b == n) | (np.isnan(b) & np.isnan(n))))
        if len(changed):
            index = [int(i) for i in changed[0]]
            return f"at index {index}, {_num(b[tuple(index)])} became {_num(n[tuple(index)])}"
    return f"{_short(before)} became {_short(now)}"


# ---------------------------------------------------------------- judging helpers


def _short(x, limit: int = 60) -> str:
    if _is_tensor(x) or isinstance(x, np.ndarray):
        arr = x.detach().double().numpy() if _is_tensor(x) else x
        text = f"{type(x).__name__} of shape {tuple(arr.shape)}"
        if arr.size and arr.dtype != bool:
            text += f" starting {np.ravel(arr)[:3].round(4).tolist()}"
        return text
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_array(x) -> np.ndarray | None:
    """Numbers, lists, arrays and tensors as a float64 array; None when it is none of those."""
    try:
        if _is_tensor(x):
            return x.detach().double().numpy()
        if isinstance(x, bool) or x is None or isinstance(x, (str, dict)):
            return None
        a = np.asarray(x)
        if a.dtype == object or a.dtype.kind not in "biuf":
            return None
        return a.astype(float)
    except (TypeError, ValueError):
        return None


RTOL, ATOL = 1e-4, 1e-5


def difference(got, expected, *, rtol: float = RTOL, atol: float = ATOL, what: str = "the result") -> str:
    """ "" when ``got`` matches ``expected`` at a float32 tolerance; else one short line saying where not.

    ``atol`` is scaled by the size of the expected values, so float32 arithmetic always passes.
    """
    e = as_array(expected)
    g = as_array(got)
    if g is None:
        return f"{what} should be numbers, got {type(got).__name__}"
    if g.shape != e.shape:
        return f"{what} should have shape {tuple(e.shape)}, got {tuple(g.shape)}"
    if not np.all(np.isfinite(g)) and np.all(np.isfinite(e)):
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(g))[0])
        return f"{what} has {g[index]} at index {list(index)}: every entry should be a finite number"
    scale = max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
    # NaN in the answer never matches a finite entry; it matches only a NaN in what it is compared with
    # (a known mistake's output), so the mistake can still be named.
    ok = np.isclose(g, e, rtol=rtol, atol=atol * scale, equal_nan=True) | ((g == e) & ~np.isfinite(e))
    if ok.all():
        return ""
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = f" at index {list(index)}" if index else ""
    return f"{what}{where} should be {_num(e[index])}, got {_num(g[index])}"


def _num(v) -> str:
    v = float(v)
    return repr(v) if not math.isfinite(v) or v == int(v) else f"{v:.6g}"


def matches(got, expected, **tol) -> bool:
    return not difference(got, expected, **tol)


def expect_answers(got: list, expected: list, wrong: dict | None = None, what: list[str] | None = None, **tol) -> None:
    """Every answer right, or the hint of the one known mistake that explains them all, or the first difference."""
    first = ""
    for i, (g, e) in enumerate(zip(got, expected)):
        first = difference(g, e, what=what[i] if what else f"answer {i + 1}", **tol)
        if first:
            break
    if not first:
        return
    for hint, values in (wrong or {}).items():
        if all(v is not None and matches(g, v, **tol) for g, v in zip(got, values)):
            raise Mistake(hint)
    raise Mistake(first)


class ModuleArgs(list):
    """A build exercise's constructor arguments (e.g. I, H), carrying the recipe of the calls that follow."""

    recipe: dict = {}


def materialise_module(args):
    """``[*constructor args, recipe]`` as drawn -> the constructor's arguments with ``.recipe`` (for describe)."""
    live = ModuleArgs(args[:-1])
    live.recipe = args[-1]
    return live


def expect_module_parts(d: dict, naming: str) -> None:
    """A built module's record (a build exercise's class) reports no problem and no missing parameter; else a
    Mistake: parameters that exist but are plain tensors, or ``naming`` (the names the exercise asks for)."""
    if "problem" in d:
        raise Mistake(d["problem"])
    if "missing" in d:
        plain = [n for n in d["missing"] if n in d["attributes"]]
        if plain:
            raise Mistake(f"wrap {', '.join(plain)} in nn.Parameter, so that the module (and the optimizer) sees them")
        raise Mistake(naming)


def size_error(record: dict) -> bool:
    """The student's function crashed on a size or shape mismatch (typically: a size written as a number)."""
    text = record.get("message")
    text = text if isinstance(text, str) else ""  # the record crossed from the student's kernel: any shape
    return record.get("raised") == "RuntimeError" and any(w in text for w in ("shape", "size", "dimension"))


def expect_type(rec: dict, kinds: tuple[str, ...], asked: str) -> None:
    """The student's value has one of the type names ``kinds`` (e.g. ("Tensor",)), else a hint naming ``asked``."""
    if rec.get("type") not in kinds:
        raise Mistake(f"return {asked}, got {rec.get('type')}")


def expect_finite(value, what: str = "your answer") -> None:
    a = as_array(value)
    if a is not None and not np.all(np.isfinite(a)):
        raise Mistake(f"{what} contains NaN or inf: every entry must be a finite number")


def expect_rng_used(got_a, got_again, got_other, name: str = "rng") -> None:
    """Same seed twice gives the same answer, another seed a different one: the passed generator is the one used."""
    if not same(got_a, got_again):
        raise Mistake(
            f"two calls with generators seeded alike gave different answers: draw every random number from "
            f"the `{name}` you are given, not from the global generator (random, np.random or torch's default)"
        )
    if same(got_a, got_other):
        raise Mistake(
            f"generators with different seeds gave the same answer: use the `{name}` you are given "
            "(do not create or re-seed your own)"
        )
