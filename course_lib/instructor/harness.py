"""The student's process computes, the grader's process decides: the answer cells alone, called in a process
of their own.

The grader never calls the student's functions in the kernel that ran the notebook (any cell there can
replace the checks, register hooks or rewrite files). For the grade it starts a fresh sandboxed Python
(:func:`command`: ``python -I``, its own ``sys.path``, a minimal environment) that runs :func:`main`:

1. before any student code, it installs an audit hook (which can never be removed) and imports the
   lesson's checks;
2. it loads only the released setup cell (in a namespace of its own) and the student's answer cells (the
   cells whose nbgrader id is ``ex-N-M``), each after :func:`refusal` accepted it: at top level an answer
   cell may only import (not ``course_lib``), define functions and classes, and bind names to constants,
   so nothing in it runs before the grader's call;
3. only then does the grader send each exercise's cases (drawn with a seed the process never sees); the
   harness calls the check's own run path (``Exercise.run``, so the checks' run-time observer is used)
   while its observer watches: a call from the student's code (directly, or through torch or Python) into
   a function of ``course_lib`` (the lesson's module, the checks' references), and any attempt to reach
   around the observer (profile or trace hooks, frames, code objects, ``gc``, ``ctypes``, importing
   ``course_lib``) is written to the grader at once, as it happens;
4. it answers with the records, as plain data; :mod:`course_lib.instructor.submission` judges them in the
   grader's process, and any refusal, malformed line or missing answer fails the exercise.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import threading

ANSWER_FILE = "<answer {}>"  # the file name an answer cell's code carries (how the observer knows it)
# audit events that reach around the observer or into the interpreter: refused while the student's code runs
SENSITIVE_EVENTS = {
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
DECORATORS = {"staticmethod", "classmethod", "property"}


# --------------------------------------------------------------------------- what an answer cell may do


def refusal(source: str) -> str:
    """ "" when an answer cell may be loaded; else why not (one short sentence with the line).

    At top level (and in a class body) only: imports (absolute, no ``*``), ``def`` and ``class``
    (decorators ``staticmethod``/``classmethod``/``property``/``x.setter``, defaults and class constants
    that are literals, bases that are names), names bound to literals, docstrings and ``pass``. Nothing
    else runs when the cell is loaded. (What the functions call is the observer's to judge, when they run.)"""
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
        return _body_refusal(tree.body, top=True)
    except RecursionError:
        return "it is nested too deeply to be checked"


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
        return False


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


def _decorator_ok(node) -> bool:
    if isinstance(node, ast.Name):
        return node.id in DECORATORS
    return isinstance(node, ast.Attribute) and node.attr in ("setter", "getter", "deleter") and _simple_name(node)


def _def_refusal(node) -> str:
    where = f"line {node.lineno}"
    if not all(_decorator_ok(d) for d in node.decorator_list):
        return f"{where}: a decorator other than staticmethod, classmethod or property runs code when loaded"
    if isinstance(node, ast.ClassDef):
        if node.keywords or not all(_simple_name(b) for b in node.bases):
            return f"{where}: a class whose bases are not plain names"
        return _body_refusal(node.body, top=False)
    args = node.args
    defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if not all(_literal(d) for d in defaults):
        return f"{where}: a default value that is not a constant"
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    if not all(_annotation_ok(a.annotation) for a in every) or not _annotation_ok(node.returns):
        return f"{where}: an annotation that runs code"
    return ""


def _body_refusal(body, top: bool) -> str:
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            why = _def_refusal(node)
            if why:
                return why
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring, or a bare constant
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            if _literal(node.value):
                continue
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if (node.value is None or _literal(node.value)) and _annotation_ok(node.annotation):
                continue
        what = type(node).__name__.lower()
        return (
            f"line {node.lineno}: code that runs when the cell is loaded ({what}); an answer cell may only "
            "import, define functions and classes, and set constants"
        )
    return ""


# --------------------------------------------------------------------------- inside the sandbox


class _Observer:
    """What the student's code reaches while it runs: a trace hook (calls into course_lib) and an audit hook
    (installed before any student code loads; Python cannot remove it). Each refusal goes to the grader at
    once, on the results channel, so code that runs later cannot take it back."""

    def __init__(self, package_dir: str, say):
        self.package = package_dir.rstrip(os.sep) + os.sep
        self.say = say
        self.exercise = ""  # set while the grader's call runs
        self.refs: set = set()  # every course_lib function: refused in a build exercise (one that forbids)
        self.checks: set = set()  # the checks' own (references, machinery): refused in every exercise
        self.build = False
        self.given: set = set()  # course_lib functions the check hands the student's function as inputs
        self.busy = False

    def course_code(self, filename: str) -> bool:
        return filename.startswith(self.package)

    def collect(self) -> None:
        """Every function and method defined at module level in course_lib (the lesson's module, the checks'
        references, the checks' machinery): the student's code may not call one of them directly."""
        import types

        here = os.path.abspath(__file__)
        for name, module in list(sys.modules.items()):
            if not name.startswith("course_lib") or getattr(module, "__file__", None) in (None, here):
                continue
            for value in list(vars(module).values()):
                for fn in _functions(value):
                    if isinstance(fn, types.FunctionType) and self.course_code(fn.__code__.co_filename):
                        self.refs.add(fn.__code__)
                        if name.startswith("course_lib.checks"):
                            self.checks.add(fn.__code__)

    def refuse(self, what: str) -> None:
        if self.exercise:
            self.say({"exercise": self.exercise, "refused": what[:200]})

    def by_student(self, frame) -> bool:
        """Is the innermost frame that is the student's or course_lib's the student's?"""
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<answer "):
                return True
            if self.course_code(name):
                return False
            frame = frame.f_back
        return True  # a thread the student's code started (the grader's own calls start from the harness)

    def audit(self, event: str, args) -> None:
        if self.busy or not self.exercise:
            return
        if event not in SENSITIVE_EVENTS and not event.startswith("ctypes."):
            return
        self.busy = True
        try:
            # done by the student's own line (torch and Python do some of these inside, legitimately);
            # switching the observer off counts whoever the student's code asked to do it
            frame = sys._getframe(1)
            hooks = event in ("sys.setprofile", "sys.settrace", "sys.addaudithook")
            if hooks and frame.f_code.co_filename == threading.__file__:  # a new thread taking on our hook
                return
            if frame.f_code.co_filename.startswith("<answer ") or (hooks and self.by_student(frame)):
                detail = f" {args[1]}" if event.startswith("object.") and len(args) > 1 else ""
                self.refuse(f"{event}{detail}")
        finally:
            self.busy = False

    def trace(self, frame, event, arg):
        """A global trace function: Python calls only (C calls cost nothing), no line events (returns None)."""
        # called by the student's code, directly or through torch or Python (vmap, map, a thread): refused;
        # called by course_lib's own code (the check's machinery, a helper the check gave) it is the check's
        code = frame.f_code
        if event != "call" or code not in (self.refs if self.build else self.checks) or code in self.given:
            return
        if self.by_student(frame.f_back):
            self.refuse(f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_qualname}")


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
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    commands = os.fdopen(os.dup(0), "r", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # what the student's code prints goes nowhere
        os.dup2(devnull, fd)

    def say(message: dict) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    try:
        _serve(commands, say)
    except BaseException:  # ours, or the student's code reaching around the harness: the grader logs it
        import traceback

        say({"crash": traceback.format_exc()[-4000:]})
        raise


def _serve(commands, say) -> None:
    from pathlib import Path

    import course_lib

    job = json.loads(commands.readline())
    observer = _Observer(str(Path(course_lib.__file__).resolve().parent), say)
    sys.addaudithook(observer.audit)  # before any student code; Python offers no way to remove it
    from course_lib import checks

    exercises = checks.exercises(job["lesson"])
    _import_forbidden(exercises.values())  # now, not under the observer during the first call (nltk is slow)
    setup_ns: dict = {"__name__": "__main__"}
    try:
        exec(compile(job["setup"], "<setup>", "exec"), setup_ns)
    except Exception:
        pass  # the released setup cell; its effects (seed, threads) are conveniences, not the grade's
    observer.collect()
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    loaded: dict[str, str] = {}
    for exercise, grade_id, source in job["cells"]:
        why = refusal(source)
        if not why:
            try:
                exec(compile(source, ANSWER_FILE.format(grade_id), "exec"), ns)
            except BaseException as exc:  # SystemExit too: the cell failed to load, the rest still loads
                why = f"loading it raised {type(exc).__name__}: {str(exc)[:200]}"
        if why and not loaded.get(exercise):
            loaded[exercise] = f"answer cell {grade_id} was not loaded: {why}"
        loaded.setdefault(exercise, "")
    functions = {e: ns.get(ex.function) for e, ex in exercises.items()}  # bound now, before any call
    say({"loaded": loaded})
    for line in commands:
        order = json.loads(line)
        exercise = exercises[order["exercise"]]
        fn = functions.get(exercise.id)
        cases = checks.from_plain(order["cases"])
        observer.given = _given(exercise, cases)
        observer.build = bool(exercise.forbidden)
        observer.exercise = exercise.id
        threading.settrace(observer.trace)
        sys.settrace(observer.trace)
        try:
            if not callable(fn):
                reply = {"error": f"NameError: {exercise.function} is not defined in the answer cells"}
            else:
                reply = {"records": checks.to_plain(exercise.run(fn, cases))}
        except BaseException as exc:  # SystemExit, KeyboardInterrupt from the student's code
            reply = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        intact = sys.gettrace() == observer.trace
        sys.settrace(None)
        threading.settrace(None)
        observer.exercise = ""
        if not intact:
            say({"exercise": exercise.id, "refused": "sys.settrace (the observer was switched off)"})
        say({"exercise": exercise.id, "reply": reply})


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
