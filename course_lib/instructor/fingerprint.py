"""Grades that do not drift: a fingerprint of every check, written at release and compared when grading.

The checks change (a tighter tolerance, one more known mistake, a new draw); a submission graded after
``pip install -U course-lib`` could then get another grade and nobody would know. So ``course-lib release``
writes into the handed-out notebook's metadata the course version and, for every exercise, a fingerprint of
its check: a hash of the code that decides the grade (the check's class and its ``draw``, ``judge``,
``materialise``, ``describe``, ... functions, their closures and defaults, the reference answers they compute
and whatever in ``course_lib`` they call, followed name by name). ``course-lib grade`` computes the same
fingerprints from what it runs and compares: an exercise whose check changed is named, and grading refuses
unless the instructor accepts the current checks (``--accept-changed-checks``), in which case every row says
which exercises were graded with changed checks.

What is hashed is the code's syntax tree (comments, docstrings and layout do not count), so the fingerprint
is the same on every machine and Python version; what ``course_lib`` calls outside itself (torch, NumPy) is
not followed: their versions are recorded beside it (``versions``) and reported, not compared.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import io
import sys
import textwrap
import tokenize
import types
from pathlib import Path

METADATA_KEY = "course_lib"  # nb.metadata["course_lib"]["release"] = {"version", "versions", "checks"}
_PLAIN = (bool, int, float, str, bytes, type(None))


def _ours(obj) -> bool:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    return isinstance(module, str) and (module == "course_lib" or module.startswith("course_lib."))


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


_TEXTS: dict[int, tuple[object, str]] = {}  # id -> (the object, kept alive; its text): one parse per object


def _source_text(obj) -> str:
    cached = _TEXTS.get(id(obj))
    if cached is None or cached[0] is not obj:
        cached = _TEXTS[id(obj)] = (obj, _parse(obj))
    return cached[1]


def _parse(obj) -> str:
    """The code of a function or class as a canonical text: its syntax tree, or (a lambda, whose lines may
    hold more than it) the tokens of its lines without comments and layout."""
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        code = getattr(obj, "__code__", None)
        return repr((code.co_code, code.co_names, code.co_varnames)) if code else repr(obj)
    try:
        return ast.dump(_strip_docstrings(ast.parse(source)))
    except SyntaxError:
        skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        try:
            tokens = tokenize.generate_tokens(io.StringIO(source).readline)
            return " ".join(t.string for t in tokens if t.type not in skip)
        except (tokenize.TokenError, SyntaxError):
            return source


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


class _Walk:
    """Everything of course_lib that a check reaches, as {qualified name: canonical text}."""

    def __init__(self):
        self.parts: dict[str, str] = {}
        self.seen: set[int] = set()
        self.kept: list = []  # what was seen stays alive, so a temporary's id is never reused for another

    def data(self, key: str, value) -> None:
        self.parts[key] = repr(value)

    def visit(self, obj, key: str = "") -> None:
        if isinstance(obj, _PLAIN):
            if key:
                self.data(key, obj)
            return
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        self.kept.append(obj)
        if isinstance(obj, (list, tuple, set, frozenset)):
            for i, item in enumerate(sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj):
                self.visit(item, f"{key}[{i}]" if key else "")
        elif isinstance(obj, dict):
            for k, v in obj.items():
                self.visit(v, f"{key}[{k!r}]" if key else "")
        elif isinstance(obj, functools.partial):
            self.visit(obj.func)
            self.visit(list(obj.args) + sorted(obj.keywords.items()), f"{key}.partial" if key else "")
        elif isinstance(obj, (types.MethodType, staticmethod, classmethod)):
            self.visit(obj.__func__)
        elif isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                if f is not None:
                    self.visit(f)
        elif isinstance(obj, types.FunctionType) and _ours(obj):
            self.function(obj)
        elif isinstance(obj, type) and _ours(obj):
            self.cls(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type) and _ours(type(obj)):
            self.visit(type(obj))
            for f in dataclasses.fields(obj):
                self.visit(getattr(obj, f.name), f"{type(obj).__qualname__}.{f.name}")

    def function(self, fn: types.FunctionType) -> None:
        if fn.__code__.co_filename.startswith("<"):  # made by dataclasses from its class, which is hashed
            return
        name = f"{fn.__module__}.{fn.__qualname__}"
        n = 1
        while f"{name}#{n}" in self.parts if n > 1 else name in self.parts:  # two lambdas of one scope
            n += 1
        name = name if n == 1 else f"{name}#{n}"
        self.parts[name] = _source_text(fn)
        for i, cell in enumerate(fn.__closure__ or ()):
            try:
                self.visit(cell.cell_contents, f"{name}.<closure {fn.__code__.co_freevars[i]}>")
            except ValueError:  # an empty cell
                pass
        self.visit(list(fn.__defaults__ or ()), f"{name}.<defaults>")
        self.visit(dict(fn.__kwdefaults__ or {}), f"{name}.<kwdefaults>")
        self.globals_of(fn.__globals__, _names(fn.__code__), fn.__module__)

    def globals_of(self, namespace: dict, names: set[str], module: str) -> None:
        for n in sorted(names):
            if n not in namespace:
                continue
            value = namespace[n]
            if isinstance(value, types.ModuleType):
                if _ours(value):  # `from course_lib import ngram` ... ngram.counts(...): the names it may mean
                    for attr in sorted(names):
                        if attr in vars(value):
                            self.visit(vars(value)[attr], f"{value.__name__}.{attr}")
            elif isinstance(value, _PLAIN) or (isinstance(value, (tuple, frozenset)) and _plain_all(value)):
                # a constant of the check's module (a tolerance, a size): the code that sets it, since its
                # value may be the machine's (a path) or come out of a set in another order
                assigned = _assignments(module, getattr(sys.modules.get(module), "__file__", None)).get(n)
                self.parts[f"{module}.{n}"] = assigned if assigned is not None else repr(value)
            elif isinstance(value, (list, dict, set)):
                # a module-level container that fills at run time (the observer's registry of guarded
                # functions grows with every Exercise made): the code that makes it, never what it holds now
                assigned = _assignments(module, getattr(sys.modules.get(module), "__file__", None)).get(n)
                self.parts[f"{module}.{n}"] = assigned if assigned is not None else type(value).__name__
            else:
                self.visit(value, f"{module}.{n}")

    def cls(self, cls: type) -> None:
        self.parts[f"{cls.__module__}.{cls.__qualname__}"] = _source_text(cls)
        for base in cls.__mro__[1:]:
            if _ours(base):
                self.visit(base)
        for value in vars(cls).values():
            if isinstance(value, (types.FunctionType, staticmethod, classmethod, property)):
                self.visit(value)


@functools.cache
def _assignments(module: str, file: str | None) -> dict[str, str]:
    """The top-level assignments of a module: name -> the canonical text of the statement(s) that set it."""
    try:
        tree = ast.parse(Path(file).read_text(encoding="utf-8"))
    except (TypeError, OSError, SyntaxError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                found[target.id] = found.get(target.id, "") + (ast.dump(node.value) if node.value else "")
    return found


def _plain_all(values) -> bool:
    return all(isinstance(v, _PLAIN) or (isinstance(v, (tuple, frozenset)) and _plain_all(v)) for v in values)


def of_exercise(exercise) -> str:
    """The fingerprint of one check (an :class:`~course_lib.checks.protocol.Exercise`): 16 hex digits."""
    walk = _Walk()
    walk.visit(exercise)
    text = "\n".join(f"{k}\t{v}" for k, v in sorted(walk.parts.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def of_lesson(lesson: str) -> dict[str, str]:
    """Every exercise of ``lesson`` -> the fingerprint of its check."""
    from course_lib import checks

    return {exercise_id: of_exercise(ex) for exercise_id, ex in checks.exercises(lesson).items()}


def versions() -> dict[str, str]:
    """The versions the grade also depends on: course_lib's, Python's, torch's and NumPy's."""
    import platform
    from importlib import metadata

    import course_lib

    found = {"course_lib": course_lib.__version__, "python": platform.python_version()}
    for package in ("torch", "numpy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


def stamp(nb, lesson: str) -> None:
    """Write the course version and every check's fingerprint into ``nb``'s metadata (at release)."""
    import course_lib

    meta = nb.metadata.setdefault(METADATA_KEY, {})
    meta["release"] = {"version": course_lib.__version__, "versions": versions(), "checks": of_lesson(lesson)}


def recorded(nb) -> dict | None:
    """What ``stamp`` wrote into a released notebook, or None (a notebook released without it)."""
    meta = (nb.get("metadata") or {}).get(METADATA_KEY)
    release = meta.get("release") if isinstance(meta, dict) else None
    if not isinstance(release, dict) or not isinstance(release.get("checks"), dict):
        return None
    return release


def changed(release: dict, current: dict[str, str]) -> list[str]:
    """The exercises whose check is not the one released (a fingerprint that differs, or is missing)."""
    from course_lib.instructor.ids import sort_key

    before = release.get("checks") or {}
    return sorted((e for e in current if before.get(e) != current[e]), key=sort_key)


AS_RELEASED = "as released"
NOT_RECORDED = "not recorded at release"


class ChecksChanged(Exception):
    """The checks that would grade are not those of the release, and the instructor has not accepted them."""


def compare(release_nb, lesson: str, exercises, *, accept: bool = False) -> tuple[str, str]:
    """What the CSV's ``checks`` column says for this run, and a message for the instructor ("" if none).

    Raises :class:`ChecksChanged` naming each changed exercise unless ``accept``.
    """
    import course_lib

    release = recorded(release_nb)
    if release is None:
        return NOT_RECORDED, (
            "note: this release records no fingerprint of its checks (only `course-lib release` writes one), so "
            "a change of the checks since it was handed out cannot be detected; pass --release the notebook "
            "you handed out"
        )
    current = {e: f for e, f in of_lesson(lesson).items() if e in set(exercises)}
    differ = changed(release, current)
    if not differ:
        return AS_RELEASED, ""
    then, now = release.get("version", "?"), course_lib.__version__
    what = (
        f"the check of exercise(s) {', '.join(differ)} changed since this notebook was released "
        f"(course_lib {then} then, {now} now; {_versions_note(release.get('versions'))})"
    )
    if not accept:
        raise ChecksChanged(
            f"{what}: the same answers could now get other grades. Grade with the course_lib you released with, "
            "or pass --accept-changed-checks to grade with the current checks (every row then names them)."
        )
    return f"changed since release: {', '.join(differ)} (accepted)", f"warning: {what}; graded with the current checks"


def _versions_note(then) -> str:
    now = versions()
    if not isinstance(then, dict):
        return "no versions recorded"
    moved = [f"{k} {then.get(k)} -> {v}" for k, v in now.items() if then.get(k) != v]
    return "versions: " + (", ".join(moved) if moved else "the same")
