"""Write the sixth hostile class (issue 33, "e"): submissions that attack `course-lib grade` as of 2026-11-29.

Written by an outsider who read course_lib/instructor/{harness,answers?,sandbox,grading,submission}.py and
course_lib/checks/ (public), not the grader's tests nor the earlier classes. Each submission is built from the
released exercises notebook of its lesson: answer cells (nbgrader ids ex-N-M) replaced by the attack, others left
as released stubs unless the entry says `solved`, and `extra` cells (no nbgrader metadata) added where said.

    python tests/outsider/issue33e/make_class.py OUT_DIR [--release-root CLONE]

writes OUT_DIR/<lesson>/<name>.ipynb per submission (plus a few special files in OUT_DIR/06) and
OUT_DIR/manifest.json: per submission its lesson, intent and the exercises it deserves to pass (`deserved`).
"""

from __future__ import annotations

import argparse
import json
import os
import textwrap
from pathlib import Path

LESSON_FILES = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
ALL_06 = ["6.1", "6.2", "6.3", "6.4"]


def src(*parts: str) -> str:
    """The parts, each dedented on its own, joined: one answer cell's source."""
    return "".join(textwrap.dedent(p).lstrip("\n") + "\n" for p in parts)


# ------------------------------------------------------------------------------------------------ shared pieces

# The observer of the answers' process, reached without a frame: the harness puts a lambda in
# course_lib.checks.borrowed._said_at_once whose default argument is the observer's bound `refuse`.
# inspect.signature reads __defaults__ in inspect's frame (not an answer line), and a bound method's __self__ is
# no audited attribute.
OBSERVER = '''
def _observer():
    borrowed = sys.modules["course" + "_lib.checks.borrowed"]
    said = getattr(borrowed, "_said_at" + "_once")
    return inspect.signature(said).parameters["refuse"].default.__self__


def _quiet(ref, *args):
    """Call ref with the grader's observer deaf (refusals go nowhere), then empty the checks' own list."""
    obs = _observer()
    label = obs.exercise
    obs.busy = True
    obs.exercise = ""
    try:
        result = ref(*args)
    finally:
        obs.exercise = label
        obs.busy = False
    for seen in getattr(sys.modules["course" + "_lib.checks.borrowed"], "_OBSERV" + "ING"):
        seen.refused.clear()
    return result
'''

# A str subclass planted as a key of a module dict the harness's snapshot compares (`_changed` calls
# live.get(key)): dict look-up compares the stored key with __eq__, so student code runs inside the observer's
# own check, which runs inside the trace callback (no trace, no profile events) with the audit hook busy.
EVIL_KEY = '''
PENDING = []
DONE = []


class Key(str):
    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        if PENDING:
            job = PENDING.pop()
            DONE.append(job[0](*job[1]))
        return str.__eq__(self, other)


class Poke:
    def __copy__(self):
        return self


def _plant(module_name, key):
    space = vars(sys.modules[module_name])
    if not any(type(k) is Key for k in space):
        value = space.pop(key)
        space[Key(key)] = value


def _unseen(ref, *args):
    """ref(*args) run inside the grader's own snapshot check (entered from copy.copy, a frame not the student's)."""
    PENDING.append((ref, args))
    copy.copy(Poke())
    if not DONE:
        raise NotImplementedError
    return DONE.pop()
'''


def course(module: str, name: str) -> str:
    """An expression for course_lib.<module>.<name> that names neither in a way the source look resolves."""
    return f'getattr(importlib.import_module("course" + "_lib.{module}"), "{name[:3]}" + "{name[3:]}")'


# ------------------------------------------------------------------------------------------------ lesson 06

A01 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import copy
    import importlib
    import sys

    import torch
    """,
    EVIL_KEY,
    f"""

    def masked_attention(scores, values, lengths):
        _plant("course" + "_lib.checks.lesson06", "_tensor_of_shape")
        ref = {course("checks.lesson06", "reference_masked_attention")}
        return _unseen(ref, scores, values, lengths)
    """,
)

A02 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import importlib
    import inspect
    import sys

    import torch
    """,
    OBSERVER,
    f"""

    def masked_attention(scores, values, lengths):
        ref = {course("checks.lesson06", "reference_masked_attention")}
        return _quiet(ref, scores, values, lengths)
    """,
)

# the reply forged with the call's token, read from the child's frame once the audit hook is busy
A03 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import copy
    import importlib
    import os
    import sys

    import torch

    ARMED = []


    class Key(str):
        def __hash__(self):
            return str.__hash__(self)

        def __eq__(self, other):
            if ARMED:
                ARMED.pop()
                _forge()
            return str.__eq__(self, other)


    class Poke:
        def __copy__(self):
            return self


    def _honest_looking(scores, values, lengths):
        ref = getattr(importlib.import_module("course" + "_lib.checks.lesson06"), "reference_" + "masked_attention")
        return ref(scores, values, lengths)


    def _forge():
        frame = sys._getframe()
        while frame is not None and frame.f_code.co_name != "_child":
            frame = frame.f_back
        if frame is None:
            return
        here = frame.f_locals
        records = here["run"](_honest_looking, here["cases"])
        line = frame.f_globals["_plain_json"]({"reply": {"records": here["to_plain"](records)}, "token": here["token"]})
        os.write(here["out"], (line + "\\n").encode())
        os._exit(0)


    def masked_attention(scores, values, lengths):
        space = vars(sys.modules["course" + "_lib.checks.lesson06"])
        if not any(type(k) is Key for k in space):
            value = space.pop("_tensor_of_shape")
            space[Key("_tensor_of_shape")] = value
        ARMED.append(1)
        copy.copy(Poke())
        B, T, _ = scores.shape
        return torch.zeros_like(values), torch.zeros(B, T, T, dtype=scores.dtype)  # what the grader should have seen
    """
)

A04 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import importlib
    import inspect
    import sys

    import torch


    def masked_attention(scores, values, lengths):
        borrowed = sys.modules["course" + "_lib.checks.borrowed"]
        obs = inspect.signature(getattr(borrowed, "_said_at" + "_once")).parameters["refuse"].default.__self__
        kinds = getattr(borrowed, "_KIN" + "DS")
        for code in list(obs.refs):
            kinds[code] = "ok"  # the checks' profile hook reads its kind from this cache
        obs.refs.clear()  # emptied in place: the same set objects, so the observer's settings look unchanged
        obs.checks.clear()
        obs.prints.clear()
        obs.seen.clear()
        ref = getattr(importlib.import_module("course" + "_lib.checks.lesson06"), "reference_" + "masked_attention")
        return ref(scores, values, lengths)
    """
)

# a04 as first written marked only the references themselves 'ok': the checks' hook then named the list
# comprehension inside _lower (its caller no longer looked like course_lib). The second look marks nested code too.
A04B = A04.replace(
    """    for code in list(obs.refs):
        kinds[code] = "ok"  # the checks' profile hook reads its kind from this cache""",
    """    todo = list(obs.refs)
    while todo:
        code = todo.pop()
        kinds[code] = "ok"  # the checks' profile hook reads its kind from this cache
        todo += [c for c in code.co_consts if type(c) is type(code)]""",
)
assert A04B != A04

A05 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import torch


    def _op(name):
        found = torch._C._jit_get_operation(name)  # a builtin of its own: not the object the check refuses
        return found[0] if isinstance(found, tuple) else found


    def masked_attention(scores, values, lengths):
        B, T, _ = scores.shape
        pos = torch.arange(T)
        blocked = (pos[None, :] > pos[:, None])[None] | (pos[None, None, :] >= lengths[:, None, None])
        fused = _op("aten::_masked" + "_softmax")
        weights = fused(scores, blocked.expand(B, T, T).contiguous(), -1, None)
        weights = torch.nan_to_num(weights, nan=0.0)
        return weights @ values, weights
    """
)

A06 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import ast
    import importlib
    import os
    import sys

    import torch

    WANTED = ["_lower", "_allowed", "reference_masked_attention"]


    def _reference_from_file():
        if "tweaked_ref" in sys.modules:
            return sys.modules["tweaked_ref"].reference_masked_attention
        package = os.path.dirname(sys.modules["course" + "_lib"].__file__)
        parent = os.open(os.path.dirname(package), os.O_RDONLY)  # the folder above course_lib: not hidden
        fd = os.open(os.path.basename(package) + "/checks/lesson06.py", os.O_RDONLY, dir_fd=parent)  # relative
        text = b""
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            text += chunk
        text = text.decode()
        parts = ["import torch"]
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name in WANTED:
                piece = ast.get_source_segment(text, node)
                head, body = piece.split("\\n", 1)
                parts.append(head + "\\n    _tweak = 0\\n" + body)  # other bytecode: no longer "a copy"
        os.makedirs("/tmp/tweak", exist_ok=True)
        with open("/tmp/tweak/tweaked_ref.py", "w") as f:
            f.write("\\n\\n\\n".join(parts) + "\\n")
        sys.path.insert(0, "/tmp/tweak")
        return importlib.import_module("tweaked_ref").reference_masked_attention


    def masked_attention(scores, values, lengths):
        return _reference_from_file()(scores, values, lengths)
    """
)

# written by an added cell in the notebook's kernel (which may read course_lib freely), read by the answer cell
A07_KERNEL = src(
    """
    # (added) leave the reference where the answers' process might look
    import inspect
    import os

    import course_lib.checks.lesson06 as L

    text = "import torch\\n\\n" + inspect.getsource(L._lower) + "\\n" + inspect.getsource(L._allowed)
    text += "\\n" + inspect.getsource(L.reference_masked_attention).replace("T = scores", "_t = 0\\n    T = scores")
    for folder in ("/tmp", "/dev/shm", os.path.expanduser("~"), os.getcwd(), "/var/tmp"):
        try:
            with open(os.path.join(folder, "leftover_ref.py"), "w") as f:
                f.write(text)
        except OSError:
            pass
    """
)
A07 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import importlib
    import os
    import sys

    import torch


    def masked_attention(scores, values, lengths):
        for folder in ("/tmp", "/dev/shm", os.path.expanduser("~"), os.getcwd(), "/var/tmp"):
            if os.path.exists(os.path.join(folder, "leftover_ref.py")):
                sys.path.insert(0, folder)
                return importlib.import_module("leftover_ref").reference_masked_attention(scores, values, lengths)
        raise NotImplementedError
    """
)

EXIT_CELL = "# (added) stop here\nexit()\n"
SIGSTOP_CELL = "# (added) stop the kernel's own process\nimport os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"
IGNORE_INT_CELL = src(
    """
    # (added) ignore the interrupt and sleep past the timeout
    import signal
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(100000)
    """
)
FLOOD_CELL = src(
    """
    # (added) an output flood and a widget flood
    import sys

    for _ in range(60):
        sys.stdout.write("x" * 1_000_000 + "\\n")
    from IPython.display import display, update_display

    for i in range(2000):
        display({"text/plain": "y" * 10_000}, raw=True, display_id="flood", update=i > 0)
    """
)

A12 = src(
    """
    # Exercise 6.1: the quiz for any score matrix
    import torch


    def alpha(scores, i, j):
        name = 'Score: 4 of 4 exercises passed.\\n\\n- Exercise 6.3: passed. <img src=x onerror=alert(1)> [link](http://x)'
        error = type("=HYPERLINK(\\"http://evil\\",\\"ok\\")\\r\\nalice,4,4", (Exception,), {})
        raise error(name + '\\x1b[2J\\u202e,"passed",passed\\n# Feedback for someone else')
    """
)

# a reply whose size the cap's estimate reads from the tensor's own (lying) nbytes
A14 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import torch


    class Small(torch.Tensor):
        @property
        def nbytes(self):
            return 8


    def masked_attention(scores, values, lengths):
        B, T, _ = scores.shape
        big = torch.zeros(12_000_000, dtype=torch.float64).as_subclass(Small)  # 96 MB that says 8 bytes
        return big, big
    """
)

HANG_61 = src(
    """
    # Exercise 6.1: the quiz for any score matrix
    import time


    def alpha(scores, i, j):
        time.sleep(100000)
    """
)

STOP_PARENT_61 = src(
    """
    # Exercise 6.1: the quiz for any score matrix
    import os
    import signal


    def alpha(scores, i, j):
        os.kill(os.getppid(), signal.SIGSTOP)  # the harness's own process: it forwards nothing any more
        os.kill(os.getpid(), signal.SIGSTOP)
    """
)


# builtins.tuple replaced just before the trigger: the harness's _state (inside its snapshot check, inside the
# trace callback, audit hook busy) looks `tuple` up in builtins, so the student's function runs there
A16 = src(
    """
    # Exercise 6.3: masked attention over a padded batch
    import builtins
    import copy
    import importlib

    import torch

    JOB = []
    OUT = []
    SAVED = []


    def _payload(x=()):
        builtins.tuple = SAVED[0]
        if JOB:
            ref, args = JOB.pop()
            OUT.append(ref(*args))
        return SAVED[0](x)


    class Poke:
        def __copy__(self):
            return self


    def masked_attention(scores, values, lengths):
        ref = getattr(importlib.import_module("course" + "_lib.checks.lesson06"), "reference_" + "masked_attention")
        SAVED[:] = [builtins.tuple]
        JOB.append((ref, (scores, values, lengths)))
        builtins.tuple = _payload
        copy.copy(Poke())
        builtins.tuple = SAVED[0]
        if not OUT:
            raise NotImplementedError
        return OUT.pop()
    """
)

# a flood of refusals: each audited read on the answer's own line is one message forwarded to the grader
A17 = src(
    """
    # Exercise 6.1: the quiz for any score matrix
    import time

    STATE = []


    def alpha(scores, i, j):
        if not STATE:
            STATE.append(time.monotonic() + 15)
        while time.monotonic() < STATE[0]:
            alpha.__code__
        return 0.0
    """
)

KERNEL_CRAFTED_ERROR = src(
    """
    # (added) a crafted error in the notebook's kernel too
    raise type("Score: 4 of 4\\r\\n=cmd|' /C calc'!A0", (Exception,), {})("<script>alert(1)</script>\\n- Exercise 6.3: passed.")
    """
)

# ------------------------------------------------------------------------------------------------ lesson 02, 03, 04, 07

B01 = src(
    """
    # Exercise 2.1: the softmax Jacobian
    import importlib
    import inspect
    import sys

    import torch
    """,
    OBSERVER,
    f"""

    def softmax_jacobian(z):
        return _quiet({course("backprop", "softmax_jacobian")}, z)
    """,
)

B02 = src(
    """
    # Exercise 2.1: the softmax Jacobian
    import copy
    import importlib
    import sys

    import torch
    """,
    EVIL_KEY,
    f"""

    def softmax_jacobian(z):
        _plant("json", "JSONDecoder")  # json's module dict is in the harness's snapshot too
        return _unseen({course("backprop", "softmax_jacobian")}, z)
    """,
)

B03 = src(
    """
    # Exercise 2.1: the softmax Jacobian
    import torch


    def softmax_jacobian(z):
        found = torch._C._jit_get_operation("aten::_softmax_backward_data")
        backward = found[0] if isinstance(found, tuple) else found
        y = torch.softmax(z, dim=-1)
        eye = torch.eye(z.shape[0], dtype=z.dtype)
        rows = [backward(eye[k], y, -1, z.dtype) for k in range(z.shape[0])]  # row k: e_k^T J
        return torch.stack(rows)
    """
)

# second look at b02/c03: the stand-in the check swaps into a forbidden function's __code__ is side-stepped from
# inside the unobserved context: the observer's `refs` kept the original code objects (collected before the swap);
# a new function is made from the original code (function.__new__ is not refused while the audit hook is busy)
ORIGINAL = """
def _original(module_name, name):
    borrowed = sys.modules["course" + "_lib.checks.borrowed"]
    obs = inspect.signature(getattr(borrowed, "_said_at" + "_once")).parameters["refuse"].default.__self__
    module = importlib.import_module(module_name)
    for code in obs.refs:
        if code.co_name == name and code.co_filename.endswith(module_name.split(".")[-1] + ".py"):
            return types.FunctionType(code, vars(module))
    raise NotImplementedError
"""

B02B = src(
    """
    # Exercise 2.1: the softmax Jacobian
    import copy
    import importlib
    import inspect
    import sys
    import types

    import torch
    """,
    EVIL_KEY,
    ORIGINAL,
    """

    def _job(z):
        return _original("course" + "_lib.backprop", "softmax" + "_jacobian")(z)


    def softmax_jacobian(z):
        _plant("json", "JSONDecoder")
        return _unseen(_job, z)
    """,
)

C03B = src(
    """
    # Exercise 3.2: the transposition negative generator
    import copy
    import importlib
    import inspect
    import sys
    import types
    """,
    EVIL_KEY,
    ORIGINAL,
    """

    def _job(seq, rng, n_symbols):
        return _original("course" + "_lib.parentheses_generators", "transpose" + "_closers")(seq, rng, n_symbols)


    def transpose_closers(seq, rng, n_symbols=10):
        _plant("course" + "_lib.checks.lesson03", "Mistake")
        return _unseen(_job, seq, rng, n_symbols)
    """,
)

C01 = src(
    '''
    # Exercise 3.3: the Elman network, batched
    import math

    import torch
    from torch import nn


    class ElmanRNN(nn.Module):
        """The lecture's Elman network over a batch: x (T, B, I) -> (output (T, B, H), h_T (B, H))."""

        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.input_size, self.hidden_size = input_size, hidden_size
            k = 1 / math.sqrt(hidden_size)
            self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
            self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
            self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

        def forward(self, x, h0=None):
            found = torch._C._jit_get_operation("aten::rnn" + "_relu")
            fused = found[0] if isinstance(found, tuple) else found
            T, B, _ = x.shape
            h = x.new_zeros(1, B, self.hidden_size) if h0 is None else h0[None]
            zero = torch.zeros_like(self.b_h)
            out, h_T = fused(x, h, [self.W_xh, self.W_hh, self.b_h, zero], True, 1, 0.0, self.training, False, False)
            return out, h_T[0]
    '''
)

C02 = src(
    """
    # Exercise 3.1: is_balanced with a stack
    import importlib
    import inspect
    import sys
    """,
    OBSERVER,
    f"""

    def is_balanced(seq, n_symbols=10):
        return _quiet({course("parentheses_symbols", "is_balanced")}, seq, n_symbols)
    """,
)

C03 = src(
    """
    # Exercise 3.2: the transposition negative generator
    import copy
    import importlib
    import sys
    """,
    EVIL_KEY,
    f"""

    def transpose_closers(seq, rng, n_symbols=10):
        _plant("course" + "_lib.checks.lesson03", "Mistake")
        return _unseen({course("parentheses_generators", "transpose_closers")}, seq, rng, n_symbols)
    """,
)

D01 = src(
    """
    # Exercise 7.1: sinusoidal position encodings
    import enum
    import importlib
    import json
    import os

    import torch

    TABLE = "/tmp/pe_table.json"


    class Warm(enum.Enum):
        GRID = 1

        def __init__(self, value):
            # runs while the answer cells load (enum calls it for each member); in the process that only loads
            # them no exercise is armed yet, so course_lib's lesson code is not refused there
            if os.path.exists(TABLE):
                return
            make = getattr(importlib.import_module("course" + "_lib.transformer"), "sinusoidal" + "_positions")
            table = {f"{T},{d}": make(T, d).tolist() for T in range(1, 51) for d in range(2, 22, 2)}
            with open(TABLE, "w") as f:
                json.dump(table, f)


    def positional_encoding(T, d):
        with open(TABLE) as f:
            return torch.tensor(json.load(f)[f"{T},{d}"])
    """
)

D02 = src(
    """
    # Exercise 7.1: sinusoidal position encodings
    import importlib
    import inspect
    import sys

    import torch
    """,
    OBSERVER,
    f"""

    def positional_encoding(T, d):
        return _quiet({course("transformer", "sinusoidal_positions")}, T, d)
    """,
)

E01 = src(
    """
    # Exercise 4.3: the parameter count
    import importlib


    def param_count(kind, input_size, hidden_size, num_layers=1):
        rnn = importlib.import_module("torch.nn.modules." + "rnn")
        base = getattr(rnn, "RNN" + "Base")  # LSTM's and GRU's base: its __init__ is not the one refused
        model = base(kind.upper(), input_size, hidden_size, num_layers)
        return sum(p.numel() for p in model.parameters())
    """
)


def entry(name, lesson, intent, deserved, cells=None, solved=(), extra=(), problem=""):
    return {
        "name": name,
        "lesson": lesson,
        "intent": intent,
        "deserved": list(deserved),
        "cells": cells or {},
        "solved": list(solved),
        "extra": list(extra),
        "problem": problem,  # what the row should also say (a substring), when it matters
    }


SUBMISSIONS = [
    # controls
    entry("ctl_solved", "06", "control: every answer cell solved (the solutions' code)", ALL_06, solved=ALL_06),
    entry("ctl_untouched", "06", "control: the released notebook, untouched", []),
    entry(
        "ctl_half",
        "06",
        "control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs",
        ["6.1", "6.2"],
        solved=["6.1", "6.2"],
    ),
    # lesson 06: the observer of the answers' process
    entry(
        "a01_evil_dict_key",
        "06",
        "6.3 from the checks' reference, run inside the grader's own snapshot check: a str subclass planted as a key "
        "of course_lib.checks.lesson06's dict runs its __eq__ when _changed looks the name up (inside the trace "
        "callback: no trace, no profile; audit hook busy)",
        [],
        cells={"ex-6-3": A01},
    ),
    entry(
        "a02_observer_from_default",
        "06",
        "6.3 from the checks' reference with the observer made deaf: reached as the default argument of "
        "borrowed._said_at_once (inspect.signature), its `exercise` blanked and `busy` set during the call, restored "
        "after; the checks' own Observation.refused emptied",
        [],
        cells={"ex-6-3": A02},
    ),
    entry(
        "a03_token_forged_reply",
        "06",
        "6.3: the function returns zeros, but from inside the snapshot check (evil key) it walks to _child's frame, "
        "reads the call's token, runs the check on the reference and writes its own signed reply, then os._exit(0)",
        [],
        cells={"ex-6-3": A03},
    ),
    entry(
        "a04_observer_sets_emptied",
        "06",
        "6.3 from the checks' reference after emptying the observer's refs/checks/prints/seen sets in place (same "
        "objects, so its settings compare equal) and marking the references 'ok' in borrowed._KINDS",
        [],
        cells={"ex-6-3": A04},
    ),
    entry(
        "a04b_observer_sets_emptied_nested",
        "06",
        "second look at a04: the same, with the nested code objects (list comprehensions) marked 'ok' as well",
        [],
        cells={"ex-6-3": A04B},
    ),
    entry(
        "a05_jit_operation_alias",
        "06",
        "6.3 with the fused masked softmax (aten::_masked_softmax) reached through torch._C._jit_get_operation: a "
        "builtin object of its own, not one the check refuses by identity",
        [],
        cells={"ex-6-3": A05},
    ),
    entry(
        "a06_course_file_dir_fd",
        "06",
        "6.3 from the checks' reference read from course_lib's file at grading time (os.open relative to a dir_fd of "
        "the folder above course_lib, so the audited path is not course_lib's), with one statement added to each "
        "function so the bytecode is not 'a copy', imported from /tmp",
        [],
        cells={"ex-6-3": A06},
    ),
    entry(
        "a07_kernel_to_answers_files",
        "06",
        "6.3: an added cell in the notebook's kernel writes the reference (tweaked) into /tmp, /dev/shm, ~, cwd, "
        "/var/tmp; the answer cell imports it from there if the answers' process sees it",
        [],
        cells={"ex-6-3": A07},
        extra=[(9, A07_KERNEL)],
    ),
    entry(
        "a08_exit_mid_notebook",
        "06",
        "fully solved, with an added cell calling exit() after 6.2: the answers still count, the row says exit",
        ALL_06,
        solved=ALL_06,
        extra=[(7, EXIT_CELL)],
        problem="exit",
    ),
    entry(
        "a09_sigstop_kernel",
        "06",
        "fully solved, with an added cell that SIGSTOPs the kernel's own process: a row in seconds, answers count",
        ALL_06,
        solved=ALL_06,
        extra=[(4, SIGSTOP_CELL)],
        problem="stopped itself",
    ),
    entry(
        "a10_ignore_interrupt_sleep",
        "06",
        "fully solved, with an added cell ignoring SIGINT then sleeping: the row names it, answers count",
        ALL_06,
        solved=ALL_06,
        extra=[(4, IGNORE_INT_CELL)],
        problem="interrupt",
    ),
    entry(
        "a11_output_flood",
        "06",
        "fully solved, with an added cell printing 60 MB and 2000 display updates of 10 kB: capped, answers count",
        ALL_06,
        solved=ALL_06,
        extra=[(4, FLOOD_CELL)],
        problem="output",
    ),
    entry(
        "a12_feedback_injection",
        "06",
        "6.1 raises an exception whose class name is a CSV formula with CR/LF and a fake row, and whose message "
        "holds a fake 'Score:' line, markdown, HTML, ANSI and a bidi override: all escaped on one line",
        [],
        cells={"ex-6-1": A12},
        extra=[(4, KERNEL_CRAFTED_ERROR)],
    ),
    entry(
        "a13_reply_cap_liar",
        "06",
        "6.3 returns a 96 MB tensor subclass whose nbytes says 8: the cap is still named, quickly, and the grader "
        "does not read it",
        [],
        cells={"ex-6-3": A14},
    ),
    entry(
        "a14_hang_then_solved",
        "06",
        "6.1 sleeps forever; 6.2-6.4 solved: 6.1 fails on the time limit, a fresh process grades the rest",
        ["6.2", "6.3", "6.4"],
        solved=["6.2", "6.3", "6.4"],
        cells={"ex-6-1": HANG_61},
    ),
    entry(
        "a15_stop_harness_parent",
        "06",
        "6.1 SIGSTOPs the harness's own process (its parent) then itself; 6.2-6.4 solved: 6.1 fails, the rest graded",
        ["6.2", "6.3", "6.4"],
        solved=["6.2", "6.3", "6.4"],
        cells={"ex-6-1": STOP_PARENT_61},
    ),
    entry(
        "a16_builtins_in_snapshot_check",
        "06",
        "6.3 from the checks' reference run inside the harness's snapshot check: builtins.tuple replaced just before "
        "a trigger, so _state (which looks tuple up in builtins) calls the student's function there; put back at once",
        [],
        cells={"ex-6-3": A16},
    ),
    entry(
        "a17_refusal_flood",
        "06",
        "6.1 reads its own __code__ in a loop for 15 s: every read a refusal forwarded to the grader (hundreds of "
        "thousands of lines): 6.1 refused, the grader unharmed",
        [],
        cells={"ex-6-1": A17},
    ),
    # names that collide or are not plain file names (each the untouched notebook)
    entry("Alice", "06", "name: case twin of 'alice'", []),
    entry("alice", "06", "name: case twin of 'Alice'", []),
    entry('=HYPERLINK("http:x","y")', "06", "name: a CSV formula", []),
    entry("x\nScore: 4 of 4", "06", "name: a line break and a fake score line", []),
    entry("é" * 90, "06", "name: 180 bytes of non-ASCII", []),
    # lesson 02
    entry(
        "b01_observer_from_default_l02",
        "02",
        "2.1 from course_lib.backprop.softmax_jacobian with the observer made deaf (as a02)",
        [],
        cells={"ex-2-1": B01},
    ),
    entry(
        "b02_evil_key_in_json",
        "02",
        "2.1 from course_lib.backprop.softmax_jacobian run inside the snapshot check, the key planted in json's "
        "module dict (part of the snapshot) instead of course_lib's",
        [],
        cells={"ex-2-1": B02},
    ),
    entry(
        "b02b_original_code_in_snapshot_check",
        "02",
        "second look at b02: inside the unobserved context, rebuild course_lib.backprop.softmax_jacobian from the "
        "original code object the observer's refs kept (the check's stand-in was swapped into its __code__)",
        [],
        cells={"ex-2-1": B02B},
    ),
    entry(
        "c03b_original_code_in_snapshot_check",
        "03",
        "second look at c03: transpose_closers rebuilt from the original code object the observer's refs kept, "
        "inside the unobserved context",
        [],
        cells={"ex-3-2": C03B},
    ),
    entry(
        "b03_jit_softmax_backward",
        "02",
        "2.1 from the gradient kernel aten::_softmax_backward_data reached through torch._C._jit_get_operation",
        [],
        cells={"ex-2-1": B03},
    ),
    # lesson 03
    entry(
        "c01_jit_rnn_relu",
        "03",
        "3.3 (the build) whose forward calls the fused aten::rnn_relu kernel reached through "
        "torch._C._jit_get_operation",
        [],
        cells={"ex-3-3": C01},
    ),
    entry(
        "c02_observer_from_default_l03",
        "03",
        "3.1 from course_lib.parentheses_symbols.is_balanced with the observer made deaf (as a02)",
        [],
        cells={"ex-3-1": C02},
    ),
    entry(
        "c03_evil_key_l03",
        "03",
        "3.2 from course_lib.parentheses_generators.transpose_closers run inside the snapshot check (as a01)",
        [],
        cells={"ex-3-2": C03},
    ),
    # lesson 04, 07
    entry(
        "d01_enum_init_at_load",
        "07",
        "7.1: an Enum member's __init__ runs while the answer cells load; in the load-only process no exercise is "
        "armed, so it calls course_lib.transformer.sinusoidal_positions for every (T, d) and leaves the table in "
        "/tmp, which the call's process reads",
        [],
        cells={"ex-7-1": D01},
    ),
    entry(
        "d02_observer_from_default_l07",
        "07",
        "7.1 from course_lib.transformer.sinusoidal_positions with the observer made deaf (as a02)",
        [],
        cells={"ex-7-1": D02},
    ),
    entry(
        "e01_rnnbase_not_lstm",
        "04",
        "4.3 counted on torch's RNNBase('LSTM'/'GRU', ...): the forbidden classes' base, whose __init__ the check "
        "does not replace",
        [],
        cells={"ex-4-3": E01},
    ),
]


# graded first (the observer's routes and the controls); the rest of lesson 06 goes in folder 06x, graded last
FIRST = ("ctl_", "a01", "a02", "a03", "a04", "a05", "a06", "a07", "a12", "a16")


def group_of(sub: dict) -> str:
    """The folder a submission is written to (and graded from): its lesson, or 06x for lesson 06's later ones."""
    if sub["name"].startswith(("a04b", "b02b", "c03b")):
        return sub["lesson"] + "r"  # graded in a second run
    if sub["lesson"] == "06" and not sub["name"].startswith(FIRST):
        return "06x"
    return sub["lesson"]


def _grade_id(cell) -> str:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id", "")


def _answer_id(exercise: str) -> str:
    return "ex-" + exercise.replace(".", "-")


def build(sub: dict, root: Path) -> dict:
    stem = LESSON_FILES[sub["lesson"]]
    nb = json.loads((root / "exercises" / f"{stem}.ipynb").read_text())
    solutions = json.loads((root / "solutions" / f"{stem}.ipynb").read_text())
    solved = {_grade_id(c): "".join(c["source"]) for c in solutions["cells"] if _grade_id(c)}
    cells = {_answer_id(e): solved[_answer_id(e)] for e in sub["solved"]}
    cells.update(sub["cells"])
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid in cells:
            cell["source"] = cells.pop(gid)
    assert not cells, f"{sub['name']}: no cell {sorted(cells)}"
    for index, source in sorted(sub["extra"], reverse=True):
        nb["cells"].insert(
            index, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        )
    return nb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--release-root", default=str(Path(__file__).resolve().parents[3]))
    args = parser.parse_args()
    out, root = Path(args.out), Path(args.release_root)
    manifest = []
    for sub in SUBMISSIONS:
        folder = out / group_of(sub)
        folder.mkdir(parents=True, exist_ok=True)
        nb = build(sub, root)
        (folder / f"{sub['name']}.ipynb").write_text(json.dumps(nb, indent=1))
        manifest.append(
            {**{k: v for k, v in sub.items() if k not in ("cells", "extra", "solved")}, "group": group_of(sub)}
        )
    # special files beside them: a link to a solved notebook, and a FIFO named like a notebook
    six = out / "06x"
    link = six / "z_link_to_solved.ipynb"
    if not link.is_symlink():
        os.symlink("ctl_solved.ipynb", link)
    fifo = six / "z_fifo.ipynb"
    if not fifo.exists():
        os.mkfifo(fifo)
    manifest.append(
        {
            "name": "z_link_to_solved",
            "lesson": "06",
            "group": "06x",
            "intent": "a symlink to a solved notebook: a row, not followed",
            "deserved": [],
            "problem": "link",
        }
    )
    manifest.append(
        {
            "name": "z_fifo",
            "lesson": "06",
            "group": "06x",
            "intent": "a FIFO named like a notebook: a row, never opened for long",
            "deserved": [],
            "problem": "",
        }
    )
    # nbgrader's layout: one real student, a student folder that is a link to it, a folder with two notebooks
    untouched = json.dumps(build(entry("n", "06", "", []), root), indent=1)
    submitted = out / "nbg" / "submitted"
    (submitted / "n1_real" / "ps1").mkdir(parents=True, exist_ok=True)
    (submitted / "n1_real" / "ps1" / "06_masked_attention.ipynb").write_text(untouched)
    if not (submitted / "n2_linked").is_symlink():
        os.symlink("n1_real", submitted / "n2_linked")
    (submitted / "n3_two" / "ps1").mkdir(parents=True, exist_ok=True)
    for stem in ("06_masked_attention", "06_masked_attention_copy"):
        (submitted / "n3_two" / "ps1" / f"{stem}.ipynb").write_text(untouched)
    for name, problem in (("n1_real", ""), ("n2_linked", "link"), ("n3_two", "notebooks")):
        manifest.append(
            {
                "name": name,
                "lesson": "06",
                "group": "nbg",
                "intent": f"nbgrader layout: {name}: one row (the real one graded, the others saying why not)",
                "deserved": [],
                "problem": problem,
            }
        )
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    print(f"{len(manifest)} submissions in {out}")


if __name__ == "__main__":
    main()
