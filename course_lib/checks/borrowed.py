"""Borrowed answers: while a check runs the student's function, the names its exercise forbids raise.

An exercise declares ``forbidden=("torch.autograd.grad", "torch.nn.LSTM", ...)``: dotted names of
what would answer it without the student writing it (course_lib's own version, autograd, torch's
ready-made module). Two complementary looks catch a borrowed answer:

- **at run time** (:func:`refusing`), for the duration of the student's call only, each name is
  replaced by a stand-in that records the call and raises :class:`Borrowed`:

  - a Python function (``course_lib.parentheses.is_balanced``, ``torch.autograd.grad``,
    ``torch.Tensor.backward``) gets the stand-in's ``__code__``, so every alias of it (``from ...
    import is_balanced as ib`` at import time, a bound method ``loss.backward``, torch's own helpers
    that call it) refuses too;
  - a class (``torch.nn.LSTM``) refuses construction (``__init__``) and its ``forward``, so an
    instance built before the call refuses too;
  - anything else (a builtin such as ``torch.nn.functional.scaled_dot_product_attention``) is
    replaced in every loaded module that holds it and in the student's globals.

  Everything is put back afterwards, also when the student's code raises. The record lists the
  name even when the student's code swallowed the exception.
- **in the source** (:func:`uses_forbidden`): the names and attribute chains of the student's
  function (and of their own helpers and classes it reaches), resolved in its globals, its default
  arguments and its closure, compared by identity with the forbidden objects.

Everything that runs during the student's call is covered, including objects the check hands
in: an exercise that forbids a name must not give the student inputs that use it. The check's
own reference computation runs in ``judge``, outside the call, and is never refused.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import inspect
import sys
import textwrap
import types


class Borrowed(Exception):
    """Raised by a stand-in: the student's function called a name its exercise forbids."""

    def __init__(self, name: str):
        super().__init__(f"`{name}` may not be called in this exercise: write it yourself")
        self.name = name


_ACTIVE: list[list[str]] = []  # the names called so far, one list per active refusal


def _refused(name: str):
    """What every stand-in does: note the call, then raise."""
    if _ACTIVE:
        _ACTIVE[-1].append(name)
    raise Borrowed(name)


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
    free = original.co_freevars
    inner = "    def refused(*args, **kwargs):\n"
    if free:
        inner = "    " + ", ".join(free) + " = " + ", ".join("None" for _ in free) + "\n" + inner
        inner += "        (" + ", ".join(free) + ",)\n"
    inner += f"        __import__('course_lib.checks.borrowed', fromlist=['_refused'])._refused({name!r})\n"
    namespace: dict = {}
    exec(compile(f"def _outer():\n{inner}    return refused\n", f"<forbidden {name}>", "exec"), namespace)
    code = namespace["_outer"]().__code__
    assert len(code.co_freevars) == len(free)
    return code


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
    """The Python functions that make up ``obj``: itself, or a class's methods (properties included)."""
    if inspect.isfunction(obj):
        return [obj]
    if inspect.ismethod(obj):
        return [obj.__func__]
    if inspect.isclass(obj):
        found = []
        for value in vars(obj).values():
            value = getattr(value, "__func__", value)  # staticmethod, classmethod
            if isinstance(value, property):
                found += [f for f in (value.fget, value.fset) if inspect.isfunction(f)]
            elif inspect.isfunction(value):
                found.append(value)
        return found
    call = vars(type(obj)).get("__call__")
    return [call] if inspect.isfunction(call) else []


@contextlib.contextmanager
def refusing(forbidden, fn=None):
    """Within the block, calling any of ``forbidden`` records its name and raises :class:`Borrowed`.

    Yields the list of names called (in call order). ``fn`` is the student's function: its global
    namespace is searched for aliases of forbidden builtins. Everything is restored on exit.
    """
    called: list[str] = []
    undo: list = []
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
                spaces = [vars(m) for m in list(sys.modules.values()) if isinstance(getattr(m, "__dict__", None), dict)]
                spaces += _namespaces(fn) if fn is not None else []
                for space in spaces:
                    for key, value in list(space.items()):
                        if value is obj:
                            space[key] = stand_in
                            undo.append(lambda space=space, key=key, obj=obj: space.__setitem__(key, obj))
                if not isinstance(owner, types.ModuleType) and getattr(owner, attr, None) is obj:
                    # a method of a class (e.g. a builtin method of torch.Tensor, perhaps inherited)
                    own = attr in vars(owner)
                    setattr(owner, attr, stand_in)
                    if own:
                        undo.append(lambda owner=owner, attr=attr, obj=obj: setattr(owner, attr, obj))
                    else:
                        undo.append(lambda owner=owner, attr=attr: delattr(owner, attr))
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
                tree = ast.parse(source)
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
            tree = ast.parse(
                "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
            )
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
