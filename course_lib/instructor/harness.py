"""The student's process computes, the grader's process decides: the answer cells alone, called in a process
of their own.

The grader never calls the student's functions in the kernel that ran the notebook (any cell there can
replace the checks, register hooks or rewrite files). For the grade it starts a fresh sandboxed Python
(:func:`command`: ``python -I``, its own ``sys.path``, a minimal environment) that runs :func:`main`:

1. the harness's own process imports the lesson's checks and holds the channel to the grader; it never loads
   or calls student code. It runs the released setup cell and each check's run path (on a stand-in answer of
   its own) once, so that what they import is imported before it forks (:func:`_warm_up`; each child would
   otherwise import it again, under the observer). For the load and for each call it forks a child that
   closes that channel, installs the observer (an audit hook, which can never be removed, and a trace hook),
   replaces thread and signal-handler creation and ``sys.gettrace`` by a refusal, and only then loads the
   student's code;
2. the child loads the released setup cell (in a namespace of its own) and the student's answer cells (the
   cells whose nbgrader id is ``ex-N-M``), each after :func:`refusal` accepted it: at top level an answer
   cell may only import (not ``course_lib``), define functions and classes, and bind names to constants,
   with no decorator, class hook or annotation that would run code, so nothing in it runs before the call;
3. the grader sends each exercise's cases (drawn with a seed the process never sees); the child calls the
   check's own run path (``Exercise.run``, so the checks' run-time observer is used) while its observer
   watches: a call from the student's code (directly, or through torch or Python) into a function of
   ``course_lib`` (the lesson's module, the checks' references) or into a copy of one, a replaced function of
   ``course_lib``, and any attempt to reach around the observer (frames, ``gc``, hooks, ``ctypes``, threads,
   the course's files, the process's pipes) is refused at once; the ways to the harness are also stopped;
4. the child answers with the records, as plain data, on a pipe of that call only and ends; the harness
   forwards each refusal, exactly one reply (any other line is a refusal), stamped with the exercise;
   :mod:`course_lib.instructor.submission` judges them in the grader's process, and any refusal, malformed
   line or missing answer fails the exercise.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import sys
import threading
import types

FORGED = "something other than the grader wrote on its results pipe"  # a refusal that is not borrowed work
ANSWER_FILE = "<answer {}>"  # the file name an answer cell's code carries (how the observer knows it)
# audit events that reach around the observer or into the interpreter: refused while the student's code runs
SENSITIVE_EVENTS = frozenset(
    {
        "sys.setprofile",
        "sys.settrace",
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.addaudithook",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "object.__getattr__",  # __code__, tb_frame, gi_frame, f_back: the way to frames and code objects
        "object.__setattr__",
        "object.__delattr__",
        "code.__new__",
        "function.__new__",
        "exec",
        "os.system",
        "subprocess.Popen",
        "os.exec",
        "os.posix_spawn",
        "os.fork",
    }
)
# a new process runs where no observer does (a fresh Python computes the reference): while the student's code runs,
# starting one is refused and stopped whatever frame asks (subprocess.py's, multiprocessing's, os's): no
# exercise needs a process
PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork", "os.forkpty", "os.spawn"}
)
# a function's behaviour changed in place (its identity kept): refused and stopped whoever does it, unless it is
# course_lib's own code (the checks' stand-ins for the forbidden names)
CODE_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
DECORATORS = frozenset({"staticmethod", "classmethod", "property"})
# methods Python calls while a class statement runs (a subclass made, a base that is no class, a subscript):
# code of the student's at load time, so an answer cell may not define them
CLASS_HOOKS = frozenset({"__init_subclass__", "__set_name__", "__class_getitem__", "__mro_entries__", "__prepare__"})
HOOK_REFUSAL = "line {}: `{}` runs code when a class statement is loaded"
# modules whose (re)import hands the student a way around the observer: a thread, a signal handler (it gets the
# harness's frame), an interpreter of its own, raw memory
DOORS = frozenset(
    {
        "_thread",
        "_signal",
        "signal",
        "_posixsubprocess",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        "_testcapi",
        "_testinternalcapi",
    }
)
# what the observer refuses AND stops (the audit hook raises) whoever the student's code asked to do it: the
# ways to a frame (and from there to the harness), to every object, to the hooks
DENIED_EVENTS = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.setprofile",
        "sys.settrace",
        "sys.addaudithook",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    }
)
# modules that read a frame for their own use and hand none out (a NamedTuple, an Enum or a TypeVar names its
# module; sympy names its caller; matplotlib's warnings name the first caller outside it; pyparsing records where
# a grammar was built: matplotlib's mathtext builds one): a frame one of them takes is not the student's. Every
# other module may hand the frame it takes to the student's code (inspect, traceback, logging, torch's
# createResolutionCallbackFromFrame, ...), so a frame taken there while the student's code asked is refused.
# The libraries among them are trusted only where another library called them (LIBRARY_FRAME_KEEPERS).
LIBRARY_FRAME_KEEPERS = frozenset({"sympy", "matplotlib", "pyparsing"})
FRAME_KEEPERS = frozenset({"typing", "enum", "collections", "dataclasses", "abc", "warnings", "_weakrefset"})
FRAME_KEEPERS |= LIBRARY_FRAME_KEEPERS
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
# the audited reads of a function's or generator's code: course_lib's own code read while the student's code runs is
# the first step of a copy made at run time (its bytecode changed by a byte, so no fingerprint matches), whoever's
# frame reads it (copy.copy calling what an object's __reduce_ex__ names): refused and stopped
CODE_READS = frozenset({"__code__", "gi_code", "cr_code", "ag_code"})
CODE_HOLDERS = (types.FunctionType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
NEW_LOCALS = 0x0002  # inspect.CO_NEWLOCALS: a function's code (a cell's own code and class bodies have not)
PROC_PARTS = frozenset({"fd", "fdinfo", "mem", "map_files", "oom_score_adj", "oom_adj"})  # /proc/<pid>/...: ways to a
# process's pipes and memory, and to making the kernel's out-of-memory killer choose the harness
# audit events by which code is made at run time: text or an AST compiled (compile, exec or eval of a string;
# ast.parse only where it is asked for code, see _AST_PARSE), a code object built from parts (types.CodeType,
# code.replace), bytes unmarshalled (marshal.loads, a .pyc). In a build exercise's call, made by the student's code
# (whatever frame asks), each is refused and stopped: text read at run time (the references' own, read by C code
# such as torch.from_file, or carried encoded in a cell) never becomes code. See _made_at_run_time for what is not
# refused (imports of installed modules, the stdlib modules below, the check's own).
MAKING_EVENTS = frozenset({"compile", "code.__new__", "marshal.loads", "marshal.load"})
# stdlib modules that compile text they build themselves: namedtuple's __new__ (from field names it requires to be
# identifiers), a dataclass's methods, typing's ForwardRef (a type written as text; only a type's characters)
COMPILE_KEEPERS = frozenset({"collections", "dataclasses", "typing"})
# a type as text (names, subscripts, unions: no call), as str or as the bytes the compile event carries
_TYPE_TEXT = __import__("re").compile(r"[\w.\[\], |'\"]*").fullmatch
_TYPE_BYTES = __import__("re").compile(rb"[\w.\[\], |'\"]*").fullmatch


def _keeper_files(names=FRAME_KEEPERS) -> tuple:
    """Where the modules ``names``' code lives (a module's file, a package's folder), found without importing them."""
    import importlib.util

    found = []
    for name in sorted(names):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin:
            found.append(os.path.dirname(spec.origin) + os.sep if spec.submodule_search_locations else spec.origin)
    return tuple(found)


_KEEPER_FILES = _keeper_files()
_STDLIB_KEEPER_FILES = _keeper_files(FRAME_KEEPERS - LIBRARY_FRAME_KEEPERS)
_COMPILER_FILES = _keeper_files(COMPILE_KEEPERS)
_TYPING_FILES = _keeper_files({"typing"})
_DATACLASSES_FILES = _keeper_files({"dataclasses"})
# ast.parse's compile asks for a tree (PyCF_ONLY_AST), which only a second compile, refused, makes code: inspect
# parses text signatures with it (a dataclass without __init__ or docstring). Read before any student code runs.
_AST_PARSE = ast.parse.__code__
_ONLY_AST = ast.PyCF_ONLY_AST
# dataclasses splices its fields' names into the text it compiles, unchecked: read them by the slot's own getter
# (no property of a subclass runs), on the exact Field type, before any student code
_FIELD = __import__("dataclasses").Field
_field_name = _FIELD.__dict__["name"].__get__
_dict_items, _is_identifier = dict.items, str.isidentifier
_KEYWORDS = frozenset(__import__("keyword").kwlist)


# --------------------------------------------------------------------------- what an answer cell may do


def refusal(source: str) -> str:
    """ "" when an answer cell may be loaded; else why not (one short sentence with the line).

    At top level (and in a class body) only: imports (absolute, no ``*``), ``def`` and ``class``
    (decorators ``staticmethod``/``classmethod``/``property`` and ``x.setter``/``getter``/``deleter`` of a
    property ``x`` defined just above in the same class, defaults and class constants that are literals,
    bases that are names), names bound to literals, docstrings and ``pass``; no name may shadow those
    decorators and no class may define a hook Python calls while a class statement runs
    (``__init_subclass__``, ...). Annotations are never evaluated (the cells are compiled as with
    ``from __future__ import annotations``). Nothing else runs when the cell is loaded. (What the functions
    call is the observer's to judge, when they run.)"""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"it does not parse (line {exc.lineno}: {exc.msg})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"it does not parse ({type(exc).__name__})"
    try:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                why = _import_refusal(node)
                if why:
                    return why
            bound = _bound_names(node)
            if bound & DECORATORS:
                return f"line {node.lineno}: it binds the name `{sorted(bound & DECORATORS)[0]}`"
        return _body_refusal(tree.body, top=True)
    except RecursionError:
        return "it is nested too deeply to be checked"


def _bound_names(node) -> set:
    """The names a statement binds (a def, a class, an import, an assignment target, a loop variable...)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return {node.id}
    if isinstance(node, ast.arg):
        return {node.arg}
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return set(node.names)
    return set()


def _import_refusal(node) -> str:
    if isinstance(node, ast.ImportFrom):
        if node.level:
            return f"line {node.lineno}: a relative import"
        if any(alias.name == "*" for alias in node.names):
            return f"line {node.lineno}: `from {node.module} import *`"
    return ""


def _literal(node) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _infinity(node)


# the one call a constant may be: float of infinity or nan (``NEG_INF = float("-inf")``, which an honest answer of
# hostile class 33s wrote at the top of its cell); whatever ``float`` names when the cells load, called with one of
# these texts it computes nothing (a function of the student's running then is refused, see _trace)
_INFINITIES = frozenset({"inf", "-inf", "+inf", "infinity", "-infinity", "+infinity", "nan"})


def _infinity(node) -> bool:
    """``float("-inf")`` (any of _INFINITIES, any case), or its negation."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and not node.keywords
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and node.args[0].value.strip().lower() in _INFINITIES
    )


def _simple_name(node) -> bool:
    """A name or a dotted name: ``nn.Module``, ``torch.Tensor``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _annotation_ok(node) -> bool:
    """Annotations run when a def is loaded: names, dotted names, literals, X[...] and X | Y of those."""
    if node is None or _literal(node) or _simple_name(node):
        return True
    if isinstance(node, ast.Subscript):
        return _simple_name(node.value) and _annotation_ok(node.slice)
    if isinstance(node, ast.Tuple):
        return all(_annotation_ok(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _annotation_ok(node.left) and _annotation_ok(node.right)
    return False


# decorators that only wrap or mark what they decorate, as the libraries define them (an honest answer's commonest:
# hostile class 33u's @dataclass, @functools.lru_cache and @torch.no_grad() failed to load), allowed when the
# cell's own imports, above the decorated def, bind the name they are written with
PURE_DECORATORS = frozenset(
    {
        *("functools.lru_cache", "functools.cache", "functools.cached_property", "functools.total_ordering"),
        *("dataclasses.dataclass", "typing.overload", "typing.final", "abc.abstractmethod"),
        *("torch.no_grad", "torch.inference_mode", "torch.enable_grad"),
    }
)


def _decorator_ok(node, properties: set, imports: dict) -> bool:
    """``staticmethod``, ``classmethod``, ``property``, or ``x.setter`` (getter, deleter) where ``x`` is a
    property the same class body defined just above (any other ``x.setter`` is a call of the student's); or one
    of PURE_DECORATORS, named through the cell's ``imports`` (called with literals only, if called)."""
    if isinstance(node, ast.Name) and node.id in DECORATORS:
        return True
    if isinstance(node, ast.Call):
        arguments = list(node.args) + [k.value for k in node.keywords]
        if any(k.arg is None for k in node.keywords) or not all(_literal(a) for a in arguments):
            return False
        node = node.func
    elif (
        isinstance(node, ast.Attribute)
        and node.attr in ("setter", "getter", "deleter")
        and isinstance(node.value, ast.Name)
        and node.value.id in properties
    ):
        return True
    return _imported(node, imports) in PURE_DECORATORS


def _imported(node, imports: dict) -> str:
    """The dotted name a name or attribute chain stands for through the cell's imports ("" if not one of theirs):
    ``lru_cache`` after ``from functools import lru_cache`` is "functools.lru_cache"."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not imports.get(node.id):
        return ""
    return ".".join([imports[node.id], *reversed(parts)])


def _imports_of(node, imports: dict) -> None:
    """``imports`` updated by a statement of the cell: an import binds its names to what it imports, anything else
    that binds a name unbinds it (a def, a class, an assignment: no longer the module's)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom):
        for alias in node.names:
            imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    else:
        for target in ast.walk(node):
            for name in _bound_names(target):
                imports.pop(name, None)


def _main_guard(node) -> bool:
    """``if __name__ == "__main__":`` (a demo the notebook runs; never run when graded: see _without_demos)."""
    test = node.test if isinstance(node, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _without_demos(tree):
    """The cell's tree without its top-level ``if __name__ == "__main__":`` blocks: what the grader compiles."""
    tree.body = [node for node in tree.body if not _main_guard(node)]
    return tree


def _module_attribute(node, imports: dict) -> bool:
    """``math.log2``, ``-math.inf``: an attribute of a module the cell imported (nothing runs but the lookup)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Attribute) and bool(_imported(node, imports))


def _field_ok(node, imports: dict) -> bool:
    """``counts: Counter = field(default_factory=Counter)``: a dataclass's field made by ``dataclasses.field`` named
    through the cell's imports, with keywords that are literals or names (a factory is called when an instance is
    made, under the observer, not when the cell loads)."""
    return (
        isinstance(node, ast.Call)
        and _imported(node.func, imports) == "dataclasses.field"
        and not node.args
        and all(k.arg is not None and (_literal(k.value) or _simple_name(k.value)) for k in node.keywords)
    )


def _lambda_ok(node) -> bool:
    """``pad = lambda s, n: ...``: a function defined, its defaults literals (what runs is judged when called)."""
    if not isinstance(node, ast.Lambda):
        return False
    defaults = list(node.args.defaults) + [d for d in node.args.kw_defaults if d is not None]
    return all(_literal(d) for d in defaults)


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _import_fallback(node, imports: dict) -> bool:
    """``try: import x`` / ``except ImportError: ...``: imports, and names set as the rest of a cell may be."""
    if not isinstance(node, ast.Try) or node.finalbody or not node.handlers:
        return False
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if not all(isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS for k in kinds):
            return False
    tried = node.body + node.orelse
    if not all(isinstance(n, (ast.Import, ast.ImportFrom, ast.Pass)) for n in tried):
        return False
    return not any(_body_refusal(h.body, top=True, imports=dict(imports)) for h in node.handlers)


def _def_refusal(node, properties: set = frozenset(), imports: dict | None = None) -> str:
    where = f"line {node.lineno}"
    imports = {} if imports is None else imports
    if not all(_decorator_ok(d, properties, imports) for d in node.decorator_list):
        return (
            f"{where}: a decorator other than staticmethod, classmethod, property (or the setter of a property "
            "defined just above), or functools' lru_cache or cache, dataclasses' dataclass, torch's no_grad or "
            "inference_mode imported above in the same cell, runs code when loaded"
        )
    if node.name in CLASS_HOOKS:
        return HOOK_REFUSAL.format(node.lineno, node.name)
    if isinstance(node, ast.ClassDef):
        if node.keywords or not all(_simple_name(b) for b in node.bases):
            return f"{where}: a class whose bases are not plain names"
        return _body_refusal(node.body, top=False, imports=dict(imports))
    args = node.args
    defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if not all(_literal(d) for d in defaults):
        return f"{where}: a default value that is not a constant"
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    if not all(_annotation_ok(a.annotation) for a in every) or not _annotation_ok(node.returns):
        return f"{where}: an annotation that runs code"
    return ""


def _unpacks_literal(target, value) -> bool:
    """``NAME = literal``, or names unpacking a literal tuple or list of as many items (``BOS, EOS = "<s>", "</s>"``:
    nothing runs but the binding)."""
    if isinstance(target, ast.Name):
        return True
    return (
        isinstance(target, (ast.Tuple, ast.List))
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(value, (ast.Tuple, ast.List))
        and len(value.elts) == len(target.elts)
    )


def _body_refusal(body, top: bool, imports: dict | None = None) -> str:
    properties: set = set()  # in a class body: names bound, so far, to a property (what x.setter may decorate)
    imports = {} if imports is None else imports  # name -> the dotted name the cell's imports bound it to, so far
    for node in body:
        if not top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # `from sys import exit as __init_subclass__`: Python would call it while the cell loads (a def or a
            # class of that name is refused by _def_refusal)
            hooks = {n for target in ast.walk(node) for n in _bound_names(target)} & CLASS_HOOKS
            if hooks:
                return HOOK_REFUSAL.format(node.lineno, sorted(hooks)[0])
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
            properties -= _bound_names(node)
            _imports_of(node, imports)
            continue
        if top and _main_guard(node):  # never run when graded; what it binds is no import of this cell's then
            _imports_of(node, imports)  # (an `if`: every name bound in it is unbound)
            continue
        if top and _import_fallback(node, imports):
            for inner in node.body + node.orelse + [n for handler in node.handlers for n in handler.body]:
                _imports_of(inner, imports)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            why = _def_refusal(node, properties if not top else set(), imports)
            _imports_of(node, imports)
            if why:
                return why
            # `@property` or (already checked) `@x.setter`: the name is now bound to a property
            is_property = not isinstance(node, ast.ClassDef) and any(
                (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter"))
                or (isinstance(d, ast.Name) and d.id == "property")
                for d in node.decorator_list
            )
            (properties.add if is_property and not top else properties.discard)(node.name)
            continue
        for target in ast.walk(node):
            properties -= _bound_names(target)
        value_ok = isinstance(node, ast.Assign) and (_module_attribute(node.value, imports) or _lambda_ok(node.value))
        field_ok = isinstance(node, ast.AnnAssign) and not top and _field_ok(node.value, imports)
        _imports_of(node, imports)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring, or a bare constant
        if isinstance(node, ast.Assign) and all(_unpacks_literal(t, node.value) for t in node.targets):
            if _literal(node.value):
                continue
        if value_ok and all(isinstance(target, ast.Name) for target in node.targets):
            continue  # `LOG2 = math.log2`, `pad = lambda s, n: ...`
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if (node.value is None or _literal(node.value) or field_ok) and _annotation_ok(node.annotation):
                continue
        what = type(node).__name__.lower()
        return (
            f"line {node.lineno}: code that runs when the cell is loaded ({what}); an answer cell may only "
            "import, define functions and classes, and set constants"
        )
    return ""


# --------------------------------------------------------------------------- inside the sandbox


class _Observer:
    """What the student's code reaches while it loads and runs: a trace hook (calls into course_lib, copies of
    it) and an audit hook (installed before any student code loads; Python cannot remove it). Each refusal
    goes out at once, so code that runs later cannot take it back; the ways to the harness's own objects
    (frames, every object, the hooks, new threads, the results pipe reopened) are refused and stopped.

    The hooks are not these methods but private copies of the functions below (:func:`_private`), run on this
    object's own ``__dict__`` (``st``): the student's code can reach this class and this module (``object.
    __subclasses__()``, ``sys.modules``) and change them for a moment, but not the copies, nor the state."""

    def __init__(self, package_dir: str, say):
        self.package = package_dir.rstrip(os.sep) + os.sep
        self.say = say
        self.exercise = ""  # set while the answer cells load and while the grader's call runs
        self.loading = False  # True while the answer cells load: none of the student's functions may run then
        # frozen once filled (frozenset, a read-only mapping): what the observer refuses cannot be emptied in place;
        # the hooks look code objects up by id (hashing one hashes its constants: the student's objects)
        self.refs: frozenset = frozenset()  # every course_lib function: refused in a build exercise (one that forbids)
        self.checks: frozenset = frozenset()  # the checks' own (references, machinery): refused in every exercise
        self.ref_ids: frozenset = frozenset()
        self.refused_ids: frozenset = frozenset()  # ids of those this exercise refuses (refs or checks)
        self.prints = types.MappingProxyType({})  # fingerprint of each of those -> its name (a copy is refused)
        self.build = False
        self.given: frozenset = frozenset()  # course_lib functions the check hands the student's function as inputs
        self.given_ids: frozenset = frozenset()
        self.answers: tuple = ()  # every code object compiled from the answer cells (the student's)
        self.answer_ids: frozenset = frozenset()
        # code made runnable (exec'd, made a function, or given to one as its __code__) while the student's code was
        # on the stack: the student's, whatever its file name ("<string>", a stdlib file's): id -> code, kept alive
        self.made: dict = {}
        self.seen: dict = {}  # id(code) -> (code, "" or why calling it is refused): each judged once, kept alive
        self.snapshot: tuple = ()  # course_lib's functions and classes as they were before any student code
        self.course_files: frozenset = frozenset()  # (device, inode) of every file and folder of course_lib
        self.course_codes: frozenset = frozenset()  # every code object of course_lib's before any student code
        self.course_ids: frozenset = frozenset()
        # the lesson checks' code that only judging runs (references, hints): nothing in this process calls it
        self.judging: frozenset = frozenset()
        self.judge_ids: frozenset = frozenset()
        self.run_path: frozenset = frozenset()  # the code the check's run path may call (see _run_path)
        self.run_ids: frozenset = frozenset()
        # C calls (the trace sees Python's only): what the checks' own observer refuses, judged here instead
        self.c_ids: dict = {}  # id(builtin) -> (builtin, "kernel", "autograd" or "tamper")
        self.kernel_names: frozenset = frozenset()  # aten op names of the fused kernels this exercise refuses
        self.kernel_code_ids: frozenset = frozenset()  # ids of those written in Python (kept alive in c_ids)
        # their qualified names, read before any student code (3.10's code objects carry none: borrowed.qualname)
        self.kernel_qualnames = types.MappingProxyType({})
        self.autograd = False  # the exercise asks for a gradient by hand: autograd's engine, its Python, refused
        self.torch_rules = False
        self.grad_switch = None
        self.grad_enabled = None
        self.c_types: dict = {}  # id(type) -> (type, "lookup" / "kernel" / "autograd" / "tamper" / ""), a cache
        self.special_types: tuple = ()  # (type, how): the dispatcher's handle, autograd's engine, torch's switches
        self.ops_file = ""  # torch/_ops.py: where torch.ops calls an overload's nameless builtin
        self.overload = (None, None)  # torch's OpOverload class and the C getter of its instances' __dict__
        self.torch_dir = ""
        self.autograd_dirs = self.autograd_spared = self.opaque_dirs = frozenset()
        self.reimplemented_dirs: tuple = ()  # torch's Python versions of its ops (folders inside torch's)
        self.kernel_python: tuple = ()  # ((absolute places, reason), ...): a refused kernel's Python by place
        # in a build exercise, every installed package but borrowed.ALLOWED_LIBRARIES is refused by place: where
        # installed packages live, the allowed ones' names, and what each module object and type was found to be
        self.site_dirs: tuple = ()
        self.allowed_libraries: frozenset = frozenset()
        self.output_libraries: frozenset = frozenset()  # the allowed ones that print, draw or show progress
        self.kernel_reasons: frozenset = frozenset()  # what kernel_python's places are refused as
        self.import_protocol: frozenset = frozenset()  # what the import system calls on a finder or loader
        self.module_kinds: dict = {}  # id(module) -> (module, the refused package's name or "")
        self.library_names: dict = {}  # a module's name in sys.modules, and its last part -> the refused package
        self.gc_callbacks: set = set()  # ids of the collector's callbacks' code once the cells loaded
        self.gc_codes: list = []  # that code, kept alive (its ids stay its own)
        self.torch_kinds: dict = {}  # id(code) -> (code, what _torch_python says of it), a cache
        # where a C function's or a class's machine code is (see _c_address): this process's file mappings, and what
        # was found for each address and each type
        self.maps: list = []  # (start, end, path), sorted
        self.map_starts: list = []
        self.homes: dict = {}  # address -> (path, refused package or "")
        self.c_layouts: dict = {}  # id(type) -> (type, "type", "function" or "")
        self.extension_suffixes = _EXTENSION_SUFFIXES
        # an extension module made or run during the call by the import system is sealed as its loader returns
        # (_seal_loaded); made by anything else (``_imp.create_dynamic`` called by hand) it is refused
        external = sys.modules["_frozen_importlib_external"]
        loader = external.ExtensionFileLoader
        codes = (
            loader.create_module.__code__,
            loader.exec_module.__code__,
            external._LoaderBasics.exec_module.__code__,  # a module of Python's: it may hold Cython's functions
            sys.modules["_frozen_importlib"]._find_and_load.__code__,  # an import's outermost frame
        )
        self.find_and_load = codes[-1]
        self.loader_codes = types.MappingProxyType({id(code): code for code in codes})
        self.pending_modules: list = []  # made or run during the call, sealed once their import is over
        self.create_code = loader.create_module.__code__
        self.frames_removed = sys.modules["_frozen_importlib"]._call_with_frames_removed.__code__
        imp = sys.modules["_imp"]
        self.dynamic = types.MappingProxyType({id(f): f for f in (imp.create_dynamic, imp.exec_dynamic)})
        self.sealed_natives: set = set()  # the shared objects of refused packages whose modules were sealed so
        self.natives_before: frozenset = frozenset()  # refused packages' extensions mapped before the call
        self.local_trace = None  # the trace hook itself, as a loader frame's local trace (set with the hooks)
        self.busy = False
        self.reading = False  # True only while the observer itself reads a frame's code (see _code_of)
        # where the installed modules are (sys.path as the harness set it, before any student code; not the folder
        # that holds course_lib): a module imported from there for the first time during a call is no one's text
        parent = os.path.realpath(os.path.dirname(self.package.rstrip(os.sep)))
        self.installed = tuple(
            sorted(
                {
                    form + os.sep
                    for p in sys.path
                    if p and os.path.isdir(p) and os.path.realpath(p) != parent
                    for form in (os.path.realpath(p), os.path.abspath(p))  # as files are named, and as they are
                }
            )
        )

    def course_code(self, filename: str) -> bool:
        return _course(vars(self), filename)

    def collect(self) -> None:
        """Every function and method defined at module level in course_lib (the lesson's module, the checks'
        references, the checks' machinery): the student's code may not call one of them, nor a copy. And the
        identity of every file of course_lib on disk (what an open is compared with)."""
        refs, checks = set(), set()
        here = os.path.abspath(__file__)
        for name, module in list(sys.modules.items()):
            if not name.startswith("course_lib") or getattr(module, "__file__", None) in (None, here):
                continue
            for value in list(vars(module).values()):
                for fn in _functions(value):
                    if isinstance(fn, types.FunctionType) and self.course_code(fn.__code__.co_filename):
                        refs.add(fn.__code__)
                        if name.startswith("course_lib.checks"):
                            checks.add(fn.__code__)
        self.refs, self.checks = frozenset(refs), frozenset(checks)
        self.ref_ids = frozenset(id(code) for code in self.refs)
        files = set()
        for folder, _, names in os.walk(self.package):
            for name in [".", *names]:
                try:
                    found = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                files.add((found.st_dev, found.st_ino))
        self.course_files = frozenset(files)

    def arm(self, exercise) -> None:
        """What the check refuses for this exercise; fingerprints of the functions it refuses."""
        self.build = bool(exercise.forbidden)
        prints: dict = {}
        refused = self.refs if self.build else self.checks
        for code in refused:
            if len(code.co_code) > 24:  # a one-line helper may be anyone's
                prints.setdefault(_fingerprint(code), _qualname(code))
        for code in self.given:  # a copy of what the check hands in is no borrowing
            prints.pop(_fingerprint(code), None)
        self.prints = types.MappingProxyType(prints)
        self.refused_ids = frozenset(id(code) for code in refused)

    def rule_c_calls(self, exercise) -> None:
        """What a C call may not be in this exercise, taken from the checks' own rules (borrowed.Rules) now, before
        any student code: the checks' observer is a module the student's code can reach, this state is not."""
        import torch

        from course_lib.checks import borrowed

        rules = exercise.rules
        watcher = borrowed._Watcher(rules, borrowed.Observation(), set())
        self.c_ids = {id(b): (b, how) for b, how in watcher.c_kinds.items() if how in ("kernel", "autograd", "tamper")}
        self.kernel_names = frozenset(rules.kernels)
        self.kernel_code_ids = frozenset(id(c) for c in watcher.kernel_codes)
        self.kernel_qualnames = types.MappingProxyType({id(c): borrowed.qualname(c) for c in watcher.kernel_codes})
        self.c_ids.update({id(c): (c, "kernel") for c in watcher.kernel_codes})
        # a copy of one of those (its module imported again, its text compiled under another name) is refused too
        prints = dict(self.prints)
        for code in watcher.kernel_codes:
            if len(code.co_code) > 24:
                prints.setdefault(_fingerprint(code), _text(self.kernel_qualnames[id(code)], 80))
        self.prints = types.MappingProxyType(prints)
        self.autograd = bool(rules.autograd)
        self.torch_rules = bool(rules.autograd or rules.kernels)  # torch's compilers refused too (they run unseen)
        # the switch of autograd's recording, and whether it is on: watched where a gradient is the exercise
        self.grad_switch = torch._C._set_grad_enabled if rules.autograd else None
        self.grad_enabled = torch.is_grad_enabled
        special = [(t, "tamper") for t in watcher.tamper_types]
        if rules.autograd and watcher.engine is not None:
            special.append((watcher.engine, "autograd"))
        if rules.kernels:
            special.append((torch._C._DispatchOperatorHandle, "kernel"))
        self.special_types = tuple(special)
        self.ops_file = os.path.join(os.path.dirname(torch.__file__), "_ops.py")
        overload = torch._ops.OpOverload
        getter = next((vars(k)["__dict__"] for k in overload.__mro__ if "__dict__" in vars(k)), None)
        self.overload = (overload, getter.__get__ if getter is not None else None)
        self.torch_dir = os.path.dirname(torch.__file__) + os.sep
        # where autograd's Python and torch's compilers live in torch: the checks' own lists, frozen here
        self.autograd_dirs = frozenset(borrowed._AUTOGRAD_DIRS)
        self.autograd_spared = frozenset(borrowed._AUTOGRAD_SPARED)
        self.opaque_dirs = frozenset(borrowed._OPAQUE_DIRS)
        self.reimplemented_dirs = borrowed._REIMPLEMENTED_DIRS
        self.kernel_python = borrowed.kernel_python_places(rules.kernels)
        self.site_dirs = borrowed.site_dirs() if rules.course else ()
        self.allowed_libraries = frozenset(borrowed.ALLOWED_LIBRARIES) | {"course_lib"}
        self.output_libraries = frozenset(borrowed.OUTPUT_LIBRARIES)
        self.kernel_reasons = frozenset(reason for _, reason in self.kernel_python)
        self.import_protocol = borrowed.IMPORT_PROTOCOL
        record = type(torch._C._jit_get_operation.__self__)  # what owns torch's pybind11 builtins
        self.c_types = {id(t): (t, "lookup") for t in (type(None), types.ModuleType, record)}

    def judge_only(self, exercise) -> None:
        """The code of the lessons' checks (course_lib/checks/lessonNN.py) that this exercise's run path never
        calls: its references and judging. Refused whoever calls it, the check's own frames included (a student's
        object the check reads may call back into it, or hand it a C callable that does)."""
        every: set = set()
        for name, module in list(sys.modules.items()):
            if name.startswith("course_lib.checks.lesson") and module is not None:
                own = getattr(module, "__file__", None)  # its own functions, not what it imports (protocol's)
                for value in list(vars(module).values()):
                    for fn in _functions(value):
                        if isinstance(fn, types.FunctionType) and fn.__code__.co_filename == own:
                            every |= set(_code_objects(fn.__code__).values())
        run = _run_path(exercise)
        self.judging = frozenset(every - run - set(self.given))
        self.judge_ids = frozenset(id(code) for code in self.judging)
        self.run_path = frozenset(run)
        self.run_ids = frozenset(id(code) for code in self.run_path)

    def know_course(self, codes: dict) -> None:
        self.course_codes = tuple(codes.values())  # kept alive: their ids are what the hooks look up
        self.course_ids = frozenset(codes)

    def know_modules(self) -> None:
        """Which loaded modules are a refused package's, read once the answer cells have loaded (they import, and
        nothing of theirs has run yet): a C function's module, or a C type's, is then known by identity, whatever
        the student's code later writes into it."""
        if not self.site_dirs:
            return
        from course_lib.checks import borrowed

        self.gc_codes += borrowed._gc_callback_codes()
        self.gc_callbacks.update(id(code) for code in self.gc_codes)
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            top = _library(vars(self), path)
            self.module_kinds[id(module)] = (module, top)
            if top and isinstance(name, str):
                self.library_names[name] = top
                if path.endswith((".so", ".pyd")):  # an extension's C types may name it by its last part
                    self.library_names.setdefault(name.rpartition(".")[2], top)

    def know_natives(self) -> None:
        """Which refused packages' extension modules are mapped into this process once the answer cells have loaded
        (see _loaded_natives)."""
        if self.site_dirs:
            self.natives_before = frozenset(_refused_natives(vars(self)))

    def hand_in(self, given) -> None:
        self.given = frozenset(given)
        self.given_ids = frozenset(id(code) for code in self.given)

    def add_answers(self, codes: dict) -> None:
        self.answers = (*self.answers, *codes.values())  # kept alive: their ids are what the hooks look up
        self.answer_ids = self.answer_ids | frozenset(codes)

    def stale(self) -> str:
        return _stale(vars(self))

    # the hooks' functions, for the tests and for reading (the installed hooks are private copies of them)
    def audit(self, event, args) -> None:
        _audit(vars(self), event, args)

    def trace(self, frame, event, arg):
        return _trace(vars(self), frame, event, arg)

    def refuse(self, what: str) -> None:
        _refuse(vars(self), what)

    def check(self) -> str:
        return _check(vars(self))

    def verdict(self, code) -> str:
        return _verdict(vars(self), code)

    def hidden(self, path) -> bool:
        return _hidden(vars(self), path)

    def swapped(self, event, args, frame) -> bool:
        return _swapped(vars(self), event, args, frame)

    @staticmethod
    def detail(event, args) -> str:
        return _detail(event, args)


# --------------------------------------------------------------------------- the observer's hooks
# Functions of the observer's state ``st`` (its __dict__). They never hash, compare, format or call an object the
# student's code made: names are taken as plain text (_text) or refused, code objects are looked up by id, paths
# compared by what the kernel says they are (os.stat). Installed as private copies (_private): their globals are
# a copy of this module's taken before any student code, so nothing they use can be replaced while they run.

_getframe, _stat, _join = sys._getframe, os.stat, "".join
_tuple_iter = tuple.__iter__  # a tuple's items by C's own iteration (a subclass's __iter__ is not run)
_S_ISDIR, _S_ISFIFO, _S_ISSOCK = __import__("stat").S_ISDIR, __import__("stat").S_ISFIFO, __import__("stat").S_ISSOCK
_starts, _split, _decode, _rpartition = str.startswith, str.split, bytes.decode, str.rpartition
_readlink, _O_PATH = os.readlink, os.O_PATH
_THREADING_FILE = threading.__file__
_function_name = types.FunctionType.__dict__["__qualname__"].__get__
_type_name = type.__dict__["__qualname__"].__get__
_CODE, _FUNCTION, _FRAME = types.CodeType, types.FunctionType, types.FrameType
# a code object's qualified name (Python 3.10's code objects have none: there, their bare name; messages only)
_qualname = types.CodeType.__dict__["co_qualname" if sys.version_info >= (3, 11) else "co_name"].__get__
_MODULE, _module_dict = types.ModuleType, types.ModuleType.__dict__["__dict__"].__get__
_type_module, _dict_get = type.__dict__["__module__"].__get__, dict.get
_dict_copy, _dict_items = dict.copy, dict.items
_getattr, _subclass = getattr, type.__subclasscheck__  # type.__subclasscheck__(T, t): t's own MRO, no hook of t's
_open_fd, _read_fd, _close_fd, _fstat, _bjoin, _O_RDONLY = os.open, os.read, os.close, os.fstat, b"".join, os.O_RDONLY
_S_ISREG = __import__("stat").S_ISREG
_find, _ends, _bisect = str.find, str.endswith, __import__("bisect").bisect_right
_PACKAGE_FOLDERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_BUILTIN = types.BuiltinFunctionType  # C functions (and, as its subclass, C methods that take their class)
_EXTENSION_SUFFIXES = tuple(__import__("importlib.machinery").machinery.EXTENSION_SUFFIXES)


def _memory_reader():
    """A reader of one machine word of this process's memory, bound now (ctypes' classes are Python classes the
    student's code could change later)."""
    import ctypes

    at, value = ctypes.c_void_p.from_address, vars(ctypes._SimpleCData)["value"].__get__
    return lambda address: value(at(address)) or 0


_word = _memory_reader()


def _memory_zeroer():
    """A writer of a zero word, bound now (see _memory_reader): used on CPython's own module definitions only."""
    import ctypes

    at, value = ctypes.c_void_p.from_address, vars(ctypes._SimpleCData)["value"].__set__
    return lambda address: value(at(address), None)


_zero = _memory_zeroer()
# where CPython keeps what a C function runs (3.10 to 3.13, as built by default): PyCFunctionObject.m_ml, and in
# the PyMethodDef it points to, ml_meth; a type's tp_dealloc (a class statement's is CPython's own subtype_dealloc)
_M_ML, _ML_METH, _TP_DEALLOC = 16, 8, 48
_MD_DEF = 24  # PyModuleObject.md_def: an extension module's PyModuleDef, in its shared object
# in a PyModuleDef: m_base's m_init and m_copy (a single-phase module's init function and the namespace it first
# made), and m_slots (a multi-phase module's, NULL for a single-phase one)
_M_INIT, _M_COPY, _M_SLOTS = 16, 32, 72
REDISPATCH = frozenset({"redispatch", "_op_dk"})  # torch.ops' calls that pick the dispatch key themselves


def _text(value, limit: int = 200) -> str:
    """``value`` as plain text when it is text (a subclass's characters, none of its methods run), else "?"."""
    try:
        return _join([value])[:limit]
    except TypeError:
        return "?"


def _course(st, filename) -> bool:
    return _starts(filename, st["package"]) if isinstance(filename, str) else False


def _refuse(st, what) -> None:
    if st["exercise"]:
        st["say"]({"refused": _text(what)})


def _code_of(st, frame):
    """``frame.f_code``, read without a trip through the audit hook: Python audits that read
    (``object.__getattr__``), and the trace hook makes it on every call, so the full audit of the observer's
    own read cost up to half of a check's time. Only the read itself is let through: a frame's ``f_code`` is a
    getter in C that runs nothing of anyone's, and the flag is down again before anything else runs."""
    st["reading"] = True
    try:
        return frame.f_code
    finally:
        st["reading"] = False


def _by_student(st, frame) -> bool:
    """Is the innermost frame that is the student's or course_lib's the student's? course_lib's code is known by
    identity (what existed before any student code), never by its file name: code compiled at run time may carry
    any file name, course_lib's included, and is the student's."""
    while frame is not None:
        code = frame.f_code
        if id(code) in st["course_ids"]:
            return False
        if _students(st, code):
            return True
        frame = frame.f_back
    return True  # a thread the student's code started (the grader's own calls start from the harness)


def _students(st, code) -> bool:
    """Is this code the student's: an answer cell's, code under course_lib's name that is not course_lib's, or code
    made runnable while the student's code ran (see :func:`_note_made`)? Anything else (Python's, torch's, code a
    library made for itself) is no one's: the observer looks through it to what called it."""
    name = code.co_filename
    return _starts(name, "<answer ") or _course(st, name) or st["made"].get(id(code)) is code


def _note_made(st, event, args, frame) -> None:
    """Code made runnable while the student's code is anywhere on the stack (``exec``/``eval`` of a code object or
    text, ``types.FunctionType(code)``, a function given new ``__code__``) is the student's, with all it nests:
    compiled under "<string>" or a stdlib file's name it would otherwise be no one's, and calls it makes later from
    a frame of the check's (a module's forward the check runs) would be the check's. A module a library imports
    while the student's code runs counts too: the check's own run path imported what it needs in the warm-up."""
    if event == "exec" or event == "function.__new__":
        code = args[0] if args else None
    elif event == "object.__setattr__" and len(args) > 2 and type(args[0]) is _FUNCTION:
        code = args[2] if _text(args[1], 20) == "__code__" else None
    else:
        return
    if type(code) is not _CODE or id(code) in st["course_ids"] or id(code) in st["answer_ids"]:
        return
    if not _student_below(st, frame):
        return
    todo = [code]
    while todo:
        one = todo.pop()
        st["made"][id(one)] = one
        todo += [c for c in _tuple_iter(one.co_consts) if type(c) is _CODE and st["made"].get(id(c)) is not c]


def _student_below(st, frame) -> bool:
    """Is a frame of the student's anywhere from ``frame`` down (course_lib's own, known by identity, is not)?"""
    while frame is not None and (id(frame.f_code) in st["course_ids"] or not _students(st, frame.f_code)):
        frame = frame.f_back
    return frame is not None


def _made_at_run_time(st, event, args, frame) -> bool:
    """Is this code made at run time (a MAKING_EVENTS event) by the student's code in a build exercise's call, and
    so refused? Not while the cells load (nothing of the student's runs then: what compiles is an import or a
    class statement's own machinery), not in an exercise that forbids nothing, not when no frame of the student's
    is below (the check's own run path compiling its stand-ins). Not refused either: a stdlib module that compiles
    for itself, from its own frame (COMPILE_KEEPERS; typing's only a type's text), a module of the installed
    ones imported for the first time (its file's text compiled byte for byte: the library's code, not text of
    the student's choosing; the child reads no .pyc during the call, so no import unmarshals), and what such a
    module compiles while it is being imported (see _importing_installed)."""
    if not st["build"] or st["loading"] or not _student_below(st, frame):
        return False
    code = frame.f_code
    if _starts(code.co_filename, _COMPILER_FILES) and st["made"].get(id(code)) is not code:
        if event != "compile":
            return True
        if _starts(code.co_filename, _TYPING_FILES):
            text = args[0] if args else None
            return not (
                (type(text) is str and _TYPE_TEXT(text) is not None)
                or (type(text) is bytes and _TYPE_BYTES(text) is not None)
            )
        if _starts(code.co_filename, _DATACLASSES_FILES):
            return not _plain_fields(frame)
        return False
    if event == "compile" and len(args) > 1 and _installed_text(st, args[0], args[1]):
        return False
    if event == "compile" and code is _AST_PARSE and _asks_for_a_tree(frame):
        return False
    return not _importing_installed(st, frame)


def _asks_for_a_tree(frame) -> bool:
    """Does ast.parse's frame pass compile the flag for a tree? Its module's PyCF_ONLY_AST can be changed, or its code
    run on other globals: read the int it passes (its local ``flags``), tested against the constant read at start."""
    flags = frame.f_locals.get("flags")
    return type(flags) is int and flags & _ONLY_AST == _ONLY_AST


def _plain_fields(frame) -> bool:
    """Does the dataclass being made have only fields named by identifiers? dataclasses builds its methods' text
    from the names unchecked (a field named ``a,print(1)`` is code in ``__eq__``'s text): read from
    ``_process_class``'s own ``fields`` (its frame, nearest to the compile), every key an exact str that is an
    identifier and no keyword, every value an exact ``Field`` carrying that name. No such frame: not plain."""
    while frame is not None:
        code = frame.f_code
        if _starts(code.co_filename, _DATACLASSES_FILES) and _text(code.co_name, 40) == "_process_class":
            fields = frame.f_locals.get("fields")
            if type(fields) is not dict:
                return False
            for name, field in _dict_items(fields):
                if type(name) is not str or type(field) is not _FIELD or not _is_identifier(name):
                    return False
                given = _field_name(field)
                if type(given) is not str or given != name or name in _KEYWORDS:
                    return False
            return True
        frame = frame.f_back
    return False


def _importing_installed(st, frame) -> bool:
    """Is an installed module being imported between ``frame`` and the student's code (its ``<module>`` code on the
    stack)? What a library compiles while it is imported (mpmath's generated methods, sympy's, torch's templates)
    is text of its own: torch's optimizers import torch._dynamo, and with it these, on their first step. (Such a
    module's code counts as the student's, see _note_made; in a build exercise's call nothing but an installed
    file's own text can carry an installed file's name, since any other compile there is refused.)"""
    while frame is not None:
        code = frame.f_code
        filename = _text(code.co_filename, 4096)
        installed = _starts(filename, st["installed"]) and not _course(st, filename)
        if installed and _text(code.co_name, 20) == "<module>":
            return True
        if not installed and _students(st, code):  # the student's own code (a cell's, or made from a cell's text)
            return False
        frame = frame.f_back
    return False


def _installed_text(st, source, filename) -> bool:
    """Is ``source`` (bytes, as importlib reads a module) the whole text of ``filename``, a regular file of the
    installed modules (not course_lib's)? Read here, by the file's descriptor: a path alone proves nothing."""
    if type(source) is not bytes or type(filename) is not str:
        return False
    try:
        name = _kernel_path(st, filename)
    except (TypeError, ValueError, OSError):
        return False
    if not _starts(name, st["installed"]) or _course(st, name):
        return False
    try:
        fd = _open_fd(name, _O_RDONLY)
    except (OSError, ValueError):
        return False
    try:
        if not _S_ISREG(_fstat(fd).st_mode):
            return False
        chunks = []
        while True:
            chunk = _read_fd(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return False
    finally:
        _close_fd(fd)
    return _bjoin(chunks) == source


def _near(st, frame) -> bool:
    """Asked for by the student's code: its own line, or any code between it and the frame taken (inspect,
    traceback, torch, ...: each may hand the frame on), unless a module that keeps the frames it reads
    (FRAME_KEEPERS: typing, enum, ...) took it for itself, even when the student's line called it directly
    (``collections.namedtuple`` names its caller's module). Known by its file and by not being code made at run
    time (code compiled under a keeper's file name is the student's, see _note_made)."""
    while frame is not None:
        code, back = frame.f_code, frame.f_back
        if _starts(code.co_filename, "<answer "):
            return True
        by_answer = back is not None and _starts(back.f_code.co_filename, "<answer ")
        # a library is trusted only where a library called it (it is large: whether it hands a frame out is not known)
        keepers = _STDLIB_KEEPER_FILES if by_answer else _KEEPER_FILES
        if _starts(code.co_filename, keepers) and st["made"].get(id(code)) is not code:
            return False
        if by_answer:
            return True
        frame = back
    return False


def _detail(event, args) -> str:
    if _starts(event, "object.") and len(args) > 1:
        owner, kind = args[0], type(args[0])
        # read by C's own getters: a class of the student's may define __qualname__ or __name__ as it likes
        name = _function_name(owner) if kind is _FUNCTION else _type_name(owner if kind is type else kind)
        return f" {_text(args[1], 40)} of {_text(name, 60)}"
    return f" {_text(args[0], 80)}" if args else ""


def _swapped(st, event, args, frame) -> bool:
    """A function of course_lib's (the harness's and the checks' own included) given other code, defaults or
    keyword defaults, from any frame but course_lib's own (``setattr`` from pickle's unpickler or
    ``unittest.mock`` is the student's doing)."""
    return (
        (event == "object.__setattr__" or event == "object.__delattr__")
        and len(args) > 1
        and type(args[0]) is _FUNCTION
        and _text(args[1], 20) in CODE_ATTRIBUTES
        and id(args[0].__code__) in st["course_ids"]  # torch sets its own lambdas' defaults
        and id(frame.f_code) not in st["course_ids"]
    )


def _hidden(st, path) -> bool:
    """Files the student's code may not open: the course's own (the references' text, by the file's identity on
    disk), any directory (a directory's descriptor is a ``dir_fd`` from which a relative path reaches any file,
    and the audit event does not carry the ``dir_fd``: no exercise opens a directory), pipes and sockets (the
    harness's channel, reopened) and the ways back to the harness's memory (/proc/*/fd, /dev/fd, /proc/*/mem)."""
    if path is None or type(path) is int:
        return False
    if type(path) is bytes:
        try:
            path = _decode(path, "utf-8", "surrogateescape")
        except UnicodeError:
            return True
    if type(path) is not str:
        return True  # a subclass of str or bytes: its methods are the student's
    try:
        found = _stat(path)
    except (OSError, ValueError):
        found = None  # a file that does not exist yet (a new one is no one's)
    if found is not None and (
        (found.st_dev, found.st_ino) in st["course_files"]
        or _S_ISDIR(found.st_mode)
        or _S_ISFIFO(found.st_mode)
        or _S_ISSOCK(found.st_mode)
    ):
        return True
    try:
        name = _kernel_path(st, path)
    except (TypeError, ValueError, OSError):
        return True
    parts = _split(name, os.sep)
    return (
        _starts(name + os.sep, st["package"])
        or _starts(name, "/dev/fd")
        or (len(parts) > 2 and parts[1] == "proc" and bool(PROC_PARTS.intersection(parts)))
    )


def _fingerprint(code) -> tuple:
    """What a copy of a function keeps whatever its file name, line numbers and local names (the bytecode, and
    the names it uses as plain text: a code object's parts may be the student's objects)."""
    return code.co_code, _join([_text(n, 1000) + "\0" for n in code.co_names])


def _verdict(st, code) -> str:
    """Why calling ``code`` is refused whatever calls it ("" if not): compiled under an answer cell's name
    but not from one, or a copy (same bytecode and names) of a course_lib function under another name."""
    key = id(code)
    if key in st["judge_ids"]:  # whoever calls it: the check's own frames too, called back by the student's objects
        return f"{_dotted(st, code)}, which only the grader's judging runs"
    if key in st["answer_ids"] or key in st["ref_ids"] or key in st["kernel_code_ids"]:  # kept alive (answers, refs,
        return ""  # c_ids): the originals, refused where the student's code calls them
    if _starts(code.co_filename, "<answer ") if isinstance(code.co_filename, str) else True:
        return f"code made at run time under an answer cell's name ({_text(_qualname(code), 80)})"
    if key not in st["course_ids"] and _course(st, code.co_filename):
        return f"code made at run time under course_lib's name ({_text(_qualname(code), 80)})"
    if st["build"] and st["torch_dir"] and _installed_own(st, code.co_filename):
        # an installed module's own code: in a build exercise's call nothing compiles under an installed file's
        # name but that file's text (see _made_at_run_time), so it is no copy of the course's, whatever its
        # bytecode (a small helper of course_lib's matched one of matplotlib's). torch's is still compared: its
        # modules imported again make new code objects of the classes an exercise forbids
        return ""
    return _copy_of(st, code)


def _installed_own(st, filename) -> bool:
    """Is ``filename`` an installed module's file (the standard library's, a package's), outside torch?"""
    name = _placed(st, _text(filename, 4096))
    return _starts(name, st["installed"]) and not _starts(name, st["torch_dir"])


def _copy_of(st, code) -> str:
    """ "a copy of NAME" when ``code`` has the bytecode and names of a function this exercise refuses, else ""."""
    name = st["prints"].get(_fingerprint(code))
    return f"a copy of {name}" if name else ""


def _stale(st) -> str:
    """A remembered verdict that is not what the observer would say now ("" if none): the cache of verdicts is
    the one part of the observer that changes while the student's code runs."""
    # copied whole in C first: the trace is still on, and a finalizer the collector runs while a list of the items
    # is built (a figure's, once a plot was drawn in the call) adds a verdict, which broke that list's iteration
    seen = None
    while seen is None:
        try:
            seen = _dict_copy(st["seen"])
        except RuntimeError:  # changed during the copy all the same: copied again
            pass
    for key, entry in _dict_items(seen):
        if type(key) is not int or type(entry) is not tuple or len(entry) != 2:
            return "something other than a verdict"
        code, why = entry
        if type(code) is not _CODE or type(why) is not str or id(code) != key:
            return "something other than a verdict"
        if why != (_copy_of(st, code) if key in st["answer_ids"] else _verdict(st, code)):
            return f"the verdict on {_text(_qualname(code), 80)}"
    return ""


def _check(st) -> str:
    """``_changed`` on the snapshot, the audit hook quiet meanwhile (it reads every function's ``__code__``)."""
    busy, st["busy"] = st["busy"], True
    try:
        return _changed(st["snapshot"])
    finally:
        st["busy"] = busy


def _remembered(st, code):
    """The verdict cached for ``code`` (None if none): by id, the code itself kept with it so no id is reused."""
    entry = st["seen"].get(id(code))
    return entry[1] if entry is not None and entry[0] is code else None


def _trace(st, frame, event, arg):
    """A global trace function: Python calls only (C calls cost nothing), no line events (returns None)."""
    # called by the student's code, directly or through torch or Python (vmap, map, a thread): refused;
    # called by course_lib's own code (the check's machinery, a helper the check gave) it is the check's
    if event != "call":
        # only a loader's frame that the hook below follows has a local trace: its module is sealed as it returns
        if id(_code_of(st, frame)) in st["loader_codes"]:
            if event == "return":
                _seal_loaded(st, frame, arg)
            return st["local_trace"]
        return
    code = _code_of(st, frame)
    key = id(code)
    if key in st["loader_codes"]:
        # the import system making or running a module during the call: followed to its return (see _seal_loaded)
        return st["local_trace"] if st["site_dirs"] and not st["loading"] else None
    if key in st["answer_ids"]:
        if st["loading"] and code.co_flags & NEW_LOCALS:
            # a function of the student's run while the cells load (an Enum's __init__, a base class's
            # metaclass calling a method): the cells only define, so this is code run before any exercise is
            _refuse(st, f"the student's {_text(_qualname(code), 80)} ran while the answer cells loaded")
        copied = _remembered(st, code)
        if copied is None:
            copied = _copy_of(st, code)
            st["seen"][key] = (code, copied)
        if copied:  # an answer cell that is a refused function pasted whole (same bytecode and names)
            _refuse(st, copied)
        # the student's code entered from outside it (the check's call, torch's): is course_lib as it was?
        caller = frame.f_back
        if caller is not None and id(_code_of(st, caller)) not in st["answer_ids"]:
            changed = _check(st)
            if changed:
                _refuse(st, f"{changed} (replaced by the student's code)")
        return
    why = _remembered(st, code)
    if why is None:
        why = _verdict(st, code)
        st["seen"][key] = (code, why)
    if why:
        _refuse(st, why)
        return
    if key in st["refused_ids"] and key not in st["given_ids"] and _checks_reach_lesson(st, frame.f_back, code):
        # the check's own frame calling lesson code its run path never names: an object of the student's that the
        # check reads (a C callable it carries) chose the call
        _refuse(st, _dotted(st, code))
        return
    if key not in st["refused_ids"] or key in st["given_ids"]:
        if st["torch_rules"] or st["kernel_code_ids"] or st["kernel_python"] or st["site_dirs"]:
            torch = st["torch_kinds"].get(key)
            if torch is None or torch[0] is not code:
                torch = st["torch_kinds"][key] = (code, _torch_python(st, code))
            caller = frame.f_back
            # whoever calls it: the check's run path never calls torch's refused Python, and a frame of the check's
            # below proves nothing (a finalizer of the student's object runs C code from the check's frame once the
            # student's function has returned, with no frame of the student's on the stack)
            if (
                torch[1]
                and (torch[1] != "compiled" or not _starts(caller.f_code.co_filename, st["torch_dir"]))
                and not _importing(st, frame)
                and not (torch[1] in st["kernel_reasons"] and _drawing(st, caller))
            ):
                name = st["kernel_qualnames"].get(key) or _qualname(code)  # only kernels have one kept (alive)
                owner = "torch's " if _starts(_placed(st, _text(code.co_filename, 4096)), st["torch_dir"]) else ""
                _refuse(st, f"{owner}{_text(name, 80)} ({torch[1]})")
        return
    if _by_student(st, frame.f_back):
        _refuse(st, _dotted(st, code))


def _drawing(st, frame) -> bool:
    """Is a package that prints, draws or shows progress (ALLOWED_LIBRARIES but torch and numpy) between ``frame``
    and the student's code (or the check's)? Its own use of numpy's masked arrays (an image's, a contour's: what
    ``imshow`` and ``contour`` do with any array) is no masked softmax of the student's, and what it hands back to
    the student's code is judged there (hostile class 33s: a plot drawn inside 6.1 and 6.3 failed them)."""
    while frame is not None:
        code = _code_of(st, frame)
        filename = _text(code.co_filename, 4096)
        if _starts(filename, "<answer ") or id(code) in st["course_ids"]:
            return False
        for place in st["site_dirs"]:
            if _starts(filename, place):
                if _split(_split(filename[len(place) :], os.sep, 1)[0], ".", 1)[0] in st["output_libraries"]:
                    return True
                break
        frame = frame.f_back
    return False


def _checks_reach_lesson(st, caller, code) -> bool:
    """Does a frame of the checks' own code call a lesson module's function that the check's run path never
    calls (see :meth:`_Observer.judge_only`), directly or through a library's frames (torch's ``Module.__call__``
    running a forward the student's object holds: a ``functools.partial`` has no frame of its own)?"""
    if caller is None or id(code) in st["run_ids"]:
        return False
    calling = _code_of(st, caller)
    while id(calling) not in st["course_ids"]:
        if _students(st, calling):
            return False  # the student's own frame asked: _by_student says so
        caller = caller.f_back
        if caller is None:
            return False
        calling = _code_of(st, caller)
    checks = st["package"] + "checks" + os.sep
    return _starts(calling.co_filename, checks) and not _starts(code.co_filename, checks)


def _dotted(st, code) -> str:
    """course_lib.module.Qual.name of a course_lib function, from its file (never from a namespace)."""
    module = _module_name(_text(code.co_filename, 4096)[len(st["package"]) :])
    return _join(["course_lib.", module, "." if module else "", _text(_qualname(code), 80)])


def _audit(st, event, args) -> None:
    if st["busy"] or st["reading"] or not st["exercise"] or type(event) is not str:
        return  # an event that is not plain text was raised by the student's code (sys.audit): it reaches nothing
    denied = (
        event in DENIED_EVENTS
        or _starts(event, "ctypes.")
        or (event == "object.__getattr__" and len(args) > 1 and _text(args[1], 20) in FRAME_ATTRIBUTES)
        or (event == "object.__getattr__" and _reads_course_code(st, args))
        or (event == "open" and _hidden(st, args[0] if args else None))
        or (event == "import" and args and _split(_text(args[0]), ".")[0] in DOORS)
        or _extension_made(event, args)
    )
    if not denied and event not in SENSITIVE_EVENTS and event not in MAKING_EVENTS:
        return
    st["busy"] = True
    try:
        frame = _getframe(1)
        _note_made(st, event, args, frame)
        if event in MAKING_EVENTS:
            if _made_at_run_time(st, event, args, frame):
                where = f" {_text(args[1], 80)}" if event == "compile" and len(args) > 1 else ""
                _refuse(st, f"{event}{where} (code made at run time, while your function ran, from text or parts)")
                raise PermissionError(f"grading does not allow {event} while the student's code runs here")
            return
        if _extension_made(event, args) and _split(_text(args[0]), ".")[0] not in DOORS:
            if _by_loader(st, frame):
                return  # the import system's loader, whose modules the trace seals as they are made
            # an extension module made by C code calling ``_imp.create_dynamic`` (``map``: no profile event): a
            # fresh module (a refused package's made again) whose functions were never sealed
            _refuse(st, f"_imp.create_dynamic {_text(args[0], 80)} (an extension module made outside the loader)")
            raise PermissionError("grading does not allow making an extension module outside the import system")
        if event in PROCESS_EVENTS or _swapped(st, event, args, frame):
            # a process's arguments are the student's and may hold a host path (sys.executable): the event alone
            _refuse(st, event if event in PROCESS_EVENTS else f"{event}{_detail(event, args)}")
            raise PermissionError(f"grading does not allow {event} while the student's code runs")
        hooks = event == "sys.setprofile" or event == "sys.settrace"
        if hooks and _text(frame.f_code.co_filename, 4096) == _THREADING_FILE:  # a new thread taking on our hook
            return
        if denied and _taken_in_import(st, event, args):
            return
        if denied and _by_student(st, frame) and (_starts(event, ("open", "import")) or _near(st, frame)):
            # whoever the student's code asked to do it (inspect.stack, traceback, importlib...): refused and
            # stopped, so nothing of the harness is reached
            if _starts(event, "object."):
                detail = f" {_text(args[1], 40)}{_reader(st, frame)}" if len(args) > 1 else _reader(st, frame)
            elif event == "sys._getframe":
                detail = _reader(st, frame)  # its argument is the frame itself: who read it says more
            else:
                detail = f" {_text(args[0], 80)}" if args else ""
            _refuse(st, f"{event}{detail}")
            raise PermissionError(f"grading does not allow {event} here")
        if _starts(frame.f_code.co_filename, "<answer "):  # the student's own line (torch does some inside)
            detail = f" {_text(args[1], 40)}" if _starts(event, "object.") and len(args) > 1 else ""
            _refuse(st, f"{event}{detail}")
    finally:
        st["busy"] = False


def _taken_in_import(st, event, args) -> bool:
    """Is the frame this read hands out (``sys._getframe``'s, or a frame's ``f_back``) one that an installed module's
    import runs in (_importing_installed, walking down from that frame)? torch's first call of its reference
    decompositions imports torch._dynamo and torch.fx, whose modules read frames for their own names and lines
    (typing_extensions' _caller, torch.library's registrations, torch.fx's wrap). Such a frame lies above the
    student's code, and the walk from it down stops at the import: the next frame below is judged as any other."""
    if event == "sys._getframe":
        taken = args[0] if args else None
    elif event == "object.__getattr__" and len(args) > 1 and type(args[0]) is _FRAME and _text(args[1], 20) == "f_back":
        taken = args[0].f_back  # read by the frame's own getter (``busy``: its audit event is not judged)
    else:
        return False
    return type(taken) is _FRAME and _importing_installed(st, taken)


def _reader(st, frame) -> str:
    """For the hint, whose code read a frame (the student's own line, or a library's) and the library the student's
    line called, when that is another: " by <module>[ through <module>]"."""
    if _starts(frame.f_code.co_filename, "<answer "):
        return " by your code"
    reader, called = _module_of(st, frame), ""
    while frame is not None and frame.f_back is not None:
        if _starts(frame.f_back.f_code.co_filename, "<answer "):
            called = _module_of(st, frame)
            break
        frame = frame.f_back
    return (" by " + reader if reader else "") + (" through " + called if called and called != reader else "")


def _module_of(st, frame) -> str:
    """The dotted name of the installed module whose code ``frame`` runs ("" when not installed)."""
    filename = _text(frame.f_code.co_filename, 4096)
    folders = [folder for folder in st["installed"] if _starts(filename, folder)]
    if not folders:
        return ""
    innermost = max(len(folder) for folder in folders)  # site-packages lies inside the standard library's folder
    return _module_name(filename[innermost:])


def _module_name(path: str) -> str:
    """A module's dotted name from its file's path below its folder (``torch/fx/__init__.py`` is "torch.fx")."""
    module = _split(path[:-3] if _ends(path, ".py") else path, os.sep)
    if module and module[-1] == "__init__":
        module = module[:-1]
    return _join([_text(part, 60) + "." for part in module])[:-1]


def _reads_course_code(st, args) -> bool:
    """Is this audited read the code of one of course_lib's functions (or generators)? Read here only for torch's
    and Python's own code holders, whose getters run nothing of anyone's; ``busy`` keeps the read's own event out."""
    if len(args) < 2 or _text(args[1], 20) not in CODE_READS or type(args[0]) not in CODE_HOLDERS:
        return False
    st["busy"] = True
    try:
        code = _getattr(args[0], _text(args[1], 20), None)
    finally:
        st["busy"] = False
    return code is not None and id(code) in st["course_ids"]


def _c_kind(st, frame, builtin) -> str:
    """What a C call is in this exercise: "kernel", "autograd", "tamper" or "" (nothing refused). By the builtin's
    identity, else by its name (an op found by name is another object with the op's name), else for a nameless
    one (an overload's) by the op torch.ops says it is; never by anything the student's objects say of
    themselves."""
    kind = type(_getattr(builtin, "__self__", None))
    cached = st["c_types"].get(id(kind))
    if cached is None or cached[0] is not kind:
        how = ""
        for special, what in st["special_types"]:
            if _subclass(special, kind):
                how = what
                break
        if not how and st["site_dirs"]:  # a C method of a type a refused package's extension defines
            how = "library" if _library_type(st, kind) else ""
        cached = st["c_types"][id(kind)] = (kind, how)
    if cached[1] != "lookup":
        if not cached[1] and _c_library(st, builtin):
            return "library"  # a C method whose machine code is a refused package's, whatever its type's name says
        return cached[1]
    entry = st["c_ids"].get(id(builtin))
    if entry is not None and entry[0] is builtin:
        return entry[1]
    if st["site_dirs"] and (_module_library(st, _getattr(builtin, "__self__", None)) or _c_library(st, builtin)):
        return "library"  # a function of a refused package's extension module (by its module, or where its code is)
    if not st["kernel_names"] and not st["autograd"]:
        return ""
    name = _getattr(builtin, "__name__", "")
    if type(name) is str and name:
        if name in st["kernel_names"] or (st["autograd"] and "backward" in name):
            return "kernel" if name in st["kernel_names"] else "autograd"
        return ""
    # a nameless builtin: an overload's, which torch.ops calls from _ops.py; anywhere else it is an op by handle
    if _text(frame.f_code.co_filename, 4096) != st["ops_file"]:
        return "kernel"
    overload, instance_dict = st["overload"]
    op = frame.f_locals.get("self")
    if type(op) is not overload or instance_dict is None:
        return "kernel"
    name = instance_dict(op).get("_opname")
    if type(name) is not str:
        return "kernel"
    if name in st["kernel_names"] or (st["autograd"] and "backward" in name):
        return "kernel" if name in st["kernel_names"] else "autograd"
    return ""


def _module_library(st, module) -> str:
    """The refused package a module object is of: known by identity from when the answers loaded, else (a module
    first imported during the call) read from its file now."""
    if type(module) is not _MODULE:
        return ""
    entry = st["module_kinds"].get(id(module))
    if entry is None or entry[0] is not module:
        entry = st["module_kinds"][id(module)] = (module, _library(st, _dict_get(_module_dict(module), "__file__")))
    return entry[1]


def _library_type(st, kind) -> str:
    """The refused package whose module defines the type ``kind`` (a C type's module is read from its C name)."""
    try:
        name = _type_module(kind)
    except TypeError:
        return ""
    if type(name) is not str:
        return ""
    known = st["library_names"].get(name)
    if known is not None:
        return known
    module = _dict_get(sys.modules, name)
    return _module_library(st, module) if module is not None else ""


def _profile(st, frame, event, arg) -> None:
    """The profile hook (C calls; the trace hook has Python's): fused kernels, autograd's engine and the switches
    of torch's modes, refused when the student's code asked for them (its own line, or code it called); and, where
    a gradient is the exercise (the student's code runs with autograd's recording off), recording turned back on."""
    if event == "c_return" and arg is st["grad_switch"] and not st["busy"] and st["exercise"]:
        if st["grad_enabled"]() and _by_student(st, frame):
            _refuse(st, "torch.enable_grad (autograd's recording, turned back on: a graph to walk)")
        return
    if event != "c_call" or st["busy"] or st["reading"] or not st["exercise"]:
        return
    if st["site_dirs"] and _dynamic_call(st, frame, arg):
        _refuse(
            st,
            f"_imp.{_text(_getattr(arg, '__name__', ''), 40)} (an extension module loaded outside the import system)",
        )
        return
    how = _c_kind(st, frame, arg)
    if how and _by_student(st, frame):
        name = _getattr(arg, "__name__", None)
        owner = _getattr(arg, "__module__", None)
        said = f"{_text(owner, 40) if owner else 'torch'}.{_text(name, 80) if name else 'an op by a nameless handle'}"
        if how == "library":
            if _importing(st, frame):
                return  # an installed module's own import
            bound = _getattr(arg, "__self__", None)
            library = _module_library(st, bound) or _library_type(st, type(bound)) or _c_library(st, arg)
            said += f" ({_text(library, 60)}, {_ONLY_ALLOWED})"
        _refuse(st, said)


def _dynamic_call(st, frame, arg) -> bool:
    """``_imp.create_dynamic`` or ``_imp.exec_dynamic`` (an extension module made, or run) called other than by the
    import system's extension loader, whose modules the trace seals as they are made (see _seal_loaded)."""
    entry = st["dynamic"].get(id(arg))
    if entry is None or entry is not arg:
        return False
    return not _by_loader(st, frame)


def _by_loader(st, frame) -> bool:
    """Is ``frame`` the import system's extension loader calling C (``_call_with_frames_removed`` below one of the
    loader's frames that the trace follows)?"""
    caller = frame.f_back
    return (
        _code_of(st, frame) is st["frames_removed"]
        and caller is not None
        and id(_code_of(st, caller)) in st["loader_codes"]
    )


def _extension_made(event, args) -> bool:
    """The audit event of an extension module being made from its file (``_imp.create_dynamic``: the module's
    name and file, then three Nones; the import statement's carries ``sys.path`` there)."""
    return event == "import" and len(args) > 2 and type(args[1]) is str and args[2] is None


def _seal_loaded(st, frame, arg) -> None:
    """A loader's frame (or the import system's ``_find_and_load``) returning during the call. A module the loader
    has just made or run (first imported then, or loaded by hand through importlib) waits until the import that
    loads it is over (its package's import-time code may call its functions), then what it holds whose machine code
    is a refused package's (its C functions, Cython's functions, and those in its classes' own namespaces) is
    replaced by a refusal, as _seal_libraries does for the modules the answer cells' imports loaded. Calling a
    Cython function raises no event, so this is where one is stopped. Its classes stay (other modules' C code
    checks them as it imports). The shared object an extension module was made from is noted (_loaded_natives)."""
    busy, st["busy"] = st["busy"], True
    try:
        code = _code_of(st, frame)
        if code is not st["find_and_load"]:
            module = arg if code is st["create_code"] else _dict_get(frame.f_locals, "module")
            if _subclass(_MODULE, type(module)):
                st["pending_modules"].append(module)
                # an extension module's definition is in its shared object (a module of Python's has none)
                definition = _word(id(module) + _MD_DEF)
                if definition:
                    st["sealed_natives"].add(_home(st, definition)[0])
        below = frame.f_back
        while below is not None:
            if id(_code_of(st, below)) in st["loader_codes"]:
                return  # the import that loads it is not over
            below = below.f_back
        pending = list(st["pending_modules"])
        st["pending_modules"].clear()
        for module in pending:
            _seal_module(st, module)
    except Exception as exc:  # a hook that raises is switched off by Python: the seal fails closed instead
        _refuse(st, f"a module loaded during the call could not be sealed ({_text(_type_name(type(exc)), 60)})")
    finally:
        st["busy"] = busy


def _seal_module(st, module) -> None:
    """The refused packages' C functions in ``module``'s namespace and its classes' own, replaced by a refusal."""
    space = _module_dict(module)
    name = _text(_dict_get(space, "__name__"), 80)
    holders, sealed = [(space, name, None)], False
    for value in list(space.values()):
        if type(value) is type and value.__flags__ & _HEAPTYPE:
            holders.append((dict(vars(value)), f"{name}.{_text(_type_name(value), 80)}", value))
    for holder, owner, cls in holders:
        for key, value in list(holder.items()):
            if type(key) is not str or _subclass(type, type(value)):
                continue
            library = _c_library(st, value)
            if not library:
                continue
            stand_in = _stand_in(st["say"], f"{owner}.{_text(key, 80)} ({library}, {_ONLY_ALLOWED})")
            if cls is None:
                space[key] = stand_in
            else:
                try:
                    setattr(cls, key, stand_in)
                except (TypeError, AttributeError):  # an immutable type
                    pass
            sealed = True
    if sealed:
        _forget_first_namespace(module)


def _forget_first_namespace(module) -> None:
    """A single-phase extension module made again from C (``_imp.create_dynamic`` of a module already loaded, called
    through ``map``: no event) gets what CPython kept of its first making: the namespace it first had, copied back
    into the live module (``m_copy``), or a fresh module from its init function (``m_init``), both unsealed. Both
    are dropped from its definition once it is sealed, so it can only be made again from its file: an audited
    import, refused outside the loader, whose modules are sealed as they are made. (CPython 3.10 to 3.12 keep them
    there; 3.13 keeps a copy in its own cache, which this does not reach.)"""
    definition = _word(id(module) + _MD_DEF)
    if definition and not _word(definition + _M_SLOTS) and _VERSION < (3, 13):
        _zero(definition + _M_COPY)
        _zero(definition + _M_INIT)


_VERSION = sys.version_info[:2]


def _refused_natives(st) -> set:
    """The extension modules of refused packages mapped into this process now (their files)."""
    _read_maps(st)
    return {path for _, _, path in st["maps"] if _ends(path, st["extension_suffixes"]) and _native_library(st, path)}


def _loaded_natives(st) -> str:
    """A refused package's extension module mapped during the call other than by the import system's loader, whose
    modules are sealed as they are made: loaded by C code calling ``_imp.create_dynamic`` (``map``), which raises
    no event, so the functions of the module it made were never sealed ("" if none)."""
    if not st["site_dirs"]:
        return ""
    for path in sorted(_refused_natives(st) - st["natives_before"] - st["sealed_natives"]):
        library = _native_library(st, path)
        return f"{_text(path, 160)} ({library}, an extension module loaded outside the import system)"
    return ""


def _stand_in(say, said: str):
    """A refusal in place of a refused package's C function or class: it holds ``say`` and its own text only."""

    def refused(*args, said=said[:200], **kwargs):
        say({"refused": said})
        raise PermissionError("this exercise allows only the standard library, torch and numpy")

    return refused


def _importing(st, frame) -> bool:
    """Is a module of torch being imported (its classes defined: autograd.Function subclasses run autograd's
    metaclass), rather than called? Or, between ``frame`` and the student's code, an installed module (see
    _importing_installed), or the import system calling a finder or loader (setuptools' _distutils_hack, an
    editable install's finder)?"""
    near = True  # no frame of the student's own seen yet
    while frame is not None:
        code, back = frame.f_code, frame.f_back
        name, filename = _text(code.co_name, 40), _text(code.co_filename, 4096)
        if name == "<module>" and _starts(filename, st["torch_dir"]):
            return True
        installed = _starts(filename, st["installed"]) and not _course(st, filename)
        if near and installed and name == "<module>":
            return True
        if near and id(code) in st["gc_callbacks"]:  # the collector runs it wherever it happens to run
            return True
        if near and name in st["import_protocol"] and back is not None:
            if _starts(_text(back.f_code.co_filename, 40), "<frozen importlib"):
                return True
        # the student's own cells, or the check that called them: the call goes no further down (code made at run
        # time in a build exercise's call can only be what an installed module compiled while it was imported, as
        # mpmath does: any other compile there is refused)
        if not installed and (_starts(filename, "<answer ") or id(code) in st["course_ids"]):
            near = False
        frame = back
    return False


def _placed(st, path: str) -> str:
    """Where a file really is, when its name may say otherwise: a link in /tmp to a package's folder (imported from
    there, its code carries the link's name) is that package's, and so is a name that walks into one from another
    (``torch/../nltk/util.py``, ``site-packages//nltk``, ``/proc/self/root/...``)."""
    if not _starts(path, "/"):
        return path
    if _starts(path, st["installed"]) and "/../" not in path and "/./" not in path and "//" not in path:
        return path
    try:
        return _kernel_path(st, path)
    except (TypeError, ValueError, OSError):
        return path


def _kernel_path(st, path: str) -> str:
    """Where ``path`` leads, as the kernel resolves it: the link an O_PATH descriptor of it has in /proc/self/fd. No
    Python code runs (os.path.realpath is posixpath's Python, whose helpers the student's code can replace, and a
    replaced one made /proc/self/mem, a way to the harness's memory, look like any file). A name that does not exist
    yet is placed by the nearest folder that does."""
    rest = ""
    busy, st["busy"] = st["busy"], True  # its open raises an audit event: the observer's own
    try:
        while True:
            try:
                fd = _open_fd(path, _O_PATH)
                break
            except OSError:  # no such file (or a part of it is a file: the import system's /dev/null/... .pyc)
                head, sep, name = _rpartition(path, os.sep)
                if not name or name == "." or name == "..":
                    raise
                rest = _join([os.sep, name, rest])
                path = head if head else (os.sep if sep else ".")
        try:
            found = _readlink(_join(["/proc/self/fd/", str(fd)]))
        finally:
            _close_fd(fd)
    finally:
        st["busy"] = busy
    return _join([found, rest]) if found != os.sep else (rest or os.sep)


def _library(st, path) -> str:
    """The top-level name of the installed package holding ``path`` when build exercises refuse it, else ""."""
    if type(path) is not str:
        return ""
    path = _placed(st, path)
    rest = None
    for place in st["site_dirs"]:
        if _starts(path, place):
            rest = path[len(place) :]
            break
    else:  # another Python's packages, or the system's (Debian's dist-packages): a folder put on sys.path by hand
        for marker in _PACKAGE_FOLDERS:
            at = _find(path, marker)
            if at >= 0 and st["site_dirs"]:
                rest = path[at + len(marker) :]
                break
    if rest is None:
        return ""
    top = _split(_split(rest, os.sep, 1)[0], ".", 1)[0]
    return "" if top in st["allowed_libraries"] else top


def _c_address(st, obj) -> int:
    """Where the machine code ``obj`` runs is, for a C function (a builtin, a C method, Cython's functions) or a
    class (0 for anything else): read from this process's memory, so nothing the student's code can write renames
    it (a module's ``__file__``, a type's ``__module__``). A class statement's class runs CPython's own code
    (its tp_dealloc), a C type its extension's."""
    kind = type(obj)
    known = st["c_layouts"].get(id(kind))
    if known is None or known[0] is not kind:
        known = st["c_layouts"][id(kind)] = (kind, _c_layout(st, kind))
    if not known[1]:
        return 0
    busy, st["busy"] = st["busy"], True  # the reads raise ctypes' audit events: the observer's own
    try:
        if known[1] == "type":
            return _word(id(obj) + _TP_DEALLOC)
        return _word(_word(id(obj) + _M_ML) + _ML_METH)
    finally:
        st["busy"] = busy


def _c_layout(st, kind) -> str:
    """ "type" for a class, "function" for a C function whose layout is CPython's PyCFunctionObject (builtins, C
    methods, and Cython's functions, whose type an extension defines and names so), else ""."""
    if _subclass(type, kind):
        return "type"
    if _subclass(_BUILTIN, kind):  # no class statement can subclass it
        return "function"
    name = _type_name(kind)
    if type(name) is str and "cython_function" in name:
        # Cython's function type, made by an extension (its code in a shared object), not a class statement's
        # namesake, whose memory must not be read as a C function's
        busy, st["busy"] = st["busy"], True
        try:
            place = _home(st, _word(id(kind) + _TP_DEALLOC))[0]
        finally:
            st["busy"] = busy
        if _ends(place, st["extension_suffixes"]):
            return "function"
    return ""


def _home(st, address) -> tuple:
    """(the file mapped at ``address`` in this process, the refused package it is of): "" for none. From
    /proc/self/maps, read again when the address is in no mapping known yet (a shared object loaded since)."""
    cached = st["homes"].get(address)
    if cached is not None:
        return cached
    found = ""
    for fresh in (False, True):
        if fresh:
            _read_maps(st)
        at = _bisect(st["map_starts"], address) - 1
        if at >= 0 and address < st["maps"][at][1]:
            found = st["maps"][at][2]
            break
    cached = st["homes"][address] = (found, _native_library(st, found) if found else "")
    return cached


def _native_library(st, path: str) -> str:
    """The refused package a shared object is of, or, for an extension module outside the installed folders (one
    copied to /tmp from a package, or carried in a notebook), that it is from nowhere installed ("" if allowed)."""
    library = _library(st, path)
    if library or not st["site_dirs"] or not _ends(path, st["extension_suffixes"]):
        return library
    return "" if _starts(path, st["installed"]) else "an extension module from outside the installed packages"


def _read_maps(st) -> None:
    """/proc/self/maps, the mappings of files (start, end, path), sorted, into the observer's lists in place."""
    busy, st["busy"] = st["busy"], True
    fd = _open_fd("/proc/self/maps", _O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = _read_fd(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        _close_fd(fd)
        st["busy"] = busy
    entries = []
    for line in _split(_decode(_bjoin(chunks), "utf-8", "replace"), "\n"):
        parts = _split(line, None, 5)
        if len(parts) == 6 and _starts(parts[5], "/") and not _ends(parts[5], " (deleted)"):
            start, end = _split(parts[0], "-")
            entries.append((int(start, 16), int(end, 16), parts[5]))
    entries.sort()
    st["maps"][:] = entries
    st["map_starts"][:] = [start for start, _, _ in entries]


def _c_library(st, obj) -> str:
    """The refused package whose extension holds ``obj``'s machine code ("" if none, or no package is refused)."""
    if not st["site_dirs"]:
        return ""
    address = _c_address(st, obj)
    return _home(st, address)[1] if address else ""


def _torch_python(st, code) -> str:
    """A call into Python that the exercise refuses: autograd's (where a gradient is the exercise; its no_grad,
    profiler and anomaly mode compute none), a fused kernel written in Python (torch's, or by its place in torch,
    numpy or pandas: borrowed.KERNEL_PYTHON), or a library every build exercise refuses (nltk)."""
    if id(code) in st["kernel_code_ids"]:  # a fused kernel written in Python, or a forbidden library's code
        return "kernel" if _starts(_text(code.co_filename, 4096), st["torch_dir"]) else "a forbidden library's code"
    filename = _placed(st, _text(code.co_filename, 4096))
    if _text(code.co_name, 80) == "<module>":
        return ""
    if not code.co_flags & 1:  # a class body's (not CO_OPTIMIZED): it runs when its module is imported
        return ""
    for places, reason in st["kernel_python"]:  # a kernel's Python by its place (torch.masked, numpy.ma)
        if _starts(filename, places):
            return reason
    library = _library(st, filename)
    if library:
        return f"{_text(library, 60)}, {_ONLY_ALLOWED}"
    if not st["torch_rules"] or not _starts(filename, st["torch_dir"]):
        return ""
    parts = _split(filename[len(st["torch_dir"]) :], os.sep)
    if st["autograd"] and parts[0] in st["autograd_dirs"] and parts[-1] not in st["autograd_spared"]:
        return "autograd"
    if parts[0] in st["opaque_dirs"]:  # a compiler runs what it compiled out of the hooks' sight
        return "compiled"
    if _starts(filename[len(st["torch_dir"]) :], st["reimplemented_dirs"]):  # torch's Python version of an op
        return "an op reimplemented in Python"
    if filename == st["ops_file"] and _text(code.co_name, 40) in REDISPATCH:
        return "an op run below the dispatcher's Python key"
    return ""


# the hooks and every function they call: copied with private globals by _private
HOOK_FUNCTIONS = (
    "_text",
    "_course",
    "_refuse",
    "_code_of",
    "_by_student",
    "_students",
    "_note_made",
    "_near",
    "_taken_in_import",
    "_reader",
    "_module_of",
    "_module_name",
    "_detail",
    "_swapped",
    "_hidden",
    "_fingerprint",
    "_verdict",
    "_copy_of",
    "_check",
    "_stale",
    "_remembered",
    "_trace",
    "_dotted",
    "_audit",
    "_changed",
    "_state",
    "_c_kind",
    "_profile",
    "_torch_python",
    "_importing",
    "_checks_reach_lesson",
    "_reads_course_code",
    "_student_below",
    "_made_at_run_time",
    "_plain_fields",
    "_asks_for_a_tree",
    "_installed_text",
    "_importing_installed",
    "_library",
    "_placed",
    "_module_library",
    "_library_type",
    "_c_address",
    "_c_layout",
    "_home",
    "_read_maps",
    "_c_library",
    "_native_library",
    "_seal_loaded",
    "_seal_module",
    "_stand_in",
    "_forget_first_namespace",
    "_dynamic_call",
    "_by_loader",
    "_extension_made",
    "_installed_own",
    "_kernel_path",
    "_drawing",
    "_refused_natives",
    "_loaded_natives",
)


def _private(st) -> tuple:
    """(audit hook, trace hook, profile hook, _changed, _stale, _loaded_natives) for the observer state ``st``:
    private copies of the functions above, whose globals are a copy of this module's taken now (before any student
    code), bound to ``st``."""
    import functools

    space = dict(globals())
    for name in HOOK_FUNCTIONS:
        fn = space[name]
        space[name] = types.FunctionType(fn.__code__, space, fn.__name__, fn.__defaults__, fn.__closure__)
    for name in ("_state", "_changed"):  # their defaults name the module's own: the private copies instead
        fn = space[name]
        if fn.__defaults__:
            fn.__defaults__ = tuple(space["_state"] if d is _state else d for d in fn.__defaults__)
    audit, trace = functools.partial(space["_audit"], st), functools.partial(space["_trace"], st)
    profile = functools.partial(space["_profile"], st)
    natives = functools.partial(space["_loaded_natives"], st)
    return audit, trace, profile, space["_changed"], functools.partial(space["_stale"], st), natives


def _snapshot(forbidden=()) -> tuple:
    """Every function, class and module that course_lib's modules and classes (and json's, which encodes the
    reply) hold, as (where, live, then, state): ``state`` is what each of those functions runs (its code,
    defaults, keyword defaults, closure cells), which a change in place leaves its identity. ``forbidden``:
    what the check's run path itself replaces by stand-ins during the call (the exercise's forbidden names),
    left out."""
    kinds = (type, staticmethod, classmethod, property, type(sys), type(_fingerprint))
    skip = {id(obj) for obj in forbidden}
    found = []

    def entry(where, space, values):
        kept = tuple((k, v) for k, v in values if isinstance(v, kinds) and id(v) not in skip)
        state = tuple((fn, fn.__name__, _state(fn)) for _, v in kept for fn in _own_functions(v) if id(fn) not in skip)
        found.append((where, space, kept, state))

    for name, module in list(sys.modules.items()):
        if (name.startswith("course_lib") or name in ("json", "json.encoder")) and module is not None:
            space = vars(module)
            entry(name, space, list(space.items()))
            for value in list(space.values()):
                if isinstance(value, type) and value.__module__ == name and id(value) not in skip:
                    entry(f"{name}.{value.__qualname__}", vars(value), list(vars(value).items()))
    return tuple(found)  # tuples all the way down: nothing of it can be emptied in place


_EMPTY = object()  # an empty closure cell


def _own_functions(value) -> list:
    """The Python functions a module or class entry is: a function, or the one inside a static/class method or
    a property."""
    import types

    value = getattr(value, "__func__", value) if isinstance(value, (staticmethod, classmethod)) else value
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)]
    return [value] if isinstance(value, types.FunctionType) else []


def _state(fn, tuple=tuple, ValueError=ValueError, empty=_EMPTY) -> tuple:
    """What a function runs, each part by identity: code, defaults, keyword defaults, closure cells' contents.
    Every builtin it uses is bound here, at import (the student's code may replace ``builtins.tuple``)."""
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:
            cells.append(empty)
    kwdefaults = tuple((fn.__kwdefaults__ or {}).items())
    return (fn.__code__, fn.__defaults__, *(v for kv in kwdefaults for v in kv), empty, *cells)


def _changed(snapshot, type=type, str=str, len=len, any=any, zip=zip, state=_state, missing=_EMPTY) -> str:
    """The first function or class of course_lib that is no longer what it was, or runs other code ("" if
    none). It runs nothing of the student's: every builtin is bound at import, values are compared by identity,
    and a name that is not plain text (whose ``__eq__`` a look-up would run) is itself the change."""
    for where, live, then, functions in snapshot:
        for key in live:
            if type(key) is not str:
                return f"{where} (a name that is not text was put there)"
        for key, value in then:
            if live.get(key, missing) is not value:
                return f"{where}.{key}"
        for fn, name, parts in functions:
            now = state(fn)
            if len(now) != len(parts) or any(a is not b for a, b in zip(now, parts)):
                return f"{where}.{name} (its code, defaults or closure)"
    return ""


def _resolved(names) -> list:
    """The objects the forbidden dotted names are (the check's stand-ins replace them during the call)."""
    from course_lib.checks.borrowed import resolve

    found = []
    for name in names:
        try:
            found.append(resolve(name)[2])
        except Exception:
            continue
    return found


def _run_path(exercise) -> set:
    """The code a check's run path may call in the child for this exercise: its materialise, observe and describe,
    and every function they name (globals, closure cells, containers, a partial's function), transitively."""
    import functools

    found: set = set()
    done: set = set()
    todo = [getattr(exercise, part, None) for part in ("materialise", "observe", "describe")]
    while todo:
        value = todo.pop()
        if isinstance(value, functools.partial):
            todo += [value.func, *value.args, *value.keywords.values()]
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            todo += list(value)[:256]
            continue
        if isinstance(value, dict):
            todo += list(value.values())[:256]
            continue
        functions = _functions(value) if isinstance(value, type) else [value]
        for fn in functions:
            if not isinstance(fn, types.FunctionType) or id(fn) in done:
                continue
            done.add(id(fn))
            codes = list(_code_objects(fn.__code__).values())
            found |= set(codes)
            for cell in fn.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:
                    continue
            for code in codes:
                named = [fn.__globals__[n] for n in code.co_names if n in fn.__globals__]
                todo += named
                for module in named:  # `rnn.LSTM(...)`: a course_lib module's attributes the code names
                    if isinstance(module, types.ModuleType) and module.__name__.startswith("course_lib"):
                        todo += [getattr(module, n) for n in code.co_names if hasattr(module, n)]
    return found


def _course_code(package: str) -> dict:
    """Every code object of course_lib's that exists now (in the harness's process, before any child, so before
    any student code): each live function's (closures and lambdas included) with what it nests, and the checks'
    stand-ins. What runs later under course_lib's file name but is none of these was made at run time."""
    import gc

    from course_lib.checks import borrowed

    found: dict = {}
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType and obj.__code__.co_filename.startswith(package):
            found.update(_code_objects(obj.__code__))
    for code in borrowed._STAND_INS:
        found.update(_code_objects(code))
    return found


def _code_objects(code) -> dict:
    """A code object and every code object nested in it (functions, classes, comprehensions), by id. Code objects
    compare by value, not by file: a set kept one of two equal ones, so of the same helper defined in two answer
    cells the second ran as code no cell compiled (hostile class 33u's honest 6.1 and 6.3 failed so)."""
    found, todo = {}, [code]
    while todo:
        code = todo.pop()
        if id(code) not in found:
            found[id(code)] = code
            todo += [const for const in code.co_consts if isinstance(const, type(code))]
    return found


def _import_forbidden(exercises) -> None:
    """Import the modules the checks refuse names of (the check's run path patches them on every call)."""
    import importlib

    for name in sorted({n for exercise in exercises for n in exercise.forbidden}):
        parts = name.split(".")
        for end in range(1, len(parts)):
            try:
                importlib.import_module(".".join(parts[:end]))
            except Exception:
                break


def _given(exercise, cases) -> set:
    """The code of the functions the check passes to the student's function (lesson 01's perplexity, ...)."""
    import copy
    import types

    given = set()
    for case in cases if exercise.materialise else []:
        try:
            live = exercise.materialise(copy.deepcopy(list(case)))
        except Exception:
            continue
        for value in live:
            if isinstance(value, types.FunctionType):
                given.add(value.__code__)
            elif not isinstance(value, type):  # an object handed in (a model): its class's methods
                for klass in type(value).__mro__:
                    given |= {f.__code__ for f in _functions(klass) if isinstance(f, types.FunctionType)}
    return given


def _functions(value, depth: int = 0):
    if depth > 2:
        return
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        yield from (f for f in (value.fget, value.fset, value.fdel) if f is not None)
    elif isinstance(value, type):
        for item in list(vars(value).values()):
            yield from _functions(item, depth + 1)
    elif callable(value):
        yield getattr(value, "__wrapped__", value)
        yield value


def main() -> None:
    """Run in the sandbox: one JSON line in (the job), then exercises one by one (see the module docstring)."""
    channel = os.dup(1)
    commands = os.fdopen(os.dup(0), "r", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # what the student's code prints goes nowhere
        os.dup2(devnull, fd)
    os.close(devnull)

    def say(message: dict) -> None:
        _write_all(channel, (json.dumps(message) + "\n").encode())

    try:
        _serve(commands, say, channel)
    except BaseException:  # the harness's own failure: the grader logs it
        import traceback

        say({"crash": traceback.format_exc()[-4000:]})
        raise


def _refused_cells(cells, load) -> tuple[dict, list]:
    """After the answer cells were refused while they loaded (or their process ended then): which exercises' own
    cells are refused when each exercise's cells are loaded alone, each in a fresh child (``load``), and the cells
    of the others. ``({}, [])`` when no exercise's cells alone are refused (a refusal only in company): then every
    exercise fails, as before. Whatever a refused cell did before its refusal happened in a child that is gone:
    the other exercises are loaded and called from fresh without it, and a refusal there still fails them."""
    order = list(dict.fromkeys(exercise for exercise, _, _ in cells))
    if len(order) < 2:
        return {}, []
    left_out = {}
    for exercise in order:
        refused, reply, status = load([cell for cell in cells if cell[0] == exercise])
        if refused or "loaded" not in (reply or {}):
            left_out[exercise] = refused[0] if refused else f"its process ended while it loaded ({_status(status)})"
    return left_out, [cell for cell in cells if cell[0] not in left_out]


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


# signals that mean the process crashed (not the grader's kill nor a limit of the cgroup: SIGKILL, SIGXCPU):
# torch's C code called outside its rules (an op by a dispatch key it has no kernel for) ends Python with one
CRASHES = {
    signal.SIGSEGV: "SIGSEGV, a segmentation fault",
    signal.SIGBUS: "SIGBUS, a bus error",
    signal.SIGILL: "SIGILL, an illegal instruction",
    signal.SIGFPE: "SIGFPE, an arithmetic fault",
    signal.SIGABRT: "SIGABRT, an abort",
    signal.SIGSYS: "SIGSYS, a system call the sandbox does not allow",
}
CRASHED = "Crash: the process that ran your function crashed (signal {}: {}); nothing it computed counts"


def _serve(commands, say, channel: int) -> None:
    """The harness's own process: it never loads or calls the student's code. Each load and each call runs in
    a child forked for it, which cannot reach the grader's channel (closed there) nor outlive its call; the
    child's messages come back on a pipe of that call only, and this process stamps them with the exercise."""
    from pathlib import Path

    import torch

    import course_lib
    from course_lib import checks

    torch.set_num_threads(1)  # as in the sandbox: no thread pool in this process, so forking it is safe
    job = json.loads(commands.readline())
    exercises = checks.exercises(job["lesson"])
    _import_forbidden(exercises.values())  # now, not under the observer during the first call (nltk is slow)
    package = str(Path(course_lib.__file__).resolve().parent)
    # taken now: whatever a child's student code replaces in the checks, this process never runs it
    tools = {"from_plain": checks.from_plain, "to_plain": checks.to_plain}
    max_line = int(job.get("max_line", MAX_LINE))
    closed = (channel, commands.fileno())

    _warm_up(job.get("setup", ""), exercises.values())
    tools["course"] = _course_code(package)  # after the warm-up: what the checks compiled (stand-ins) is in it

    def load(cells):
        subset = {**job, "cells": cells}
        return _in_child(
            lambda out, token: _child(subset, exercises, tools, package, None, out, token), closed, max_line
        )

    refused, reply, status = load(job["cells"])
    left_out: dict[str, str] = {}
    if refused or "loaded" not in (reply or {}):
        left_out, kept = _refused_cells(job["cells"], load)
        if left_out and kept:  # the rest, loaded again from fresh without those cells: what every call loads
            refused, reply, status = load(kept)
            if refused or "loaded" not in (reply or {}):
                left_out = {}
            else:
                job = {**job, "cells": kept}
    loaded = reply if isinstance(reply, dict) and "loaded" in reply else {}
    loaded = {e: str(why)[:300] for e, why in dict(loaded.get("loaded") or {}).items() if e in exercises}
    for exercise in exercises:
        if exercise in left_out:
            loaded[exercise] = (
                f"your answer cell was refused while the answer cells loaded: {left_out[exercise]}; the other "
                "exercises were graded without it"
            )[:300]
        elif not left_out and (refused or "loaded" not in (reply or {})):
            # the answer cells reached around the grader (or their process ended) while they loaded
            why = refused[0] if refused else f"their process ended while they loaded ({_status(status)})"
            loaded[exercise] = f"the answer cells were not loaded: {why}"
    say({"loaded": loaded})
    for line in commands:
        order = json.loads(line)
        exercise = exercises[order["exercise"]]
        refused, reply, status = _in_child(
            lambda out, token: _child(job, exercises, tools, package, order, out, token),
            closed,
            max_line,
            lambda what: say({"exercise": exercise.id, "refused": what}),
        )
        if reply is None or "reply" not in reply:
            crash = CRASHES.get(os.WTERMSIG(status)) if status is not None and os.WIFSIGNALED(status) else None
            if crash:  # the process that ran the student's code crashed: this exercise's row says so, the rest go on
                reply = {"reply": {"error": CRASHED.format(os.WTERMSIG(status), crash)}}
            elif status is not None and os.WIFSIGNALED(status):
                os._exit(1)  # killed (a limit of the cgroup, most likely): the grader says which
            else:
                error = f"SystemExit: your function ended the process that ran it ({_status(status)})"
                reply = {"reply": {"error": error}}
        say({"exercise": exercise.id, "reply": reply["reply"]})


# A stand-in answer for the warm-up: one small torch op with a gradient, as most answers make. Compiled here
# under a name of its own, so that the checks' run path treats it as an answer (a function of course_lib's
# would be refused at once as borrowed, and nothing of the run path would be warmed).
WARM_UP = """
def stand_in(*args, **kwargs):
    import torch

    (torch.ones(2, requires_grad=True) * 2).sum()
"""


def _warm_up(setup: str, exercises) -> dict:
    """What every child would otherwise import or build again, done once in the harness's process before any
    child is forked, so that each child inherits it: the released setup cell (the instructor's: it imports
    matplotlib and ipywidgets, a second or two; each child still runs it, for its seed) and each check's run
    path on a stand-in answer and cases drawn with a seed of its own (the checks' observers, torch's
    dispatch mode, the references' imports: seconds under the observer's trace hook). No student code is
    involved; the records (returned, for the tests, as ``{exercise id: records or the exception}``) are not
    used: a check that fails here fails again in the child, where it counts."""
    try:
        exec(compile(setup, "<setup>", "exec", dont_inherit=True), {"__name__": "__main__"})
    except Exception:
        pass
    space: dict = {}
    exec(compile(WARM_UP, "<warm-up>", "exec", dont_inherit=True), space)
    done = {}
    for exercise in exercises:
        try:
            done[exercise.id] = exercise.run(space["stand_in"], exercise.draw(0))
        except BaseException as exc:
            done[exercise.id] = exc
    return done


def _status(status) -> str:
    if status is None:
        return "no status"
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}, e.g. os._exit or exit()"


def _in_child(run, closed, max_line: int, forward=None):
    """Fork; the child runs ``run(out_fd, token)`` and ends. Returns (refusals, its one reply or None, wait status).

    Every refusal is forwarded as it comes (``forward``); a second reply, a reply without this call's token, or a
    line that is not one of the harness's messages, means something else wrote on the child's pipe: refused.

    The token is what makes the reply unforgeable: drawn here, just before the fork, for this call only (never in
    the environment, a file, a module, an object or a closure), it lives in the child only as a local of
    :func:`_child`'s frame, which the student's code cannot reach (frames, ``gc``, ``/proc/self/mem`` and ``ctypes``
    are refused and stopped), and the child adds it to its one reply after the student's code is done. Code that
    ran in an earlier call ran in another process, before the token existed; code in this call can write on the
    pipe (its descriptor is guessable) but cannot sign: a reply without the token is a refusal, not a reply."""
    token = os.urandom(16).hex()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_end)
            for fd in closed:
                os.close(fd)
            run(write_end, token)
        finally:
            os._exit(0)
    os.close(write_end)
    refused: list = []
    reply = None
    buffer = b""

    def note(what: str) -> None:
        refused.append(what)
        if forward:
            forward(what)

    while True:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        buffer += chunk
        if len(buffer) > max_line and b"\n" not in buffer:
            os.kill(pid, 9)  # more than the grader reads (an object whose size lied to _over_cap): named, not read
            reply = {"reply": {"limit": OVER_CAP.format(f"{max_line / 1e6:.0f}")}}
            break
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            try:
                message = json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                message = None
            if isinstance(message, dict) and set(message) == {"refused"}:
                note(str(message["refused"])[:200])
            elif (
                isinstance(message, dict)
                and len(message) == 2
                and reply is None
                and message.get("token") == token
                and set(message) & {"reply", "loaded"}
            ):
                reply = {k: v for k, v in message.items() if k != "token"}
            else:
                note(FORGED)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    return refused, reply, status


def _child(job, exercises, tools, package: str, order, out: int, token: str) -> None:
    """In the forked child: the released setup, then (observed from here on) the answer cells, then one call.
    ``token`` stays a local of this frame (see :func:`_in_child`): only the one reply, said from here, carries it."""
    import linecache

    from course_lib.checks import borrowed

    def say(message: dict, dumps=_plain_json, write=os.write) -> None:  # nothing looked up when it runs
        data = (dumps(message) + "\n").encode()
        while data:
            data = data[write(out, data) :]

    linecache.clearcache()  # no course source text kept in memory
    setup_ns: dict = {"__name__": "__main__"}
    try:
        exec(compile(job["setup"], "<setup>", "exec", dont_inherit=True), setup_ns)
    except Exception:
        pass  # the released setup cell; its effects (seed, threads) are conveniences, not the grade's
    exercise = exercises[order["exercise"]] if order else None
    cases = tools["from_plain"](order["cases"]) if order else None
    observer = _Observer(package, say)
    observer.collect()
    observer.know_course(tools["course"])
    if exercise is not None:
        observer.hand_in(_given(exercise, cases))
        observer.arm(exercise)
        observer.rule_c_calls(exercise)
        observer.judge_only(exercise)
    run = exercise.run if exercise is not None else None
    to_plain = tools["to_plain"]
    # each refusal the check's own observer notes leaves this process at once (the snapshot below then guards it);
    # what is put there holds ``say`` only: the observer is reachable from nothing the student's code can read
    borrowed._said_at_once = lambda name, say=say: say({"refused": str(name)[:200]})
    # the checks' own profile hook (what they install around each call) is kept, never installed: this process's
    # profile hook is the harness's, whose C-call rules are taken above, where the student's code cannot reach
    kept_hook: list = [None]
    borrowed._setprofile = lambda hook, box=kept_hook: box.__setitem__(0, hook)
    borrowed._getprofile = lambda box=kept_hook: box[0]
    max_line = int(job.get("max_line", MAX_LINE))
    observer.snapshot = snapshot = _snapshot(_resolved(exercise.forbidden if exercise is not None else ()))
    gettrace, getprofile, gc_disable = sys.gettrace, sys.getprofile, __import__("gc").disable
    gc_freeze = __import__("gc").freeze
    if exercise is not None:
        _bar_ops(borrowed.barred_ops(exercise.rules), say)
    _close_doors(say)
    # what the observer is and runs, taken before any student code: checked here, in this frame (whose own code
    # cannot change under it), with everything it uses bound now, and said on the local channel
    # compared one by one (local_trace below; natives_before is set once the cells load, from the process's maps)
    moving = (
        "busy",
        "exercise",
        "loading",
        "reading",
        "answers",
        "answer_ids",
        "seen",
        "local_trace",
        "natives_before",
    )
    kept = tuple((k, v) for k, v in vars(observer).items() if k not in moving)
    label = exercise.id if exercise is not None else "loading"
    own = tuple((fn, _state(fn)) for fn in (_changed, _state, _plain_json, *borrowed._functions_of(_Observer)))
    # the C pieces the checks' graph clock reads with (filled by the warm-up where a gradient is the exercise)
    clock_list, clock = borrowed._CLOCK, tuple(borrowed._CLOCK)
    loaded_answers: list = []  # the answer cells' code objects and their ids once loaded (frozensets)
    fields = vars(observer)  # what the hooks run on, as it is now (the hooks are private copies, bound to it)
    audit, trace, profile, changed_now, stale, natives = _private(fields)
    fields["local_trace"] = trace  # a loader frame's local trace (see _trace)

    def intact_now(type=type, str=str, len=len, zip=zip, any=any, state=_state) -> str:
        for key in fields:  # plain names only: a look-up below then runs no one's __eq__
            if type(key) is not str:
                return "the grader's observer (its settings)"
        if (
            fields.get("exercise") is not label
            or fields.get("busy") is not False
            or fields.get("loading") is not False
            or fields.get("reading") is not False
            or fields.get("answers") is not loaded_answers[0]
            or fields.get("answer_ids") is not loaded_answers[1]
            or fields.get("local_trace") is not trace
            or any(fields.get(k) is not v for k, v in kept)
        ):
            return "the grader's observer (its settings)"
        if (
            borrowed.__dict__.get("_CLOCK") is not clock_list
            or len(clock_list) != len(clock)
            or any(a is not b for a, b in zip(clock_list, clock))
        ):
            return "the checks' graph clock (its pieces)"
        for fn, parts in own:
            now = state(fn)
            if len(now) != len(parts) or any(a is not b for a, b in zip(now, parts)):
                return f"the grader's {fn.__qualname__} (its code)"
        found = changed_now(snapshot)
        if not found and stale():
            return "the grader's observer (its remembered verdicts)"
        return found

    sys.addaudithook(audit)  # before any student code; Python offers no way to remove it
    observer.exercise = label
    observer.loading = True
    sys.settrace(trace)
    sys.setprofile(profile)
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    loaded: dict[str, str] = {}
    for exercise_id, grade_id, source in job["cells"]:
        why = refusal(source)
        if not why:
            try:
                tree = _without_demos(ast.parse(source))  # `if __name__ == "__main__":` demos: not run
                code = compile(tree, ANSWER_FILE.format(grade_id), "exec", ANNOTATIONS, dont_inherit=True)
                observer.add_answers(_code_objects(code))
                exec(code, ns)
            except BaseException as exc:  # SystemExit too: the cell failed to load, the rest still loads
                why = f"loading it raised {type(exc).__name__}: {str(exc)[:200]}"
        if why and not loaded.get(exercise_id):
            loaded[exercise_id] = f"answer cell {grade_id} was not loaded: {why}"
        loaded.setdefault(exercise_id, "")
    observer.loading = False
    observer.busy = True  # its own look, unobserved
    observer.know_modules()
    observer.know_natives()
    # what the cells' imports left for the collector (nltk's regex objects) is never collected in this child: its
    # finalizers would run inside the call, wherever the collector happens to run, as no call of the student's
    gc_freeze()
    borrowed._FROZEN_FOR_GOOD[0] = True  # so the checks' observer need not count the frozen objects on each call
    _seal_libraries(say, observer.module_kinds, ns)
    progress = sys.modules.get("tqdm.std")
    if progress is not None:  # a progress bar's monitor is a thread, which this child refuses: none is started
        progress.tqdm.monitor_interval = 0
    predispatch = sys.modules.get("torch._functorch.predispatch")
    if predispatch is not None:  # vmap's decompositions, registered on its first use through torch.library, which
        predispatch.lazy_load_decompositions()  # reads its caller's frame: registered now, before any call
    observer.busy = False
    loaded_answers += [observer.answers, observer.answer_ids]
    # no .pyc is read during the call: a module first imported then is compiled from its installed file's text, which
    # the observer compares with the file (bytes to unmarshal could be anyone's: marshal is refused in a build call)
    sys.pycache_prefix, sys.dont_write_bytecode = os.devnull, True
    if exercise is None:
        sys.settrace(None)
        sys.setprofile(None)
        say({"loaded": loaded, "token": token})  # the audit hook still on: a finalizer here reaches no frame
        observer.exercise = ""
        return
    fn = ns.get(exercise.function)
    try:
        if not callable(fn):
            reply = {"error": f"NameError: {exercise.function} is not defined in the answer cells"}
        else:
            # the first case alone, then the rest: a reply far over the cap (a 200 MB tensor per case, hundreds
            # of cases) is known after one case, before the check copies and encodes every case's (minutes and
            # gigabytes), and refused naming the cap (or 8 times the cap at the first case's size for every case:
            # a margin for draws whose sizes vary); the whole is measured again before the conversion
            records = run(fn, cases[:1])
            over = _over_cap(records, max_line) or _over_cap(records, 8 * max_line // max(1, len(cases)))
            if not over and len(cases) > 1:
                records += run(fn, cases[1:])
                over = _over_cap(records, max_line)  # before the conversion, which takes seconds per 100 MB
            changed = intact_now()  # before the records are read: the check's as it was?
            reply = {"limit": OVER_CAP.format(f"{max_line / 1e6:.0f}")} if over else {"records": to_plain(records)}
            changed = changed or intact_now()
            if changed:
                say({"refused": f"{changed} (replaced by the student's code)"[:200]})
            loaded = natives()
            if loaded:
                say({"refused": loaded[:200]})
    except BaseException as exc:  # SystemExit, KeyboardInterrupt from the student's code
        reply = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    intact = gettrace() is trace and getprofile() is profile
    gc_disable()  # no finalizer of the student's objects runs once the trace is off (a cycle collected mid-reply)
    sys.settrace(None)
    sys.setprofile(None)
    if not intact:
        say({"refused": "sys.settrace or sys.setprofile (the observer was switched off)"})
    say({"reply": reply, "token": token})  # the audit hook still on: a finalizer here reaches no frame
    observer.exercise = ""


MAX_LINE = 50_000_000  # bytes of one reply, unless the grader's job says less (it sends its own cap)


def _plain_encoder():
    """JSON of plain data (dict with str keys, list, tuple, str, int, float, bool, None: exactly these types),
    written without json's module state (``json._default_encoder``, the encoder classes), which the student's
    code can replace before the reply is encoded, and without calling anything of a value's own (a subclass of
    str or dict is refused, not asked to encode itself). Everything it uses is taken here, at import, and it
    calls itself through its closure: no name is looked up when it runs, so what the child says is what the
    grader reads."""
    kind_of, error, inf = type, TypeError, float("inf")
    text, integer, number, join = json.encoder.encode_basestring_ascii, int.__repr__, float.__repr__, ",".join

    def encode(value) -> str:
        kind = kind_of(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return integer(value)
        if kind is float:
            if value != value:
                return "NaN"
            if value == inf or value == -inf:
                return "Infinity" if value > 0 else "-Infinity"
            return number(value)
        if kind is str:
            return text(value)
        if kind is list or kind is tuple:
            return "[" + join([encode(v) for v in value]) + "]"
        if kind is dict:
            for key in value:
                if kind_of(key) is not str:
                    raise error("a reply's keys are text")
            return "{" + join([text(k) + ":" + encode(v) for k, v in value.items()]) + "}"
        raise error("a reply holds only plain data")

    return encode


_plain_json = _plain_encoder()


OVER_CAP = (
    "your function's results are over the {} MB the grader reads from it (the cap on a reply; such as a tensor far "
    "larger than the inputs): they were not sent"
)


def _over_cap(records, cap: int) -> bool:
    """Whether the records' plain encoding would be over ``cap`` bytes. An estimate
    from sizes alone (a tensor's bytes, a string's length, about 24 bytes a number), bounded: it stops at the cap,
    so a 400 MB tensor or a list of ten million floats is refused in a moment, before any conversion."""
    size, todo = 0, [records]
    while todo:
        value = todo.pop()
        kind = type(value)
        if kind in (list, tuple):
            todo.extend(value)
            size += 2 + len(value)
        elif kind is dict:
            todo.extend(value.keys())
            todo.extend(value.values())
            size += 12 + 2 * len(value)
        elif kind in (str, bytes):
            size += len(value) + 2
        elif (hasattr(value, "element_size") and hasattr(value, "numel")) or hasattr(value, "nbytes"):
            try:  # a tensor or an array: base64 of its bytes
                raw = value.nbytes if hasattr(value, "nbytes") else value.numel() * value.element_size()
                size += 100 + int(raw) * 4 // 3
            except Exception:
                size += 100  # to_plain refuses it, or converts it, and the grader's line cap still holds
        else:
            size += 24
        if size > cap:
            return True
    return False


ANNOTATIONS = __import__("__future__").annotations.compiler_flag  # annotations kept as text, never evaluated


def _bar_ops(ops, say) -> None:
    """In this child, each op named in ``ops``, in every namespace (:func:`~course_lib.checks.borrowed.barred_ops`:
    the exercise's fused kernels; where a gradient is the exercise, every gradient kernel and forward-mode autograd)
    computes nothing: at every dispatch key of a device torch runs on where it has a kernel, the dispatcher runs a
    refusal instead, however the op is reached (a torch name, torch.ops, a dispatcher handle, or C code calling C
    code, which no profile hook sees), and at every key it has a kernel registered at (an alias key's kernel can be
    called by its key). Nothing in this process needs them: the grader computes what it compares in its own.
    Nothing can take the refusal back: the registration is held only by the refusals themselves, which only the
    dispatcher holds (no Python object the student's code can reach refers to either)."""
    import re
    import warnings

    import torch

    if not ops:
        return
    libraries: dict = {}  # one registration per namespace (aten, and quantized's dynamic cells: hostile class 33m)

    def refusal(namespace: str, name: str):
        def barred(*args, **kwargs):
            say({"refused": f"torch.ops.{namespace}.{name} (a fused kernel or autograd, barred while grading)"})
            raise PermissionError(f"grading does not allow torch.ops.{namespace}.{name} in this exercise")

        barred.keep = libraries  # the registrations live as long as the dispatcher holds this function: for good
        return barred

    kernel = re.compile(r"^(\w+): (?:registered|fallthrough)[^\n]*\[(?!backend fallback)[^\n]*$", re.M)
    # the keys a tensor of a device torch can run on reaches (its backend, its sparse, quantized and nested forms,
    # their autograd), not the dozens of keys of devices absent from every machine that grades
    devices = ("CPU", "CUDA", "MPS", "XPU", "HIP", "Lazy", "AutogradOther", "AutogradNestedTensor")
    # and every key the op has a kernel registered at, alias keys included: a kernel is called by its key too
    # (OpOverload._op_dk(DispatchKey.CompositeImplicitAutograd, ...) runs the decomposition registered there)
    registered = re.compile(r"^(\w+)(?:\[alias\])?: registered at (?![^\n]*fallthrough)", re.M)
    # every overload of an op of that name, in every namespace the dispatcher holds it in
    for full in sorted(torch._C._dispatch_get_all_op_names()):
        namespace, name = full.split("::", 1)
        if name.split(".")[0] not in ops:
            continue
        if namespace not in libraries:
            libraries[namespace] = torch._C._dispatch_library("IMPL", namespace, "")
        barred = refusal(namespace, name)
        table = [k for k in kernel.findall(torch._C._dispatch_dump_table(full)) if k.endswith(devices)]
        own = [k for k in registered.findall(torch._C._dispatch_dump(full)) if k != "debug"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
            for key in dict.fromkeys(own + table):
                try:
                    libraries[namespace].impl(name, key, barred, False)
                except RuntimeError:  # a key this build of torch cannot name: no tensor dispatches to it
                    pass


def _seal_libraries(say, module_kinds: dict, answers: dict) -> None:
    """Where a build exercise refuses a package: its C functions and C types, as its modules and classes hold them,
    replaced by a refusal. Calling a Cython function or a C type raises no profile event (no frame, no ``c_call``), so
    no hook sees ``pandas._libs.hashtable.value_count`` run (hostile class 33q passed 1.1 with it); what the student's
    code can still reach of them goes through these namespaces, which are the package's own. Its Python is refused
    by place (see _library). The answer cells' own names for them (``from pandas._libs.hashtable import
    value_count``) too. The stand-ins hold ``say`` only."""
    refused_modules = {id(m): top for m, top in list(module_kinds.values()) if top}

    def origin(value) -> str:
        """The refused package a C callable comes from ("" if none): its module, read before any student code ran."""
        holder = getattr(value, "__self__", None)
        if type(holder) is not types.ModuleType:
            holder = sys.modules.get(getattr(value, "__module__", None) or "")
        return refused_modules.get(id(holder), "")

    def seal(space, owner, top, assign) -> None:
        for key, value in list(space.items()):
            kind = type(value)
            # C functions (builtins, Cython's) and C types only: what a package wrote in Python runs under the trace
            if isinstance(value, type):
                if value.__flags__ & _HEAPTYPE:
                    continue
            elif kind is not types.BuiltinFunctionType and "cython_function" not in kind.__name__:
                continue
            if not top and not origin(value):
                continue  # the answer cells' names: only what a refused package made
            assign(key, _stand_in(say, f"{owner}.{key} ({top or origin(value)}, {_ONLY_ALLOWED})"))

    for module, top in list(module_kinds.values()):
        if not top or type(module) is not types.ModuleType:
            continue
        space = vars(module)
        name = space.get("__name__", top)
        seal(space, name, top, space.__setitem__)
        _forget_first_namespace(module)
        for value in list(space.values()):
            if type(value) is type and value.__flags__ & _HEAPTYPE and value.__module__ == name:
                seal(dict(vars(value)), f"{name}.{value.__qualname__}", top, lambda k, v, c=value: setattr(c, k, v))
    seal(answers, "your", "", answers.__setitem__)


_HEAPTYPE = 1 << 9  # a class statement's type (C types are static)
_ONLY_ALLOWED = "which build exercises forbid: only the standard library, torch and numpy"


def _close_doors(say) -> None:
    """No thread, no signal handler, no process and no look at the hooks from here on in this child: a thread
    escapes the hooks and torch's modes (both per thread), a handler is handed the harness's frame, a process
    runs unobserved, ``sys.gettrace()`` is the observer itself. Trying is refused; the originals are dropped, not
    kept (the checks took theirs). The stand-in holds ``say`` only, not the observer (its closure is readable)."""
    import _imp
    import _posixsubprocess
    import _thread
    import importlib
    import signal

    def refused(*args, **kwargs):
        say(
            {
                "refused": "a new thread, a signal handler, a process or the hooks (_thread.start_new_thread, "
                "signal.signal, _posixsubprocess.fork_exec, sys.gettrace, _imp.create_builtin)"
            }
        )
        raise PermissionError("grading does not allow threads, signal handlers, processes or looking at the hooks")

    for name in sys.builtin_module_names:
        importlib.import_module(name)
    fork_exec = _posixsubprocess.fork_exec
    for module, names in (
        (_thread, ("start_new_thread", "start_new")),
        (threading, ("_start_new_thread",)),
        (signal, ("signal", "setitimer", "alarm")),
        (sys, ("gettrace", "getprofile")),  # the hooks themselves: the way to the observers without a frame
        (_posixsubprocess, ("fork_exec",)),  # starts a process without an audit event
        (sys.modules.get("_signal"), ("signal", "setitimer", "alarm")),
        # a builtin module made again is a fresh one, with the originals dropped here (a _thread whose
        # start_new_thread starts a thread no hook sees: ``map(_imp.create_builtin, [spec])`` raises no event), so
        # every builtin module is loaded first and none is made after
        (_imp, ("create_builtin", "exec_builtin")),
    ):
        for name in names:
            if module is not None and hasattr(module, name):
                setattr(module, name, refused)
    for module in list(sys.modules.values()):  # subprocess keeps its own name for it (``subprocess._fork_exec``)
        space = getattr(module, "__dict__", None)
        if isinstance(space, dict):
            for name, value in list(space.items()):
                if value is fork_exec:
                    space[name] = refused
    failed = _refuse_processes_below_python()
    if failed:  # fail closed: without it native code could start an unobserved process
        say({"refused": f"the grader could not refuse new processes in this process ({failed[:120]})"})


# What the kernel itself refuses in this child once its doors are closed (seccomp, below the audit hook): a process,
# and any act on another process.
# Native code raises no audit event (cffi's posix_spawn started a fresh, unobserved Python: hostile class 33o), so
# the answers' child may not execute a program nor copy itself, whatever code asks: execve, execveat, fork,
# vfork, and clone without CLONE_THREAD fail with EPERM; clone3 fails with ENOSYS, so a thread (which the kernel
# makes with CLONE_THREAD) is made by clone, whose flags the filter can read. (syscall numbers by machine)
# Nor may it act on another process (its parent is the harness that reads the reply: hostile class 33o stopped,
# killed and starved it): ptrace, another's memory, pidfds and queued signals are refused; kill and tgkill only
# reach this process, prlimit64 only this process's limits (pid 0 or its own).
_SYSCALLS = {
    "x86_64": {
        "arch": 0xC000003E,
        "deny": (59, 322, 57, 58, 101, 310, 311, 434, 424, 438, 129, 297, 200),
        "self": {62: (), 234: (), 302: (0,)},  # kill, tgkill, prlimit64: the first argument is this pid (or these)
        "clone": 56,
        "clone3": 435,
        "x32": True,
    },
    "aarch64": {
        "arch": 0xC00000B7,
        "deny": (221, 281, 117, 270, 271, 434, 424, 438, 138, 240, 130),
        "self": {129: (), 131: (), 261: (0,)},
        "clone": 220,
        "clone3": 435,
        "x32": False,
    },
}


def _no_process_filter(machine: str, pid: int) -> bytes:
    """The seccomp program (classic BPF, as the kernel reads it) that refuses every new process on ``machine``, and
    any act on a process other than ``pid``."""
    import struct

    nr = _SYSCALLS[machine]
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    program: list[tuple[int, int, int, int]] = []  # (code, jump if true, jump if false, k); jumps are relative

    def op(code, k, jt=0, jf=0):
        program.append((code, jt, jf, k))

    op(ld, 4)  # the calling convention: another one's numbers mean other calls
    op(jeq, nr["arch"], 1, 0)
    op(ret, eperm)
    op(ld, 0)  # the call's number
    if nr["x32"]:
        op(jge, 0x40000000, 0, 1)  # x32's numbers: none is needed here
        op(ret, eperm)
    for number in nr["deny"]:
        op(jeq, number, 0, 1)
        op(ret, eperm)
    for number, also in nr["self"].items():  # the first argument must be this process (or one of ``also``)
        values = (pid, *also)
        op(jeq, number, 0, len(values) + 3)
        op(ld, 16)
        for i, value in enumerate(values):
            op(jeq, value, len(values) - i, 0)
        op(ret, eperm)
        op(ret, allow)
    op(jeq, nr["clone3"], 0, 1)
    op(ret, enosys)
    op(jeq, nr["clone"], 0, 3)
    op(ld, 16)  # clone's flags (its first argument, low word)
    op(jset, 0x00010000, 1, 0)  # CLONE_THREAD: a thread of this process
    op(ret, eperm)
    op(ret, allow)
    return b"".join(struct.pack("=HBBI", *ins) for ins in program)


def _refuse_processes_below_python() -> str:
    """Installs the filter in this process (for good: a filter cannot be removed); "" or why it could not."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux"):
        return ""  # no seccomp there: only `grade --no-sandbox` runs there, which says it is unconfined
    machine = platform.machine()
    if machine not in _SYSCALLS:
        return f"no seccomp program for this machine ({machine})"
    program = _no_process_filter(machine, os.getpid())
    buffer = ctypes.create_string_buffer(program, len(program))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: what lets an unprivileged process add a filter
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"prctl(PR_SET_SECCOMP) failed: {os.strerror(ctypes.get_errno())}"
    return ""


if __name__ == "__main__":
    main()


# --------------------------------------------------------------------------- the grader's side


def command(package_parent: str) -> list[str]:
    """The harness's command (``package_parent``: where course_lib is, as the process sees it)."""
    from course_lib.instructor.sandbox import python_command

    return python_command("from course_lib.instructor.harness import main; main()", package_parent)


class Answers:
    """One harness process of one submission, driven from the grader: load the answer cells, then one exercise
    at a time. Everything it sends is data: JSON lines, each at most ``max_line`` bytes."""

    def __init__(self, argv: list[str], env: dict, cwd: str | None, max_line: int):
        import subprocess

        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.max_line = max_line
        self.buffer = b""

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, deadline: float) -> dict | None:
        """The next message, or None when the process ended, sent something malformed or ran out of time."""
        import select
        import time

        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or len(self.buffer) > self.max_line:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    return None
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        return message if isinstance(message, dict) else None

    def kill(self) -> None:
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.proc.wait()
