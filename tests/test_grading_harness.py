"""Issue 33, second hostile class: the harness that calls the answer cells must not trust anything the student's
code can reach. Each attack is a set of answer cells, run through the grader's harness (its real process and
protocol, without the sandbox: seconds, not a graded notebook) and judged as the grader judges
(``submission._verdict``). The four routes that broke the grader last time, each as a class:

1. code that runs while the answer cells load (a class hook, a decorator, an annotation) reaching the harness;
2. a thread the student's code starts while a check runs (outside the hooks and torch's modes);
3. the course's reference copied at run time under another file name (read from disk, or its text embedded);
4. lines written on the results channel (a forged reply, a reply for the next exercise).

Lesson 03 is used: its first checks cost little, and its reference (``is_balanced``) is pure Python.
"""

import inspect
import os
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from course_lib import checks
from course_lib.checks import borrowed
from course_lib.instructor import harness, sandbox, submission
from course_lib.instructor.release import _setup_cell
from course_lib.parentheses_symbols import is_balanced as reference_is_balanced

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_31 = next(  # the solutions' own answer to 3.1 (is_balanced with a stack), not a copy of it
    c.source
    for c in nbformat.read(ROOT / "solutions" / "03_parentheses.ipynb", as_version=4).cells
    if (c.metadata.get("nbgrader") or {}).get("grade_id") == "ex-3-1"
)


def run_harness(lesson: str, cells: dict, tmp_path) -> dict:
    """{exercise: (status, message, refusals)} for the given answer cells (exercise -> source), in order."""
    release = nbformat.read(next((ROOT / "exercises").glob(f"{lesson}_*.ipynb")), as_version=4)
    exercises = submission.protocol(lesson)
    job = [(e, f"ex-{e.replace('.', '-')}-1", source) for e, source in cells.items()]
    argv = harness.command(str(sandbox._package_dir().parent))
    answers = harness.Answers(argv, submission._harness_env(), str(tmp_path), 5_000_000)
    verdicts = {}
    try:
        answers.send({"lesson": lesson, "setup": _setup_cell(release).source, "cells": job, "max_line": 5_000_000})
        loaded = answers.receive(time.monotonic() + 180)["loaded"]
        for exercise in cells:
            drawn = exercises[exercise].draw(secrets.randbits(63))
            answers.send({"exercise": exercise, "cases": checks.to_plain(drawn)})
            refused, reply = [], None
            while reply is None:
                message = answers.receive(time.monotonic() + 180)
                assert message is not None and message.get("exercise") == exercise, message
                if "refused" in message:
                    refused.append(message["refused"])
                else:
                    reply = message["reply"]
            outcome = (reply, refused, "")
            verdict = submission._verdict(
                exercises[exercise], drawn, outcome, loaded.get(exercise), list(cells.values())
            )
            verdicts[exercise] = (verdict["status"], verdict["message"], refused)
    finally:
        answers.kill()
    return verdicts


# --------------------------------------------------------------------------- 1. code that runs at load time

LOAD_TIME = {
    "init_subclass": """
class _Base:
    def __init_subclass__(cls, **kw):
        import sys
        sys._getframe()
class _Trigger(_Base):
    pass
""",
    "setter_of_a_plain_class": """
class _Deco:
    def setter(f):
        return f
class _Holder:
    @_Deco.setter
    def x(self):
        pass
""",
    "class_getitem": """
class _Ann:
    def __class_getitem__(cls, item):
        return cls
""",
    "shadowed_property": """
def property(f):
    return f
""",
    "imported_as_staticmethod": "from functools import partial as staticmethod\n",
    "mro_entries": """
class _Fake:
    def __mro_entries__(self, bases):
        return ()
""",
}


@pytest.mark.parametrize("name", sorted(LOAD_TIME))
def test_code_that_would_run_while_the_cells_load_is_refused(name):
    assert harness.refusal(LOAD_TIME[name] + SOLUTION_31)


def test_a_property_and_its_setter_still_load():
    source = """
class Box:
    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = value
"""
    assert harness.refusal(source) == ""
    # a setter whose name was bound to something else in between is not a property's
    assert harness.refusal(source.replace("    @size.setter", "    size = 3\n\n    @size.setter"))


# --------------------------------------------------------------------------- the class, through the harness

# lesson 03's exercises, each answer an attack; run in ONE harness process
ATTACKS = {
    # 1. reaching the harness's frames (where its observer, reply path and the drawn cases are) at call time
    "3.1": SOLUTION_31.replace(
        "    stack = []",
        "    import inspect, sys\n"
        "    for look in (inspect.stack, sys.gettrace):\n"
        "        try:\n"
        "            look()\n"
        "        except Exception:\n"
        "            pass\n"
        "    stack = []",
    ),
    # 2. the reference called from a thread the student's code starts (outside the hooks and torch's modes)
    "3.2": """
import _thread

def transpose_closers(seq, rng, n_symbols=10):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()
    def work():
        box.append(list(seq))
        lock.release()
    _thread.start_new_thread(work, ())
    lock.acquire()
    return box[0]
""",
    # 1. an added answer cell whose class statement would run the student's code while the cells load
    "3.3": """
class _Base:
    def __init_subclass__(cls, **kw):
        import sys
        sys.modules["course_lib.checks"].to_plain = lambda *a, **k: []

class ElmanRNN(_Base):
    pass
""",
    # 1. a signal handler (it would be handed the harness's frame) installed while the call runs
    "3.4": """
import signal

def train_epoch(model, batches, optimizer):
    signal.signal(signal.SIGALRM, lambda number, frame: None)
    return [0.0]
""",
    # 1. the checks' machinery replaced while the call runs, so that what the harness sends is forged
    "3.5": """
import sys

def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    plain = sys.modules["course_lib.checks.plain"]
    for name in dir(plain):
        if callable(getattr(plain, name)) and not name.startswith("__"):
            setattr(plain, name, lambda *a, **k: [])
    checks = sys.modules["course_lib.checks"]
    checks.to_plain = lambda *a, **k: []
    return {name: [1.0] * epochs for name in test_sets}
""",
}


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    return run_harness("03", ATTACKS, tmp_path_factory.mktemp("attacks"))


def test_frames_reached_at_call_time_are_refused(attacked):
    status, message, refused = attacked["3.1"]
    assert status == submission.FAILED
    assert any("sys._getframe" in r for r in refused), refused


def test_the_observer_itself_cannot_be_looked_up(attacked):
    assert any("sys.gettrace" in r for r in attacked["3.1"][2]), attacked["3.1"]


def test_an_added_cell_with_load_time_code_is_not_loaded(attacked):
    status, message, refused = attacked["3.3"]
    assert status == submission.FAILED and "was not loaded" in message and "__init_subclass__" in message, message


def test_a_signal_handler_installed_while_a_check_runs_is_refused(attacked):
    status, message, refused = attacked["3.4"]
    assert status == submission.FAILED
    assert any("signal handler" in r for r in refused), (message, refused)


def test_a_thread_started_while_a_check_runs_is_refused(attacked):
    status, message, refused = attacked["3.2"]
    assert status == submission.FAILED
    assert any("new thread" in r for r in refused), (message, refused)


def test_replacing_the_checks_machinery_at_call_time_is_refused(attacked):
    status, message, refused = attacked["3.5"]
    assert status == submission.FAILED
    assert any("replaced by the student's code" in r for r in refused), refused


# 3. the reference copied: its file read at run time, or its text (taken here) loaded under another name
COPIES = {
    "3.1": """
import importlib.abc
import importlib.util

TEXT = {text!r}

class _Loader(importlib.abc.SourceLoader):
    def get_filename(self, fullname):
        return "/nonexistent/" + fullname + ".py"

    def get_data(self, path):
        return TEXT.encode()

def is_balanced(seq, n_symbols=10):
    spec = importlib.util.spec_from_loader("mine", _Loader())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.is_balanced(seq, n_symbols)
""",
    "3.2": """
import sys

def transpose_closers(seq, rng, n_symbols=10):
    path = sys.modules["course_lib.parentheses_generators"].__file__
    text = open(path).read()
    return list(seq)
""",
    # 4. forged lines on every descriptor the process has, during 3.4's call: for 3.4 and for 3.5 (next)
    "3.4": """
import json
import os

def train_epoch(model, batches, optimizer):
    for exercise in ("3.4", "3.5"):
        line = (json.dumps({"exercise": exercise, "reply": {"records": []}}) + "\\n").encode()
        for fd in range(3, 64):
            try:
                os.write(fd, line)
            except OSError:
                pass
    return [0.0]
""",
    # the function ends its own process
    "3.3": """
import os
import torch.nn as nn

class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        os._exit(0)
""",
}


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    text = "from __future__ import annotations\n" + inspect.getsource(reference_is_balanced)
    cells = dict(COPIES, **{"3.1": COPIES["3.1"].format(text=text)})
    cells["3.5"] = """
def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    return {}
"""
    return run_harness("03", cells, tmp_path_factory.mktemp("copies"))


def test_a_copy_of_the_reference_under_another_file_name_is_refused(copied):
    status, message, refused = copied["3.1"]
    assert status == submission.FAILED
    # 3.1 is a build exercise: since the text is compiled during the call, the compile itself is refused (see
    # MADE_FROM_TEXT_31 below), before the copy would run; the copy is refused as such where it gets that far
    assert any(("a copy of" in r and "is_balanced" in r) or r.startswith("compile ") for r in refused), refused


def test_the_course_files_cannot_be_read_by_the_answers(copied):
    status, message, refused = copied["3.2"]
    assert status == submission.FAILED
    assert any(r.startswith("open ") for r in refused), refused


def test_lines_written_on_the_results_channel_are_refused_and_reach_no_other_exercise(copied):
    status, message, refused = copied["3.4"]
    assert status == submission.FAILED
    assert any("something other than the grader wrote" in r for r in refused), refused
    # 3.5's reply is its own call's: a plain wrong answer, judged as such, no forged line in it
    status, message, refused = copied["3.5"]
    assert status == submission.FAILED and not refused, (message, refused)


def test_a_function_that_ends_its_process_gets_a_clear_reason(copied):
    status, message, refused = copied["3.3"]
    assert status == submission.FAILED
    assert "ended the process" in message and "exit code 0" in message, message


def test_an_honest_answer_with_annotations_passes(tmp_path):
    # annotations are never evaluated (this one would raise if it were); the honest answer is not refused
    cell = SOLUTION_31.replace("def is_balanced(seq, n_symbols=10):", "def is_balanced(seq: _Nope[1], n_symbols=10):")
    verdicts = run_harness("03", {"3.1": "class _Nope:\n    pass\n" + cell}, tmp_path)
    assert verdicts["3.1"][0] == submission.PASSED, verdicts


def test_an_answer_cell_refused_while_the_cells_load_fails_only_its_own_exercise(tmp_path):
    """Hostile class 33l: an import refused in an answer cell (then `import sympy`, whose frame reads are now its
    own: a door to the interpreter's internals stands in) once failed every exercise of the notebook, the deserved
    ones too. Now each exercise's cells are loaded alone, from fresh, to find whose cell is refused; that exercise
    fails naming the refusal, and the others are loaded and called from fresh without its cell. With one exercise
    there is nothing else."""
    solutions = nbformat.read(ROOT / "solutions" / "02_backprop.ipynb", as_version=4)
    answer = {(c.metadata.get("nbgrader") or {}).get("grade_id"): c.source for c in solutions.cells}
    cells = {"2.1": "import _testcapi\n" + answer["ex-2-1"], "2.2": answer["ex-2-2"]}
    verdicts = run_harness("02", cells, tmp_path)
    assert verdicts["2.2"][0] == submission.PASSED, verdicts
    status, message, _ = verdicts["2.1"]
    assert status == submission.FAILED and "refused while the answer cells loaded" in message, verdicts
    assert "graded without it" in message

    alone = run_harness("02", {"2.1": cells["2.1"]}, tmp_path)
    assert alone["2.1"][0] == submission.FAILED and "were not loaded" in alone["2.1"][1], alone


WARMED = """
import sys
import nbformat
import numpy as np
from course_lib.checks import borrowed
from course_lib.instructor import harness, submission
from course_lib.instructor.release import _setup_cell
setup = _setup_cell(nbformat.read(sys.argv[1], as_version=4)).source
before = bool(borrowed._MODES)
done = harness._warm_up(setup, submission.protocol("02").values())
# the dispatch mode built (lesson 02's run path reached it), the setup cell run, and no compiler imported
print("@", before, bool(borrowed._MODES), "matplotlib" in sys.modules, "torch._dynamo" in sys.modules)
for exercise, records in done.items():
    print("@", exercise, type(records).__name__, sorted({str(r.get("raised")) for r in records}))
"""


def test_the_warm_up_runs_each_checks_run_path_before_any_child():
    """The harness's process runs the released setup cell and each check's run path once, on a stand-in answer,
    so that what they import is inherited by every child instead of imported again there under the observer.
    The stand-in must reach the run path as an answer: one of course_lib's own functions would be refused at
    once as borrowed, and nothing would be warmed (lesson 02's run path builds torch's dispatch mode). The mode
    must not import torch._dynamo on its first op (torch's default wrapper does: 3-7 s per process here)."""
    import subprocess

    release = next((ROOT / "exercises").glob("02_*.ipynb"))
    done = subprocess.run(
        [sys.executable, "-c", WARMED, str(release)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("@ ")]
    assert lines[0] == "@ False True True False", lines  # built by the warm-up, not before it
    assert len(lines) == 1 + len(submission.protocol("02")), lines
    for line in lines[1:]:
        assert " list " in line and "Borrowed" not in line, line  # records of the run path; nothing refused


COMPILED = """
import sys
import torch
from course_lib import checks


def softmax_jacobian(z):  # right by hand, but run by torch's compiler, out of the observer's sight
    def by_hand(z):
        s = torch.softmax(z, 0)
        return torch.diag(s) - torch.outer(s, s)

    return torch.compile(by_hand, backend="eager")(z)


result = checks.exercises("02")["2.1"].check(softmax_jacobian, quiet=True)
print("@", result.status, "may not call" in result.message)
"""


def test_an_answer_run_by_torchs_compiler_is_still_refused():
    """The dispatch mode no longer imports torch._dynamo itself (above); a compiled answer is refused all the same."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", COMPILED], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    said = [line for line in done.stdout.splitlines() if line.startswith("@ ")]
    assert said == ["@ failed True"], done.stdout[-2000:]  # failed, by the refusal's "may not call"


# --------------------------------------------------------------------------- issue 33, third class

# 5. a process started by the student's call: a fresh Python has no observer, so it may compute the reference.
# Each answer tries one way to start a process and, when that fails, answers honestly (3.1) or wrongly: the
# refusal, not the answer, must decide. subprocess.py, multiprocessing and os raise the audit event from their
# own frames, not from the answer's line.
FRESH_PYTHON = """
import subprocess
import sys

def _fresh(seq, n_symbols):
    prog = "import sys; from course_lib.parentheses_symbols import is_balanced as f; print(f(%r, %r))" % (
        list(seq), n_symbols)
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True).stdout
    return out.strip() == "True"

"""
PROCESSES = {
    "3.1": FRESH_PYTHON
    + SOLUTION_31.replace(
        "    stack = []",
        "    try:\n        return _fresh(seq, n_symbols)\n    except Exception:\n        pass\n    stack = []",
    ),
    "3.2": """
import os

def transpose_closers(seq, rng, n_symbols=10):
    try:
        os.system("true")
    except Exception:
        pass
    return list(seq)
""",
    "3.3": """
import multiprocessing
import torch.nn as nn

class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        try:
            multiprocessing.get_context("spawn").Process(target=print).start()
        except Exception:
            pass
""",
    "3.4": """
import subprocess
import sys

def train_epoch(model, batches, optimizer):
    try:  # subprocess's own name for the call that starts a process (no audit event of its own)
        subprocess._fork_exec([sys.executable], [sys.executable], True, (), None, None,
                              -1, -1, -1, -1, -1, -1, -1, -1, False, False, None, None, None, -1, None, False)
    except Exception:
        pass
    return [0.0]
""",
    "3.5": """
import os

def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
    except Exception:
        pass
    return {}
""",
}


@pytest.fixture(scope="module")
def processes(tmp_path_factory):
    return run_harness("03", PROCESSES, tmp_path_factory.mktemp("processes"))


@pytest.mark.parametrize(
    "exercise, event",
    [
        ("3.1", "subprocess.Popen"),
        ("3.2", "os.system"),
        ("3.3", "fork_exec"),  # the spawn context starts its Python through _posixsubprocess
        ("3.4", "_posixsubprocess.fork_exec"),
        ("3.5", "os.fork"),
    ],
)
def test_starting_a_process_from_the_call_is_refused_whatever_frame_starts_it(processes, exercise, event):
    import subprocess

    if exercise == "3.4" and not hasattr(subprocess, "_fork_exec"):
        pytest.skip("Python 3.10's subprocess holds no _fork_exec: the route does not exist there")
    status, message, refused = processes[exercise]
    assert status == submission.FAILED, (message, refused)
    assert any(event in r for r in refused), refused


# 6. the observers' own methods given other code in place (their identity kept), from a library's frame: pickle's
# pure-Python unpickler calling setattr, unittest.mock's patcher, the code taken by dis (not the answer's line).
# Then an honest answer: only the refusal decides.
SWAPS = {
    "3.1": """
import dis
import importlib
import sys
import unittest.mock

def _noop(*args, **kwargs):
    return None

"""
    + SOLUTION_31.replace(
        "    stack = []",
        "    harness = sys.modules.get('course_lib.instructor.harness')\n"
        "    borrowed = importlib.import_module('course_lib.checks.borrowed')\n"
        "    for owner, name in ((getattr(harness, '_Observer', None), 'refuse'), (borrowed.Observation, 'note'),\n"
        "                        (borrowed.Observation, 'tamper')):\n"
        "        try:\n"
        "            unittest.mock.patch.object(getattr(owner, name), '__code__', dis._get_code_object(_noop)).start()\n"
        "        except Exception:\n"
        "            pass\n"
        "    stack = []",
    ),
    "3.2": """
import dis
import importlib
import io
import pickle

def _noop(*args, **kwargs):
    return None

def transpose_closers(seq, rng, n_symbols=10):
    borrowed = importlib.import_module("course_lib.checks.borrowed")
    parts = [setattr, borrowed.Observation.note, "__code__", dis._get_code_object(_noop)]

    class Gadget(pickle._Unpickler):  # REDUCE calls setattr(note, "__code__", ...) in pickle.py's frame
        def persistent_load(self, pid):
            return parts[int(pid)]

    try:
        Gadget(io.BytesIO(b"P0\\n(P1\\nP2\\nP3\\ntR.")).load()
    except Exception:
        pass
    return list(seq)
""",
}


@pytest.fixture(scope="module")
def swapped(tmp_path_factory):
    return run_harness("03", SWAPS, tmp_path_factory.mktemp("swaps"))


def test_the_observers_methods_given_other_code_by_a_library_is_refused(swapped):
    status, message, refused = swapped["3.1"]
    assert status == submission.FAILED, (message, refused)
    # since session 18 the library's read of the observers' code is itself refused and stopped (reading course_lib's
    # code at all while the student's code runs); before, the write that followed was refused
    read = any(r.startswith("object.__getattr__ __code__") for r in refused)
    assert read or any("__code__ of _Observer.refuse" in r for r in refused), refused
    assert read or any("__code__ of Observation.note" in r for r in refused), refused


def test_a_pickle_gadget_swapping_the_checks_observer_is_refused(swapped):
    status, message, refused = swapped["3.2"]
    assert status == submission.FAILED
    assert any("__code__ of Observation.note" in r for r in refused), refused


def test_the_snapshot_sees_code_defaults_and_closures_changed_in_place():
    # what an in-place change keeps is the function's identity: the snapshot compares what it runs
    from course_lib import parentheses_symbols as module
    from course_lib.checks import borrowed

    for change in ("__code__", "__defaults__", "closure"):
        snapshot = harness._snapshot()
        assert harness._changed(snapshot) == ""
        fn = module.is_balanced if change != "closure" else borrowed.refusing
        saved = fn.__code__, fn.__defaults__
        if change == "__code__":
            fn.__code__ = module.stack_depths.__code__
        elif change == "__defaults__":
            fn.__defaults__ = (3,)
        else:  # a decorated function's closure holds the function it wraps
            cell = fn.__closure__[0]
            held, cell.cell_contents = cell.cell_contents, len
        try:
            assert harness._changed(snapshot).endswith("(its code, defaults or closure)"), change
        finally:
            if change == "closure":
                cell.cell_contents = held
            else:
                fn.__code__, fn.__defaults__ = saved
        assert harness._changed(snapshot) == ""


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))


# --------------------------------------------------------------------------- issue 33, session 14

# 7. the reply itself forged: a line shaped as the child's reply written on every descriptor, then the process
# ended before the real reply (the child's own words could then never contradict it); and a reply over the
# grader's cap, named as such before any conversion (a 50 MB tensor: seconds of base64 and JSON otherwise).
REPLIES = {
    "3.1": """
import json
import os

def is_balanced(seq, n_symbols=10):
    line = json.dumps({"reply": {"records": [{"returned": True}]}}) + "\\n"
    for fd in range(3, 64):
        try:
            os.write(fd, line.encode())
        except OSError:
            pass
    os._exit(0)
""",
    "3.2": """
import torch

BIG = []

def transpose_closers(seq, rng, n_symbols=10):
    if not BIG:
        BIG.append(torch.zeros(2500, 2500, dtype=torch.float64))
    return BIG[0]
""",
}


@pytest.fixture(scope="module")
def replies(tmp_path_factory):
    return run_harness("03", REPLIES, tmp_path_factory.mktemp("replies"))


def test_a_reply_forged_before_the_process_ends_is_not_taken(replies):
    status, message, refused = replies["3.1"]
    assert status == submission.FAILED
    # the forged line is a refusal, and the reply is the harness's own: the process ended without one
    assert any("something other than the grader wrote" in r for r in refused), refused
    assert "something other than the grader wrote" in message and "write it yourself" not in message, message


def test_a_reply_over_the_cap_names_the_cap(replies):
    status, message, refused = replies["3.2"]
    assert status == submission.FAILED and not refused, (message, refused)
    assert "over the 5 MB the grader reads" in message, message


def test_the_size_estimate_stops_at_the_cap():
    import torch

    assert not harness._over_cap([{"returned": torch.zeros(10, 10)}], 5_000_000)
    assert harness._over_cap([{"returned": torch.zeros(2000, 1000)}], 5_000_000)  # 8 MB of float32 as base64
    assert not harness._over_cap([{"returned": torch.zeros(800, 1000)}], 5_000_000)  # 3.2 MB: 4.3 MB as base64
    assert harness._over_cap([["x" * 1000] * 6000], 5_000_000)  # 6 MB of text, in pieces
    assert not harness._over_cap([["x" * 1000] * 4000], 5_000_000)
    # ten million numbers (about 80 MB as JSON): over, however the list is nested
    assert harness._over_cap([[list(range(1000))] * 10_000], 5_000_000)


def test_every_function_of_the_harness_that_a_hook_calls_is_copied_with_the_hooks():
    """A function the hooks call by its module-level name but left out of HOOK_FUNCTIONS would be looked up in the
    module's own globals while the student's code runs, not in the private copy taken before it."""
    import types

    space = vars(harness)
    hooks = set(harness.HOOK_FUNCTIONS)
    missing = set()
    for name in hooks:
        todo = [space[name].__code__]
        while todo:
            code = todo.pop()
            todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            for called in code.co_names:
                fn = space.get(called)
                if isinstance(fn, types.FunctionType) and fn.__module__ == harness.__name__ and called not in hooks:
                    if fn.__name__ != "<lambda>":  # _word and _zero: bound once at import, before any student code
                        missing.add(f"{name} -> {called}")
    assert not missing, sorted(missing)


def test_one_helper_lists_a_classs_functions_for_the_checks_and_the_harness():
    """The harness checks its observer's methods with the checks' own ``_functions_of`` (one home): every
    method, static and class method, and a property's getter, setter and deleter."""
    from course_lib.checks.borrowed import _functions_of

    class Holder:
        def method(self):
            pass

        @staticmethod
        def static():
            pass

        @classmethod
        def klass(cls):
            pass

        @property
        def size(self):
            return 1

        @size.setter
        def size(self, value):
            pass

        @size.deleter
        def size(self):
            pass

    found = _functions_of(Holder)
    assert {f.__name__ for f in found} == {"method", "static", "klass", "size"}
    assert len(found) == 6  # the property's three functions, each its own
    observer = {f.__name__ for f in _functions_of(harness._Observer)}
    assert {"audit", "trace", "refuse", "check", "detail", "swapped"} <= observer


# --------------------------------------------------------------------------- issue 33, fourth class

# 6.3 answered with zeros, and json's default encoder replaced during the call by one that, once the observer is
# off, writes the checks' reference over the returned values: the reply must be written by the grader's own code.
ENCODER_HOOK = {
    "6.3": """
import json
import sys

import torch

SEEN = []
KEPT = []


class Rewriter:
    def encode(self, message):
        reply = message.get("reply") if isinstance(message, dict) else None
        if isinstance(reply, dict) and "records" in reply:
            checks = sys.modules["course" + "_lib.checks.lesson06"]
            plain = sys.modules["course" + "_lib.checks.plain"]
            protocol = sys.modules["course" + "_lib.checks.protocol"]
            for record, args in zip(reply["records"], SEEN):
                right = plain.to_plain(protocol._plainify(checks.reference_masked_attention(*args)))
                for pair in record["dict"]:
                    if pair[0] == "returned":
                        pair[1] = right
        return KEPT[0].encode(message)


def masked_attention(scores, values, lengths):
    SEEN.append((scores.clone(), values.clone(), lengths.clone()))
    if not KEPT:
        KEPT.append(json._default_encoder)
        json._default_encoder = Rewriter()
    B, T, _ = scores.shape
    return torch.zeros(B, T, values.shape[-1], dtype=values.dtype), torch.zeros(B, T, T, dtype=scores.dtype)
""",
}


def test_the_reply_is_encoded_by_the_graders_code_not_by_json_state_the_answer_replaced(tmp_path):
    status, message, refused = run_harness("06", ENCODER_HOOK, tmp_path)["6.3"]
    assert status == submission.FAILED and not message.startswith("the grader"), (message, refused)


def test_the_replys_encoder_writes_plain_data_as_json_does_and_nothing_else():
    import json

    plain = {"a": [1, 2.5, None, True, 'é\n"x'], "b": {"c": (1, -0.0, 1e300)}, "n": [float("inf"), -float("inf")]}
    assert harness._plain_json(plain) == json.dumps(plain, separators=(",", ":"))
    assert harness._plain_json([float("nan")]) == "[NaN]"

    class Text(str):
        def __str__(self):
            raise AssertionError("a value's own code ran")

    for not_plain in ({"x": Text("a")}, {1: 2}, [object()], {"x": {"y": bytearray(b"z")}}):
        with pytest.raises(TypeError):
            harness._plain_json(not_plain)


# --------------------------------------------------------------------------- the fifth hostile class (issue33d)

# A frame handed out by torch (TorchScript's createResolutionCallbackFromFrame reads any frame's locals), reached
# through pytree's map: the harness's own frame and its observer, switched off, then the reference called.
FRAME_THROUGH_TORCH = {
    "6.3": """import torch
import torch._jit_internal
import torch.utils._pytree
from course_lib.checks import lesson06


def masked_attention(scores, values, lengths):
    make = torch._jit_internal.createResolutionCallbackFromFrame
    for up in range(1, 60):
        try:
            observer = torch.utils._pytree.tree_map(make, [up])[0]("observer")
        except Exception:
            continue
        if type(observer).__name__ == "_Observer":
            label, observer.exercise = observer.exercise, ""
            try:
                return lesson06.reference_masked_attention(scores, values, lengths)
            finally:
                observer.exercise = label
    raise RuntimeError("no frame reached")  # a pass would prove the frame was reached
""",
}


def test_a_frame_handed_out_by_torch_to_the_answer_is_refused(tmp_path):
    status, message, refused = run_harness("06", FRAME_THROUGH_TORCH, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("sys._getframe" in r or "f_back" in r for r in refused), refused
    # the hint names the module that read the frame (createResolutionCallbackFromFrame's inspect.currentframe) and
    # the library the answer's line called (torch.utils._pytree.tree_map)
    assert "sys._getframe by inspect through torch.utils._pytree" in message, message


# torch's reference decompositions (torch._refs) import torch._dynamo and torch.fx on their first call, and those
# imports read frames for their own names and lines (typing_extensions, torch.library, torch.fx's wrap): not the
# student's reads (hostile class 33w, a15)
REFS_SOFTMAX = {
    "7.9": """import torch


def top_k_probs(logits, k, temperature=1.0):
    from torch._refs import softmax as ref_softmax

    z = logits / temperature
    kth = torch.topk(z, k).values[-1]
    return ref_softmax(z.masked_fill(z < kth, float("-inf")), -1)
""",
}


def test_frames_a_library_reads_while_it_is_imported_during_the_call_are_not_the_students(tmp_path):
    status, message, refused = run_harness("07", REFS_SOFTMAX, tmp_path)["7.9"]
    assert status == submission.PASSED, (message, refused)
    assert refused == [], refused
    # nor while the cells load: sympy's import reads frames for its own names (hostile class 33l's refusal)
    answer = next(c.source for c in nbformat.read(ROOT / "solutions" / "02_backprop.ipynb", as_version=4).cells
                  if (c.metadata.get("nbgrader") or {}).get("grade_id") == "ex-2-1")  # fmt: skip
    status, message, refused = run_harness("02", {"2.1": "import sympy\n" + answer}, tmp_path)["2.1"]
    assert status == submission.PASSED, (message, refused)


# torch's fused Elman cell (seen by the check's observer only, not the harness's trace), then the check's own
# observation emptied: each refusal has already left the process when it was noted
KERNEL_THEN_CLEARED = {
    "3.3": """import math

import torch
from torch import nn
from course_lib.checks import borrowed


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        step = getattr(torch._VF, "rnn_" + "relu_cell")
        outputs = []
        for t in range(T):
            h = step(x[t], h, self.W_xh, self.W_hh, self.b_h, None)
            outputs.append(h)
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
        return torch.stack(outputs), h
""",
}


def test_a_refusal_of_the_checks_observer_reaches_the_grader_even_if_the_answer_empties_it(tmp_path):
    status, message, refused = run_harness("03", KERNEL_THEN_CLEARED, tmp_path)["3.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("rnn_relu_cell" in r for r in refused), refused


def test_an_answer_cell_that_is_the_reference_pasted_whole_is_refused(tmp_path):
    from course_lib.checks import lesson06

    pasted = "import torch\n\n\n" + "\n\n".join(
        inspect.getsource(f) for f in (lesson06._lower, lesson06._allowed, lesson06.reference_masked_attention)
    )
    pasted = pasted.replace('fill=float("-inf")', "fill=-1e999")  # a default must be a constant in an answer cell
    pasted += "\n\ndef masked_attention(scores, values, lengths):\n    return reference_masked_attention(scores, values, lengths)\n"
    status, message, refused = run_harness("06", {"6.3": pasted}, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("a copy of" in r for r in refused), refused


def test_a_class_hook_bound_by_an_import_or_assignment_in_a_class_body_is_refused():
    for source in (
        "class A:\n    from sys import exit as __init_subclass__\n",
        "class A:\n    import os as __class_getitem__\n",
        "class A:\n    __set_name__ = 1\n",
    ):
        said = harness.refusal(source)
        assert said and "runs code when a class statement is loaded" in said, (source, said)
    assert harness.refusal("class A:\n    from math import pi\n    SIZE = 3\n") == ""


def test_a_student_folder_that_is_a_link_gets_a_row_that_says_why(tmp_path):
    from course_lib.instructor.roster import collect

    elsewhere = tmp_path / "elsewhere" / "ps1"
    elsewhere.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), elsewhere / "06.ipynb")
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    (submitted / "dave").symlink_to(tmp_path / "elsewhere")
    entries, warnings = collect([submitted])
    assert [(e.student, "symbolic link" in e.problem) for e in entries] == [("dave", True)], entries


# autograd's graph walked by hand: its nodes called one by one (no engine, no backward, no *backward kernel when the
# forward avoids them); the second answer turns recording back on first
GRAPH_WALK = """import contextlib

import torch


def _back(node, g, leaves):
    if node is None or g is None:
        return
    if type(node).__name__ == "AccumulateGrad":
        leaves[id(node.variable)] = leaves.get(id(node.variable), 0) + g.sum_to_size(node.variable.shape)
        return
    outs = node(g)
    for (nxt, _), o in zip(node.next_functions, outs if isinstance(outs, tuple) else (outs,)):
        if nxt is not None and o is not None and type(nxt).__name__ != "AccumulateGrad":
            shape = tuple(nxt._input_metadata[0].shape)  # a broadcast input: its gradient summed back
            o = o.sum_to_size(shape) if shape else o.sum()
        _back(nxt, o, leaves)


def softmax_jacobian(z):
    with CONTEXT:
        z = z.detach().clone().requires_grad_(True)
        e = torch.exp(z - z.detach().max())
        y = e / e.sum()
        rows = []
        for k in range(z.shape[0]):
            g = torch.zeros_like(y)
            g[k] = 1
            leaves = {}
            _back(y.grad_fn, g, leaves)
            rows.append(leaves[id(z)])
        return torch.stack(rows).detach()
"""


@pytest.mark.parametrize(
    "context",
    [
        "contextlib.nullcontext()",
        "torch.enable_grad()",
        # the dispatcher's Python key excluded first: no dispatch mode sees the ops run with recording on
        "torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python)), torch.enable_grad()",
    ],
)
def test_autograds_graph_walked_node_by_node_is_refused_or_never_built(context, tmp_path):
    source = GRAPH_WALK.replace("CONTEXT", context)
    status, message, refused = run_harness("02", {"2.1": source}, tmp_path)["2.1"]
    assert status == submission.FAILED, (message, refused)
    if "enable_grad" in context:
        assert any("enable_grad" in r for r in refused), (message, refused)


# --------------------------------------------------------------------------- the sixth class (issue33e), as classes

# lesson 06's 6.3 written honestly; each attack below adds one way around the observer to it (or uses it as cover)
HONEST_63 = """
def honest(scores, values, lengths):
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0), dim=-1)
    weights = weights.masked_fill(empty, 0.0)
    return weights @ values, weights
"""

# code of the student's run from inside the harness's own look at course_lib (the trace hook calls it when the
# student's code is entered from outside, and Python pauses every hook there); two ways in: a name that is not
# plain text planted in a module dict the look compares (its __eq__ runs), and a builtin the look calls replaced
INSIDE_THE_LOOK = {
    "a name that is not text": """import copy
import sys

import torch


class Key(str):
    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        if ARGS:
            BOX.append(sys.modules["course_lib.checks.lesson06"].reference_masked_attention(*ARGS.pop()))
        return str.__eq__(self, other)


class Poke:
    def __copy__(self):
        return self


def masked_attention(scores, values, lengths):
    global ARGS, BOX
    ARGS, BOX = [], []
    space = vars(sys.modules["course_lib.checks.lesson06"])
    if not any(type(key) is Key for key in space):  # planted once (a look-up of it runs __eq__)
        value = space.pop("_tensor_of_shape")
        space[Key("_tensor_of_shape")] = value
    ARGS.append((scores, values, lengths))
    copy.copy(Poke())  # the student's __copy__ entered from copy.py: the harness looks at course_lib
    return BOX[0]
""",
    "a builtin replaced": """import builtins
import copy
import sys

import torch


def fake(*args):
    builtins.tuple = real
    if ARGS:
        BOX.append(sys.modules["course_lib.checks.lesson06"].reference_masked_attention(*ARGS.pop()))
    return real(*args)


class Poke:
    def __copy__(self):
        return self


def masked_attention(scores, values, lengths):
    global ARGS, BOX, real
    ARGS, BOX, real = [(scores, values, lengths)], [], builtins.tuple
    builtins.tuple = fake
    copy.copy(Poke())
    builtins.tuple = real
    return BOX[0]
""",
    # the observer reached without a frame, through what the harness put in the checks' module (its refusal
    # path's default argument), then switched off around the reference
    "the observer from a default": """import inspect
import sys

import torch


def masked_attention(scores, values, lengths):
    borrowed = sys.modules["course_lib.checks.borrowed"]
    found = [
        p.default.__self__
        for p in inspect.signature(borrowed._said_at_once).parameters.values()
        if type(getattr(p.default, "__self__", None)).__name__ == "_Observer"
    ]
    observer = found[0]  # IndexError when the observer is not reachable
    label, observer.exercise, observer.busy = observer.exercise, "", True
    try:
        return sys.modules["course_lib.checks.lesson06"].reference_masked_attention(scores, values, lengths)
    finally:
        observer.exercise, observer.busy = label, False
        for seen in borrowed._OBSERVING:  # what the checks' own observer noted meanwhile
            seen.refused.clear()
""",
}


@pytest.mark.parametrize("route", sorted(INSIDE_THE_LOOK))
def test_the_student_s_code_never_runs_inside_the_harness_s_own_look(route, tmp_path):
    status, message, refused = run_harness("06", {"6.3": INSIDE_THE_LOOK[route]}, tmp_path)["6.3"]
    assert status != submission.PASSED, (route, message, refused)


def test_what_the_observer_refuses_is_frozen_and_its_remembered_verdicts_are_verified():
    """The observer's sets cannot be emptied in place, and a verdict changed in its cache is seen (the student's
    code cannot reach the observer; this is the second line)."""
    import types

    from course_lib.checks import lesson06

    observer = harness._Observer(str(sandbox._package_dir()), lambda message: None)
    observer.collect()
    observer.arm(checks.exercises("06")["6.3"])
    assert isinstance(observer.refs, frozenset) and isinstance(observer.checks, frozenset)
    assert isinstance(observer.prints, types.MappingProxyType)
    reference = lesson06.reference_masked_attention.__code__
    assert reference in observer.checks
    observer.seen[id(reference)] = (reference, observer.verdict(reference))
    assert observer.stale() == ""
    observer.seen[id(reference)] = (reference, "nothing to refuse here")
    assert "reference_masked_attention" in observer.stale()


def test_a_name_that_is_not_text_in_a_course_module_is_itself_a_change():
    from course_lib.checks import lesson06

    class Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            raise AssertionError("the look ran the student's __eq__")

    snapshot = harness._snapshot()
    space = vars(lesson06)
    value = space.pop("_lower")
    space[Key("_lower")] = value
    try:
        assert "not text" in harness._changed(snapshot)
    finally:
        for key in [k for k in space if type(k) is not str]:
            del space[key]  # by the key itself: no __eq__ runs
        space["_lower"] = value
    assert harness._changed(snapshot) == ""


# a fused kernel the exercise forbids, reached by objects other than torch's usual ones for it: an op looked up by
# name (another builtin, the op's name), a nameless overload outside torch.ops, and the dispatcher's handle
KERNEL_HANDLES = {
    "6.3 by name": (
        "06",
        "6.3",
        "import torch\n"
        + HONEST_63
        + """

def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    fused = torch._C._jit_get_operation("aten::_masked_softmax")[0]
    weights = fused(scores, ~allowed, -1)
    return weights @ values, weights
""",
        "_masked_softmax",
    ),
    "6.3 by its handle": (
        "06",
        "6.3",
        "import torch\n"
        + HONEST_63
        + """

def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    handle = torch._C._dispatch_find_schema_or_throw("aten::_masked_softmax", "")
    weights = torch._C._dispatch_call_boxed(handle, scores, ~allowed, -1, None)
    return weights @ values, weights
""",
        "_dispatch_call_boxed",
    ),
    "6.3 redispatched": (
        "06",
        "6.3",
        "import torch\n"
        + HONEST_63
        + """

def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    weights = torch.ops.aten._masked_softmax.default.redispatch(keys, scores, ~allowed, -1, 2).nan_to_num(0.0)
    return weights @ values, weights
""",
        "redispatch",
    ),
    "3.3 nameless overload": (
        "03",
        "3.3",
        KERNEL_THEN_CLEARED["3.3"]
        .replace(
            'getattr(torch._VF, "rnn_" + "relu_cell")', 'torch._C._get_operation_overload("aten::rnn_relu_cell", "")[0]'
        )
        .replace("        for seen in borrowed._OBSERVING:\n            seen.refused.clear()\n", ""),
        "nameless handle",
    ),
}


@pytest.mark.parametrize("route", sorted(KERNEL_HANDLES))
def test_a_forbidden_kernel_is_refused_whatever_object_runs_it(route, tmp_path):
    lesson, exercise, source, name = KERNEL_HANDLES[route]
    status, message, refused = run_harness(lesson, {exercise: source}, tmp_path)[exercise]
    assert status == submission.FAILED, (route, message, refused)
    assert refused and any(name in r for r in refused), refused


def test_the_course_files_cannot_be_reached_from_a_directory_descriptor(tmp_path):
    """The audit event of an open carries no ``dir_fd``: a directory opened is refused (no exercise opens one)."""
    source = (
        "import os\nimport sys\n\nimport torch\n"
        + HONEST_63
        + """

def masked_attention(scores, values, lengths):
    path = sys.modules["course_lib.checks.lesson06"].__file__
    top = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    folder = os.open(top, os.O_RDONLY)
    with os.fdopen(os.open(os.path.relpath(path, top), os.O_RDONLY, dir_fd=folder)) as f:
        text = f.read()
    assert "def reference_masked_attention" in text
    return honest(scores, values, lengths)  # stands for whatever the text would be used for
"""
    )
    status, message, refused = run_harness("06", {"6.3": source}, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("open") for r in refused), refused


def test_the_student_s_function_run_while_the_cells_load_is_refused(tmp_path):
    """An Enum's ``__init__`` (a base class's metaclass calling the student's method) runs while the cell loads,
    where no exercise is armed in the loading process: refused, whatever it does."""
    source = (
        "import enum\n\nimport torch\n"
        + HONEST_63
        + """

class Table(enum.Enum):
    READY = 1

    def __init__(self, value):
        self.filled = value  # a student would compute a table of the reference's answers here


def masked_attention(scores, values, lengths):
    return honest(scores, values, lengths)
"""
    )
    status, message, refused = run_harness("06", {"6.3": source}, tmp_path)["6.3"]
    assert status != submission.PASSED, (message, refused)
    assert "loaded" in message, message


def test_a_module_built_to_count_its_parameters_is_refused_whatever_class_builds_it(tmp_path):
    source = """import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    module = torch.nn.modules.rnn.RNNBase(kind.upper(), input_size, hidden_size, num_layers)
    return sum(p.numel() for p in module.parameters())
"""
    status, message, refused = run_harness("04", {"4.3": source}, tmp_path)["4.3"]
    assert status == submission.FAILED, (message, refused)


# The harness's module and its observer's class are reachable (sys.modules, object.__subclasses__()) and Python
# audits none of these writes: everything the hooks use swapped for a moment around the reference, then put back
# (so no look at the end sees a change), with the checks' own refusal path silenced and its observation emptied
SWAPPED_FOR_A_MOMENT = {
    "6.3": """import sys

import torch


def masked_attention(scores, values, lengths):
    harness = sys.modules["course_lib.instructor.harness"]
    borrowed = sys.modules["course_lib.checks.borrowed"]
    space, klass = vars(harness), harness._Observer
    saved, methods, said = dict(space), dict(vars(klass)), borrowed._said_at_once

    def noop(*args, **kwargs):
        return None

    for name, value in list(space.items()):
        if isinstance(value, frozenset):
            space[name] = frozenset()
        elif name in ("_refuse", "_check", "_changed"):
            space[name] = noop
    for name in ("refuse", "check"):
        setattr(klass, name, noop)
    borrowed._said_at_once = noop
    try:
        return sys.modules["course_lib.checks.lesson06"].reference_masked_attention(scores, values, lengths)
    finally:
        space.update(saved)
        for name in ("refuse", "check"):
            setattr(klass, name, methods[name])
        borrowed._said_at_once = said
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
""",
}


def test_the_harness_and_its_classes_swapped_for_a_moment_change_nothing_the_hooks_do(tmp_path):
    status, message, refused = run_harness("06", SWAPPED_FOR_A_MOMENT, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("reference_masked_attention" in r for r in refused), refused


# the checks' own observer (what sees C calls: fused kernels, autograd's engine) is a module the answer can import:
# its refusal path swapped for a moment around a fused kernel, then put back and its observation emptied
CHECKS_OBSERVER_SILENCED = {
    "6.3": """import sys

import torch


def masked_attention(scores, values, lengths):
    borrowed = sys.modules["course_lib.checks.borrowed"]
    said = borrowed._said_at_once
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]

    def noop(*args, **kwargs):
        return None

    borrowed._said_at_once = noop
    try:
        weights = torch._masked_softmax(scores, ~allowed, -1).nan_to_num(0.0)
    finally:
        borrowed._said_at_once = said
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
    return weights @ values, weights
""",
}


def test_the_checks_observer_silenced_for_a_moment_still_refuses_a_fused_kernel(tmp_path):
    status, message, refused = run_harness("06", CHECKS_OBSERVER_SILENCED, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("_masked_softmax" in r for r in refused), refused


# code compiled at run time under one of course_lib's file names (run by a stdlib frame, so no exec event is the
# answer's), called back by the check's own frame while it reads the returned object (its __class__): the
# observers judged "course_lib's own code" by file name, so this ran as if it were the check's
RUN_TIME_CODE_UNDER_COURSE_NAME = {
    "6.3": '''import code
import os
import sys

import torch

GETTER = """
def getter(self):
    if not self.box:
        self.box.append(1)
        out, weights = sys.modules["course_lib.checks.lesson06"].reference_masked_attention(*self.args)
        self[0].copy_(out)
        self[1].copy_(weights)
    return self.kind
"""


def masked_attention(scores, values, lengths):
    path = os.path.join(os.path.dirname(sys.modules["course_lib"].__file__), "checks", "lesson06.py")
    space = {"sys": sys}
    code.InteractiveInterpreter(space).runcode(compile(GETTER, path, "exec"))
    Laundered = type("Laundered", (tuple,), {"__class__": property(space["getter"])})
    B, T, _ = scores.shape
    answer = Laundered((torch.zeros(values.shape, dtype=values.dtype), torch.zeros(B, T, T, dtype=scores.dtype)))
    answer.box, answer.args, answer.kind = [], (scores.clone(), values.clone(), lengths.clone()), Laundered
    return answer
''',
}


def test_code_made_at_run_time_under_a_course_file_name_is_the_students(tmp_path):
    status, message, refused = run_harness("06", RUN_TIME_CODE_UNDER_COURSE_NAME, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    # 6.3 is a build exercise: the compile under course_lib's file name is refused as it happens (MADE_FROM_TEXT_31),
    # before the code it makes could run
    assert any(r.startswith("compile ") or "made at run time under course_lib's name" in r for r in refused), refused


# the check's own frame calls into its reference, through C callables an object the answer returned carries (no
# Python frame of the student's between): the check's references and judging are refused whoever calls them
CALLED_BACK_THROUGH_C = {
    "4.3": """import functools
import sys


def param_count(kind, input_size, hidden_size, num_layers=1):
    count = functools.partial(sys.modules["course_lib.checks.lesson04"]._count, kind, input_size, hidden_size, num_layers)
    Number = type("Number", (int,), {"__int__": count, "__index__": count})
    return Number(0)
""",
}


def test_the_checks_judging_code_is_refused_whoever_calls_it(tmp_path):
    status, message, refused = run_harness("04", CALLED_BACK_THROUGH_C, tmp_path)["4.3"]
    assert status == submission.FAILED, (message, refused)
    # since session 17 the check never calls the subclass's __int__ (it reads exact types only): refused by name
    assert any("only the grader's judging runs" in r for r in refused) or "subclass of int" in message, refused


# in a build exercise, lesson code called by the check's own frame, through C callables the answer's returned
# object carries (the check iterates it): not the check's choice, so refused like a call from the answer
LESSON_CODE_CALLED_BACK = {
    "6.3": "import functools\nimport itertools\nimport sys\n\nimport torch\n"
    + HONEST_63
    + """

def masked_attention(scores, values, lengths):
    out, weights = honest(scores, values, lengths)
    lesson = sys.modules["course_lib.attention"]
    calls = itertools.starmap(lesson._additive, [(torch.ones(1, dtype=torch.bool), scores.dtype)])
    Pair = type("Pair", (tuple,), {"__iter__": functools.partial(itertools.chain, [out, weights], itertools.compress(calls, [0]))})
    return Pair((out, weights))
""",
}


def test_lesson_code_the_check_calls_back_for_the_answers_object_is_refused(tmp_path):
    status, message, refused = run_harness("06", LESSON_CODE_CALLED_BACK, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    # since session 17 the check never iterates a tuple subclass (exact types only): refused by name
    assert any("course_lib.attention._additive" in r for r in refused) or "subclass of tuple" in message, refused


# --------------------------------------------------------------------------- session 17: the classes behind the seventh
# class's breaks (tests/outsider/issue33f/results.md)

# 1. the check reads exact builtin types only, through their C structure: a subclass's methods (here a chain of C
# callables, no frame of the student's) never run in the check's frames, and the hint names the type
SOLUTION_22 = next(  # the solutions' own answer to 2.2 (the backward pass by hand)
    c.source
    for c in nbformat.read(ROOT / "solutions" / "02_backprop.ipynb", as_version=4).cells
    if (c.metadata.get("nbgrader") or {}).get("grade_id") == "ex-2-2"
)
SUBCLASSED_RETURN = {
    "2.2": "import functools\nimport itertools\n\n"
    + SOLUTION_22.replace("def fflm_loss_and_grads(", "def honest(")
    + """

def fflm_loss_and_grads(params, contexts, targets):
    loss, grads = honest(params, contexts, targets)
    # named as the check expects; what it holds is not what its __iter__ (C callables, no frame) hands out
    Pair = type("tuple", (tuple,), {"__iter__": functools.partial(itertools.chain, [loss, grads])})
    return Pair((None, None))
""",
}


def test_a_returned_subclass_is_refused_by_name_and_none_of_its_methods_runs(tmp_path):
    status, message, refused = run_harness("02", SUBCLASSED_RETURN, tmp_path)["2.2"]
    assert status == submission.FAILED, (message, refused)
    assert "returned a tuple (a subclass of tuple), expected a tuple" in message, message


def test_plainify_reads_exact_types_and_runs_no_method_of_a_subclass():
    from course_lib.checks import protocol

    ran = []

    class Spy(type):  # a metaclass whose name, equality and hash are the student's code
        __name__ = property(lambda cls: ran.append("name") or "Spy")
        __eq__ = lambda cls, other: ran.append("eq") or False  # noqa: E731
        __hash__ = lambda cls: ran.append("hash") or 0  # noqa: E731

    class MyList(list, metaclass=Spy):
        def __iter__(self):
            ran.append("iter")
            return iter([1])

    class MyInt(int):
        def __int__(self):
            ran.append("int")
            return 1

    class MyTensor(torch.Tensor):
        pass

    for value, expected in ((MyList([2]), "list"), (MyInt(3), "int"), (torch.ones(1).as_subclass(MyTensor), "tensor")):
        with pytest.raises(protocol.NotPlain, match=f"subclass of {expected}\\), expected an? {expected}$"):
            protocol._plainify([value])
    assert ran == [], ran
    assert protocol.type_name(MyList()) == "MyList" and ran == [], ran
    plain = protocol._plainify({"a": (1, 2.5, None, [True, "x"]), 2: torch.ones(2), "n": np.float32(1)})
    assert plain["a"] == (1, 2.5, None, [True, "x"]) and torch.equal(plain[2], torch.ones(2))
    assert type(plain["n"]) is np.ndarray


# 2. code made runnable while the student's code ran is the student's whatever its file name: here a function compiled
# under a stdlib file's name and exec'd by Python's own `code` module, set as the model's forward, which the check's
# describe runs after the student's function returned; it reaches lesson code (3.3 is a build exercise)
NEUTRAL_FORWARD = """import code
import functools
import math
import sys
import types

import torch
from torch import nn

FORWARD = '''
def forward(self, x, h0=None):
    sys.modules["course_lib.rnn_cells"].{}
    return self.honest(x, h0)
'''


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))
        space = {{"sys": sys}}
        {}
        self.forward = types.MethodType(space["forward"], self)

    def honest(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
"""
MADE_AT_RUN_TIME = {  # route -> (what the forward reaches, how __init__ makes the forward)
    "exec under a stdlib name": (
        "course_lib.rnn_cells._describe",
        'code.InteractiveInterpreter(space).runcode(compile(FORWARD, math.__file__, "exec"))',
    ),
    # compiled, never exec'd: its function's code handed to an answer's function by functools (a library's frame)
    "__code__ given by a library": (
        "course_lib.rnn_cells._describe",
        'made = next(c for c in compile(FORWARD, "<string>", "exec").co_consts if isinstance(c, types.CodeType))\n'
        "        space['forward'] = lambda self, x, h0=None: None\n"
        "        functools.update_wrapper(space['forward'], types.SimpleNamespace(__code__=made), ('__code__',), ())",
    ),
    # no code made at all: C callables (a partial, sorted's key) that torch's Module.__call__ runs for the
    # check's frame; lesson code reached that way is not the check's choice
    "C callables run by torch for the check": (
        "course_lib._validate.positive_int",
        "valid = sys.modules['course_lib._validate']\n"
        "        self.forward = functools.partial(sorted, key=functools.partial(valid.positive_int, 'n'))\n"
        "        return",
    ),
}


# 3. a crash of the process that runs the answer (a segfault: torch's C code called outside its rules does it) ends
# that exercise with a row that says so, and the exercises after it are still graded (in the first run below)
CRASH = "import faulthandler\n\n\ndef transpose_closers(seq, rng, n_symbols):\n    faulthandler._sigsegv()\n"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """route -> the verdict of 3.3; and "crash" -> the verdicts of a run whose 3.2 crashes before 3.1 and 3.3."""
    found = {}
    for route, (_, make) in MADE_AT_RUN_TIME.items():
        cells = {"3.3": NEUTRAL_FORWARD.format("_describe(3)", make)}
        if not found:  # one harness run serves the crash too: each run costs seconds
            cells = {"3.2": CRASH, "3.1": SOLUTION_31, **cells}
        verdicts = run_harness("03", cells, tmp_path_factory.mktemp("made"))
        found.setdefault("crash", verdicts)
        found[route] = verdicts["3.3"]
    return found


@pytest.mark.parametrize("route", sorted(MADE_AT_RUN_TIME))
def test_code_made_while_the_student_s_code_ran_is_the_student_s_whatever_its_file_name(made, route):
    status, message, refused = made[route]
    assert status == submission.FAILED, (message, refused)
    # 3.3 is a build exercise: code compiled there is refused as it is made (see CODE_FROM_TEXT below), before the
    # lesson code it would reach; the routes that make none reach it
    assert any(MADE_AT_RUN_TIME[route][0] in r or r.startswith("compile ") for r in refused), refused


def test_a_crash_of_the_answer_s_process_is_named_and_the_next_exercise_is_graded(made):
    status, message, refused = made["crash"]["3.2"]
    assert status == submission.FAILED and "crashed" in message and "SIGSEGV" in message, (message, refused)
    assert made["crash"]["3.1"][0] == submission.PASSED, made["crash"]["3.1"]


# --------------------------------------------------------------------------- session 18: the classes behind the eighth
# class's breaks (tests/outsider/issue33g/results.md). C code calling C code (map, itertools.starmap,
# functools.partial) raises no profile event, so whatever an answer reaches that way, the profile hook never sees:
# - a fused kernel: barred at the dispatcher in the grading child (it computes nothing, however it is called);
# - autograd: a graph recorded while the student's code ran moves autograd's sequence clock, which nothing sets back;
# - torch's Python reimplementations of ops (torch._decomp, _refs, _prims): refused wherever kernels are.
KERNEL_BY_C = {
    "6.1": """import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    weights = next(map(torch.ops.aten._masked_softmax.default._op, [scores], [~allowed], [-1]))
    return weights[i - 1, j - 1].item()
""",
    "6.3": "import functools\nimport itertools\n\nimport torch\n"
    + HONEST_63
    + """

def masked_attention(scores, values, lengths):
    _, weights = honest(scores, values, lengths)  # the masks, by hand; the weights by aten's fused kernel
    B, T, _ = scores.shape
    allowed = weights > 0
    kernel = getattr(torch.ops.aten, "scaled_dot_" + "product_attention").default._op
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()
    fused = next(itertools.starmap(functools.partial(kernel, scale=1.0), [(scores, eye, eye, allowed)]))
    return fused @ values, fused
""",
}


def test_a_fused_kernel_called_by_c_code_is_barred_at_the_dispatcher(tmp_path):
    verdicts = run_harness("06", KERNEL_BY_C, tmp_path)
    for exercise, op in (("6.1", "_masked_softmax"), ("6.3", "scaled_dot_product_attention")):
        status, message, refused = verdicts[exercise]
        assert status == submission.FAILED, (exercise, message, refused)
        assert any(f"torch.ops.aten.{op}" in r for r in refused), (exercise, refused)


def test_the_bar_is_held_by_the_dispatcher_alone_and_lets_other_ops_run():
    import itertools

    import torch

    def run(code: str) -> str:  # in a fresh process: a registration is for good
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout

    out = run(
        "import gc, itertools, torch\n"
        "from course_lib.instructor import harness\n"
        "said = []\n"
        "harness._bar_ops({'_masked_softmax', 'gru_cell'}, said.append)\n"
        "gc.collect()\n"
        "s = torch.randn(2, 3, 3); keep = torch.ones(3, 3, dtype=torch.bool).tril()\n"
        "for attempt in (lambda: torch._masked_softmax(s, ~keep, -1),\n"
        "                lambda: next(map(torch.ops.aten._masked_softmax.default._op, [s], [~keep], [-1])),\n"
        "                lambda: torch.inference_mode().__enter__() or torch._masked_softmax(s, ~keep, -1),\n"
        "                lambda: torch.gru_cell(torch.randn(1, 2), torch.randn(1, 3), torch.randn(9, 2), torch.randn(9, 3))):\n"
        "    try:\n"
        "        attempt(); print('RAN')\n"
        "    except PermissionError:\n"
        "        print('barred')\n"
        "print(len(said), torch.allclose(torch.softmax(s, -1).sum(-1), torch.ones(2, 3)))\n"
    )
    assert out.split() == ["barred"] * 4 + ["4", "True"], out
    # hostile class 33l: an op's kernel at any key it is registered at (an alias key: CompositeImplicitAutograd's
    # decomposition, CompositeExplicitAutograd's, Autograd's forward-mode dual), called by key from C
    out = run(
        "import re, torch\n"
        "from course_lib.instructor import harness\n"
        "keys = {op: re.findall(r'^(\\w+)(?:\\[alias\\])?: registered at', torch._C._dispatch_dump(f'aten::{op}'), re.M)\n"
        "        for op in ('gru_cell', '_safe_softmax', '_make_dual')}\n"
        "harness._bar_ops(set(keys), [].append)\n"
        "level = torch._C._enter_dual_level()\n"
        "x, h, w, u = torch.randn(1, 2), torch.randn(1, 3), torch.randn(9, 2), torch.randn(9, 3)\n"
        "args = {'gru_cell': (x, h, w, u), '_safe_softmax': (torch.randn(2, 3), -1), '_make_dual': (x, x, level)}\n"
        "for op, found in keys.items():\n"
        "    for key in [k for k in found if hasattr(torch._C.DispatchKey, k)]:  # what Python can name\n"
        "        call = getattr(torch.ops.aten, op).default._op_dk\n"
        "        try:\n"
        "            next(map(call, [getattr(torch._C.DispatchKey, key)], *[[a] for a in args[op]]))\n"
        "            print('RAN', op, key)\n"
        "        except PermissionError:\n"
        "            print('BARRED', op, key)\n"
        "        except Exception as exc:\n"
        "            print('RAISED', op, key, type(exc).__name__)\n"
    )
    # hostile class 33m: an op of that name in another namespace (quantized's dynamic GRU cell), called from C
    out2 = run(
        "import torch\n"
        "from course_lib.instructor import harness\n"
        "q = torch.ops.quantized\n"
        "x, h, w, u, b = torch.randn(1, 2), torch.randn(1, 3), torch.randn(9, 2), torch.randn(9, 3), torch.randn(9)\n"
        "args = (x, h, q.linear_prepack_fp16(w, b), q.linear_prepack_fp16(u, b), b, b)\n"
        "print('RAN' if next(map(q.quantized_gru_cell_dynamic, *[[a] for a in args])).shape == h.shape else '?')\n"
        "harness._bar_ops({'quantized_gru_cell_dynamic'}, [].append)\n"
        "try:\n"
        "    next(map(q.quantized_gru_cell_dynamic, *[[a] for a in args])); print('RAN')\n"
        "except PermissionError:\n"
        "    print('BARRED')\n"
    )
    assert out2.split() == ["RAN", "BARRED"], out2
    lines = out.splitlines()
    barred = {line for line in lines if line.startswith("BARRED")}
    assert (
        len(barred) == len(lines)
        and {"BARRED gru_cell CompositeImplicitAutograd", "BARRED _make_dual Autograd"} <= barred
    ), out
    # the oracle: the same ops in this process (never barred) still compute
    s = torch.randn(2, 3, 3)
    none = torch.zeros(2, 3, 3, dtype=torch.bool)  # nothing masked: a plain softmax
    assert torch.allclose(
        next(itertools.starmap(torch.ops.aten._masked_softmax.default._op, [(s, none, -1)])), s.softmax(-1)
    )


AUTOGRAD_BY_C = {
    "2.2": """import itertools

import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    # every switch by C calls (map, starmap: no profile event): dispatch modes popped and pushed back, recording
    # turned on and off, autograd's engine run
    C = torch._C
    modes = [next(map(C._pop_torch_dispatch_stack, [None])) for _ in range(next(itertools.starmap(C._len_torch_dispatch_stack, [()])))]
    was = next(itertools.starmap(C.is_grad_enabled, [()]))
    next(map(C._set_grad_enabled, [True]))
    try:
        names = ("E", "W", "b", "U", "c")
        leaves = [params[k].detach().clone() for k in names]
        list(map(torch.Tensor.requires_grad_, leaves))
        E, W, b, U, c = leaves
        h = torch.tanh(E[contexts].reshape(contexts.shape[0], -1) @ W.T + b)
        loss = F.cross_entropy(h @ U.T + c, targets)
        engine = torch.autograd.variable.Variable._execution_engine
        call = ((loss,), (torch.ones_like(loss),), False, False, tuple(leaves), False, False)
        grads = next(itertools.starmap(engine.run_backward, [call]))
        return float(loss.detach()), {k: g.detach() for k, g in zip(names, grads)}
    finally:
        next(map(C._set_grad_enabled, [was]))
        for mode in reversed(modes):
            next(map(C._push_on_torch_dispatch_stack, [mode]))
""",
}


def test_autograd_reached_by_c_code_with_every_switch_put_back_is_refused(tmp_path):
    status, message, refused = run_harness("02", AUTOGRAD_BY_C, tmp_path)["2.2"]
    assert status == submission.FAILED, (message, refused)
    assert any("a graph was recorded" in r for r in refused), refused


def test_the_graph_clock_counts_every_node_and_nothing_sets_it_back():
    import torch

    from course_lib.checks import borrowed

    before = borrowed._graph_clock(torch)
    x = torch.ones(3, requires_grad=True)
    y = ((x * 2).exp() + 1).sum()  # four nodes: mul, exp, add, sum (the oracle: autograd's own graph)
    nodes, todo = set(), [y.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and type(node).__name__ != "AccumulateGrad" and node not in nodes:
            nodes.add(node)
            todo += [n for n, _ in node.next_functions]
    assert len(nodes) == 4
    assert borrowed._graph_clock(torch) == before + len(nodes) + 1  # each read makes one node too
    with torch.no_grad():
        (x * 2).sum()  # recording off: no node
    after = borrowed._graph_clock(torch)
    assert borrowed._graph_clock(torch) == after + 1


REIMPLEMENTED = {
    "4.2": """import torch
from torch._decomp import decompositions


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return decompositions.gru_cell_data(x, h, W_xh, b_xh, W_hh, b_hh)
""",
}


def test_torchs_python_reimplementation_of_a_forbidden_op_is_refused(tmp_path):
    status, message, refused = run_harness("04", REIMPLEMENTED, tmp_path)["4.2"]
    assert status == submission.FAILED, (message, refused)
    assert any("reimplemented" in r for r in refused), refused


# torch.nn.attention builds attention's masks and biases (CausalBias materialises a causal mask): refused in the
# grading child as a folder wherever attention's kernel is, as in the checks' own observer (tests/test_checks.py,
# which uses causal_lower_right itself: in the grading child its module cannot even be imported, it imports
# torch._dynamo, which takes frames). Here a function of the folder that torch has already imported.
MASK_BY_TORCH = {
    "6.3": "import torch\n\n"
    + HONEST_63.replace("def honest(", "def masked_attention(").replace(
        "    B, T, _ = scores.shape\n",
        "    B, T, _ = scores.shape\n    torch.nn.attention._cur_sdpa_kernel_backends()\n",
    ),
}


def test_torchs_attention_python_is_refused_in_the_grading_child(tmp_path):
    assert "_cur_sdpa_kernel_backends" in MASK_BY_TORCH["6.3"]
    status, message, refused = run_harness("06", MASK_BY_TORCH, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("attention or its masks written in torch's Python" in r for r in refused), refused


# attention written out in torch's Python elsewhere (flex attention's math version, loaded by `import torch`; ONNX's
# Attention op, nested tensors'): the same folder rule, in the grading child too (tests/test_checks.py has the
# kernel's observer)
HEAD_BY_FLEX_MATH = {
    "7.3": """import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        from torch._higher_order_ops.flex_attention import math_attention

        def keep(score, b, h, qi, ki):
            return torch.where(qi >= ki, score, -float("inf"))

        blocks = (T, T) + (None,) * 11 + (128, 128, lambda b, h, qi, ki: qi >= 0)
        return math_attention(q[:, None], k[:, None], v[:, None], keep, blocks, C**-0.5, {})[0][:, 0]
""",
}


def test_attention_written_in_torchs_python_elsewhere_is_refused_in_the_grading_child(tmp_path):
    status, message, refused = run_harness("07", HEAD_BY_FLEX_MATH, tmp_path)["7.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("attention or its masks written in torch's Python" in r for r in refused), refused


# gradient kernels called by C code with the dispatch mode popped (its watch on "*backward*" ops off, no graph
# recorded, so the clock does not move): barred at the dispatcher too, where a gradient is the exercise
GRADIENT_KERNELS_BY_C = {
    "2.2": "import itertools\n\n"
    + SOLUTION_22.replace("    dz = log_probs.exp()  # y_hat\n", "    dz = kernel_dz(log_probs, targets, B)\n")
    + """

def kernel_dz(log_probs, targets, B):
    C = torch._C
    modes = [next(map(C._pop_torch_dispatch_stack, [None])) for _ in range(next(itertools.starmap(C._len_torch_dispatch_stack, [()])))]
    try:
        grad = torch.zeros_like(log_probs)
        grad[torch.arange(B), targets] = -1.0
        kernel = torch.ops.aten._log_softmax_backward_data.default._op
        dz = next(map(kernel, [grad], [log_probs], [1], [log_probs.dtype]))
        dz[torch.arange(B), targets] += 1  # the solution's next line takes 1 off again
        return dz
    finally:
        for mode in reversed(modes):
            next(map(C._push_on_torch_dispatch_stack, [mode]))
""",
}


def test_gradient_kernels_called_by_c_code_are_barred_where_a_gradient_is_the_exercise(tmp_path):
    status, message, refused = run_harness("02", GRADIENT_KERNELS_BY_C, tmp_path)["2.2"]
    assert status == submission.FAILED, (message, refused)
    assert any("_log_softmax_backward_data" in r for r in refused), refused


# an answer's way of calling f(*args) from copy.py's frame, not its own line: copy.copy calls what an object's
# __reduce_ex__ names (the attacks below need `import copy`)
BY_COPY = """
class Via:
    def __init__(self, f, *args):
        self.f, self.args = f, args

    def __reduce_ex__(self, protocol):
        return (self.f, self.args)


def call(f, *args):
    return copy.copy(Via(f, *args))  # copy.py calls f(*args)
"""


# a run-time copy of a reference (the ninth class, tests/outsider/issue33h): its code read through copy.copy (the
# audited read in copy.py's frame, not the answer's line), one byte added to its bytecode (no fingerprint matches),
# made a function again. Reading course_lib's code while the student's code runs is refused and stopped, whoever's
# frame reads it.
COPIED_AT_RUN_TIME = {
    "6.1": """import copy
import functools
import sys
import types
"""
    + BY_COPY
    + """

def alpha(scores, i, j):
    reference = vars(sys.modules["course_lib.checks.lesson06"])["_reference_row"]
    code = call(getattr, reference, "__code__")
    code = call(functools.partial(code.replace, co_filename="<scratch>", co_code=code.co_code + bytes([9, 0])))
    row = call(types.FunctionType, code, reference.__globals__)(scores[i - 1].tolist(), i)
    return float(row[j - 1])
""",
}


def test_a_copy_of_a_reference_made_at_run_time_is_refused_at_the_read_of_its_code(tmp_path):
    status, message, refused = run_harness("06", COPIED_AT_RUN_TIME, tmp_path)["6.1"]
    assert status == submission.FAILED, (message, refused)
    assert any("__code__" in r for r in refused), (message, refused)


# --------------------------------------------------------------------------- code made from text at run time
# In a build exercise's call, code made from text or parts is refused and stopped, whatever frame makes it (each
# route below goes through copy.py's frame, so no line of the answer's makes it: the old grader let all of them
# run as the student's own code). The answer tries each route once, catching the refusal, and answers with the
# first route that worked (or honestly): on the old grader every route worked and 3.1 passed.
MADE_FROM_TEXT_31 = """import ast
import base64
import copy
import importlib.util
import marshal
import os
import sys
import tempfile
import types
import typing

import torch

ENCODED = {encoded!r}
MARSHALLED = {marshalled!r}
EXPRESSION = (
    "lambda seq, n: (lambda st: all((st.append(s) or True) if s < n // 2 else (bool(st) and st.pop() == n - 1 - s)"
    " for s in seq) and not st)([])"
)
_DONE = {{}}

{by_copy}

def _honest(seq, n_symbols=10):
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack


def _run(text, filename):
    space = {{}}
    call(exec, call(compile, text, filename, "exec"), space)
    return space["is_balanced"]


def _from_the_reference(): # the course's own text, read by C code (no audit event for the open), edited a little
    path = sys.modules["course_lib.parentheses_symbols"].__file__
    text = torch.from_file(path, size=os.path.getsize(path), dtype=torch.uint8).numpy().tobytes().decode()
    text = text[text.index("def is_balanced") : text.index("def stack_depths")]
    text = text.replace("n_symbols = _check_n_symbols(n_symbols)", "pass").replace("_check_seq(seq, n_symbols)", "seq")
    return _run("from __future__ import annotations\\n" + text, "<from_file>")


def _encoded():  # text carried in the cell, decoded at run time
    return _run(base64.b64decode(ENCODED).decode(), "<encoded>")


def _replaced():  # a code object built from parts
    code = call(getattr, _honest, "__code__")
    made = call(types.MethodType(types.CodeType.replace, code))  # code.replace(), by copy.py's frame
    return call(types.FunctionType, made, globals())


def _unmarshalled():  # bytes made elsewhere
    space = {{}}
    call(exec, call(marshal.loads, MARSHALLED), space)
    return space["is_balanced"]


def _imported():  # a module written at run time and imported
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "scratch_balance.py")
    with open(path, "w") as f:
        f.write(base64.b64decode(ENCODED).decode())
    spec = importlib.util.spec_from_file_location("scratch_balance", path)
    module = importlib.util.module_from_spec(spec)
    call(spec.loader.exec_module, module)
    return module.is_balanced


def _typed():  # typing's ForwardRef compiles text; an expression that is no type
    made = typing.ForwardRef(EXPRESSION).__forward_code__
    return call(eval, made, {{}})


def _ast_flag():  # ast.parse made to ask for code: its module's flag changed
    saved = ast.PyCF_ONLY_AST
    try:
        ast.PyCF_ONLY_AST = 0
        return _run_code(ast.parse(base64.b64decode(ENCODED).decode(), "<ast_flag>"))
    finally:
        ast.PyCF_ONLY_AST = saved


def _ast_globals():  # ast.parse's own code run on other globals, asking for code
    parse = types.FunctionType(ast.parse.__code__, dict(vars(ast), PyCF_ONLY_AST=0))
    return _run_code(parse(base64.b64decode(ENCODED).decode(), "<ast_globals>"))


def _run_code(made):
    space = {{}}
    call(exec, made, space)
    return space["is_balanced"]


def is_balanced(seq, n_symbols=10):
    if not _DONE:
        routes = {{"from_file": _from_the_reference, "encoded": _encoded, "replace": _replaced,
                  "marshal": _unmarshalled, "import": _imported, "forward_ref": _typed,
                  "ast_flag": _ast_flag, "ast_globals": _ast_globals}}
        for route, make in routes.items():
            try:
                _DONE[route] = make()
            except Exception as exc:
                _DONE[route] = None
    made = next((f for f in _DONE.values() if f is not None), _honest)
    return made(seq, n_symbols)
"""
# refusal -> the route it comes from (the refusal names the event and, for a compile, the file name given)
CODE_FROM_TEXT = {
    "compile <from_file>": "from_file",
    "compile <encoded>": "encoded",
    "code.__new__": "replace",
    "marshal.loads": "marshal",
    "compile /": "import",  # the module's path under the temporary folder
    "compile <string>": "forward_ref",  # typing's own frame compiles it, under typing's file name for it
    "compile <ast_flag>": "ast_flag",  # ast.parse's own frame, asked for code, not a tree
    "object.__getattr__ __code__": "ast_globals",  # refused at the read of ast.parse's code
}
# what stdlib modules compile for themselves, and a module imported for the first time, used honestly in 3.2
KEEPERS_32 = """import ast
import collections
import dataclasses
import enum
import typing


def transpose_closers(seq, rng, n_symbols=10):
    import graphlib  # an installed module not imported before: compiled from its file's text

    P = collections.namedtuple("P", "a b")

    @dataclasses.dataclass
    class D:
        a: int = 1

    class N(typing.NamedTuple):
        a: "int"

    class E(enum.Enum):
        A = 1

    @dataclasses.dataclass(init=False)
    class Q:  # no docstring: dataclasses writes one from the signature inspect parses (ast.parse) from object's text
        a: int = 1

    tree = ast.parse("a + 1", mode="eval")  # a tree, which only another compile makes code
    assert P(1, 2).a == D().a == N(1).a == E.A.value == Q().a == 1 and graphlib.TopologicalSorter
    assert type(tree) is ast.Expression
    return _honest_32(seq, rng, n_symbols)
"""


def _solution(notebook: str, grade_id: str) -> str:
    return next(
        c.source
        for c in nbformat.read(ROOT / "solutions" / notebook, as_version=4).cells
        if (c.metadata.get("nbgrader") or {}).get("grade_id") == grade_id
    )


@pytest.fixture(scope="module")
def from_text(tmp_path_factory):
    import base64
    import marshal

    source = MADE_FROM_TEXT_31.format(
        by_copy=BY_COPY,
        encoded=base64.b64encode(SOLUTION_31.encode()).decode(),
        marshalled=marshal.dumps(compile(SOLUTION_31, "<elsewhere>", "exec")),
    )
    honest_32 = _solution("03_parentheses.ipynb", "ex-3-2")
    cells = {"3.1": source, "3.2": honest_32.replace("def transpose_closers", "def _honest_32") + "\n" + KEEPERS_32}
    return run_harness("03", cells, tmp_path_factory.mktemp("from_text"))


@pytest.mark.parametrize("refusal", sorted(CODE_FROM_TEXT))
def test_code_made_from_text_or_parts_in_a_build_exercise_is_refused_whatever_frame_makes_it(from_text, refusal):
    status, message, refused = from_text["3.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith(refusal) for r in refused), (CODE_FROM_TEXT[refusal], refused)


def test_the_stdlib_modules_that_compile_for_themselves_and_new_imports_still_work(from_text):
    status, message, refused = from_text["3.2"]
    assert status == submission.PASSED, (message, refused)


# dataclasses splices its fields' names into the text it compiles, unchecked: a field named by code makes that code
# under dataclasses' own frame, which may compile for itself (COMPILE_KEEPERS). Here __eq__'s text stores a function
# made from text on the instance, and 3.1 answers with it: the old grader passed it.
DATACLASS_NAMES_31 = """import dataclasses

EXPRESSION = (
    "lambda seq, n: (lambda st: all((st.append(s) or True) if s < n // 2 else (bool(st) and st.pop() == n - 1 - s)"
    " for s in seq) and not st)([])"
)


def _made():
    name = "a,self.__dict__.__setitem__('f', " + EXPRESSION + ")"
    space = {"__annotations__": {name: int}, "a": 0, "__doc__": "a class"}  # a docstring: no signature parsed
    cls = dataclasses.dataclass(init=False, repr=False)(type("C", (), space))
    one, two = cls(), cls()
    assert one == two  # runs __eq__, whose text holds the field's name
    return one.f


def is_balanced(seq, n_symbols=10):
    return _made()(seq, n_symbols)
"""


def test_a_dataclass_field_named_by_code_is_refused_in_a_build_exercise(tmp_path):
    status, message, refused = run_harness("03", {"3.1": DATACLASS_NAMES_31}, tmp_path)["3.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("compile <string>") for r in refused), refused


# --------------------------------------------------------------------------- a forbidden class's functional forms
# 2.3 forbids torch.optim.SGD: its module's step function (_single_tensor_sgd, what SGD.step calls) and the class's own
# step run on an object its __init__ never made (object.__new__: the stand-in __init__ never runs) do SGD's work
# without the class; the old grader refused neither (the class is named nowhere in the text, so the look at the
# source finds none)
FUNCTIONAL_SGD = """
import collections
import sys

import torch
from torch.optim.sgd import _single_tensor_sgd


def _step_by_the_class(tensors, grads, lr):  # the class's own step, on an object its __init__ never made
    cls = getattr(sys.modules["torch.optim.sgd"], "S" + "GD")
    opt = object.__new__(cls)
    group = dict(params=tensors, lr=lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
                 foreach=False, differentiable=False, fused=None)
    opt.param_groups, opt.state, opt.defaults = [group], collections.defaultdict(dict), group
    for p, g in zip(tensors, grads):
        p.grad = g
    cls.step.__wrapped__(opt)  # the step itself, without optimizer.py's wrapper
    return tensors


def train_sgd(params, batches, lr, loss_and_grads):
    params = {k: v.clone() for k, v in params.items()}
    keys = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        stepped = [params[k].clone() for k in keys]
        _single_tensor_sgd(stepped, [grads[k] for k in keys], [None] * len(keys), None, None, weight_decay=0.0,
                           momentum=0.0, lr=lr, dampening=0.0, nesterov=False, maximize=False, has_sparse_grad=False)
        try:
            stepped = _step_by_the_class([params[k].clone() for k in keys], [grads[k] for k in keys], lr)
        except Exception:
            pass
        params = dict(zip(keys, stepped))
        losses.append(float(loss))
    return losses, params
"""


def test_a_forbidden_class_s_module_functions_and_own_methods_are_refused_without_the_class(tmp_path):
    status, message, refused = run_harness("02", {"2.3": FUNCTIONAL_SGD}, tmp_path)["2.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("_single_tensor_sgd" in r for r in refused), refused  # a function of torch/optim/sgd.py
    assert any("SGD.step" in r for r in refused), refused  # a method of the class itself


def test_another_optimizer_taking_sgds_step_is_refused_in_the_grading_child(tmp_path):
    from test_checks import BY_ASGD  # tests/ is on the path (no package): one answer text for both

    status, message, refused = run_harness("02", {"2.3": BY_ASGD}, tmp_path)["2.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("ASGD" in r for r in refused), refused


# --------------------------------------------------------------------------- a callback run by the check's describe
# 5.2 (the eleventh hostile class): the answer returns zeros linked to ``states`` and registers autograd hooks made
# of C callables only; the check's describe computes a gradient (torch.autograd.grad) after the function returned,
# so the hooks run from the check's frame: they call the check's own reference decoder and copy its logits and
# weights into the returned tensors, and hand back the reference's gradient. It passed while 5.2's run path named
# the reference (build_model's flag chose the reference model: the grader lets the check's frames call what its
# run path names).
HOOKED_REFERENCE_52 = """import collections
import functools
import itertools
import operator
import sys

import torch


def decode(model, states, lengths, tgt_in):
    mod = sys.modules["course_lib.che" + "cks.lesson05"]
    ref, probe = getattr(mod, "reference" + "_decode"), getattr(mod, "_pro" + "be")
    B, T_in, _ = states.shape
    s2 = states * 1.0
    logits = torch.zeros(B, tgt_in.shape[1], model.out.out_features) + s2.sum() * 0.0
    weights = torch.zeros(B, tgt_in.shape[1], T_in)
    refbox, pbox, gbox = [], [], []
    first = operator.itemgetter(0)
    steps = itertools.chain(
        map(torch._C._set_grad_enabled, [True]),
        map(refbox.append, map(ref, [model], [states], [lengths], [tgt_in])),
        map(pbox.append, map(probe, map(first, refbox))),
        map(torch._C._set_grad_enabled, [False]),
        map(gbox.append, map(first, map(torch.autograd.grad, pbox, [states]))),
        map(torch.Tensor.copy_, [logits, weights], itertools.chain.from_iterable(refbox)),
    )
    logits.register_hook(functools.partial(next, map(collections.deque(maxlen=0).extend, [steps])))
    s2.register_hook(functools.partial(next, iter(gbox)))
    return logits, weights
"""


def test_a_hook_the_checks_gradient_runs_cannot_call_the_exercises_own_reference(tmp_path):
    status, message, refused = run_harness("05", {"5.2": HOOKED_REFERENCE_52}, tmp_path)["5.2"]
    assert status == submission.FAILED, (message, refused)
    assert any("reference_decode" in r for r in refused), refused


def test_no_run_path_reaches_the_reference_of_its_own_exercise():
    """What a check's run path names (materialise, observe, describe, transitively) the check's frames may call
    during the student's call; a reference of the lesson's checks there is one a callback of the student's can
    reach. Oracle: the checks' references by name (``reference_*``, ``_reference_*``, ``_Reference*``); the
    two a run path holds are handed in to the student, for another exercise's answer."""
    handed_in = {  # the exercise: the references its case hands in (not its own answer)
        "5.3": {"_ReferenceSeq2Seq.forward", "reference_decode", "reference_decode.<locals>.<lambda>"},  # its model
        "6.4": {"_reference_attention_fn", "reference_masked_attention"},  # 6.3's answer, for the leak experiment
    }
    for lesson in ("02", "03", "04", "05", "06", "07"):
        for exercise_id, exercise in checks.exercises(lesson).items():
            reached = {
                name
                for code in harness._run_path(exercise)
                if f"checks{__import__('os').sep}lesson" in code.co_filename
                and "eference" in (name := borrowed.qualname(code))
            }
            assert reached == handed_in.get(exercise_id, set()), (exercise_id, reached)


# --------------------------------------------------------------------------- work done after the function returned
# The answer returns zeros and keeps an object whose finalizer, all C (deque over starmap over map), computes the
# answer with torch's own Python (its decomposition of the masked softmax the attention kernels use) and copies it
# into the returned tensors. It runs when the answer's frame is cleared: from the check's frame, after the student's
# function returned, with no frame of the student's on the stack (the tenth hostile class's finalizer breaks).
AFTER_RETURN_63 = """import collections
import itertools
import weakref

import torch
import torch._decomp.decompositions as decompositions


class Keeper:
    pass


def masked_attention(scores, values, lengths):
    T = scores.shape[1]
    position = torch.arange(T)
    causal = position[None, :] <= position[:, None]
    allowed = causal[None] & (position[None, :] < lengths[:, None])[:, None, :]
    masked = scores.masked_fill(~allowed, float("-inf"))
    weights, output = torch.zeros_like(scores), values.new_zeros(values.shape[0], T, values.shape[-1])
    keeper = Keeper()
    softmax = decompositions.safe_softmax
    for out, work in ((weights, map(softmax, [masked], [-1])), (output, map(torch.bmm, map(softmax, [masked], [-1]), [values]))):
        weakref.finalize(keeper, collections.deque, itertools.starmap(torch.Tensor.copy_, zip([out], work)), 0)
    return output, weights
"""


def test_torchs_refused_python_run_by_a_finalizer_after_the_function_returned_is_refused(tmp_path):
    status, message, refused = run_harness("06", {"6.3": AFTER_RETURN_63}, tmp_path)["6.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("safe_softmax" in r for r in refused), refused


# the kernel behind SGD(fused=True), called by the answer without the class (the tenth hostile class's zq021z)
FUSED_SGD = """
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    params = {k: v.clone() for k, v in params.items()}
    keys = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        tensors = [params[k] for k in keys]
        torch._fused_sgd_(tensors, [grads[k] for k in keys], [], weight_decay=0.0, momentum=0.0, lr=lr, dampening=0.0,
                          nesterov=False, maximize=False, is_first_step=True)
        losses.append(float(loss))
    return losses, params
"""


def test_the_fused_kernel_of_a_forbidden_optimizer_is_refused(tmp_path):
    status, message, refused = run_harness("02", {"2.3": FUSED_SGD}, tmp_path)["2.3"]
    assert status == submission.FAILED, (message, refused)
    assert any("_fused_sgd" in r for r in refused), refused


# nltk.util's everygrams passed 1.1 with only ngrams refused by name: nltk is refused whole, by place, in the grading
# child too
EVERYGRAMS_11 = {
    "1.1": "from collections import Counter\n\nfrom nltk.util import everygrams\n\n\n"
    "def count_ngrams(sentence, n):\n"
    "    padded = ['<s>'] * (n - 1) + list(sentence) + ['</s>']\n"
    "    return Counter(everygrams(padded, min_len=n, max_len=n))\n",
}


def test_nltks_other_names_for_a_forbidden_function_are_refused_in_the_grading_child(tmp_path):
    status, message, refused = run_harness("01", EVERYGRAMS_11, tmp_path)["1.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("everygrams (nltk, which build exercises forbid") for r in refused), refused


def test_a_subclass_of_nltks_language_model_is_refused_in_the_grading_child(tmp_path):
    from test_checks import ADD_K_ON_NLTKS_PERPLEXITY

    status, message, refused = run_harness("01", {"1.2": ADD_K_ON_NLTKS_PERPLEXITY}, tmp_path)["1.2"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("LanguageModel.") for r in refused), refused


# native code starts a process without an audit event (hostile class 33o: cffi's posix_spawn ran a fresh, unobserved
# Python that called the check's own reference): the answers' child refuses every new process in the kernel (seccomp).
# The answer below is right only where its process starts succeed, as a borrowed answer's would be.
NATIVE_PROCESS = {
    "1.2": """
import cffi


def _started(how):
    _ffi = cffi.FFI()
    _ffi.cdef(
        "int posix_spawn(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],"
        " char *const envp[]); int fork(void); int waitpid(int pid, int *status, int options); void _exit(int);"
    )
    libc = _ffi.dlopen(None)
    if how == "fork":
        pid = libc.fork()
        if pid == 0:
            libc._exit(0)
        return pid > 0
    argv = [_ffi.new("char[]", b"/bin/true")]
    pid = _ffi.new("int *")
    return libc.posix_spawn(pid, argv[0], _ffi.NULL, _ffi.NULL, _ffi.new("char *[]", argv + [_ffi.NULL]), _ffi.NULL) == 0


def add_k_perplexity(train, test, n, k):
    if not (_started("spawn") and _started("fork")):
        return -1.0
    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    counts, contexts = {}, {}
    for sentence in train:
        padded = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]
        for i in range(n - 1, len(padded)):
            gram = tuple(padded[i - n + 1 : i + 1])
            counts[gram] = counts.get(gram, 0) + 1
            contexts[gram[:-1]] = contexts.get(gram[:-1], 0) + 1
    import math

    log_prob, N = 0.0, 0
    for sentence in test:
        padded = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]
        for i in range(n - 1, len(padded)):
            gram = tuple(padded[i - n + 1 : i + 1])
            log_prob += math.log2((counts.get(gram, 0) + k) / (contexts.get(gram[:-1], 0) + k * len(vocab)))
            N += 1
    return 2 ** (-log_prob / N)
""",
}


def test_a_process_started_by_native_code_is_refused_by_the_kernel(tmp_path):
    pytest.importorskip("cffi")
    status, message, refused = run_harness("01", NATIVE_PROCESS, tmp_path)["1.2"]
    # cffi is no package a build exercise allows, so it is refused before it reaches libc (the filter below it,
    # which the next test runs, is the second wall)
    assert status == submission.FAILED and any("cffi, which build exercises forbid" in r for r in refused), refused


def test_the_process_filter_lets_threads_and_torch_run_and_refuses_every_process_and_act_on_another():
    import resource

    pid = os.fork()
    if pid == 0:  # a child of this test process, as the harness's children are of the harness
        code = 1
        try:
            assert harness._refuse_processes_below_python() == ""
            done = []
            thread = threading.Thread(target=done.append, args=(1,))
            thread.start()
            thread.join()
            assert done == [1] and torch.ones(3).sum().item() == 3.0
            os.kill(os.getpid(), 0)  # this process: allowed
            resource.prlimit(0, resource.RLIMIT_NOFILE)
            for act in (
                lambda: os.kill(os.getppid(), 0),
                lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE),
            ):
                try:
                    act()
                    os._exit(4)  # the parent reached
                except PermissionError:
                    pass
            for start in (os.fork, lambda: os.posix_spawn("/bin/true", ["/bin/true"], {})):
                try:
                    start()
                    os._exit(3)  # a process started (in the child of a fork: it ends here too)
                except PermissionError:
                    pass
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# nltk refused whole in every build exercise, numpy.ma where a masked softmax is the exercise: in the grading child too
def test_nltk_and_numpys_masked_arrays_are_refused_by_place_in_the_grading_child(tmp_path):
    from test_checks import NLTK_ELSEWHERE_11

    status, message, refused = run_harness("01", {"1.1": NLTK_ELSEWHERE_11}, tmp_path)["1.1"]
    assert status == submission.FAILED and any("nltk, which build exercises forbid" in r for r in refused), refused
    by_numpy_ma = """import numpy as np


def alpha(scores, i, j):
    n = scores.shape[0]
    e = np.ma.masked_array(scores.detach().double().numpy(), mask=np.triu(np.ones((n, n), bool), 1))
    w = np.ma.exp(e - e.max(axis=-1, keepdims=True))
    return float((w / w.sum(axis=-1, keepdims=True)).filled(0.0)[i - 1, j - 1])
"""
    status, message, refused = run_harness("06", {"6.1": by_numpy_ma}, tmp_path)["6.1"]
    assert status == submission.FAILED and any("numpy's masked arrays" in r for r in refused), refused


def test_every_stub_of_a_lesson_is_not_implemented_yet_in_the_grading_child(tmp_path):
    """An untouched notebook's answers say "not implemented yet", never a refusal: a stub that only raises must match
    no refused code (a fingerprint of nltk's clean_html, which only raises too, once called lesson 01's stubs a
    copy of it)."""
    release = nbformat.read(ROOT / "exercises" / "01_ngrams.ipynb", as_version=4)
    stubs = {}
    for cell in release.cells:
        gid = (cell.metadata.get("nbgrader") or {}).get("grade_id", "")
        if cell.cell_type == "code" and (cell.metadata.get("nbgrader") or {}).get("solution") and gid.startswith("ex-"):
            exercise = ".".join(gid.split("-")[1:3])
            stubs[exercise] = (stubs.get(exercise, "") + "\n\n" + cell.source).strip()
    verdicts = run_harness("01", stubs, tmp_path)
    assert verdicts and {status for status, _, _ in verdicts.values()} == {submission.NOT_IMPLEMENTED}, verdicts


@pytest.mark.parametrize("route", ["6.3 nested", "6.1 pandas"])
def test_masked_containers_are_refused_in_the_grading_child(route, tmp_path):
    from test_checks import MASKED_CONTAINERS

    if "pandas" in route:
        pytest.importorskip("pandas")
    exercise = route.split()[0]
    source = ("import torch\n\n" if "nested" in route else "") + MASKED_CONTAINERS[route][1].lstrip("\n")
    status, message, refused = run_harness("06", {exercise: source}, tmp_path)[exercise]
    assert status == submission.FAILED and refused, (message, refused)


def test_names_unpacking_a_literal_tuple_load_and_nothing_else_new_does():
    """`BOS, EOS = "<s>", "</s>"` runs nothing but the binding (an honest answer of hostile class 33p failed on it);
    unpacking anything that is not a literal tuple or list of as many items still does not load."""
    assert harness.refusal('BOS, EOS = "<s>", "</s>"\n') == ""
    assert harness.refusal("[A, B] = [1, (2, 3)]\n") == ""
    for source in ('a, b = "xy"\n', "a, b = 1, 2, 3\n", "a, *b = 1, 2\n", "a, b = c\n", "staticmethod, x = 1, 2\n"):
        assert harness.refusal(source), source


def test_importing_pandas_at_the_top_of_an_answer_cell_is_no_refusal(tmp_path):
    """pandas' masked arrays are refused by place where a masked softmax is the exercise, but importing pandas runs
    their class bodies: that defines, it computes nothing (an honest 6.3 importing pandas failed, hostile class 33p)."""
    pytest.importorskip("pandas")
    source = "import pandas\nimport torch\n\n" + HONEST_63.replace("def honest(", "def masked_attention(")
    status, message, refused = run_harness("06", {"6.3": source}, tmp_path)["6.3"]
    assert status == submission.PASSED and not refused, (message, refused)


# every installed package but the standard library, torch, numpy and what prints, draws or shows progress is refused
# in a build exercise by place, whoever calls it, in the grading child too (tests/test_checks.py: the same routes)
@pytest.mark.parametrize(
    "route",
    [
        ("regex", "import regex\n", "regex.escape('(')"),
        ("regex", "import regex._regex\n", "regex._regex.get_code_size()"),  # a C function: no Python frame runs
        ("sympy", "import sympy\n", "sympy.Integer(len(seq))"),
        (
            "networkx",
            "import networkx\nimport torch.utils._pytree\n",
            "torch.utils._pytree.tree_map(networkx.path_graph, [2])",
        ),
        ("sympy", "", "__import__('sympy').Integer(1)"),  # imported during the call
    ],
    ids=["regex", "regex's C", "sympy", "networkx through torch", "sympy imported in the call"],
)
def test_a_package_outside_the_standard_library_torch_and_numpy_is_refused_in_the_grading_child(route, tmp_path):
    from test_checks import BALANCED_BY_HAND

    package, imports, call = route
    source = imports + BALANCED_BY_HAND.replace("{extra}", call)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(f"{package}, which build exercises forbid" in r for r in refused), refused


def test_printing_drawing_and_progress_are_allowed_in_the_grading_child(tmp_path):
    """A progress bar's monitor is a thread, which the grading child refuses: the grader starts none (tqdm's
    monitor_interval set to 0 once the cells have loaded)."""
    from test_checks import BALANCED_BY_HAND

    call = "print(matplotlib.colors.to_hex((1.0, 0.0, 0.0)), list(tqdm.tqdm(range(2))))"
    source = "import matplotlib.colors\nimport tqdm\n" + BALANCED_BY_HAND.replace("{extra}", call)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.PASSED and not refused, (message, refused)


LINKED_PACKAGE = """
import importlib
import os
import sys
import tempfile

import toolz


def is_balanced(seq, n_symbols=10):
    folder = tempfile.mkdtemp()
    os.symlink(os.path.dirname(toolz.__file__), os.path.join(folder, "relinked"))
    sys.path.insert(0, folder)
    importlib.import_module("relinked.itertoolz").frequencies(seq)  # toolz's code, under the link's file name
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
"""


def test_a_refused_package_reached_through_a_link_is_still_refused(tmp_path):
    """A link in /tmp to a package's folder, imported under another name: its code carries the link's file name,
    and is judged by where it really is."""
    status, message, refused = run_harness("03", {"3.1": LINKED_PACKAGE}, tmp_path)["3.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("frequencies (toolz, which build exercises forbid") for r in refused), refused


def test_a_refused_packages_garbage_collected_during_the_call_is_no_call_of_the_students(tmp_path):
    """Importing nltk leaves garbage whose finalizers (regex's) run wherever the collector runs: in the student's
    call they are no call of the student's (the objects of the answers' import are frozen before the call)."""
    from test_checks import BALANCED_BY_HAND

    source = "import gc\n\nimport nltk\n" + BALANCED_BY_HAND.replace("{extra}", "gc.collect()")
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.PASSED and not refused, (message, refused)


def test_importing_a_package_inside_the_function_is_no_call_of_it(tmp_path):
    """A package imported in the call runs its own code and code it generates while it is imported (attrs' methods
    and mpmath's for sympy): an import, no call of the package."""
    from test_checks import BALANCED_BY_HAND

    source = BALANCED_BY_HAND.replace("{extra}", "import sympy, attr  # noqa: F401, E401")
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.PASSED and not refused, (message, refused)


def test_the_out_of_memory_score_of_another_process_cannot_be_raised(tmp_path):
    """Raising the harness's oom_score_adj through /proc, then filling memory, made the kernel kill the harness
    rather than the child (hostile class 33o): opening it is refused."""
    from test_checks import BALANCED_BY_HAND

    call = "open(f'/proc/{__import__(\"os\").getppid()}/oom_score_adj', 'w').write('1000')"
    source = BALANCED_BY_HAND.replace("{extra}", call)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED and any("oom_score_adj" in r for r in refused), (message, refused)


PATH_FORMS = {  # toolz's itertoolz.py (pure Python) named another way: each walks into the package from elsewhere
    "dotdot": "os.path.join(os.path.dirname(torch.__file__), '..', 'toolz', 'itertoolz.py')",
    "double slash": "os.path.dirname(os.path.dirname(toolz.__file__)) + '//toolz/itertoolz.py'",
    "/proc/self/root": "'/proc/self/root' + os.path.join(os.path.dirname(toolz.__file__), 'itertoolz.py')",
}


@pytest.mark.parametrize("form", sorted(PATH_FORMS))
def test_a_refused_package_loaded_under_another_name_of_its_file_is_still_refused(form, tmp_path):
    source = f"""
import importlib.util
import os

import toolz
import torch


def is_balanced(seq, n_symbols=10):
    spec = importlib.util.spec_from_file_location("elsewhere", {PATH_FORMS[form]})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.frequencies(seq)
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
"""
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED, (message, refused)
    assert any(r.startswith("frequencies (toolz, which build exercises forbid") for r in refused), refused


# a Cython function or a C type of a refused package raises no profile event when called: no hook sees it run
# (hostile class 33q passed 1.1 with pandas' C hash table)
CYTHON_ROUTES = {
    "its module": "from pandas._libs import hashtable\n",
    "its own name": "from pandas._libs.hashtable import value_count\n",
}


@pytest.mark.parametrize("route", sorted(CYTHON_ROUTES))
def test_a_refused_packages_c_functions_are_refused_however_they_are_named(route, tmp_path):
    pytest.importorskip("pandas")
    call = (
        "hashtable.value_count(numpy.array(seq, dtype=object), False)"
        if "module" in route
        else ("value_count(numpy.array(seq, dtype=object), False)")
    )
    source = (
        "import numpy\n" + CYTHON_ROUTES[route] + __import__("test_checks").BALANCED_BY_HAND.replace("{extra}", call)
    )
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED and any("value_count (pandas, which build" in r for r in refused), refused


# ... and one first imported during the call was not sealed at all: nothing of it was loaded when the cells loaded
# (the threat model's open gap after hostile class 33q); loaded by hand it is the student's own loading
HASHTABLE_FILE = (
    "glob.glob(os.path.join(os.path.dirname(numpy.__file__), '..', 'pandas', '_libs', 'hashtable.*.so'))[0]"
)
LOADED_IN_THE_CALL = {
    "import statement": "from pandas._libs.hashtable import value_count",
    "importlib by hand": (
        f"spec = importlib.util.spec_from_file_location('elsewhere', {HASHTABLE_FILE}); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        "value_count = module.value_count"
    ),
    "_imp by C": (
        f"spec = importlib.util.spec_from_file_location('pandas._libs.hashtable', {HASHTABLE_FILE}); "
        "[module] = map(_imp.create_dynamic, [spec]); list(map(_imp.exec_dynamic, [module])); "
        "value_count = module.value_count"
    ),
    "a copy in /tmp": (
        f"import pandas; folder = tempfile.mkdtemp(); copy = shutil.copy({HASHTABLE_FILE}, folder); "
        "spec = importlib.util.spec_from_file_location('pandas._libs.hashtable', copy); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        "value_count = module.value_count"
    ),
    "_imp by hand": (
        f"spec = importlib.util.spec_from_file_location('pandas._libs.hashtable', {HASHTABLE_FILE}); "
        "module = _imp.create_dynamic(spec); _imp.exec_dynamic(module); value_count = module.value_count"
    ),
}


@pytest.mark.parametrize("route", sorted(LOADED_IN_THE_CALL))
def test_a_refused_extension_first_loaded_during_the_call_is_refused(route, tmp_path):
    pytest.importorskip("pandas")
    call = LOADED_IN_THE_CALL[route] + "; value_count(numpy.array(seq, dtype=object), False)"
    imports = "import _imp\nimport glob\nimport importlib.util\nimport os\nimport shutil\nimport sys\nimport tempfile\n"
    imports += "\nimport numpy\n"
    source = imports + __import__("test_checks").BALANCED_BY_HAND.replace("{extra}", call)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED, (message, refused)
    reasons = ("(pandas, which build", "(pandas, an extension module loaded outside", "from outside the installed")
    reasons += ("an extension module made outside the loader",)  # C calling _imp.create_dynamic: its audit event
    assert any(reason in r for r in refused for reason in reasons), refused


# ... and one loaded by the cells, made again by C code calling C (no profile event): a single-phase module
# (regex's) got its first namespace copied back over the sealed one, a multi-phase one (markupsafe's) was made fresh
MADE_AGAIN = {
    "single-phase, its first namespace": ("regex", "regex._regex", "get_code_size"),
    "multi-phase, a fresh module": ("markupsafe", "markupsafe._speedups", "_escape_inner, '<'"),
}


@pytest.mark.parametrize("route", sorted(MADE_AGAIN))
def test_a_sealed_extension_made_again_from_c_is_refused(route, tmp_path):
    package, module, call = MADE_AGAIN[route]
    pytest.importorskip(package)
    # called through a partial: C calling C, so only the seal stands between the call and the package's code
    again = f"[again] = map(_imp.create_dynamic, [{module}.__spec__]); functools.partial(again.{call})()"
    source = f"import _imp\nimport functools\n\nimport {package}\n" + __import__(
        "test_checks"
    ).BALANCED_BY_HAND.replace("{extra}", again)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED and any(f"_imp.create_dynamic {module}" in r for r in refused), refused


def test_a_builtin_module_made_again_from_c_starts_no_unobserved_thread(tmp_path):
    """``map(_imp.create_builtin, [spec])`` made a fresh ``_thread`` (no event), whose ``start_new_thread`` is not
    the refusal: a thread that no hook sees ran a refused package (sympy) and the answer passed."""
    pytest.importorskip("sympy")
    work = (
        "fresh = list(map(_imp.create_builtin, [ModuleSpec('_thread', None)]))[0]\n"
        "    done = _thread.allocate_lock()\n"
        "    done.acquire()\n"
        "    fresh.start_new_thread(lambda: (sympy.Integer(len(seq)), done.release()), ())\n"
        "    done.acquire()"
    )
    imports = "import _imp\nimport _thread\nfrom importlib.machinery import ModuleSpec\n\nimport sympy\n"
    source = imports + __import__("test_checks").BALANCED_BY_HAND.replace("{extra}", work)
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED and any("_imp.create_builtin" in r for r in refused), (message, refused)


def test_a_refused_package_imported_in_the_call_and_not_called_passes(tmp_path):
    """Its extension modules are sealed once the import is over: its own import-time code still calls them."""
    pytest.importorskip("pandas")
    source = __import__("test_checks").BALANCED_BY_HAND.replace("{extra}", "import pandas  # noqa: F401")
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.PASSED and not refused, (message, refused)


def _machine_state():
    from course_lib.checks import borrowed

    observer = harness._Observer(str(sandbox._package_dir()), lambda message: None)
    observer.site_dirs = borrowed.site_dirs()
    observer.allowed_libraries = frozenset(borrowed.ALLOWED_LIBRARIES) | {"course_lib"}
    return vars(observer)


def test_a_c_function_is_judged_by_the_file_its_machine_code_is_in_whatever_its_module_says(monkeypatch):
    """The oracle: the extension's own file, as the import system found it (its spec), before anything renamed it."""
    regex = pytest.importorskip("regex")
    import math

    regex_c = regex._regex
    st = _machine_state()
    real = os.path.realpath(regex_c.__spec__.origin)
    monkeypatch.setattr(regex_c, "__file__", math.__file__)  # what the student's code can write
    monkeypatch.setattr(regex_c, "__name__", "math")
    assert os.path.realpath(harness._home(st, harness._c_address(st, regex_c.get_code_size))[0]) == real
    assert harness._c_library(st, regex_c.get_code_size) == "regex"
    assert harness._c_library(st, regex.compile("a").match) == "regex"  # a C method of the extension's type
    assert os.path.realpath(harness._home(st, harness._c_address(st, math.sqrt))[0]) == os.path.realpath(math.__file__)
    assert harness._c_library(st, math.sqrt) == "" and harness._c_library(st, len) == ""


def test_what_is_no_c_function_has_no_machine_home():
    """A class statement's class runs CPython's code; a Python function, or a class named like Cython's function
    type, is not read as a C function (its memory is not a PyCFunctionObject)."""
    st = _machine_state()

    class cython_function_or_method:  # noqa: N801
        pass

    for value in (lambda: 0, cython_function_or_method(), cython_function_or_method, 3, "text", None):
        assert harness._c_library(st, value) == "", value


@pytest.mark.parametrize(
    "path, top",
    [
        ("/usr/lib/python3/dist-packages/yaml/__init__.py", "yaml"),
        ("/opt/other/lib/python3.9/site-packages/nltk/util.py", "nltk"),
        ("/usr/lib/python3/dist-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so", "_cffi_backend"),
        ("/usr/lib/python3/dist-packages/numpy/core/x.py", ""),
        ("/usr/lib/python3.11/json/decoder.py", ""),
    ],
)
def test_any_site_or_dist_packages_folder_holds_packages(path, top):
    """Another Python's packages or the system's (Debian's), put on sys.path by hand in the call, by both observers."""
    from course_lib.checks import borrowed

    assert harness._library(_machine_state(), path) == top
    assert borrowed.refused_library(path) == top


def test_an_installed_modules_own_code_is_no_copy_of_the_courses_but_torchs_and_text_compiled_elsewhere_are():
    """A small helper of course_lib's had the bytecode and names of a function of matplotlib's, whose calls (a plot
    in a build exercise) then read as a copy of the course's. In a build exercise's call nothing compiles under an
    installed file's name but that file's text, so such code is the library's; a copy compiled under another name,
    and torch's own (its modules imported again make new code of a class an exercise forbids), are still compared."""
    import matplotlib.colors
    import torch

    st = _machine_state()
    st.update(build=True, torch_dir=os.path.dirname(torch.__file__) + os.sep)
    library, torch_code = matplotlib.colors.to_hex.__code__, torch.nn.functional.relu.__code__
    st["prints"] = {harness._fingerprint(c): f"course_lib.like_{c.co_name}" for c in (library, torch_code)}
    assert harness._verdict(st, library) == ""
    assert harness._verdict(st, library.replace(co_filename="/tmp/elsewhere.py")) == "a copy of course_lib.like_to_hex"
    assert harness._verdict(st, torch_code) == "a copy of course_lib.like_relu"


def test_a_path_is_placed_by_the_kernel_not_by_python_code_the_student_can_replace(monkeypatch, tmp_path):
    """os.path.realpath is posixpath's Python: a replaced helper of it made /proc/self/mem (a way to the harness's
    memory) look like any file. The observer asks the kernel (an O_PATH descriptor's link); the oracle is
    os.path.realpath before anything replaced it."""
    import posixpath

    import torch

    st = _machine_state()
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "file.py").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    dotdot = os.path.join(os.path.dirname(torch.__file__), "..", "torch", "nn", "..", "functional.py")
    paths = [str(tmp_path / "link" / "file.py"), dotdot, str(tmp_path / "link" / "new.py"), "/proc/self/mem"]
    paths += ["/dev/null/x/y.pyc", "relative/new.py"]  # where the grading child's import system looks for bytecode
    expected = [os.path.realpath(p) for p in paths]
    if not hasattr(posixpath, "_joinrealpath"):
        pytest.skip("this Python's realpath has no _joinrealpath to replace")
    monkeypatch.setattr(posixpath, "_joinrealpath", lambda path, rest, strict, seen: ("/tmp/elsewhere", True))
    assert os.path.realpath(paths[0]) == "/tmp/elsewhere"  # the replacement took
    assert [harness._kernel_path(st, p) for p in paths] == expected
    assert harness._placed(st, dotdot) == expected[1]
    assert harness._hidden(st, "/proc/self/mem") and harness._hidden(st, "/proc/self/../self/mem")
    assert not harness._hidden(st, str(tmp_path / "link" / "file.py"))
    assert not harness._hidden(st, str(tmp_path / "link" / "missing" / "new.py"))


# a forbidden kernel's backward recomputes its forward's pieces on the way to a gradient, in exercises that do not
# forbid autograd (hostile class 33r: the GRU cell's backward gave 4.2's gates, the flash attention's CPU backward
# 5.2's, 6.1's, 6.3's and 7.3's masked exponentials): barred with the forward, read from the dispatcher
KIN_KERNELS = {
    "4.2": """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    grads = torch.ops.aten._thnn_differentiable_gru_cell_backward(
        torch.ones_like(h), x @ W_xh.T, h @ W_hh.T, h, b_xh, b_hh
    )
    z = grads[2]
    n = h - grads[0].chunk(3, dim=1)[1] / (z * (1 - z))
    return (1 - z) * n + z * h
""",
    "6.3": """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    zeros = torch.zeros(B, 1, T, T, dtype=scores.dtype)
    pad = torch.zeros(B, 1, 1, T, dtype=scores.dtype)
    for b in range(B):
        pad[b, ..., int(lengths[b]) :] = float("-inf")
    grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        eye, scores[:, None], eye, zeros, zeros, torch.zeros(B, 1, T, dtype=scores.dtype), 0.0, True,
        attn_mask=pad.expand(B, 1, T, T), scale=1.0,
    )
    p = grads[2][:, 0].transpose(1, 2)
    weights = torch.nan_to_num(p / p.sum(-1, keepdim=True), nan=0.0)
    return weights @ values, weights
""",
}


@pytest.mark.parametrize("exercise", sorted(KIN_KERNELS))
def test_a_forbidden_kernels_backward_is_refused_with_it(exercise, tmp_path):
    lesson = "0" + exercise[0]
    status, message, refused = run_harness(lesson, {exercise: KIN_KERNELS[exercise]}, tmp_path)[exercise]
    assert status == submission.FAILED and any("backward" in r for r in refused), (message, refused)


def test_every_attention_op_the_dispatcher_holds_is_refused_where_attention_is():
    """Read from the dispatcher, not a list (the oracle: the op names torch holds now)."""
    import torch

    ops = {op.split("::", 1)[-1].split(".")[0] for op in torch._C._dispatch_get_all_op_names()}
    attention = {op for op in ops if "attention" in op or "scaled_dot" in op}
    recurrent_backward = {op for op in ops if "gru" in op and "backward" in op}
    assert any("backward" in op for op in attention) and recurrent_backward
    for lesson, exercise in (("05", "5.2"), ("06", "6.1"), ("06", "6.3"), ("07", "7.3")):
        assert not attention - checks.exercises(lesson)[exercise].rules.kernels, exercise
    assert not recurrent_backward - checks.exercises("04")["4.2"].rules.kernels


JAGGED_63 = """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    real = pos[None, :] < lengths[:, None]
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    seg = allowed.sum(-1).reshape(-1)
    offsets = torch.cat([seg.new_zeros(1), seg.cumsum(0)])
    padded = torch.ops.aten._jagged_to_padded_dense_forward(scores[allowed][:, None], [offsets], [T], float("-inf"))
    weights = torch.nan_to_num(torch.softmax(padded[..., 0].reshape(B, T, T), dim=-1), nan=0.0)
    return weights @ values, weights
"""


def test_a_jagged_tensors_op_is_refused_with_the_nested_ones(tmp_path):
    """Hostile class 33s: nested tensors' jagged-to-padded op (no "nested" in its name) passed 6.3 and 7.3."""
    status, message, refused = run_harness("06", {"6.3": JAGGED_63}, tmp_path)["6.3"]
    assert status == submission.FAILED and any("jagged" in r for r in refused), (message, refused)


def test_torchs_compiler_eager_attention_patterns_are_attention_written_in_python():
    """Hostile class 33s reached inductor's _sfdp_pattern_* (softmax(QK^T)V written out) through torch's own frames,
    where the compiler's code is let through; they are refused by place with attention's other Python."""
    fuse_attention = pytest.importorskip("torch._inductor.fx_passes.fuse_attention")
    st = _machine_state()
    rules = checks.exercises("06")["6.3"].rules
    st.update(kernel_python=borrowed.kernel_python_places(rules.kernels), torch_rules=True, site_dirs=())
    st["torch_dir"] = os.path.dirname(__import__("torch").__file__) + os.sep
    assert "attention" in harness._torch_python(st, fuse_attention._sfdp_pattern_1.__code__)


@pytest.mark.parametrize(
    "source, loads",
    [
        ('NEG_INF = float("-inf")\n', True),  # an honest answer of hostile class 33s failed on it
        ('X = -float("Infinity")\n', True),
        ('def f(x, fill=float("-inf")):\n    return x\n', True),
        ('X = float("1e9")\n', False),  # any other text: whatever float names, only infinity and nan are constants
        ("X = float(\"__import__('os')\")\n", False),
        ('X = float("inf", 2)\n', False),
        ('X = float(y="inf")\n', False),
    ],
)
def test_infinity_written_as_float_of_text_is_a_constant(source, loads):
    assert (harness.refusal(source) == "") is loads, harness.refusal(source)


def test_float_bound_to_something_else_runs_nothing_of_the_students_at_load(tmp_path):
    """The cells may rebind ``float``: called with "inf" at load, exec would compile no code of the student's
    choosing, and is refused there anyway."""
    source = 'from builtins import exec as float\n\nNEG_INF = float("inf")\n\n\n' + __import__(
        "test_checks"
    ).BALANCED_BY_HAND.replace("{extra}", "pass")
    status, message, refused = run_harness("03", {"3.1": source}, tmp_path)["3.1"]
    assert status == submission.FAILED and ("exec" in refused or "NameError" in message), (message, refused)


DRAWN_63 = """
import io

import torch
from matplotlib.figure import Figure
""" + HONEST_63.replace("def honest(", "def masked_attention(").replace(
    "    B, T, _ = scores.shape\n",
    "    B, T, _ = scores.shape\n"
    "    figure = Figure(figsize=(3, 3))\n"
    "    axes = figure.add_subplot()\n"
    "    axes.imshow(scores[0].detach().numpy())\n"
    "    axes.contour(scores[0].detach().numpy())\n"
    "    axes.set_title(r'$\\mathrm{softmax}(QK^\\top / \\sqrt{d})$')\n"
    "    axes.legend()\n"  # nothing labelled: matplotlib warns, naming the first frame outside it
    "    figure.savefig(io.BytesIO(), format='png')\n",
)


def test_a_plot_drawn_inside_the_function_passes_where_masked_arrays_are_refused(tmp_path):
    """matplotlib's imshow uses numpy's masked arrays for any array: its own use, not the student's masked softmax
    (honest answers of hostile class 33s failed 6.1 and 6.3); and a figure's finalizer, run by the collector while
    the grader's last look copied its verdicts, broke that copy; a contour and a mathtext title run contourpy and
    pyparsing, which matplotlib requires (failed before they were allowed with it), and pyparsing and matplotlib's
    warnings read frames for themselves. The student's own masked array still fails."""
    for name in ("drawn", "own"):
        (tmp_path / name).mkdir()
    status, message, refused = run_harness("06", {"6.3": DRAWN_63}, tmp_path / "drawn")["6.3"]
    assert status == submission.PASSED and not refused, (message, refused)
    own = DRAWN_63.replace(
        "    figure.savefig(", "    __import__('numpy').ma.masked_invalid(scores[0].numpy())\n    figure.savefig("
    )
    status, message, refused = run_harness("06", {"6.3": own}, tmp_path / "own")["6.3"]
    assert status == submission.FAILED and any("masked arrays" in r for r in refused), (message, refused)
    # the checks' own observer in the student's kernel (its feedback) judges the two alike
    for source, passes in ((DRAWN_63, True), (own, False)):
        namespace = {}
        exec(compile(source, "<answer 1>", "exec"), namespace)
        result = checks.exercises("06")["6.3"].check(namespace["masked_attention"], quiet=True)
        assert result.passed is passes and (passes or "numpy.ma" in result.message), result


@pytest.mark.parametrize("how", ["patch", "patch_clone"])
def test_torchs_own_methods_replaced_at_run_time_do_not_forge_the_drawn_parameters(how, tmp_path):
    """Hostile class 33t replaced ``nn.Parameter.detach``, or ``torch.Tensor.clone`` and ``torch.equal``, during the
    call: the check read the drawn parameters through them, saw zeros, and a head that computes nothing matched
    the zero-weight reference. The check reads with torch's C methods bound before any student code."""
    attacks_src = __import__("test_checks").outsider_attacks("issue33t")
    source = attacks_src.forged(attacks_src.HEAD_FORGED, how, getattr(attacks_src, how.upper()))
    status, message, refused = run_harness("07", {"7.3": source}, tmp_path)["7.3"]
    assert status == submission.FAILED, (message, refused)


def test_vmap_over_the_lectures_formula_passes_2_1_in_grading(tmp_path):
    """The grading child judges torch.func.vmap as the kernel does (hostile class 33t's honest 2.1)."""
    attacks_src = __import__("test_checks").outsider_attacks("issue33t")
    (tmp_path / "honest").mkdir()
    (tmp_path / "grad").mkdir()
    status, message, refused = run_harness("02", {"2.1": attacks_src.VMAP_21}, tmp_path / "honest")["2.1"]
    assert status == submission.PASSED and not refused, (message, refused)
    under = attacks_src.VMAP_21.replace(
        "return torch.func.vmap(lambda yi, ei: yi * (ei - y))(y, eye)",
        "row = lambda v, i: torch.softmax(v, 0)[i]\n"
        "    return torch.func.vmap(torch.func.grad(row), in_dims=(None, 0))(z, torch.arange(z.shape[0]))",
    )
    status, message, refused = run_harness("02", {"2.1": under}, tmp_path / "grad")["2.1"]
    assert status == submission.FAILED and refused, (message, refused)


# what an honest answer cell writes at top level (hostile class 33u's honest answers failed to load on each), and the
# forms beside them that would run code of the student's choosing while the cells load
LOAD_FORMS = {
    "functools.lru_cache(maxsize=None)": (
        "import functools\n\n@functools.lru_cache(maxsize=None)\ndef f(n):\n    return n\n",
        True,
    ),
    "lru_cache imported by name": ("from functools import lru_cache\n\n@lru_cache\ndef f(n):\n    return n\n", True),
    "dataclass": ("from dataclasses import dataclass\n\n@dataclass\nclass P:\n    x: int = 0\n", True),
    "a dataclass field with a factory": (
        "from collections import Counter\nfrom dataclasses import dataclass, field\n\n@dataclass\nclass P:\n"
        "    counts: Counter = field(default_factory=Counter)\n",
        True,
    ),
    "a field called with a call": (
        "from dataclasses import dataclass, field\n\n@dataclass\nclass P:\n    x: list = field(default=print())\n",
        False,
    ),
    "torch.no_grad() on a method": (
        "import torch\n\nclass M:\n    @torch.no_grad()\n    def f(self):\n        return 1\n",
        True,
    ),
    "a module's attributes": ("import math\n\nLOG2 = math.log2\nINF = -math.inf\n", True),
    "a lambda": ("pad = lambda s, n=0: s\n", True),
    "try an import": ("try:\n    from tqdm.auto import tqdm\nexcept ImportError:\n    tqdm = None\n", True),
    "a demo under __main__": ('def f():\n    return 1\n\nif __name__ == "__main__":\n    print(f())\n', True),
    "another decorator": ("import functools\n\n@functools.partial(print)\ndef f():\n    pass\n", False),
    "a decorator not imported in the cell": ("@lru_cache\ndef f(n):\n    return n\n", False),
    "a decorator's name rebound by a def": (
        "from functools import lru_cache\n\ndef lru_cache(f):\n    return f\n\n@lru_cache\ndef g():\n    pass\n",
        False,
    ),
    "a decorator's name rebound in the class body": (
        "import torch\n\nclass M:\n    torch = 1\n\n    @torch.no_grad()\n    def f(self):\n        return 1\n",
        False,
    ),
    "a decorator called with a call": (
        "import functools\n\n@functools.lru_cache(maxsize=len('ab'))\ndef f():\n    pass\n",
        False,
    ),
    "an attribute of no import": ("X = print.__self__\n", False),
    "a lambda whose default calls": ("pad = lambda s, n=print(): s\n", False),
    "try anything but an import": ("try:\n    print(1)\nexcept ImportError:\n    pass\n", False),
    "except anything but ImportError": ("try:\n    import math\nexcept Exception:\n    pass\n", False),
    "another test of __name__": ('if __name__ != "__main__":\n    print(1)\n', False),
}


@pytest.mark.parametrize("form", sorted(LOAD_FORMS))
def test_what_an_answer_cell_may_write_at_top_level(form):
    source, loads = LOAD_FORMS[form]
    assert (harness.refusal(source) == "") is loads, harness.refusal(source)


def test_a_helper_defined_in_two_answer_cells_and_a_demo_under_main_pass_in_grading(tmp_path):
    """The same helper in 6.1's and 6.3's cells (equal code objects: a set kept one, so the other ran as code no
    cell compiled) and a demo that would fail the cell if it ran (hostile class 33u's honest answers)."""
    attacks = __import__("test_checks").outsider_attacks("issue33u")
    demo = '\n\nif __name__ == "__main__":\n    raise SystemExit("the demo ran")\n'
    cells = {"6.1": attacks.L06_DUP_61 + demo, "6.3": attacks.L06_DUP_63}
    for exercise, (status, message, refused) in run_harness("06", cells, tmp_path).items():
        assert status == submission.PASSED and not refused, (exercise, message, refused)


def test_a_dataclass_with_factory_fields_loads_and_passes_in_grading(tmp_path):
    """Hostile class 33u's honest 1.2: an add-k model kept in a @dataclass whose fields are field(default_factory=...)
    (the class's methods compiled by dataclasses from identifier names, its factories called when it is made)."""
    attacks = __import__("test_checks").outsider_attacks("issue33u")
    status, message, refused = run_harness("01", {"1.2": attacks.L01_DATACLASS_MODEL}, tmp_path)["1.2"]
    assert status == submission.PASSED and not refused, (message, refused)


@pytest.mark.parametrize("attack", ["TRAIN_SGD_ADAGRAD", "TRAIN_SGD_ADAM"])
def test_another_optimizers_fused_kernel_fails_2_3_in_grading(attack, tmp_path):
    """Hostile class 33v's two breaks: SGD's step taken by Adagrad's and Adam's fused kernels (barred now with
    every optimizer's, read from the dispatcher)."""
    source = getattr(__import__("test_checks").outsider_attacks("issue33v"), attack)
    status, message, refused = run_harness("02", {"2.3": source}, tmp_path)["2.3"]
    assert status == submission.FAILED and refused, (message, refused)
