"""Borrowed answers: a check refuses an answer that calls what the exercise asks the student to write.

The decision rests on what runs, not on names. While a check runs the student's code (``Exercise.run``
-> :func:`course_lib.checks.protocol.call`), :func:`observing` watches every call made:

- a **profile hook** (``sys.setprofile``, and ``threading.setprofile`` for threads the code starts) sees
  each Python call (its code object, so an alias or a method taken into a class body changes nothing)
  and each C call (the builtin object itself);
- where gradients are the exercise, torch's **dispatch mode** (``TorchDispatchMode``) also sees every aten op
  that runs, however it was reached, so a gradient kernel (``*_backward``) started by any route is seen.

What is refused (:class:`Rules`, derived from the exercise's ``forbidden`` and ``allowed`` declarations):

- **course_lib**: a call into course_lib from outside it (the student's code, torch, or a check calling an
  object the student handed it), unless it is an object the check handed in or a helper the exercise
  ``allowed``. ``course_lib.checks`` is refused in every exercise; the rest of course_lib in build exercises
  (those that declare ``forbidden``). No solution calls a course_lib helper today, so ``allowed`` is empty in
  every lesson: an exercise that lets students use one (a vocabulary, ``get_device``) names it there.
  A student's function or class that *is* course_lib code (``check(course_fn)``, ``forward =
  course_lib.buildup.Head.forward`` in a class body, a subclass) is refused before it runs
  (:func:`course_code_in`), since the check itself would be the caller;
- **autograd** where the exercise forbids ``torch.Tensor.backward`` / ``torch.autograd.grad``: any code of
  ``torch.autograd`` (but ``no_grad`` and the profiler), ``torch.func`` / ``torch._functorch``, torch's backward
  formulas in Python (``torch._decomp``), forward-mode autograd, the engine (``Variable._execution_engine.run_backward``), and gradient kernels;
- **fused kernels** that compute the answer, for each ready-made torch name the exercise forbids
  (:data:`KERNELS`: ``torch.nn.LSTM`` -> ``lstm``, ``lstm_cell``, ...; attention -> the
  ``scaled_dot_product_attention`` family, ``_native_multi_head_attention``, the fused masked softmax
  ``_masked_softmax`` / ``_safe_softmax``, ...; course_lib's ``masked_softmax`` -> the last two), by the identity of every
  builtin that runs one (``torch.lstm_cell`` = ``torch._VF.lstm_cell``, each ``torch.ops.aten`` overload);
  and compilers that would run code out of sight (``torch.jit``, ``torch.compile``), called by the student;
- **switching the observer off**: calling ``sys.setprofile``/``sys.getprofile``/``threading.setprofile``,
  disabling torch's modes (``DisableTorchFunction``, ``_DisableTorchDispatch``, the dispatch-key switches),
  or leaving our mode popped; and replacing a guarded function of the checks (:func:`guard`: the protocol's
  steps, ``Exercise.run``/``check``/``judge``, this module's observer) or editing an Exercise's ``forbidden``
  or ``allowed`` since import (:func:`tampered`). An answer that does so is refused, naming the call.

Nothing is raised by the observer (an exception in a profile hook would switch it off): the student's code
runs on, and the record says what was refused. Two older, cheaper layers stay in front: :func:`refusing`
replaces each forbidden dotted name with a stand-in that raises for the duration of the call, and
:func:`uses_forbidden` reads the student's source (:func:`notebook_uses_forbidden`: the grader's reading of
the notebook's text). A forbidden name that was called leads the hint; else the first refused call.

The observation as plain data (for the grader)
----------------------------------------------
Every record ``Exercise.run`` returns carries ``"observed": {"refused": [names], "intact": bool,
"tampered": name}``: the dotted names of the refused calls in call order (at most 20; ``"torch.ops.aten.
lstm_cell.default"``, ``"course_lib.checks.lesson05.reference_decode"``, ``"sys.setprofile"``), and whether
the observer stayed in place (``tampered`` names what switched it off). A refused call also makes the record
``{"raised": "Borrowed", "message": name}``. ``Exercise.judge`` fails a record whose ``observed`` shows a
refusal or ``intact: False`` with "Hint: write it yourself: your function may not call `NAME`, which this
exercise asks you to replace." (a name from the kernel is echoed only when it is a plain dotted name).
A grader running the answer cells in a fresh process should, there: call ``tampered()`` before and after
``exercise.run(fn, cases)`` (a non-empty name is a refusal), send the records to its own process, and there
require every record to carry ``observed`` (a record without it did not come from the observer) before
``judge``. In-process observation is defence in depth, not a sandbox: code that rewrites Python objects
without calling anything (a closure's cell, a list's items) is beyond it, which is why the grader decides
from plain data in its own process and also reads the source.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import gc as _gc
import importlib
import importlib.util
import inspect
import os
import sys
import textwrap
import threading
import types
from dataclasses import dataclass, field


class Borrowed(Exception):
    """Raised by a stand-in: the student's function called a name its exercise forbids."""

    def __init__(self, name: str):
        super().__init__(f"`{name}` may not be called in this exercise: write it yourself")
        self.name = name


_ACTIVE: list[list[str]] = []  # the names called so far, one list per active refusal


def _refused(name: str):
    """What every stand-in does: note the call (also in the observation under way, in call order), then raise."""
    if _ACTIVE:
        _ACTIVE[-1].append(name)
    if _OBSERVING:
        _OBSERVING[-1].note(name)
    raise Borrowed(name)


_OBSERVING: list = []  # the observations under way (see observing), innermost last


def _said_at_once(name: str) -> None:
    """Where each refusal goes the moment it is noted, besides the observation: nowhere here. The grader's harness
    puts its own in its place before any student code runs (the refusal leaves the student's process at once), so
    code that empties ``Observation.refused`` afterwards takes nothing back."""


def resolve(dotted: str):
    """``(owner, attribute, object)`` for a dotted name: the longest importable module prefix, then attributes."""
    if not isinstance(dotted, str) or "." not in dotted:
        raise ValueError(f"forbidden names must be dotted names such as 'torch.autograd.grad', got {dotted!r}")
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:-1]:
                owner = getattr(owner, part)
            return owner, parts[-1], getattr(owner, parts[-1])
        except AttributeError:
            break
    raise ValueError(f"forbidden name {dotted!r} does not name anything importable")


def _stand_in_code(name: str, original: types.CodeType) -> types.CodeType:
    """A code object that calls ``_refused(name)``, with the original's free variables (so it can be swapped in)."""
    return _stand_in_for(name, original.co_freevars)


@functools.cache
def _stand_in_for(name: str, free: tuple) -> types.CodeType:
    # cached: a check installs the refusal around each of its hundreds of calls, and compiling was most of that
    # cost; code objects are immutable, so one per (name, free variables) serves every call
    inner = "    def refused(*args, **kwargs):\n"
    if free:
        inner = "    " + ", ".join(free) + " = " + ", ".join("None" for _ in free) + "\n" + inner
        inner += "        (" + ", ".join(free) + ",)\n"
    inner += f"        __import__('course_lib.checks.borrowed', fromlist=['_refused'])._refused({name!r})\n"
    namespace: dict = {}
    # compiled as this file's code: an observer that tells the student's frames from course_lib's by file (the
    # grader's) then sees the student call the forbidden name, not the student call this module's _refused
    exec(compile(f"def _outer():\n{inner}    return refused\n", _HERE, "exec"), namespace)
    code = namespace["_outer"]().__code__
    assert len(code.co_freevars) == len(free)
    _STAND_INS.append(code)  # the grader's harness knows these as course_lib's own code (made before any student's)
    return code


_STAND_INS: list = []


def _raiser(name: str):
    def refused(*args, **kwargs):
        _refused(name)

    refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


def _namespaces(fn) -> list[dict]:
    """The global namespaces the student's function (or class) reads names from."""
    spaces = []
    for f in _functions_of(fn):
        g = getattr(f, "__globals__", None)
        if isinstance(g, dict) and all(g is not s for s in spaces):
            spaces.append(g)
    return spaces


def _functions_of(obj) -> list:
    """The Python functions that make up ``obj``: itself, or a class's methods (a property's getter, setter and
    deleter included). The grader's harness uses it too, for its own observer's methods."""
    if inspect.isfunction(obj):
        return [obj]
    if inspect.ismethod(obj):
        return [obj.__func__]
    if inspect.isclass(obj):
        found = []
        for value in vars(obj).values():
            value = getattr(value, "__func__", value)  # staticmethod, classmethod
            if isinstance(value, property):
                found += [f for f in (value.fget, value.fset, value.fdel) if inspect.isfunction(f)]
            elif inspect.isfunction(value):
                found.append(value)
        return found
    call = vars(type(obj)).get("__call__")
    return [call] if inspect.isfunction(call) else []


# (the builtins searched for, the modules loaded then, the namespaces that held one of them): see _alias_spaces
_ALIASES: list[tuple[tuple, tuple, list]] = []


def _holding(spaces: list[dict], objs: list) -> list[dict]:
    """The namespaces among ``spaces`` that hold any of ``objs``. Tens of thousands of entries, compared by
    identity in plain bytecode: no call per entry (a grader's profile and audit hooks see every call; an id()
    per entry made this most of a graded check's time), and nothing of a value's own code (__eq__) ever runs."""
    found = []
    for space in spaces:
        for value in list(space.values()):
            for obj in objs:
                if value is obj:
                    break
            else:
                continue
            found.append(space)
            break
    return found


def _alias_spaces(objs: list) -> list[dict]:
    """The module namespaces that hold an alias of one of ``objs`` (builtins a check refuses).

    Every loaded module is searched the first time, and again whenever a module was loaded or dropped since;
    otherwise only those found holding one (a check enters :func:`refusing` once per case: searching every
    module each time was most of a graded check's time under the grader's trace hook). Between two cases only
    the check and the student's function run: an alias the student's code writes into a module that held none
    is not replaced, but the observer sees the builtin's call by its identity, whatever name reached it."""
    modules = tuple(m for m in list(sys.modules.values()) if isinstance(getattr(m, "__dict__", None), dict))
    for searched, loaded, holders in _ALIASES:
        if (
            len(searched) == len(objs)
            and all(a is b for a, b in zip(searched, objs))
            and len(loaded) == len(modules)
            and all(a is b for a, b in zip(loaded, modules))
        ):
            return list(holders)
    holders = _holding([vars(m) for m in modules], objs)
    if len(_ACTIVE) == 1:  # not inside another refusing, whose stand-ins may hide aliases
        _ALIASES[:] = _ALIASES[-7:] + [(tuple(objs), modules, holders)]
    return list(holders)


@contextlib.contextmanager
def refusing(forbidden, fn=None):
    """Within the block, calling any of ``forbidden`` records its name and raises :class:`Borrowed`.

    Yields the list of names called (in call order). ``fn`` is the student's function: its global
    namespace is searched for aliases of forbidden builtins. Everything is restored on exit.
    """
    called: list[str] = []
    undo: list = []
    loose: dict[int, tuple] = {}  # id -> (builtin, its stand-in): every module is searched once for all of them
    _ACTIVE.append(called)
    try:
        for name in forbidden:
            owner, attr, obj = resolve(name)
            if inspect.isfunction(obj):
                code = obj.__code__
                obj.__code__ = _stand_in_code(name, code)
                undo.append(lambda obj=obj, code=code: setattr(obj, "__code__", code))
            elif inspect.isclass(obj):
                for method in ("__init__", "forward"):
                    if method == "forward" and not hasattr(obj, "forward"):
                        continue
                    missing = object()
                    own = vars(obj).get(method, missing)
                    setattr(obj, method, _raiser(name))
                    if own is missing:
                        undo.append(lambda obj=obj, method=method: delattr(obj, method))
                    else:
                        undo.append(lambda obj=obj, method=method, own=own: setattr(obj, method, own))
            else:
                stand_in = _raiser(name)
                loose.setdefault(id(obj), (obj, stand_in))  # two names of one builtin: the first name is said
                if not isinstance(owner, types.ModuleType) and getattr(owner, attr, None) is obj:
                    # a method of a class (e.g. a builtin method of torch.Tensor, perhaps inherited)
                    own = attr in vars(owner)
                    setattr(owner, attr, stand_in)
                    if own:
                        undo.append(lambda owner=owner, attr=attr, obj=obj: setattr(owner, attr, obj))
                    else:
                        undo.append(lambda owner=owner, attr=attr: delattr(owner, attr))
        if loose:
            pairs = list(loose.values())
            spaces = _alias_spaces([obj for obj, _ in pairs])
            spaces += [s for s in (_namespaces(fn) if fn is not None else []) if all(s is not t for t in spaces)]
            for space in spaces:
                for key, value in list(space.items()):
                    for obj, stand_in in pairs:
                        if value is obj:
                            space[key] = stand_in
                            undo.append(lambda space=space, key=key, obj=value: space.__setitem__(key, obj))
                            break
        yield called
    finally:
        for restore in reversed(undo):
            restore()
        _ACTIVE.remove(called)


# ---------------------------------------------------------------- the look at the source


def _chain(node) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None when the expression is not a plain chain of names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _imported(node) -> list[str]:
    """The dotted names an import statement binds (``from a.b import c`` -> "a.b.c")."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [f"{node.module}.{a.name}" for a in node.names if node.module and not node.level]


def _locals(tree) -> set[str]:
    names = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    names |= {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _parse(source: str, tries: int = 3):
    """``ast.parse``, again on CPython 3.11's spurious "AST constructor recursion depth mismatch" (gh-106905: the ast
    module's depth count is shared, so a parse elsewhere, a traceback formatted on another thread, can upset it)."""
    for _ in range(tries - 1):
        try:
            return ast.parse(source)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
    return ast.parse(source)


def _source(fn) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def uses_forbidden(fn, forbidden) -> str:
    """The first forbidden name the student's function (or class) reaches in its source, defaults or closure; "".

    Student helpers (functions and classes defined in the same namespace) are followed.
    Methods (``torch.Tensor.backward``) are left to :func:`refusing`, since ``x.backward`` on a
    local cannot be resolved from the source.
    """
    targets = []
    for name in forbidden:
        obj = resolve(name)[2]
        targets.append((name, obj))
    if not targets:
        return ""

    def hit(obj) -> str:  # the object itself, or a copy of a function made from its code
        code = getattr(obj, "__code__", None)
        return next(
            (name for name, t in targets if obj is t or (code is not None and code is getattr(t, "__code__", None))), ""
        )

    seen: set[int] = set()
    todo = [fn]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            for base in obj.__mro__[1:]:
                if hit(base):
                    return hit(base)
        for f in _functions_of(obj):
            found = [*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values()]
            found += [c.cell_contents for c in (f.__closure__ or ()) if _has_contents(c)]
            for value in found:
                if hit(value):
                    return hit(value)
                if _students(value, f):
                    todo.append(value)
            source = _source(f)
            if source is None:
                continue
            try:
                tree = _parse(source)
            except SyntaxError:
                continue
            local = _locals(tree) - {f.__name__}
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):  # an import inside the function
                    for dotted in _imported(node):
                        if any(dotted == name or dotted.startswith(name + ".") for name, _ in targets):
                            return next(name for name, _ in targets if dotted == name or dotted.startswith(name + "."))
                chain = _chain(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
                if not chain or chain[0] in local:
                    continue
                value = _lookup(chain, f.__globals__)
                if value is _MISSING:
                    continue
                if hit(value):
                    return hit(value)
                if _students(value, f):
                    todo.append(value)  # the student's own helper: look inside it too
    return ""


_MISSING = object()


def _students(value, f) -> bool:
    """``value`` is a function or class the student wrote beside ``f`` (same namespace), not a library's."""
    if inspect.isfunction(value):
        return value.__globals__ is f.__globals__
    return inspect.isclass(value) and value.__module__ == f.__module__


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _lookup(chain: list[str], namespace: dict):
    if chain[0] in namespace:
        value = namespace[chain[0]]
    elif hasattr(builtins, chain[0]):
        value = getattr(builtins, chain[0])
    else:
        return _MISSING
    for part in chain[1:]:
        if not isinstance(value, (types.ModuleType, type)):
            return _MISSING  # only modules and classes: never run a student's property
        try:
            value = inspect.getattr_static(value, part)
        except AttributeError:
            return _MISSING
        value = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    return value


# ---------------------------------------------------------------- the grader's look: the notebook's text only


def notebook_uses_forbidden(sources: list[str], function: str, forbidden) -> str:
    """The first forbidden name that ``function`` reaches in a notebook's code cells, read without running them.

    For the grader's own process, where the student's kernel (and whatever it did to the run-time
    refusal) cannot reach: imports and simple aliases (``ib = P.is_balanced``) are followed, and so
    are the student's own functions and classes; names are resolved only inside the packages that
    ``forbidden`` names (never importing a module a student names). A forbidden method
    (``torch.Tensor.backward``) counts as called by ``x.backward(...)`` unless the notebook defines a
    method of that name itself. "" when none is found.
    """
    forbidden = tuple(forbidden)
    if not forbidden:
        return ""
    packages = {name.split(".")[0] for name in forbidden}
    targets = [(name, resolve(name)) for name in forbidden]
    methods = {attr: name for name, (owner, attr, _) in targets if inspect.isclass(owner)}
    aliases: dict[str, str] = {}
    defs: dict[str, ast.AST] = {}
    for source in sources:
        try:
            tree = _parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    if isinstance(node, ast.Import):
                        aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    elif node.module and not node.level:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[node.name] = node
                aliases.pop(node.name, None)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                chain = _chain(node.value)
                if chain and chain[0] in aliases:
                    aliases[node.targets[0].id] = ".".join([aliases[chain[0]], *chain[1:]])
    own_methods = {
        n.name for d in defs.values() if isinstance(d, ast.ClassDef) for n in d.body if isinstance(n, ast.FunctionDef)
    }

    def hit(dotted: str) -> str:
        if dotted.split(".")[0] not in packages:
            return ""
        for name, (_, _, obj) in targets:
            if dotted == name or dotted.startswith(name + "."):
                return name
            try:
                if resolve(dotted)[2] is obj:
                    return name
            except Exception:  # noqa: BLE001, S112 - a name that does not resolve is not this one
                continue
        return ""

    seen: set[str] = set()
    todo = [function]
    while todo:
        current = todo.pop()
        if current in seen or current not in defs:
            continue
        seen.add(current)
        node = defs[current]
        local = _locals(node) - {current}
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                for dotted in _imported(sub):
                    if hit(dotted):
                        return hit(dotted)
            if isinstance(node, ast.ClassDef) and sub in node.bases:
                chain = _chain(sub)
            elif isinstance(sub, (ast.Attribute, ast.Name)):
                chain = _chain(sub)
            else:
                chain = None
            if isinstance(sub, ast.Attribute) and sub.attr in methods and sub.attr not in own_methods:
                return methods[sub.attr]
            if not chain or chain[0] in local:
                continue
            if chain[0] in defs:
                todo.append(chain[0])
            elif chain[0] in aliases:
                found = hit(".".join([aliases[chain[0]], *chain[1:]]))
                if found:
                    return found
    return ""


# ---------------------------------------------------------------- the look at what runs: the observer

_HERE = os.path.abspath(__file__)  # as code objects name their file
_COURSE_DIR = os.path.dirname(os.path.dirname(_HERE))  # course_lib/
# the checks' reader of the student's tensors switches torch's handlers off around torch's C methods only
_TENSORS = os.path.join(os.path.dirname(_HERE), "tensors.py")
# what a hook on calls must keep for itself, taken when course_lib is imported (before any student code runs)
_setprofile, _getprofile = sys.setprofile, sys.getprofile
_thread_setprofile, _thread_getprofile = threading.setprofile, threading.getprofile

# autograd: the exercise asks for a gradient written by hand. Refused: every torch.Tensor.backward /
# torch.autograd / torch.func / forward-mode route, torch's own backward formulas in Python (torch._decomp), and
# the engine itself. torch.no_grad and friends (grad_mode), the profiler (optimizer.step wraps itself in it) and
# anomaly mode compute no gradient: allowed.
AUTOGRAD_NAMES = ("torch.Tensor.backward", "torch.autograd.grad", "torch.autograd.backward")
_AUTOGRAD_DIRS = ("autograd", "_functorch", "func")  # and _decomp's gradient formulas: _REIMPLEMENTED_DIRS
# forward-mode autograd's way in: a tangent is attached to a tensor by this aten op only (fwAD.make_dual,
# torch.func.jvp): barred at the dispatcher while grading (see barred_ops), whatever calls it
FORWARD_AD_OPS = ("_make_dual",)
# compilers run what they compiled out of the observer's sight (TorchScript, dynamo): refused where a torch
# route is refused, when the student's code (not torch's own) calls them
_OPAQUE_DIRS = ("jit", "_dynamo", "compiler", "_inductor", "_export", "export")
# torch's own Python reimplementations of its ops (decompositions, references, primitives: gru_cell_data is a GRU
# step, _refs' softmax a softmax; torch.ao's float "quantizable" LSTMCell; the reference implementations torch's
# own tests keep): what eager torch never runs, so a call there is a ready-made op by another route; refused where
# a torch route is (fused kernels or autograd), whoever calls them. Paths inside torch's folder.
_REIMPLEMENTED_DIRS = tuple(
    d + os.sep for d in ("_decomp", "_refs", "_prims", "ao", os.path.join("testing", "_internal"))
)
# torch's Python that computes, or builds what it takes, what a fused kernel computes, by where it lives inside torch's
# folder: refused wherever that kernel is, whoever calls it. Attention: torch.nn.attention (CausalBias and
# causal_lower_right materialise a causal mask, flex_attention's create_mask any mask), ONNX's Attention op in eager
# Python (torch.onnx.ops.attention: softmax(QK^T)V written out), flex attention's own math version, nested tensors'
# attention; with the transformer's named mask helper (FORBIDDEN_MASKING of lesson 06). A masked softmax: torch.masked's
# masked tensors and reductions (softmax, logsumexp, amax, sum, MaskedTensor: the mask argument does the filling a
# masked softmax is about; hostile class 33n reached 5.2, 6.1 and 6.3 there, none of it named on a list).
ATTENTION_PYTHON = tuple(
    os.path.join(*parts)
    for parts in (
        ("nn", "attention", ""),
        ("onnx", "ops", ""),
        ("_higher_order_ops", "flex_attention.py"),
        ("nested", "_internal", "sdpa.py"),
        # torch's compiler's eager attention patterns (_sfdp_pattern_*: softmax(QK^T)V written out), reached from
        # torch's own frames (pytree's map, checkpoint), where the compiler's code is otherwise let through: 33s
        ("_inductor", "fx_passes", "fuse_attention.py"),
    )
)
MASKED_PYTHON = ("masked" + os.sep,)
# numpy's masked arrays are the same tool outside torch (np.ma: the mask fills and the reductions skip; hostile class
# 33o passed 6.1 and 6.3 with them)
MASKED_NUMPY = ("ma" + os.sep,)
# and torch's nested tensors (a ragged row holds only the keys a query may see, so a plain softmax over it is the
# masked one: hostile class 33p passed 5.2, 6.3 and 7.3; their aten ops are barred too, see _nested_ops). pandas'
# masked arrays, the same tool again (33p), are refused with every package outside ALLOWED_LIBRARIES.
NESTED_PYTHON = ("nested" + os.sep,)
# (the kernel, the package its Python's places are in, those places, the kind _classify gives that code, what the
# grader's refusal says)
KERNEL_PYTHON = (
    (
        "scaled_dot_product_attention",
        "torch",
        ATTENTION_PYTHON,
        "attention",
        "attention or its masks written in torch's Python",
    ),
    ("_masked_softmax", "torch", MASKED_PYTHON, "masked", "torch's masked tensors and reductions"),
    ("_masked_softmax", "numpy", MASKED_NUMPY, "masked", "numpy's masked arrays"),
    ("_masked_softmax", "torch", NESTED_PYTHON, "masked", "torch's nested tensors"),
)
# In a build exercise the student's code may call Python's standard library, torch and numpy, and the packages that
# run when it prints, draws or shows progress (the kernel's own machinery among them); every other installed package
# is refused by where its code lives, whoever calls it. Hostile classes found an exercise's answer ready-made in one
# package after another (nltk's counts, models and perplexity; pandas' masked arrays; sympy's derivatives), none of
# them on a list of forbidden names: a package is allowed by name here, or it is refused.
ALLOWED_LIBRARIES = (
    "torch",
    "numpy",
    "typing_extensions",  # torch's deprecation wrappers
    # printing and display in a kernel: ipykernel's streams send through zmq and tornado, IPython.display
    *("IPython", "ipykernel", "comm", "traitlets", "jupyter_client", "jupyter_core", "zmq", "tornado"),
    "google",  # Colab's kernel (google.colab) wraps ipykernel's
    # drawing and progress: matplotlib with every package its distribution requires (a contour runs contourpy, a
    # mathtext title pyparsing, a PDF fontTools: honest plots of hostile class 33s failed on them)
    *("matplotlib", "matplotlib_inline", "PIL", "cycler", "kiwisolver", "dateutil", "six", "tqdm", "ipywidgets"),
    *("contourpy", "pyparsing", "fontTools", "packaging"),
)
# what the import system calls on a finder or loader (setuptools' _distutils_hack and an editable install's finder
# are packages of their own): an import, not a call of the student's
IMPORT_PROTOCOL = frozenset(
    ("find_spec", "find_module", "create_module", "exec_module", "load_module", "get_code", "get_source")
    + ("get_data", "get_filename", "is_package", "path_stats", "source_to_code", "invalidate_caches")
)
_KERNEL_OF_KIND = {kind: kernel for kernel, _, _, kind, _ in KERNEL_PYTHON}
_AUTOGRAD_SPARED = ("grad_mode.py", "profiler.py", "profiler_util.py", "profiler_legacy.py", "anomaly_mode.py")
# torch.func's vmap maps a function over an axis, no derivative taken (an honest 2.1 mapped the lecture's formula
# over the rows with it: hostile class 33t); apis.py's grad and grad_and_value only call eager_transforms' (refused)
_AUTOGRAD_SPARED += ("vmap.py", "apis.py", "predispatch.py")

# fused kernels: the torch function (whatever Python name reached it, torch.ops.aten.* included) that
# computes an exercise's answer in one call, by the ready-made torch name an exercise forbids
# (every recurrent step or layer torch holds, its quantized versions too: a test reads torch's names against these)
_BACKENDS = ("mkldnn_rnn_layer", "_cudnn_rnn", "miopen_rnn")  # one kernel for every kind of layer
_RNN = (
    *("rnn_tanh", "rnn_relu", "rnn_tanh_cell", "rnn_relu_cell", "quantized_rnn_tanh_cell", "quantized_rnn_relu_cell"),
    *_BACKENDS,
)
_LSTM = ("lstm", "lstm_cell", "_thnn_fused_lstm_cell", "quantized_lstm", "quantized_lstm_cell", "_lstm_mps", *_BACKENDS)
_GRU = ("gru", "gru_cell", "_thnn_fused_gru_cell", "quantized_gru", "quantized_gru_cell", *_BACKENDS)
_RECURRENT = {"rnn": _RNN, "lstm": _LSTM, "gru": _GRU}
# a recurrent op that is no step: a weights' layout (a step's backward is one: it recomputes the step's gates)
_NO_STEP = ("flatten_weight", "reorder")


def _op_names(torch, namespace: str = "") -> set:
    """The names of the ops torch's dispatcher holds now (``aten::lstm.input`` is "lstm"), in every namespace or in
    ``namespace`` alone."""
    ops = torch._C._dispatch_get_all_op_names()
    return {op.split("::", 1)[-1].split(".")[0] for op in ops if not namespace or op.startswith(namespace + "::")}


def _recurrent_ops(kernels: frozenset) -> frozenset:
    """Every op torch's dispatcher holds, in any namespace (aten, quantized, mkldnn, ...), whose name says it is a
    recurrent step or layer of a kind whose kernels are among ``kernels``: the lists above name torch's Python
    names, and ``quantized::`` holds dynamic cells no Python name shows (hostile class 33m:
    ``quantized_gru_cell_dynamic`` passed 4.2). Read when an exercise's rules are made (in the grader, before any
    student code, for the bar and the profile hook)."""
    words = [word for word, family in _RECURRENT.items() if kernels & set(family)]
    torch = sys.modules.get("torch")
    if not words or torch is None:
        return frozenset()
    names = _op_names(torch)
    return frozenset(n for n in names if any(w in n.lower() for w in words) and not any(part in n for part in _NO_STEP))


# where attention's kernel is refused, every op whose name says it is attention (its backward kernels included)
# "transformer": torch's fused encoder layer (``_transformer_encoder_layer_fwd``, nn.TransformerEncoderLayer's fast
# path), with identity weights and no feed-forward, is a masked attention that gives its weights too (hostile
# class 33x passed the notebook's checks of 5.2, 6.1, 6.3, 7.3 and 7.4 with it; the grader's dispatcher bar held)
_ATTENTION_WORDS = ("attention", "scaled_dot", "sdp", "transformer")


def _kin_ops(kernels) -> frozenset:
    """Every op torch's dispatcher holds that is a refused kernel's kin: its name holds a refused kernel's name
    (``_masked_softmax_backward``, ``_sparse_softmax_backward_data``, ``_thnn_fused_gru_cell_backward``), or,
    where attention's kernel is refused, says it is attention (``_cudnn_attention_forward``, ``_flash_attention_
    backward``). A backward kernel recomputes its forward's pieces on its way to a gradient: hostile class 33r passed
    5.2, 6.1, 6.3 and 7.3 with the flash attention's CPU backward (given the scores as queries and the identity as
    keys, it returns the masked exponentials) and 4.2 with ``_thnn_differentiable_gru_cell_backward`` (its
    outputs give the gates), in exercises that do not forbid autograd."""
    torch = sys.modules.get("torch")
    if not kernels or torch is None:
        return frozenset()
    names = _op_names(torch)
    stems = {kernel.strip("_") for kernel in kernels}
    words = _ATTENTION_WORDS if "scaled_dot_product_attention" in kernels else ()
    return frozenset(
        n
        for n in names
        if (any(stem in n for stem in stems) or any(word in n for word in words)) and not any(p in n for p in _NO_STEP)
    )


def _nested_ops(kernels) -> frozenset:
    """Where a masked softmax is refused, every aten op of torch's nested and jagged tensors too, read from the
    dispatcher (their constructors and their padding): a ragged row that holds only the keys a query may see makes a
    plain softmax the masked one, as a sparse tensor's does (hostile class 33s: ``_jagged_to_padded_dense_forward``
    with -inf padding passed 6.3 and 7.3)."""
    torch = sys.modules.get("torch")
    if "_masked_softmax" not in kernels or torch is None:
        return frozenset()
    names = _op_names(torch, "aten")
    return frozenset(n for n in names if "nested" in n or "jagged" in n)


# a masked softmax in one call: fill and normalise (``_masked_softmax``), a softmax that turns a row with no
# key at all into zeros (``_safe_softmax``, what the SDPA kernels use), or a sparse tensor's (what is not stored
# counts as -inf); the plain softmax (``_softmax`` too) is allowed everywhere, so it is not among them
_MASKED_SOFTMAX = ("_masked_softmax", "_safe_softmax", "_sparse_softmax", "_sparse_log_softmax")
_ATTENTION = (
    *_MASKED_SOFTMAX,
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "_fused_sdp_choice",
    "_scaled_dot_product_attention_math_for_mps",
    "_efficient_attention_forward",
    "_flash_attention_forward",
    "_flash_attention_forward_no_dropout_inplace",
    "_native_multi_head_attention",
    "_triton_multi_head_attention",
    "_triton_scaled_dot_attention",
    "multi_head_attention_forward",
)
_TRANSFORMER = (*_ATTENTION, "_transformer_encoder_layer_fwd")
# ways to run an aten op that no Python name shows: by its dispatcher handle, or inside a graph built from text;
# refused wherever fused kernels are (an op found by name, ``torch._C._jit_get_operation``, is refused by that name)
_BY_HANDLE = (
    "_dispatch_call_boxed",
    "parse_ir",
    "_create_function_from_graph",
    "_create_function_from_trace",
    "_create_method_from_trace",
    "import_ir_module",
    "_jit_script_compile",
    "_jit_script_class_compile",
)
KERNELS = {
    "torch.nn.RNN": _RNN,
    "torch.nn.RNNCell": _RNN,
    "torch.nn.LSTM": _LSTM,
    "torch.nn.LSTMCell": _LSTM,
    "torch.lstm_cell": _LSTM,
    "torch.nn.GRU": _GRU,
    "torch.nn.GRUCell": _GRU,
    "torch.gru_cell": _GRU,
    "course_lib.attention.masked_softmax": _MASKED_SOFTMAX,  # the exercise builds the masked softmax
    "torch.nn.functional.scaled_dot_product_attention": _ATTENTION,
    "torch.nn.MultiheadAttention": _ATTENTION,
    "torch.nn.TransformerEncoderLayer": _TRANSFORMER,
    "torch.nn.TransformerDecoderLayer": _TRANSFORMER,
    "torch.nn.TransformerEncoder": _TRANSFORMER,
    "torch.nn.TransformerDecoder": _TRANSFORMER,
    "torch.nn.Transformer": _TRANSFORMER,
    "torch.optim.SGD": ("_fused_sgd", "_fused_sgd_"),  # SGD(fused=True)'s kernel: the whole step in one op
}

# what would switch the observer off: the hooks themselves, and torch's switches for its function and dispatch
# modes (popping or pushing a mode, disabling them, excluding the Python dispatch keys)
_TAMPER_C = (
    "_set_dispatch_mode",
    "_unset_dispatch_mode",
    "_dispatch_tls_set_dispatch_key_excluded",
    "_dispatch_tls_set_dispatch_key_included",
)
_TAMPER_TYPES = ("DisableTorchFunction", "_DisableTorchDispatch")
# Popping a mode is not refused as it happens (torch pops modes itself, and so does a mode the student pushed,
# ``with torch.device(...)``, as it ends): the kernels are refused by identity in the profile hook too, and the
# modes are verified to be in place when the call ends.


@dataclass(frozen=True)
class Rules:
    """What an exercise refuses at run time, whatever name reaches it (see the module docstring)."""

    course: bool = False  # any entry into course_lib beyond ``allowed`` (the checks are refused for every exercise)
    autograd: bool = False  # torch's autograd engine and function transforms
    kernels: frozenset = frozenset()  # torch function names (aten op names) of fused kernels
    allowed: tuple[str, ...] = ()  # dotted course_lib names a student may call in this exercise
    library: tuple[str, ...] = ()  # the forbidden names outside course_lib: a class among them has its code refused

    @classmethod
    def of(cls, forbidden, allowed=()) -> Rules:
        """The rules an exercise's ``forbidden`` declaration implies: a build exercise (it forbids something)
        refuses course_lib; one that forbids autograd refuses every gradient route; a ready-made torch module
        or function forbidden refuses its kernels."""
        forbidden = tuple(forbidden)
        kernels = frozenset(op for name in forbidden for op in KERNELS.get(name, ()))
        kernels |= _recurrent_ops(kernels) | _nested_ops(kernels)
        kernels |= _kin_ops(kernels)
        library = tuple(n for n in forbidden if not n.startswith("course_lib."))
        library += tuple(n for n in _optimizers_beside(library) if n not in library)
        kernels |= _optimizer_ops(library)
        return cls(bool(forbidden), any(n in AUTOGRAD_NAMES for n in forbidden), kernels, tuple(allowed), library)


def _optimizers_beside(names) -> tuple:
    """Every optimizer of torch.optim, where ``names`` forbid one: the exercise is the update itself, and any of them
    can be set up to take the plain step (ASGD with ``lambd=0, alpha=0`` is SGD's update), so forbidding one by
    name and not the others would leave the same update borrowed under another name. () otherwise."""
    torch = sys.modules.get("torch")
    if torch is None:
        return ()
    base = torch.optim.Optimizer
    for name in names:
        try:
            obj = resolve(name)[2]
        except ValueError:
            continue
        if inspect.isclass(obj) and issubclass(obj, base) and obj is not base:
            break
    else:
        return ()
    found = [f"torch.optim.{n}" for n, c in vars(torch.optim).items() if inspect.isclass(c) and issubclass(c, base)]
    return tuple(sorted(n for n in found if n != "torch.optim.Optimizer"))


def _optimizer_ops(library) -> frozenset:
    """The fused kernels of every optimizer ``library`` forbids (all of torch.optim's where one is, see
    _optimizers_beside), read from the dispatcher: ``_fused_adam_``, ``_fused_adamw_``, ``_fused_adagrad_`` take
    the whole step in one op, and set up so, SGD's step (hostile class 33v passed 2.3 with ``torch._fused_adagrad_``,
    its sum of squares filled so the denominator is 1, and with ``torch._fused_adam_``)."""
    torch = sys.modules.get("torch")
    optimizers = {name.rsplit(".", 1)[-1].lower() for name in library if name.startswith("torch.optim.")}
    if torch is None or not optimizers:
        return frozenset()
    names = _op_names(torch)
    return frozenset(n for n in names if n.startswith("_fused_") and n[len("_fused_") :].rstrip("_") in optimizers)


def class_code(name: str) -> set:
    """The code of a forbidden library class (``torch.optim.SGD``, ``torch.nn.LSTM``): the methods the class itself
    defines, the functions its defining module defines (torch/optim/sgd.py's ``sgd``, ``_single_tensor_sgd``...:
    what the class calls to do its work, and what a student can call without the class), and the methods of the
    classes in that module it, or a class of its kernel family, is built on (rnn.py's ``RNNBase``, and
    ``RNNCellBase`` through ``nn.LSTMCell``). Methods inherited from elsewhere (``nn.Module``'s, for ``nn.LSTM``)
    are another class's and stay allowed, and so are the module's other classes (``nn.Tanh`` beside
    ``nn.MultiheadAttention``). A decorated function counts by the code it wraps (a wrapper
    written elsewhere, optimizer.py's for every optimizer, is not this class's). Empty for anything that is not a
    class outside course_lib (course_lib is refused whole in a build exercise)."""
    obj = _class_or_none(name)
    if obj is None:
        return set()
    functions = list(_functions_of(obj))
    # the class's defining module: where its own methods were written (a class re-exported with ``__module__`` set
    # to its package, torch.optim.Adafactor's, would otherwise name the package's __init__.py)
    home, namespace = _home_of(obj, functions)
    if home:
        functions += [
            f for f in namespace.values() if inspect.isfunction(f) and f.__module__ == namespace.get("__name__")
        ]
        # and the machinery in the same module that it, or a class of its kernel family, is built on (rnn.py's
        # RNNBase, whose __init__ makes every layer's weights, for nn.LSTM, and RNNCellBase, through nn.LSTMCell:
        # hostile class 33n counted 4.3's parameters by running them on a class of its own)
        family = KERNELS.get(name)
        kin = [obj] + [_class_or_none(k) for k, ops in KERNELS.items() if family and ops is family and k != name]
        for cls in (c for c in kin if c is not None):
            for base in cls.__mro__[1:]:
                if base.__module__ == namespace.get("__name__"):
                    functions += _functions_of(base)
    found = set()
    for f in functions:
        while inspect.isfunction(f):  # the wrapped function and each wrapper, kept where written in the class's file
            if f.__code__.co_filename == home:
                found.add(f.__code__)
            f = getattr(f, "__wrapped__", None)
    return {code for code in found if code.co_filename != _HERE}  # never the checks' stand-ins (refusing's)


def _class_or_none(name: str):
    """The library class a dotted name names, or None (a function, course_lib's, or nothing)."""
    if name.startswith("course_lib."):
        return None
    try:
        obj = resolve(name)[2]
    except ValueError:
        return None
    return obj if inspect.isclass(obj) else None


def _home_of(cls, functions) -> tuple:
    """(the file a class's own methods were written in, that module's namespace), from the methods themselves (a
    decorated one by the function it wraps); ("", {}) for a class with no method of its own."""
    for f in functions:
        while inspect.isfunction(f):
            if qualname(f.__code__).startswith(cls.__qualname__ + "."):
                return f.__code__.co_filename, f.__globals__
            f = getattr(f, "__wrapped__", None)
    module = sys.modules.get(cls.__module__)
    return (getattr(module, "__file__", None) or "", vars(module)) if module else ("", {})


def barred_ops(rules: Rules) -> frozenset:
    """The aten ops a grading process bars at the dispatcher for an exercise with these rules (see
    course_lib.instructor.harness._bar_ops): its fused kernels; where a gradient is the exercise, forward-mode
    autograd and every gradient kernel (an aten op named ``*backward*``: tanh_backward, _softmax_backward_data...,
    the pieces of a backward pass; the graph that autograd's engine walks is seen by :func:`_graph_clock`)."""
    if not rules.autograd:
        return rules.kernels
    torch = sys.modules.get("torch")
    ops = torch._C._dispatch_get_all_op_names() if torch is not None else ()
    gradients = {op[6:].split(".")[0] for op in ops if op.startswith("aten::") and "backward" in op}
    return rules.kernels | frozenset(FORWARD_AD_OPS) | frozenset(gradients)


# torch's C pieces the clock reads with, taken on its first read (before any student code): a list filled in place
# (guarded, and compared piece by piece by the grading harness), so the checks' fingerprint reads its assignment
# whether it is filled yet or not
_CLOCK: list = []


def _graph_clock(torch) -> int:
    """The sequence number autograd gave the newest node of a graph on this thread: it only ever grows, and no call
    can set it back. Reading it makes one node (a multiplication with recording on), through torch's C objects as
    they were at the first read (guarded), with torch's function modes off: nothing the student's code replaced
    or pushed can answer for it. -1 when it cannot be read."""
    if not _CLOCK:
        C = torch._C
        _CLOCK.extend((C._VariableFunctions.zeros, C.TensorBase.mul, C.TensorBase.grad_fn.__get__, C.is_grad_enabled,
                       C._set_grad_enabled, C.DisableTorchFunction))  # fmt: skip
    zeros, mul, grad_fn, is_on, switch, no_function_modes = _CLOCK
    was = is_on()
    try:
        with no_function_modes():
            switch(True)
            node = grad_fn(mul(zeros((), requires_grad=True), 1))
            return node._sequence_nr()  # made by autograd's kernel (above any dispatch mode): a C node
    except Exception:  # noqa: BLE001 - a mode left by the student's code in the way: not read, so refused
        return -1
    finally:
        switch(was)


@dataclass(eq=False)  # one observation is itself, not any other with the same record
class Observation:
    """What the observer saw during one call of the student's code: plain data for the grader.

    ``refused``: the dotted names of the refused calls, in call order (the first decides the hint);
    ``intact``: False when the observer was switched off or the check's code replaced (``tampered`` says
    what: the call or the replaced name, which also leads ``refused``).
    """

    refused: list = field(default_factory=list)
    intact: bool = True
    tampered: str = ""

    def to_plain(self) -> dict:
        return {"refused": list(self.refused[:20]), "intact": self.intact, "tampered": self.tampered}

    def note(self, name: str) -> None:
        _said_at_once(name)
        if len(self.refused) < 100:
            self.refused.append(name)

    def tamper(self, name: str) -> None:
        if self.intact:
            self.intact, self.tampered = False, name
        self.note(name)


# the check's own functions, by identity as imported: replacing one (a patched protocol, an Exercise whose
# ``forbidden`` was edited) is a way of switching the observer off. protocol.py registers its own.
_GUARDED: list = []
_GUARDED_COUNT = [0]


_MISSING = object()


def guard(owner, attr: str, dotted: str) -> None:
    """Remember ``owner.attr`` as it is now: :func:`tampered` names it once it is something else."""
    if type(owner) is types.ModuleType and inspect.getattr_static(types.ModuleType, attr, _MISSING) is not _MISSING:
        raise ValueError(f"attr {attr!r} is an attribute of every module: tampered() reads a module's own entry")
    _GUARDED.append((owner, attr, inspect.getattr_static(owner, attr), dotted, _layout(owner, attr)))
    _GUARDED_COUNT[0] += 1


def _layout(owner, attr: str):
    """For an instance: what its class and their bases hold now that decides where ``owner.attr`` is read from
    (each class's entries for ``attr`` and ``__dict__``, down to the first class holding each), or None where that
    is not the instance's own dict under a plain class default. :func:`_as_guarded` compares it by identity."""
    klass = type(owner)
    if klass in (types.ModuleType, type) or attr not in object.__getattribute__(owner, "__dict__"):
        return None
    held, entry, slot = [], _MISSING, _MISSING
    for base in klass.__mro__:
        if type(base) is not type:  # a metaclass of its own could shadow the class's __dict__
            return None
        mine = (base.__dict__.get(attr, _MISSING), base.__dict__.get("__dict__", _MISSING))
        held.append((base, *mine))
        entry = mine[0] if entry is _MISSING else entry
        if slot is _MISSING and mine[1] is not _MISSING:
            slot = mine[1]
            if not (type(slot) is types.GetSetDescriptorType and slot.__objclass__ is base):
                return None  # a __dict__ of the class's own making: the long way
        if entry is not _MISSING and slot is not _MISSING:
            break
    if entry is _MISSING or slot is _MISSING or hasattr(type(entry), "__get__"):  # a default, not a descriptor
        return None
    return klass, klass.__mro__, tuple(held)


def _as_guarded(owner, attr: str, original, layout) -> bool:
    """True when ``owner.attr`` is surely still ``original``, read the short way (dict look-ups; this runs after
    every call a check makes). False means: ask ``inspect.getattr_static``, the long way."""
    kind = type(owner)
    if kind is types.ModuleType or kind is type:  # a plain module's or class's attribute is its own __dict__ entry
        return owner.__dict__.get(attr, _MISSING) is original
    if layout is None or kind is not layout[0] or kind.__mro__ is not layout[1]:
        return False
    for base, entry, slot in layout[2]:  # the same entries as when guarded: nothing outranks the instance's own
        own = base.__dict__
        if own.get(attr, _MISSING) is not entry or own.get("__dict__", _MISSING) is not slot:
            return False
    return object.__getattribute__(owner, "__dict__").get(attr, _MISSING) is original


def tampered() -> str:
    """The dotted name of the first guarded function or setting that was replaced since import; ""."""
    if _GUARDED is not _GUARDED_AT_IMPORT or len(_GUARDED) != _GUARDED_COUNT[0]:
        return "course_lib.checks.borrowed.guard"
    for owner, attr, original, dotted, layout in _GUARDED:
        if _as_guarded(owner, attr, original, layout):
            continue
        try:
            now = inspect.getattr_static(owner, attr)
        except AttributeError:
            return dotted
        if now is not original and now != original:
            return dotted
    return ""


def qualname(code) -> str:
    """A code object's qualified name. Python 3.10's code objects have none (``co_qualname`` is 3.11's): there,
    the qualified name of the function or method that runs it, read from the module of its file, else its bare name."""
    try:
        return code.co_qualname
    except AttributeError:
        return _qualnames_in(code.co_filename).get(code, code.co_name)


_QUALNAMES: dict = {}  # Python 3.10 only: file -> (how many modules were loaded, {code: qualified name})


_COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>")  # code Python names without <locals>


def _qualnames_in(path: str) -> dict:
    """Every function's and method's code (and the code nested in it) of the modules loaded from ``path``, with
    its qualified name, read from the functions themselves; read again when a module was imported since."""
    known = _QUALNAMES.get(path)
    if known and known[0] == len(sys.modules):
        return known[1]
    names: dict = {}

    def nested(code, name):
        names.setdefault(code, name)
        # a function's (a comprehension's adds no <locals>, as Python names it), or a class body's
        local = code.co_flags & inspect.CO_NEWLOCALS and code.co_name not in _COMPREHENSIONS
        inside = ".<locals>." if local else "."
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                nested(const, f"{name}{inside}{const.co_name}")

    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) != path:
            continue
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if inspect.isclass(value) else [value]
            for member in members:
                for f in (member, getattr(member, "__func__", None), getattr(member, "fget", None)):
                    for _ in range(8):  # and what its decorators wrap (functools.wraps' __wrapped__, layer by layer)
                        if inspect.isfunction(f):
                            nested(f.__code__, f.__qualname__)
                        f = getattr(f, "__wrapped__", None)
                        if f is None:
                            break
    _QUALNAMES[path] = (len(sys.modules), names)
    return names


def _code_name(code, module=None) -> str:
    """``course_lib.module.Qual.name`` (or ``torch....``) of a code object, from its file and qualified name
    (elsewhere, from ``module``: the name of the module whose globals it runs in)."""
    path = code.co_filename
    for root, package in ((_COURSE_DIR, "course_lib"), (_torch_dir(), "torch")):
        if root and path.startswith(root + os.sep):
            parts = path[len(root) + 1 :].removesuffix(".py").split(os.sep)
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            if "<locals>" in qualname(code):  # a wrapper made inside a function: name the module it lives in
                return ".".join([package, *parts])
            return ".".join([package, *parts, qualname(code)])
    return f"{module}.{qualname(code)}" if isinstance(module, str) else qualname(code)


_TORCH_DIR: list = []


def _package_dirs(names) -> tuple:
    """The folders of these installed packages (each ending in os.sep), found without importing them."""
    key = tuple(names)
    if key not in _PACKAGE_DIRS:
        found = []
        for name in key:
            spec = importlib.util.find_spec(name)
            if spec and spec.origin:
                found.append(os.path.dirname(spec.origin) + os.sep)
        _PACKAGE_DIRS[key] = tuple(found)
    return _PACKAGE_DIRS[key]


def kernel_python_places(kernels) -> tuple:
    """((absolute places, the grader's reason), ...): the Python of KERNEL_PYTHON that these kernels bring."""
    return tuple(
        (tuple(d + p for d in _package_dirs([package]) for p in places), reason)
        for kernel, package, places, _, reason in KERNEL_PYTHON
        if kernel in kernels and _package_dirs([package])
    )


def _placed_kind(path: str) -> str:
    """The kind of code that is some kernel's Python (KERNEL_PYTHON) by where it lives, or "ok"."""
    for _, package, places, kind, _ in KERNEL_PYTHON:
        dirs = _package_dirs([package])
        if dirs and path.startswith(tuple(d + p for d in dirs for p in places)):
            return kind
    return "ok"


_PACKAGE_DIRS: dict = {}
_SITE_DIRS: list = []


def site_dirs() -> tuple:
    """Where installed packages live (site-packages, dist-packages), as named and as they are, each ending in os.sep."""
    if not _SITE_DIRS:
        import site
        import sysconfig

        paths = [*site.getsitepackages(), site.getusersitepackages()]
        paths += [sysconfig.get_paths()[key] for key in ("purelib", "platlib")]
        found = {
            form(p) + os.sep for p in paths if p and os.path.isdir(p) for form in (os.path.abspath, os.path.realpath)
        }
        _SITE_DIRS.append(tuple(sorted(found)))
    return _SITE_DIRS[0]


def refused_library(path: str) -> str:
    """The top-level name of the installed package holding ``path`` when build exercises refuse it (it is not in
    ALLOWED_LIBRARIES), else "". A module file counts by its name (``six.py``, ``_regex.cpython-311-x86_64-linux-gnu.so``)."""
    if not isinstance(path, str):
        return ""
    if "/../" in path or "/./" in path or "//" in path:
        path = os.path.realpath(path)  # a name that walks into a package from another (torch/../nltk/util.py)
    rest = next((path[len(place) :] for place in site_dirs() if path.startswith(place)), None)
    for marker in _PACKAGE_FOLDERS:  # another Python's packages, or the system's, put on sys.path by hand
        if rest is None and marker in path:
            rest = path.split(marker, 1)[1]
    if rest is None:
        return ""
    top = rest.split(os.sep, 1)[0].split(".", 1)[0]
    return "" if top in ALLOWED_LIBRARIES or top == "course_lib" else top


_PACKAGE_FOLDERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def is_refused_library(name: str) -> bool:
    """Is ``name`` (a top-level module name) an installed package that build exercises refuse? Found without
    importing it."""
    try:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
    except (ImportError, ValueError):
        return False
    origin = (spec.origin if spec else None) or next(iter(getattr(spec, "submodule_search_locations", None) or []), "")
    return bool(origin) and refused_library(origin) == name


def _torch_dir() -> str:
    if not _TORCH_DIR:
        spec = importlib.util.find_spec("torch")
        _TORCH_DIR.append(os.path.dirname(spec.origin) if spec and spec.origin else "")
    return _TORCH_DIR[0]


def _codes_of(obj, depth: int = 0) -> set:
    """The code objects of what the check hands in (its functions, the course_lib classes of its objects):
    the student may call those."""
    found = set()
    if depth > 3:
        return found
    if isinstance(obj, (list, tuple)):
        for item in obj[:64]:
            found |= _codes_of(item, depth + 1)
        for value in getattr(obj, "__dict__", {}).values():  # a case's recipe riding on the arguments
            found |= _codes_of(value, depth + 1)
        return found
    if isinstance(obj, dict):
        for item in list(obj.values())[:64]:
            found |= _codes_of(item, depth + 1)
        return found
    fn = getattr(obj, "__func__", obj)
    if inspect.isfunction(fn):
        found.add(fn.__code__)  # only itself: what it calls in course_lib is course_lib calling its own pieces
        return found
    objects = [obj]
    modules = getattr(obj, "modules", None)
    if callable(modules) and type(obj).__module__.startswith(("torch", "course_lib")):
        objects = list(modules())[:256]  # an nn.Module: its submodules too
    for o in objects:
        for klass in type(o).__mro__:
            if klass.__module__.startswith("course_lib"):
                for f in _functions_of(klass):
                    found.add(f.__code__)
    return found


class _Watcher:
    """The profile hook and torch modes of one observation (see :func:`observing`)."""

    def __init__(self, rules: Rules, seen: Observation, handed_in: set):
        self.rules, self.seen = rules, seen
        self.allowed = set(handed_in)
        for name in rules.allowed:
            obj = resolve(name)[2]
            self.allowed |= {f.__code__ for f in (_functions_of(obj) if inspect.isclass(obj) else [obj])}
        self.c_kinds: dict = {_setprofile: "tamper", _getprofile: "tamper"}
        self.module_kinds: dict = {}  # id(module) -> (module, the refused package it is of, or "")
        self.kernel_codes: set = set()
        self.tamper_types: tuple = ()
        self.handle = None  # torch's dispatcher handle type (its redispatch runs any op), where kernels are refused
        self.ops_file = ""
        self.engine = None
        self.modes: list = [None, None]  # a function mode (none today) and the dispatch mode installed, once entered
        torch = sys.modules.get("torch")
        if torch is not None:
            for name in _TAMPER_C:
                if hasattr(torch._C, name):
                    self.c_kinds[getattr(torch._C, name)] = "tamper"
            self.tamper_types = tuple(getattr(torch._C, n) for n in _TAMPER_TYPES if hasattr(torch._C, n))
            self.engine = type(torch.autograd.Variable._execution_engine)
            if rules.autograd:
                for name in ("_make_dual", "_unpack_dual", "_enter_dual_level", "_exit_dual_level"):
                    if hasattr(torch._C, name):
                        self.c_kinds[getattr(torch._C, name)] = "autograd"
            for op in rules.kernels:
                for builtin in _kernel_builtins(torch, op):
                    self.c_kinds[builtin] = "kernel"
                python = getattr(torch.nn.functional, op, None)  # a kernel written in Python (the MHA forward)
                if inspect.isfunction(python):
                    self.kernel_codes.add(python.__code__)
            if rules.kernels:
                for name in _BY_HANDLE:
                    if hasattr(torch._C, name):
                        self.c_kinds[getattr(torch._C, name)] = "kernel"
                        _KERNEL_NAMES[getattr(torch._C, name)] = f"torch._C.{name}"
                self.handle = torch._C._DispatchOperatorHandle
                self.ops_file = os.path.join(_torch_dir(), "_ops.py")
        for name in rules.library:  # a forbidden class's own code, refused like a kernel written in Python
            self.kernel_codes |= class_code(name)
        self.torch = torch

    # -- the profile hook: never raises (an exception here would switch the hook off). It runs on every call and
    # return of the student's code, so its common paths are a dict look-up each (see benchmarks/bench_checks.py).
    def hook(self):
        kinds, classify, c_kinds, type_kinds = _KINDS, _classify, self.c_kinds, {}
        called, c_called, type_kind, kernel_codes = self._called, self._c_called, self._type_kind, self.kernel_codes
        kernel_names, by_name = self.rules.kernels, self._by_name
        course, module_library = self.rules.course, self._module_library

        def profile(frame, event, arg):
            if event == "call":
                code = frame.f_code
                kind = kinds.get(code) or classify(code)
                if kind != "ok" or code in kernel_codes:
                    called(frame, code, "kernel" if code in kernel_codes else kind)
            elif event == "c_call":
                owner = getattr(arg, "__self__", None)
                how = type_kinds.get(type(owner))
                if how is None:
                    how = type_kinds[type(owner)] = type_kind(type(owner))
                if how == "lookup":  # a module's builtin, a torch.ops overload's: the same object on every call
                    how = c_kinds.get(arg) or (kernel_names and by_name(frame, arg))
                    how = how or (course and module_library(owner) and "library")
                if how:
                    c_called(frame, arg, how)

        return profile

    def _by_name(self, frame, builtin) -> str:
        """ "kernel" when a builtin that is not one of torch's usual objects for an op runs a refused one: another
        object for it (``torch._C._jit_get_operation``'s) carries the op's name; a nameless one (what
        ``torch._C._get_operation_overload`` returns) is refused unless torch's own OpOverload calls it, for an op
        it names."""
        name = getattr(builtin, "__name__", None)
        if name:
            return "kernel" if name in self.rules.kernels else ""
        if frame.f_code.co_filename != self.ops_file:
            return "kernel"  # an op by a nameless handle, outside torch.ops: which op is not known, so refused
        op = frame.f_locals.get("self")
        return "kernel" if str(getattr(op, "_opname", "")) in self.rules.kernels else ""

    def _module_library(self, module) -> str:
        """The refused package whose extension module a builtin belongs to, else ""."""
        if type(module) is not types.ModuleType:
            return ""
        known = self.module_kinds.get(id(module))
        if known is None or known[0] is not module:
            known = self.module_kinds[id(module)] = (module, refused_library(vars(module).get("__file__")))
        return known[1]

    def _type_kind(self, owner_type) -> str:
        """What a C call bound to an object of this type may be: "lookup" (by the builtin's identity), "tamper",
        "autograd" (the engine), "kernel" (a dispatcher handle's methods: it runs any op) or "" (nothing refused:
        a list's append, a tensor's method)."""
        if owner_type is type(None) or owner_type is types.ModuleType or owner_type.__module__ == "pybind11_builtins":
            return "lookup"
        if self.handle is not None and issubclass(owner_type, self.handle):
            return "kernel"
        if self.tamper_types and issubclass(owner_type, self.tamper_types):
            return "tamper"
        if self.engine is not None and issubclass(owner_type, self.engine):
            return "autograd"
        if self.rules.course and _type_library(owner_type):
            return "library"  # a C method of a type that a refused package's extension defines
        return ""

    def _called(self, frame, code, kind) -> None:
        try:
            if kind in ("course", "checks"):
                if code in self.allowed or not self._entry(kind, frame.f_back):
                    return
                if kind == "course" and not self.rules.course:
                    return
            elif kind == "autograd" and (not self.rules.autograd or _importing(frame)):
                return
            elif kind == "reimplemented" and (not (self.rules.autograd or self.rules.kernels) or _importing(frame)):
                return
            elif kind in _KERNEL_OF_KIND and (
                _KERNEL_OF_KIND[kind] not in self.rules.kernels or _importing(frame) or _drawing(frame.f_back)
            ):
                return
            elif kind == "library" and (not self.rules.course or _importing(frame, installed=True)):
                return
            elif kind == "opaque":
                caller = frame.f_back
                torch_dir = _torch_dir()
                if (
                    not (self.rules.autograd or self.rules.kernels)
                    or (caller is not None and caller.f_code.co_filename.startswith(torch_dir + os.sep))
                    or _importing(frame)
                ):
                    return
            self._refuse(_code_name(code, frame.f_globals.get("__name__")), kind)
        except Exception:  # noqa: BLE001, S110 - the hook must never raise: nothing is refused for it
            pass

    def _c_called(self, frame, arg, kind) -> None:
        try:
            if kind == "autograd" and not self.rules.autograd:
                return
            if kind == "library":
                if _importing(frame, installed=True):
                    return
                owner = getattr(arg, "__self__", None)
                package = self._module_library(owner) or _type_library(type(owner))
                name = _builtin_name(arg)
                self._refuse(name if name.startswith(package + ".") else f"{package}.{name}", kind)
                return
            if frame.f_code.co_filename == _HERE or frame.f_code.co_filename == _TENSORS:
                return  # the observer's own calls (putting the hooks back); the checks' reader of tensors (tensors)
            if kind == "autograd" and _importing(frame):
                return
            self._refuse(_builtin_name(arg), kind)
        except Exception:  # noqa: BLE001, S110 - the hook must never raise: nothing is refused for it
            pass

    def _entry(self, kind: str, caller) -> bool:
        """Is this call into course_lib an entry from outside (the student's code, torch, or a check calling
        what the student handed it), rather than course_lib calling its own pieces?"""
        if caller is None:
            return True
        by = _KINDS.get(caller.f_code) or _classify(caller.f_code)
        # a check's frame calls the student's objects: lesson code reached from it was chosen by the student
        return by not in ("course", "checks") or (by == "checks" and kind == "course")

    def _ours_on_top(self, which: int) -> bool:
        mode = self.modes[which]
        if mode is None:
            return False
        C = self.torch._C
        depth = C._len_torch_function_stack() if which == 0 else C._len_torch_dispatch_stack()
        top = (C._get_function_stack_at if which == 0 else C._get_dispatch_stack_at)(depth - 1) if depth else None
        return top is mode

    def _refuse(self, name: str, kind: str) -> None:
        if kind == "tamper":
            self.seen.tamper(name)
        else:
            self.seen.note(name)

    # -- torch's dispatch mode, where gradients are the exercise: every aten op that runs, however it was reached
    def torch_dispatch(self, func, types, args, kwargs):
        if "backward" in func._opname:  # a gradient kernel: only autograd (or a call to it by name) runs one
            self.seen.note(_builtin_name(func))
        elif self.torch.is_grad_enabled():  # the call runs with recording off (graphless): the student turned it on
            self.seen.note("torch.enable_grad (autograd's recording, turned back on)")
        return func(*args, **(kwargs or {}))


def _importing(frame, installed: bool = False) -> bool:
    """Is a module of torch being imported (its classes defined: autograd.Function subclasses run autograd's
    metaclass), rather than called? With ``installed``: or, between ``frame`` and the student's code, a module of an
    installed package, the import system calling a finder or loader, or a garbage collector's callback that a
    package registered before the call (ipykernel's: the collector runs it wherever it happens to run). Looked at
    only before a refusal, so the walk up the stack is rare."""
    torch_dir, near = _torch_dir(), installed
    while frame is not None:
        code, back = frame.f_code, frame.f_back
        path = code.co_filename
        if code.co_name == "<module>" and path.startswith(torch_dir):
            return True
        if not near:
            pass
        elif path.startswith(_COURSE_DIR + os.sep):
            near = False  # the check, which called the student's code: the call goes no further down
        elif path == "<string>" or path.startswith("<frozen"):
            pass  # code a package compiled for itself while it is imported (mpmath's), the import system
        elif not path.startswith(_installed_dirs()):
            near = False  # the student's code: what called the package is the student's
        elif code in _GC_CALLBACKS:
            return True
        elif code.co_name == "<module>" and path.startswith(site_dirs()):
            return True
        elif code.co_name in IMPORT_PROTOCOL and back and back.f_code.co_filename.startswith("<frozen"):
            return True
        frame = back
    return False


# the allowed packages that print, draw or show progress (not torch, numpy or the helpers torch needs)
OUTPUT_LIBRARIES = frozenset(ALLOWED_LIBRARIES) - {"torch", "numpy", "typing_extensions"}


def _drawing(frame) -> bool:
    """Is a package that prints, draws or shows progress (OUTPUT_LIBRARIES) between ``frame`` and the student's
    code? Its own use of numpy's masked arrays (``imshow`` and ``contour`` mask any array they are given) is no
    masked softmax of the student's; what it hands back is judged where the student's code uses it."""
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_COURSE_DIR + os.sep) or not path.startswith(_installed_dirs()):
            return False  # the check, or the student's code: no drawing package called this
        place = next((place for place in site_dirs() if path.startswith(place)), None)
        if place is not None:
            if path[len(place) :].split(os.sep, 1)[0].split(".", 1)[0] in OUTPUT_LIBRARIES:
                return True
        frame = frame.f_back
    return False


def _installed_dirs() -> tuple:
    """Python's own library, torch's and the installed packages' folders (each ending in os.sep)."""
    if not _INSTALLED:
        import sysconfig

        stdlib = {
            form(sysconfig.get_paths()[k]) + os.sep
            for k in ("stdlib", "platstdlib")
            for form in (os.path.abspath, os.path.realpath)
        }
        _INSTALLED.append((*sorted(stdlib), _torch_dir() + os.sep, *site_dirs()))
    return _INSTALLED[0]


_INSTALLED: list = []
_GC_CALLBACKS: set = set()  # the code of the collector's callbacks when the observation began


def _gc_callback_codes() -> set:
    found = set()
    for callback in list(_gc.callbacks):
        code = getattr(getattr(callback, "__func__", callback), "__code__", None)
        if isinstance(code, types.CodeType):
            found.add(code)
    return found


_KERNEL_BUILTINS: dict = {}
_KERNEL_NAMES: dict = {}  # what a torch.ops overload calls (a nameless builtin) -> torch.ops.aten.op.overload


def _kernel_builtins(torch, op: str) -> list:
    """Every builtin that runs the aten op ``op``: torch.op, torch.nn.functional's, and each torch.ops.aten
    overload's (what ``torch.ops.aten.op.default(...)`` calls)."""
    if op not in _KERNEL_BUILTINS:
        found = [getattr(space, op) for space in (torch._C._VariableFunctions, torch._C._nn) if hasattr(space, op)]
        try:
            packet = getattr(torch.ops.aten, op)
            found.append(packet._op)  # torch.ops.aten.op(...) without an overload
            _KERNEL_NAMES[packet._op] = f"torch.ops.aten.{op}"
            for overload in packet.overloads():
                found.append(getattr(packet, overload)._op)
                _KERNEL_NAMES[found[-1]] = f"torch.ops.aten.{op}.{overload}"
        except (AttributeError, RuntimeError):
            pass
        _KERNEL_BUILTINS[op] = found
    return _KERNEL_BUILTINS[op]


_KINDS: dict = {}  # code object -> its kind, for every observation (a code object's file never changes)


def _type_library(owner_type) -> str:
    """The refused package whose module defines this type (its ``__module__``: for a C type, read from its C name,
    which nothing can change), or ""."""
    try:
        name = _TYPE_MODULE(owner_type)
    except TypeError:
        return ""
    if not isinstance(name, str) or name in ("builtins", "__main__"):
        return ""
    module = sys.modules.get(name) or next((m for n, m in list(sys.modules.items()) if n.endswith("." + name)), None)
    return refused_library(getattr(module, "__file__", None)) if module is not None else ""


_TYPE_MODULE = type.__dict__["__module__"].__get__


def _classify(code) -> str:
    """ "course" (course_lib's lessons), "checks" (the checks), "autograd", "tamper" or "ok"."""
    kind = _KINDS.get(code)
    if kind is not None:
        return kind
    path = code.co_filename
    if path.startswith(os.sep) and (
        not path.startswith((*_installed_dirs(), _COURSE_DIR + os.sep))
        or "/../" in path
        or "/./" in path
        or "//" in path
    ):
        path = os.path.realpath(path)  # a link to a package's folder, or a name that walks into one: the package
    kind = "ok"
    # importing, or a module's lazy attribute (course_lib.backprop re-exports so): reaching a name, not running it
    # (the bare name first: on Python 3.10 qualname() reads a module's functions)
    module_getattr = code.co_name == "__getattr__" and qualname(code) == "__getattr__"
    if code.co_name == "<module>" or module_getattr or path == _HERE:
        kind = "ok"  # the observer itself and the stand-ins: they refuse, they answer nothing
    elif path.startswith(_CHECKS_DIR):
        kind = "checks"
    elif path.startswith(_COURSE_DIR + os.sep):
        kind = "course"
    elif code is threading.setprofile.__code__:
        kind = "tamper"
    else:
        torch_dir = _torch_dir()
        if torch_dir and path.startswith(torch_dir + os.sep):
            rest = path[len(torch_dir) + 1 :].split(os.sep)
            if (rest[0] in _AUTOGRAD_DIRS and rest[-1] not in _AUTOGRAD_SPARED) or code is _TENSOR_BACKWARD[0]:
                kind = "autograd"
            elif rest[0] in _OPAQUE_DIRS:
                kind = "opaque"
            elif path[len(torch_dir) + 1 :].startswith(_REIMPLEMENTED_DIRS):
                kind = "reimplemented"
            else:
                kind = _placed_kind(path) if code.co_flags & inspect.CO_OPTIMIZED else "ok"
        # (a place's module and class bodies run when it is imported: defining, not computing, like "<module>")
        elif refused_library(path):
            kind = "library" if code.co_flags & inspect.CO_OPTIMIZED else "ok"
        else:
            kind = _placed_kind(path) if code.co_flags & inspect.CO_OPTIMIZED else "ok"
    _KINDS[code] = kind
    return kind


_CHECKS_DIR = os.path.join(_COURSE_DIR, "checks") + os.sep
_TENSOR_BACKWARD: list = [None]
_FROZEN_FOR_GOOD: list = [False]  # True: everything was frozen before the call, for good (the grader's child)


def _builtin_name(func) -> str:
    """A torch function or builtin's dotted name as a student would write it (``torch.ops.aten.lstm.input``,
    ``torch.nn.functional.scaled_dot_product_attention``, ``sys.setprofile``)."""
    if type(func).__name__ == "OpOverload":
        return f"torch.ops.{func.namespace}.{func.__name__}"
    owner = getattr(func, "__self__", None)
    name = getattr(func, "__name__", "") or "?"
    if type(owner).__module__ == "pybind11_builtins":  # what a torch.ops overload calls
        if func in _KERNEL_NAMES:
            return _KERNEL_NAMES[func]
        return f"torch.ops.aten.{name}" if name != "?" else "an aten op by a nameless handle (an overload's)"
    if owner is not None and not isinstance(owner, types.ModuleType):
        return f"{type(owner).__module__}.{type(owner).__qualname__}.{name}"
    module = getattr(func, "__module__", None) or getattr(owner, "__name__", "") or "?"
    module = {"torch._C._nn": "torch.nn.functional", "torch._VF": "torch"}.get(module, module)
    return f"{module}.{name}"


def course_code_in(fn, rules: Rules) -> str:
    """The dotted name of course_lib code that the student's function or class *is* (``check(course_fn)``, a
    subclass of a course_lib class, ``forward = SomeCourseModule.forward`` in its body); "". The check calls
    these itself, so the observer would see course_lib called by course_lib: this look names them first."""
    codes = []
    if inspect.isclass(fn):
        for klass in fn.__mro__:
            codes += [f.__code__ for f in _functions_of(klass)]
    else:
        codes = [f.__code__ for f in _functions_of(fn)]
    allowed = _Watcher(rules, Observation(), set()).allowed if rules.allowed else set()
    for code in codes:
        kind = _classify(code)
        if code not in allowed and (kind == "checks" or (kind == "course" and rules.course)):
            return _code_name(code)
    return ""


@contextlib.contextmanager
def graphless(rules: Rules):
    """Where a gradient is the exercise (``rules.autograd``), the student's code runs with autograd's recording off:
    no graph is built, so none can be walked (its nodes called one by one, which no gradient kernel's name
    shows); turning recording back on is refused by the dispatch mode of :func:`observing`."""
    if not rules.autograd:
        yield
        return
    import torch

    with torch.no_grad():
        yield


@contextlib.contextmanager
def observing(rules: Rules, handed_in=()):
    """Within the block, every call the code makes is observed, and those ``rules`` refuse are recorded.

    Yields an :class:`Observation`. The student's code runs on: nothing is raised (raising from the hook would
    switch it off); the check reads the observation afterwards. On exit the hooks and modes installed here are
    verified to be still in place, and the guarded check functions still the originals.
    """
    seen = Observation()
    watcher = _Watcher(rules, seen, _codes_of(list(handed_in)))
    _GC_CALLBACKS.clear()
    _GC_CALLBACKS.update(_gc_callback_codes())
    # what existed before the call is not collected during it: a package's finalizers (nltk's regex objects) would
    # run wherever the collector happens to run, as no call of the student's (the grader's child froze it already)
    # (counting the frozen objects walks them all: about 40 ms per call in the grader's child, which says so instead)
    freezing = not _FROZEN_FOR_GOOD[0] and _gc.get_freeze_count() == 0
    if freezing:
        _gc.freeze()
    torch = watcher.torch
    modes = contextlib.ExitStack()
    if torch is not None and _TENSOR_BACKWARD[0] is None:
        _TENSOR_BACKWARD[0] = torch.Tensor.backward.__code__
    # where a gradient is the exercise the student's code runs with recording off (graphless): a node of a graph
    # made in between, however (autograd's engine, torch.func, recording turned on by C code that no hook sees)
    clock = _graph_clock(torch) if torch is not None and rules.autograd else None
    if torch is not None and rules.autograd:  # gradient kernels, whatever started them
        watcher.modes[1] = modes.enter_context(_dispatch_mode()(watcher))
    depth = _mode_depths(torch)
    previous, previous_threads = _getprofile(), _thread_getprofile()
    hook = watcher.hook()  # the hook verified on exit is this very object
    _OBSERVING.append(seen)
    _thread_setprofile(hook)
    _setprofile(hook)
    try:
        yield seen
    finally:
        installed = _getprofile()
        _setprofile(previous)
        _thread_setprofile(previous_threads)
        _OBSERVING[:] = [o for o in _OBSERVING if o is not seen]
        if installed is not hook:
            seen.tamper("sys.setprofile")
        now = _mode_depths(torch)
        for i, mode in enumerate(watcher.modes):
            if mode is not None and (now[i] != depth[i] or not watcher._ours_on_top(i)):
                seen.tamper(f"torch._C._pop_torch_{('function', 'dispatch')[i]}_stack")
        try:
            modes.close()
        except Exception:  # noqa: BLE001 - a mode the student's code popped cannot be exited again
            seen.tamper("torch._C._pop_torch_function_stack")
        after = tampered()
        if after:
            seen.tamper(after)
        if freezing:
            _gc.unfreeze()
        if clock is not None and (clock < 0 or _graph_clock(torch) != clock + 1):
            seen.note("torch's autograd (a graph was recorded while your code ran: gradients by autograd)")


def _mode_depths(torch) -> tuple:
    if torch is None:
        return ()
    return torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()


_MODES: list = []


def _dispatch_mode():
    """torch's dispatch mode that hands every aten op to a watcher (the class made once)."""
    if not _MODES:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Watching(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):
                return False  # no wrapper that imports torch._dynamo (seconds) on the first op: compilers are refused

            def __init__(self, watcher):
                super().__init__()
                self.watcher = watcher

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return self.watcher.torch_dispatch(func, types, args, kwargs)

        _MODES.append(Watching)
    return _MODES[0]


_GUARDED_AT_IMPORT = _GUARDED
for _name in (
    "observing",
    "refusing",
    "course_code_in",
    "tampered",
    "uses_forbidden",
    "_refused",
    "_classify",
    "_stand_in_code",
    "_stand_in_for",
    "resolve",
    "_raiser",
    "_graph_clock",
    "barred_ops",
    "class_code",
    "_as_guarded",
):
    guard(sys.modules[__name__], _name, f"{__name__}.{_name}")
for _name in ("hook", "_called", "_c_called", "_type_kind", "torch_dispatch", "_entry"):
    guard(_Watcher, _name, f"{__name__}._Watcher.{_name}")
guard(Rules, "of", f"{__name__}.Rules.of")
guard(sys.modules[__name__], "_CLOCK", f"{__name__}._CLOCK")
