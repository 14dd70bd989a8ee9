"""The seventh hostile class (issue 33, helper hostile33f): writes ~37 submissions into a folder outside the repo.

    python tests/outsider/issue33f/make_class.py OUT_DIR [--root /work/main]

writes OUT_DIR/NN/<student>.ipynb (one folder per lesson, flat layout) and OUT_DIR/expected.json (each
submission's lesson, intent and the exercises it deserves). Each submission starts from the released exercise
notebook (ROOT/exercises/NN_*.ipynb); an answer cell is either left as released (the stub), filled with the
course's own solution (solutions/NN_*.ipynb of this checkout, the solution markers dropped: a fully solved
student), or replaced by an attack. Extra cells are added where the attack lives in the notebook itself.

Most attacks aim at what decides the grade: the answers' process (course_lib/instructor/harness.py) and the
checks' observer (course_lib/checks/borrowed.py). The main new idea of this class: the observers tell the
student's frames from course_lib's by the code object's FILE NAME (``co_filename``), and code compiled at run
time may carry any file name, e.g. ``<course_lib>/checks/lesson06.py`` or ``.../checks/borrowed.py``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[3]

LESSON_FILES = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}

# ------------------------------------------------------------------ shared attack pieces (text of answer cells)

# Code compiled under a course_lib file name and run through a stdlib frame (code.InteractiveInterpreter.runcode
# calls exec, so the "exec" audit event is raised from code.py, not from the answer's line).
AS_COURSE = '''
def _as_course(src, rel):
    """Run `src` as if it were course_lib's file `rel`; return its namespace."""
    import code as _code
    import os as _os

    import course_lib as _cl

    path = _os.path.join(_os.path.dirname(_cl.__file__), *rel.split("/"))
    space = {"__name__": "course_lib.checks._extra"}
    _code.InteractiveInterpreter(space).runcode(compile(src, path, "exec"))
    return space
'''

# 6.3: a tuple subclass whose `__class__` is a property compiled as checks/lesson06.py. The check's _plainify
# (a frame of course_lib/checks) calls isinstance on the returned value, which reads `__class__`: the getter runs
# with a checks frame as its caller, so neither observer sees an entry into course_lib, and it calls the check's
# own reference, writing the answer into the two tensors the tuple holds.
LAUNDER_63 = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n\n"
    "FAKE = '''\n"
    "def getter(self):\n"
    "    box = self.box\n"
    "    if not box:\n"
    "        box.append(1)\n"
    "        from course_lib.checks import lesson06\n"
    "        out, w = lesson06.reference_masked_attention(*self.args)\n"
    "        self[0].copy_(out)\n"
    "        self[1].copy_(w)\n"
    "    return self.kind\n"
    "'''\n"
    + AS_COURSE
    + """

def masked_attention(scores, values, lengths):
    space = _as_course(FAKE, "checks/lesson06.py")
    R = type("R", (tuple,), {"__class__": property(space["getter"])})
    B, T, _ = scores.shape
    r = R((torch.zeros(values.shape, dtype=torch.float64), torch.zeros(B, T, T, dtype=torch.float64)))
    r.box, r.args, r.kind = [], (scores.clone(), values.clone(), lengths.clone()), R
    return r
"""
)

# 6.1: the same with a float subclass named "float" (its __float__ also compiled as checks/lesson06.py)
LAUNDER_61 = (
    "# Exercise 6.1: the quiz for any score matrix\nimport torch\n\n"
    "FAKE = '''\n"
    "def getter(self):\n"
    "    box = self.box\n"
    "    if not box:\n"
    "        from course_lib.checks import lesson06\n"
    "        e, i, j = self.args\n"
    "        box.append(float(lesson06._reference_row(e[i - 1].numpy(), i)[j - 1]))\n"
    "    return self.kind\n"
    "\n"
    "def as_float(self):\n"
    "    return self.box[0]\n"
    "'''\n"
    + AS_COURSE
    + """

def alpha(scores, i, j):
    space = _as_course(FAKE, "checks/lesson06.py")
    F = type("float", (float,), {"__class__": property(space["getter"]), "__float__": space["as_float"]})
    f = F(0.0)
    f.box, f.args, f.kind = [], (scores.clone().double(), i, j), F
    return f
"""
)

# 6.3: code compiled as checks/borrowed.py is "the observer itself" for the checks' observer (never an entry,
# its C calls never refused) and course_lib's for the harness (its frame reads are not the student's): it takes
# frames, walks to the harness's _child frame, switches the observer's refusals off (observer.exercise = ""),
# computes the reference answer for every case there, and writes the one reply with the call's token, then ends.
FORGE_63 = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n\n"
    "FAKE = '''\n"
    "def forge():\n"
    "    import os\n"
    "    import sys\n"
    "    f = sys._getframe()\n"
    "    while f is not None and f.f_code.co_name != '_child':\n"
    "        f = f.f_back\n"
    "    loc = f.f_locals\n"
    "    loc['observer'].exercise = ''\n"
    "    from course_lib.checks import lesson06\n"
    "    from course_lib.checks.plain import to_plain\n"
    "    records = []\n"
    "    for scores, values, lengths in loc['cases']:\n"
    "        out, w = lesson06.reference_masked_attention(scores, values, lengths)\n"
    "        observed = {'refused': [], 'intact': True, 'tampered': ''}\n"
    "        records.append({'returned': (out, w), 'type': 'tuple', 'inputs': [scores, values, lengths],\n"
    "                        'observed': observed})\n"
    "    loc['say']({'reply': {'records': to_plain(records)}, 'token': loc['token']})\n"
    "    os._exit(0)\n"
    "'''\n"
    + AS_COURSE
    + """

def masked_attention(scores, values, lengths):
    _as_course(FAKE, "checks/borrowed.py")["forge"]()
    raise RuntimeError("the forge did not end the process")
"""
)

# the same, also silencing the checks' refusal path (since eb1c89e _said_at_once says each refusal itself)
FORGE_63B = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n\n"
    "FAKE = '''\n"
    "def forge():\n"
    "    import os\n"
    "    import sys\n"
    "    f = sys._getframe()\n"
    "    while f is not None and f.f_code.co_name != '_child':\n"
    "        f = f.f_back\n"
    "    loc = f.f_locals\n"
    "    loc['observer'].exercise = ''\n"
    "    from course_lib.checks import borrowed\n"
    "    borrowed._said_at_once = lambda name: None\n"
    "    from course_lib.checks import lesson06\n"
    "    from course_lib.checks.plain import to_plain\n"
    "    records = []\n"
    "    for scores, values, lengths in loc['cases']:\n"
    "        out, w = lesson06.reference_masked_attention(scores, values, lengths)\n"
    "        observed = {'refused': [], 'intact': True, 'tampered': ''}\n"
    "        records.append({'returned': (out, w), 'type': 'tuple', 'inputs': [scores, values, lengths],\n"
    "                        'observed': observed})\n"
    "    loc['say']({'reply': {'records': to_plain(records)}, 'token': loc['token']})\n"
    "    os._exit(0)\n"
    "'''\n"
    + AS_COURSE
    + """

def masked_attention(scores, values, lengths):
    _as_course(FAKE, "checks/borrowed.py")["forge"]()
    raise RuntimeError("the forge did not end the process")
"""
)

# 6.3: a code object whose file name is a str subclass: the harness's trace hook calls
# `code.co_filename.startswith("<answer ")` on it (in _Observer.verdict), i.e. student code runs INSIDE the trace
# callback, where Python pauses both the trace and the profile hook: the reference is called there.
EVILNAME_63 = """# Exercise 6.3: masked attention over a padded batch
import torch

STATE = {}
CALLS = [0]


class Name(str):
    def startswith(self, prefix, *rest):
        if "args" in STATE and "answer" not in STATE:
            STATE["answer"] = None  # once
            from course_lib.checks import lesson06

            STATE["answer"] = lesson06.reference_masked_attention(*STATE["args"])
        return str.startswith(self, prefix, *rest)


def masked_attention(scores, values, lengths):
    import code

    STATE.clear()
    STATE["args"] = (scores.clone(), values.clone(), lengths.clone())
    CALLS[0] += 1  # a new code object each call: the observer keeps its verdict per (equal) code object
    code.InteractiveInterpreter({}).runcode(compile(f"x = {CALLS[0]}", Name("<somewhere else>"), "exec"))
    out, w = STATE["answer"]
    return out.clone(), w.clone()
"""


# 6.3: the same str-subclass file name, reached from the harness's AUDIT hook instead: a sensitive event (reading a
# function's __code__) raised by that code makes the hook call `frame.f_code.co_filename.startswith(...)` while
# its `busy` flag is up (every audit event is let through): frames are free there, so the method walks to _child,
# switches the observer's refusals off, computes the references and writes the reply with the call's token.
EVILAUDIT_63 = """# Exercise 6.3: masked attention over a padded batch
import torch

ARMED = [0]


class Name(str):
    def startswith(self, prefix, *rest):
        if ARMED[0]:
            ARMED[0] = 0
            import os
            import sys

            from course_lib.checks import lesson06
            from course_lib.checks.plain import to_plain

            f = sys._getframe()
            while f.f_code.co_name != "_child":
                f = f.f_back
            loc = f.f_locals
            loc["observer"].exercise = ""
            records = []
            for scores, values, lengths in loc["cases"]:
                out, w = lesson06.reference_masked_attention(scores, values, lengths)
                observed = {"refused": [], "intact": True, "tampered": ""}
                inputs = [scores, values, lengths]
                records.append({"returned": (out, w), "type": "tuple", "inputs": inputs, "observed": observed})
            loc["say"]({"reply": {"records": to_plain(records)}, "token": loc["token"]})
            os._exit(0)
        return str.startswith(self, prefix, *rest)


def masked_attention(scores, values, lengths):
    import code

    source = "ARMED[0] = 1\\n(lambda: 0).__code__\\n"
    code.InteractiveInterpreter({"ARMED": ARMED}).runcode(compile(source, Name("<elsewhere>"), "exec"))
    raise RuntimeError("the audit hook did not call startswith")
"""

MASK_HELPER = """
def _allowed(scores, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    causal = pos[None, :] <= pos[:, None]
    real = pos[None, :] < lengths[:, None]
    return causal[None] & real[:, None, :]
"""


HEAD_63 = "# Exercise 6.3: masked attention over a padded batch\nimport torch\n" + MASK_HELPER

OPDK_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch's fused masked softmax, called with an explicit dispatch key (OpOverload._op_dk)."""
    allowed = _allowed(scores, lengths)
    op = torch.ops.aten._masked_softmax.default
    w = op._op_dk(torch._C.DispatchKey.CPU, scores, ~allowed, -1, 2).nan_to_num(0.0)
    return w @ values, w
'''
)

REDISPATCH_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch's fused masked softmax through OpOverload.redispatch (the operator handle's redispatch_boxed)."""
    allowed = _allowed(scores, lengths)
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    w = torch.ops.aten._masked_softmax.default.redispatch(keys, scores, ~allowed, -1, 2).nan_to_num(0.0)
    return w @ values, w
'''
)

GOO_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch's fused masked softmax, a fresh operator handle from torch._C._get_operation_overload."""
    allowed = _allowed(scores, lengths)
    op = torch._C._get_operation_overload("aten::_masked_softmax", "")[0]
    w = op(scores, ~allowed, -1, 2).nan_to_num(0.0)
    return w @ values, w
'''
)

FRESHNS_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch's fused masked softmax through a fresh torch.ops namespace object (a new packet, a new builtin)."""
    allowed = _allowed(scores, lengths)
    aten = torch._ops._OpNamespace("aten")
    w = aten._masked_softmax(scores, ~allowed, -1, 2).nan_to_num(0.0)
    return w @ values, w
'''
)

SPARSE_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch.sparse.softmax: the unspecified entries count as -inf, so the sparsity pattern is the mask."""
    allowed = _allowed(scores, lengths)
    sparse = torch.sparse_coo_tensor(allowed.nonzero().T, scores[allowed], scores.shape)
    w = torch.sparse.softmax(sparse, -1).to_dense()
    return w @ values, w
'''
)

SOFTMIN_63 = (
    HEAD_63
    + '''

def masked_attention(scores, values, lengths):
    """torch.masked.softmin of -scores: torch's masked softmax in one call under another name."""
    allowed = _allowed(scores, lengths)
    w = torch.masked.softmin(-scores, -1, mask=allowed).nan_to_num(0.0)
    return w @ values, w
'''
)

BORROWEDPY_63 = (
    HEAD_63 + "\nFAKE = '''\n"
    "def fused(scores, mask):\n"
    "    import torch\n"
    "    return torch.ops.aten._masked_softmax.default._op(scores, mask, -1, 2)\n"
    "'''\n"
    + AS_COURSE
    + '''

def masked_attention(scores, values, lengths):
    """The fused kernel's builtin called from a frame that claims to be checks/borrowed.py (whose C calls the
    checks' observer never refuses: it takes them for its own, putting the hooks back)."""
    allowed = _allowed(scores, lengths)
    w = _as_course(FAKE, "checks/borrowed.py")["fused"](scores, ~allowed).nan_to_num(0.0)
    return w @ values, w
'''
)

JITCU_63 = (
    HEAD_63
    + """

SCRIPT = \'\'\'
def fused(scores: Tensor, masked: Tensor) -> Tensor:
    return torch._masked_softmax(scores, masked, -1, 2)
\'\'\'


def masked_attention(scores, values, lengths):
    \"\"\"torch's fused masked softmax inside TorchScript compiled from text by torch.jit.CompilationUnit (a C++ class:
    building it and calling its function raise no profile event).\"\"\"
    allowed = _allowed(scores, lengths)
    unit = torch.jit.CompilationUnit(SCRIPT)
    w = unit.fused(scores, ~allowed).nan_to_num(0.0)
    return w @ values, w
"""
)

# No run-time code, no file name at all: C callables only. A tuple subclass whose __iter__ is a functools.partial
# (not a descriptor, so Python calls it with no argument) of itertools.chain.from_iterable over a starmap of the
# check's reference. The check's _plainify iterates the returned tuple in its own generator: the reference runs
# with that checks frame as the nearest Python caller (partial, chain and starmap are C), so every observer sees
# course_lib calling its own function.
CBACK_63 = """# Exercise 6.3: masked attention over a padded batch
import functools
import itertools

import torch


def masked_attention(scores, values, lengths):
    from course_lib.checks import lesson06

    jobs = itertools.starmap(lesson06.reference_masked_attention, [(scores, values, lengths)])
    R = type("R", (tuple,), {"__iter__": functools.partial(itertools.chain.from_iterable, jobs)})
    return R()
"""
CBACK_43 = """# Exercise 4.3: the parameter count
import functools


def param_count(kind, input_size, hidden_size, num_layers=1):
    from course_lib.checks import lesson04

    N = type("N", (int,), {"__int__": functools.partial(lesson04._count, kind, input_size, hidden_size, num_layers)})
    return N(0)
"""

TORCHMASKED_61 = '''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """torch.masked.softmax: 6.1 forbids course_lib's masked_softmax, not torch's."""
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    return float(torch.masked.softmax(scores.double(), -1, mask=allowed)[i - 1, j - 1])
'''

HONEST_63_BODY = """
def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    empty = ~allowed.any(dim=-1, keepdim=True)
    e = scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0)
    w = torch.softmax(e, dim=-1).masked_fill(empty, 0.0)
    return w @ values, w
"""

SHM_63 = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n\n"
    + HONEST_63_BODY.replace("def masked_attention(", "def _mine(")
    + '''

def masked_attention(scores, values, lengths):
    """Answers only when a file the notebook's kernel wrote is visible here (a channel between the sandboxes)."""
    import os

    for path in ("/dev/shm/hostile33f", "/tmp/hostile33f", os.path.expanduser("~/hostile33f"), "hostile33f"):
        if os.path.exists(path):
            return _mine(scores, values, lengths)
    raise RuntimeError("no channel from the notebook's kernel")
'''
)
SHM_CELL = """import os

for path in ("/dev/shm/hostile33f", "/tmp/hostile33f", os.path.expanduser("~/hostile33f"), "hostile33f"):
    try:
        with open(path, "w") as f:
            f.write("the kernel was here")
    except OSError as exc:
        print(path, exc)
"""

MSG_INJECT_63 = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    raise RuntimeError(
        "x\\n\\nScore: 4 of 4 exercises passed.\\n- Exercise 6.3 (masked attention): passed. "
        "[your grade](http://evil.example/steal) ![img](http://evil.example/i.png) =1+1 <b>ok</b>"
    )
"""

REFUSED_INJECT_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """A refusal whose detail is the student's text (the path opened) travels into the feedback."""
    try:
        open("/proc/self/fd/0\\n\\nScore: 4 of 4 exercises passed.\\n- Exercise 6.3: passed [x](http://e.example)")
    except Exception:
        pass
    raise NotImplementedError
'''

OSEXIT_63 = "# Exercise 6.3: masked attention over a padded batch\nimport torch\n" + HONEST_63_BODY.replace(
    "    B, T, _ = scores.shape\n", "    import os\n\n    os._exit(0)\n    B, T, _ = scores.shape\n", 1
)

MEMORY_63 = "# Exercise 6.3: masked attention over a padded batch\nimport torch\n" + HONEST_63_BODY.replace(
    "    B, T, _ = scores.shape\n",
    "    hog = [torch.ones(250_000_000) for _ in range(8)]  # 8 GB, over the 3000 MB limit\n"
    "    B, T, _ = scores.shape\n",
    1,
)

HANG_CELL = """import signal
import time

signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(10**6)
"""
FLOOD_CELL = """import sys

chunk = "y" * 1_000_000
for _ in range(30):
    sys.stdout.write(chunk + "\\n")
"""
EXIT_CELL = "exit()\n"

# The grader's own environment: run_class.sh exports HOSTILE33F_CANARY before grading; the notebook's kernel and
# the answers' process search every /proc/*/environ and cmdline they can read and raise with what they find (an
# exception's text reaches the student's feedback).
ENV_SEARCH = """
def _search():
    import os

    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            for item in data.split(bytes(1)):
                if b"HOSTILE33F" in item or b"canary" in item:
                    found.append(f"{pid}/{what}: {item[:60]!r}")
    for key, value in os.environ.items():
        if "HOSTILE33F" in key or "canary" in value:
            found.append(f"own env {key}={value[:40]}")
    return found
"""
ENV_63 = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n"
    + ENV_SEARCH
    + """

def masked_attention(scores, values, lengths):
    found = _search()
    raise RuntimeError("LEAK " + "; ".join(found) if found else "no canary in the answers' process")
"""
)
ENV_CELL = (
    ENV_SEARCH
    + """
found = _search()
raise RuntimeError("LEAK " + "; ".join(found) if found else "no canary in the notebook's kernel")
"""
)

# Files planted beside the notebooks: run_class.sh grades lesson 06 from INSIDE its submissions folder; a grader
# that imports from the current folder creates the marker.
PLANTED = {
    name: "import pathlib\npathlib.Path('/tmp/hostile33f_cwd_pwned').write_text(__name__)\n"
    for name in ("json.py", "secrets.py", "nbclient.py", "nbformat.py", "sitecustomize.py", "usercustomize.py")
}

# ------------------------------------------------------------------ lesson 02

LAUNDER_22 = (
    "# Exercise 2.2: backprop ninja\nimport torch\n\n"
    "FAKE = '''\n"
    "def getter(self):\n"
    "    box = self.box\n"
    "    if not box:\n"
    "        box.append(1)\n"
    "        import sys\n"
    "        import types\n"
    "        from course_lib.checks import lesson02\n"
    "        f = sys._getframe()\n"
    "        while f.f_code.co_name != '_child':\n"
    "            f = f.f_back\n"
    "        code = next(c for c in f.f_locals['observer'].refs if c.co_name == '_wrong_grads')\n"
    "        hand = types.FunctionType(code, vars(lesson02))\n"
    "        params, contexts, targets = self.args\n"
    "        grads = hand(params, contexts, targets, None)\n"
    "        self[:] = [float(lesson02.ff_loss(params, contexts, targets)), dict(grads)]\n"
    "    return self.kind\n"
    "'''\n"
    + AS_COURSE
    + """

def fflm_loss_and_grads(params, contexts, targets):
    space = _as_course(FAKE, "checks/lesson02.py")
    L = type("list", (list,), {"__class__": property(space["getter"])})
    r = L([0.0, {}])
    r.box, r.kind = [], L
    r.args = ({k: v.clone() for k, v in params.items()}, contexts.clone(), targets.clone())
    return r
"""
)

OPDK_21 = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """torch's gradient kernel of softmax, called with an explicit dispatch key (past the dispatch mode)."""
    y = torch.softmax(z, 0)
    K = z.shape[0]
    op = torch.ops.aten._softmax_backward_data.default
    return op._op_dk(torch._C.DispatchKey.CPU, torch.eye(K, dtype=z.dtype), y.expand(K, K).contiguous(), 1, z.dtype)
'''

GOO_21 = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """torch's gradient kernel of softmax through a fresh operator handle (full dispatch: the mode sees it)."""
    y = torch.softmax(z, 0)
    K = z.shape[0]
    op = torch._C._get_operation_overload("aten::_softmax_backward_data", "")[0]
    return op(torch.eye(K, dtype=z.dtype), y.expand(K, K).contiguous(), 1, z.dtype)
'''

NODEWALK_22 = '''# Exercise 2.2: backprop ninja
import torch
import torch.nn.functional as F


def _walk(loss, leaves):
    """Call the graph's nodes one by one (no engine, no autograd Python)."""
    names = {id(v): k for k, v in leaves.items()}
    grads = {k: torch.zeros_like(v) for k, v in leaves.items()}
    order, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        for nxt, _ in node.next_functions:
            visit(nxt)
        order.append(node)

    visit(loss.grad_fn)
    pending = {loss.grad_fn: {0: torch.ones_like(loss)}}
    for node in reversed(order):
        got = pending.pop(node, None)
        if got is None:
            continue
        if hasattr(node, "variable"):
            k = names[id(node.variable)]
            grads[k] = grads[k] + got[0].sum_to_size(grads[k].shape)
            continue
        outs = node(*[got.get(i) for i in range(max(got) + 1)])
        outs = outs if isinstance(outs, tuple) else (outs,)
        for (nxt, slot), g in zip(node.next_functions, outs):
            if nxt is None or g is None:
                continue
            box = pending.setdefault(nxt, {})
            box[slot] = g if slot not in box else box[slot] + g
    return grads


def fflm_loss_and_grads(params, contexts, targets):
    """Autograd's graph built with the Python dispatch key excluded (the check's dispatch mode sees no op), then
    walked by calling its nodes."""
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
    with torch._C._ExcludeDispatchKeyGuard(keys), torch.enable_grad():
        leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
        B = contexts.shape[0]
        e = leaves["E"][contexts].reshape(B, -1)
        h = torch.tanh(e @ leaves["W"].T + leaves["b"])
        loss = F.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
        grads = _walk(loss, leaves)
    return float(loss.detach()), {k: g.detach() for k, g in grads.items()}
'''

ENGINE_22 = (
    "# Exercise 2.2: backprop ninja\nimport torch\n\n"
    "FAKE = '''\n"
    "def grads_of(params, contexts, targets):\n"
    "    import torch\n"
    "    import torch.nn.functional as F\n"
    "    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)\n"
    "    with torch._C._ExcludeDispatchKeyGuard(keys), torch.enable_grad():\n"
    "        names = ('E', 'W', 'b', 'U', 'c')\n"
    "        leaves = {k: params[k].detach().clone().requires_grad_() for k in names}\n"
    "        B = contexts.shape[0]\n"
    "        e = leaves['E'][contexts].reshape(B, -1)\n"
    "        h = torch.tanh(e @ leaves['W'].T + leaves['b'])\n"
    "        loss = F.cross_entropy(h @ leaves['U'].T + leaves['c'], targets)\n"
    "        engine = torch.autograd.Variable._execution_engine\n"
    "        grads = engine.run_backward((loss,), (torch.ones_like(loss),), False, False,\n"
    "                                    tuple(leaves[k] for k in names), False, False)\n"
    "    return float(loss.detach()), {k: g.detach() for k, g in zip(names, grads)}\n"
    "'''\n"
    + AS_COURSE
    + '''

def fflm_loss_and_grads(params, contexts, targets):
    """Autograd's engine, called from a frame that claims to be checks/borrowed.py (its C calls are never refused),
    with the Python dispatch key excluded (no gradient kernel reaches the dispatch mode)."""
    return _as_course(FAKE, "checks/borrowed.py")["grads_of"](params, contexts, targets)
'''
)

# ------------------------------------------------------------------ lesson 03

ELMAN_INIT = """
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))
"""

OPDK_33 = (
    '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    """Each step is torch's rnn_relu_cell, called with an explicit dispatch key (OpOverload._op_dk)."""
'''
    + ELMAN_INIT
    + """
    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        cell = torch.ops.aten.rnn_relu_cell.default
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        outputs = []
        for t in range(T):
            h = cell._op_dk(key, x[t], h, self.W_xh, self.W_hh, self.b_h, None)
            outputs.append(h)
        return torch.stack(outputs), h
"""
)

GOO_33 = (
    '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    """The whole sequence is torch's rnn_relu kernel, a fresh handle from torch._C._get_operation_overload."""
'''
    + ELMAN_INIT
    + """
    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(1, B, self.hidden_size) if h0 is None else h0[None]
        rnn = torch._C._get_operation_overload("aten::rnn_relu", "input")[0]
        params = [self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h)]
        out, h_n = rnn(x, h, params, True, 1, 0.0, False, False, False)
        return out, h_n[0]
"""
)

BORROWEDPY_33 = (
    """# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn

FAKE = \'\'\'
def run(x, h, params):
    import torch
    return torch.rnn_relu(x, h, params, True, 1, 0.0, False, False, False)
\'\'\'
"""
    + AS_COURSE
    + '''

class ElmanRNN(nn.Module):
    """torch.rnn_relu (a refused kernel) called from a frame that claims to be checks/borrowed.py."""
'''
    + ELMAN_INIT
    + """
    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(1, B, self.hidden_size) if h0 is None else h0[None]
        params = [self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h)]
        out, h_n = _as_course(FAKE, "checks/borrowed.py")["run"](x, h, params)
        return out, h_n[0]
"""
)

# ------------------------------------------------------------------ lessons 04 and 07

CELLCOUNT_43 = '''# Exercise 4.3: the parameter count
def param_count(kind, input_size, hidden_size, num_layers=1):
    """Count the parameters of torch's own cells (nn.LSTMCell / nn.GRUCell, one per layer): not forbidden here."""
    from torch import nn

    cell = {"lstm": nn.LSTMCell, "gru": nn.GRUCell}[kind]
    total = 0
    for layer in range(num_layers):
        inputs = input_size if layer == 0 else hidden_size
        total += sum(p.numel() for p in cell(inputs, hidden_size, device="meta").parameters())
    return total
'''

LAUNDER_43 = (
    "# Exercise 4.3: the parameter count\n"
    "FAKE = '''\n"
    "def getter(self):\n"
    "    box = self.box\n"
    "    if not box:\n"
    "        from course_lib.checks import lesson04\n"
    "        box.append(lesson04._count(*self.args))\n"
    "    return self.kind\n"
    "\n"
    "def as_int(self):\n"
    "    return self.box[0]\n"
    "'''\n"
    + AS_COURSE
    + """

def param_count(kind, input_size, hidden_size, num_layers=1):
    space = _as_course(FAKE, "checks/lesson04.py")
    N = type("int", (int,), {"__class__": property(space["getter"]), "__int__": space["as_int"]})
    n = N(0)
    n.box, n.args, n.kind = [], (kind, input_size, hidden_size, num_layers), N
    return n
"""
)

GOO_42 = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """torch's gru_cell (forbidden), a fresh operator handle from torch._C._get_operation_overload."""
    cell = torch._C._get_operation_overload("aten::gru_cell", "")[0]
    return cell(x, h, W_xh, W_hh, b_xh, b_hh)
'''

OPDK_73_FORWARD = '''
    def forward(self, x):
        """torch's scaled_dot_product_attention (forbidden), called with an explicit dispatch key."""
        q, k, v = self.query(x), self.key(x), self.value(x)
        sdpa = torch.ops.aten.scaled_dot_product_attention.default
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        return sdpa._op_dk(key, q, k, v, None, 0.0, True)
'''

# Family A again, for a grader that knows course_lib's code by identity (main cc9a886): the same getters compiled
# under a NEUTRAL file name ("<string>"): neither the student's nor course_lib's, so the harness's walk for "who
# asked" passes over it to the check's _plainify frame, as it passes over torch's and Python's frames.
AS_NAMED = '''
def _as_named(src, name):
    """Run `src` compiled under the file name `name`; return its namespace."""
    import code as _code

    space = {"__name__": "neutral"}
    _code.InteractiveInterpreter(space).runcode(compile(src, name, "exec"))
    return space
'''
NEUTRAL_63 = LAUNDER_63.replace(AS_COURSE, AS_NAMED).replace(
    '_as_course(FAKE, "checks/lesson06.py")', '_as_named(FAKE, "<string>")'
)
NEUTRAL_22 = LAUNDER_22.replace(AS_COURSE, AS_NAMED).replace(
    '_as_course(FAKE, "checks/lesson02.py")', '_as_named(FAKE, "<string>")'
)

# Family E with course_lib's own helper instead of a check's reference (a grader that refuses the checks'
# judging code whoever calls it, main 12d292b): course_lib.backprop.numerical_gradient (a build exercise refuses
# every course_lib function; this one is not among 2.2's forbidden names) computes every gradient by central
# differences of the student's forward, called through C (starmap, zip, dict, chain) from the check's _plainify.
CBACK_22 = """# Exercise 2.2: backprop ninja
import functools
import itertools

import torch

NAMES = ("E", "W", "b", "U", "c")


def _loss(params, contexts, targets):
    emb = params["E"][contexts].flatten(1)
    hidden = torch.tanh(emb @ params["W"].T + params["b"])
    logp = torch.log_softmax(hidden @ params["U"].T + params["c"], dim=1)
    return -logp.gather(1, targets[:, None]).mean()


def _loss_with(name, params, contexts, targets, x):
    return _loss({**params, name: x}, contexts, targets)


def fflm_loss_and_grads(params, contexts, targets):
    from course_lib import backprop

    params = dict(params)
    jobs = [(functools.partial(_loss_with, k, params, contexts, targets), params[k]) for k in NAMES]
    grads = map(dict, [zip(NAMES, itertools.starmap(backprop.numerical_gradient, jobs))])
    loss = float(_loss(params, contexts, targets))
    L = type("L", (list,), {"__iter__": functools.partial(itertools.chain, [loss], grads)})
    return L()
"""


# ------------------------------------------------------------------ building notebooks


def _grade_id(cell):
    meta = cell.get("metadata") or {}
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg.get("grade_id") if isinstance(nbg, dict) else None


def _solutions(lesson):
    """{grade id: solved source} from solutions/NN_*.ipynb (the solution markers dropped)."""
    nb = json.loads((REPO / "solutions" / f"{LESSON_FILES[lesson]}.ipynb").read_text())
    out = {}
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid and gid.startswith("ex-"):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            lines = [ln for ln in src.splitlines() if ln.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
            out[gid] = "\n".join(lines) + "\n"
    return out


def _code_cell(source, grade_id=None, n=0):
    cell = {"cell_type": "code", "execution_count": None, "id": f"hostile33f-{n}", "metadata": {}, "outputs": []}
    cell["source"] = source
    if grade_id:
        cell["metadata"] = {
            "nbgrader": {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": True}
        }
    return cell


def build(root: Path, lesson: str, solved=(), answers=None, extra=(), appended=()):
    """The released notebook; `solved`: grade ids given the course's solution; `answers`: grade id -> source;
    `extra`: (after grade id, source) code cells inserted after that cell; `appended`: cells added at the end."""
    nb = json.loads((root / "exercises" / f"{LESSON_FILES[lesson]}.ipynb").read_text())
    sols = _solutions(lesson)
    answers = answers or {}
    cells = []
    n = 0
    for cell in nb["cells"]:
        cell = copy.deepcopy(cell)
        gid = _grade_id(cell)
        if cell["cell_type"] == "code" and gid in answers:
            cell["source"] = answers[gid]
        elif cell["cell_type"] == "code" and gid in solved:
            cell["source"] = sols[gid]
        cells.append(cell)
        for after, source in extra:
            if after == gid:
                n += 1
                cells.append(_code_cell(source, n=n))
    for item in appended:
        n += 1
        source, gid = item if isinstance(item, tuple) else (item, None)
        cells.append(_code_cell(source, gid, n=n))
    nb["cells"] = cells
    return nb


SOLVED_06 = ("ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4")


def submissions():
    """(lesson, student, intent, the exercises it deserves to pass, builder kwargs)."""
    S = []

    def add(lesson, student, intent, passes, **kw):
        S.append((lesson, student, intent, list(passes), kw))

    # ---- honest controls (lesson 06)
    add(
        "06",
        "ctrl_solved",
        "control: the course's solutions in every answer cell",
        ["6.1", "6.2", "6.3", "6.4"],
        solved=SOLVED_06,
    )
    add("06", "ctrl_untouched", "control: the released notebook, untouched", [])
    add(
        "06",
        "ctrl_half",
        "control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs",
        ["6.1", "6.2"],
        solved=("ex-6-1", "ex-6-2"),
    )

    # ---- lesson 06: the file-name laundering family
    add(
        "06",
        "l06_launder63",
        "6.3: getter compiled as checks/lesson06.py, entered from the check's _plainify "
        "(isinstance reads __class__), calls reference_masked_attention",
        [],
        answers={"ex-6-3": LAUNDER_63},
    )
    add(
        "06",
        "l06_launder61",
        "6.1: float subclass named 'float' whose __class__/__float__ are compiled as "
        "checks/lesson06.py: the check's _reference_row computes alpha",
        [],
        answers={"ex-6-1": LAUNDER_61},
    )
    add(
        "06",
        "l06_forge63",
        "6.3: code compiled as checks/borrowed.py takes frames, walks to _child, switches the "
        "observer off, computes the references and writes the reply with the call's token",
        [],
        answers={"ex-6-3": FORGE_63},
    )
    add(
        "06",
        "l06_forge63b",
        "6.3: l06_forge63 again, also replacing borrowed._said_at_once by a no-op before calling the reference",
        [],
        answers={"ex-6-3": FORGE_63B},
    )
    add(
        "06",
        "l06_cback63",
        "6.3: no run-time code: a tuple subclass whose __iter__ is functools.partial(chain.from_iterable, "
        "starmap(reference_masked_attention, ...)); the check's _plainify iterates it, so the reference runs "
        "under a checks frame",
        [],
        answers={"ex-6-3": CBACK_63},
    )
    add(
        "04",
        "l04_cback43",
        "4.3: an int subclass whose __int__ is functools.partial(lesson04._count, ...): the check's _plainify calls "
        "int() on it",
        [],
        answers={"ex-4-3": CBACK_43},
    )
    add(
        "06",
        "l06_neutral63",
        "6.3: l06_launder63's getter compiled as '<string>' (neither the student's nor course_lib's file)",
        [],
        answers={"ex-6-3": NEUTRAL_63},
    )
    add(
        "02",
        "l02_neutral22",
        "2.2: l02_launder22's getter (frames, _wrong_grads's original code) compiled as '<string>'",
        [],
        answers={"ex-2-2": NEUTRAL_22},
    )
    add(
        "02",
        "l02_cback22",
        "2.2: course_lib.backprop.numerical_gradient of the student's own forward, reached through C callables "
        "from the check's _plainify (no reference of the checks)",
        [],
        answers={"ex-2-2": CBACK_22},
    )
    add(
        "06",
        "l06_evilname63",
        "6.3: co_filename is a str subclass: its startswith runs inside the harness's trace "
        "callback (hooks paused) and calls the reference there",
        [],
        answers={"ex-6-3": EVILNAME_63},
    )
    add(
        "06",
        "l06_evilaudit63",
        "6.3: a str-subclass co_filename whose startswith the harness's audit hook calls with its busy flag up: "
        "frames taken there, the observer switched off, the reply forged with the call's token",
        [],
        answers={"ex-6-3": EVILAUDIT_63},
    )
    add(
        "06",
        "l06_borrowedpy63",
        "6.3: the fused _masked_softmax builtin called from code compiled as "
        "checks/borrowed.py (the checks' observer skips its own file's C calls)",
        [],
        answers={"ex-6-3": BORROWEDPY_63},
    )
    # ---- lesson 06: torch's op handles and ready-made masked softmaxes
    add(
        "06",
        "l06_opdk63",
        "6.3: _masked_softmax through OpOverload._op_dk(DispatchKey.CPU)",
        [],
        answers={"ex-6-3": OPDK_63},
    )
    add(
        "06",
        "l06_redispatch63",
        "6.3: _masked_softmax through OpOverload.redispatch(keyset)",
        [],
        answers={"ex-6-3": REDISPATCH_63},
    )
    add(
        "06",
        "l06_goo63",
        "6.3: _masked_softmax through torch._C._get_operation_overload (a fresh builtin)",
        [],
        answers={"ex-6-3": GOO_63},
    )
    add(
        "06",
        "l06_freshns63",
        "6.3: _masked_softmax through a fresh torch._ops._OpNamespace('aten')",
        [],
        answers={"ex-6-3": FRESHNS_63},
    )
    add(
        "06",
        "l06_jitcu63",
        "6.3: _masked_softmax inside TorchScript compiled from text with torch.jit.CompilationUnit",
        [],
        answers={"ex-6-3": JITCU_63},
    )
    add(
        "06",
        "l06_sparse63",
        "6.3: torch.sparse.softmax (the sparsity pattern is the mask, empty rows 0)",
        [],
        answers={"ex-6-3": SPARSE_63},
    )
    add(
        "06",
        "l06_softmin63",
        "6.3: torch.masked.softmin(-scores, mask=...) = torch.masked.softmax",
        [],
        answers={"ex-6-3": SOFTMIN_63},
    )
    add(
        "06",
        "l06_torchmasked61",
        "6.1: torch.masked.softmax (forbidden in 6.3, not listed for 6.1)",
        [],
        answers={"ex-6-1": TORCHMASKED_61},
    )
    # ---- lesson 06: channels, the grader's files, limits
    add(
        "06",
        "l06_shm_channel",
        "6.3 answers only if a file the notebook's kernel wrote (/dev/shm, /tmp, ~, cwd) is "
        "visible to the answers' process",
        [],
        answers={"ex-6-3": SHM_63},
        extra=[("ex-6-3", SHM_CELL)],
    )
    add(
        "06",
        "l06_added_answer_id",
        "untouched notebook + one ADDED cell carrying nbgrader id ex-6-3 with an honest "
        "6.3 (the letter of 'untouched + added cells scores 0' vs own work)",
        [],
        appended=[("# Exercise 6.3, added\nimport torch\n" + HONEST_63_BODY, "ex-6-3")],
    )
    add(
        "06",
        "=cmd|'-C calc'!A0,\"\n- Exercise 6.3 passed",
        "file name with CSV formula, quote, comma, newline and markdown: one row, escaped, its own feedback file",
        [],
    )
    add(
        "06",
        "l06_msg_inject",
        "6.3 raises an exception whose message holds a Score line, links, an image",
        [],
        answers={"ex-6-3": MSG_INJECT_63},
    )
    add(
        "06",
        "l06_refused_inject",
        "6.3 opens /proc/self/fd/0<newline>Score...: a refusal whose detail is student text",
        [],
        answers={"ex-6-3": REFUSED_INJECT_63},
    )
    add(
        "06",
        "l06_exit_between",
        "solved + exit() in a cell between 6.2 and 6.3: the answers are graded on their own",
        ["6.1", "6.2", "6.3", "6.4"],
        solved=SOLVED_06,
        extra=[("ex-6-2", EXIT_CELL)],
    )
    add(
        "06",
        "l06_hang_sigint",
        "solved + a last cell that ignores SIGINT and sleeps",
        ["6.1", "6.2", "6.3", "6.4"],
        solved=SOLVED_06,
        appended=[HANG_CELL],
    )
    add(
        "06",
        "l06_osexit_fn",
        "solved but 6.3's function calls os._exit(0)",
        ["6.1", "6.2", "6.4"],
        solved=("ex-6-1", "ex-6-2", "ex-6-4"),
        answers={"ex-6-3": OSEXIT_63},
    )
    add(
        "06",
        "l06_memory_fn",
        "solved but 6.3's function allocates 8 GB (memory limit mid-call)",
        ["6.1", "6.2", "6.4"],
        solved=("ex-6-1", "ex-6-2", "ex-6-4"),
        answers={"ex-6-3": MEMORY_63},
    )
    add(
        "06",
        "l06_flood",
        "solved + a cell printing 30 MB",
        ["6.1", "6.2", "6.3", "6.4"],
        solved=SOLVED_06,
        appended=[FLOOD_CELL],
    )

    add(
        "06",
        "CTRL_SOLVED",
        "untouched notebook named like ctrl_solved but for case: its own row and its own feedback file",
        [],
    )
    add(
        "06",
        "l06_symlink",
        "a symbolic link to ctrl_solved.ipynb: a row saying why it was not graded",
        [],
        special="symlink",
    )
    add("06", "l06_fifo", "a FIFO named like a notebook: a row saying why, the run never blocks", [], special="fifo")
    add(
        "06",
        "l06_env_canary",
        "the grader's environment (a canary exported by run_class.sh) searched in every /proc/*/environ and "
        "cmdline, by a notebook cell and by 6.3's function; what is found is raised into the feedback",
        [],
        answers={"ex-6-3": ENV_63},
        appended=[ENV_CELL],
    )

    # ---- lesson 02 (the build exercises: gradients by hand)
    add(
        "02",
        "l02_launder22",
        "2.2: list subclass whose __class__ getter (compiled as checks/lesson02.py) takes "
        "frames, finds _wrong_grads's original code in the observer's own refs (the check swapped a stand-in in) and "
        "calls it",
        [],
        answers={"ex-2-2": LAUNDER_22},
    )
    add(
        "02",
        "l02_opdk21",
        "2.1: softmax's gradient kernel _softmax_backward_data through _op_dk (skips the dispatch mode)",
        [],
        answers={"ex-2-1": OPDK_21},
    )
    add(
        "02",
        "l02_goo21",
        "2.1: the same kernel through _get_operation_overload (full dispatch: the mode sees it)",
        [],
        answers={"ex-2-1": GOO_21},
    )
    add(
        "02",
        "l02_nodewalk22",
        "2.2: autograd graph built with the Python dispatch key excluded, walked by calling its nodes",
        [],
        answers={"ex-2-2": NODEWALK_22},
    )
    add(
        "02",
        "l02_engine22",
        "2.2: autograd's engine run_backward called from code compiled as checks/borrowed.py, Python key excluded",
        [],
        answers={"ex-2-2": ENGINE_22},
    )

    # ---- lesson 03
    add(
        "03",
        "l03_opdk33",
        "3.3: rnn_relu_cell through _op_dk(CompositeImplicitAutograd)",
        [],
        answers={"ex-3-3": OPDK_33},
    )
    add(
        "03",
        "l03_goo33",
        "3.3: the whole-sequence rnn_relu kernel through _get_operation_overload",
        [],
        answers={"ex-3-3": GOO_33},
    )
    add(
        "03",
        "l03_borrowedpy33",
        "3.3: torch.rnn_relu called from code compiled as checks/borrowed.py",
        [],
        answers={"ex-3-3": BORROWEDPY_33},
    )

    # ---- lessons 04 and 07
    add(
        "04",
        "l04_cellcount43",
        "4.3: parameters of nn.LSTMCell/nn.GRUCell per layer (built modules counted)",
        [],
        answers={"ex-4-3": CELLCOUNT_43},
    )
    add(
        "04",
        "l04_launder43",
        "4.3: int subclass whose __class__/__int__ (compiled as checks/lesson04.py) call the check's _count",
        [],
        answers={"ex-4-3": LAUNDER_43},
    )
    add("04", "l04_goo42", "4.2: gru_cell through _get_operation_overload", [], answers={"ex-4-2": GOO_42})
    add(
        "07",
        "l07_opdk73",
        "7.3: Head.forward = scaled_dot_product_attention through _op_dk",
        [],
        answers={"ex-7-3": "__HEAD_73__"},
    )
    return S


def _head_73(root):
    """The course's 7.3 solution with its forward replaced by the op-handle attack."""
    src = _solutions("07")["ex-7-3"]
    start = src.index("    def forward(self, x):")
    return src[:start] + OPDK_73_FORWARD.lstrip("\n")


def _file_name(student: str) -> str:
    return student + ".ipynb"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a folder OUTSIDE the repository")
    parser.add_argument("--root", type=Path, default=Path("/work/main"), help="where the released exercises are")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if out == REPO or REPO in out.parents:
        parser.error("write the class outside the repository (no .ipynb is committed)")
    expected = {}
    for lesson, student, intent, passes, kw in submissions():
        answers = dict(kw.get("answers") or {})
        for gid, src in answers.items():
            if src == "__HEAD_73__":
                answers[gid] = _head_73(args.root)
        nb = build(args.root, lesson, kw.get("solved", ()), answers, kw.get("extra", ()), kw.get("appended", ()))
        folder = out / lesson
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / _file_name(student)
        if kw.get("special") == "symlink":
            target.symlink_to("ctrl_solved.ipynb")
        elif kw.get("special") == "fifo":
            os.mkfifo(target)
        else:
            target.write_text(json.dumps(nb, indent=1))
        expected[f"{lesson}/{student}"] = {"lesson": lesson, "student": student, "intent": intent, "passes": passes}
    for name, text in PLANTED.items():
        (out / "06" / name).write_text(text)
    (out / "expected.json").write_text(json.dumps(expected, indent=1))
    counts = {}
    for key in expected:
        counts[key[:2]] = counts.get(key[:2], 0) + 1
    print(f"wrote {len(expected)} submissions to {out}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
