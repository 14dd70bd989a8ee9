"""A hostile class for `course-lib grade` (issue 33, class "g"), written without reading the grader's tests.

Writes, into a folder outside the repository (default /tmp/hostile33g/class/), one folder per lesson of
submissions (`<lesson>/<student>.ipynb`), some stray files that must never be imported (a `json.py` in the
folder the grader is started from), and `manifest.json`: for each submission its lesson, a one-line intent
and the exercises it deserves to pass. `compare.py` reads the manifest beside the grader's CSVs.

A "solved" answer is the solution block of `solutions/NN_*.ipynb` put into the released exercise
notebook's answer cell, as a student who solved it would have it; the hostile notebooks keep only the
setup, answer and check cells (the lesson's experiments would only cost grading time), plus the cells
their attack adds.

    python tests/outsider/issue33g/make_class.py [--root /work/main] [--out /tmp/hostile33g/class]
"""

import argparse
import copy
import json
import os
from pathlib import Path

LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
SECRET = "HOSTILE33G_SECRET_d41d8cd98f"  # run_class.sh puts it in the grader's environment


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def solution_text(source: str) -> str:
    """The answer cell as a student who solved it has it: the solution markers' lines dropped."""
    return "\n".join(
        line for line in source.splitlines() if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line
    )


def load(root: Path, lesson: str):
    name = LESSONS[lesson]
    released = json.loads((root / "exercises" / f"{name}.ipynb").read_text())
    solved_nb = json.loads((root / "solutions" / f"{name}.ipynb").read_text())
    answers = {grade_id(c): solution_text("".join(c["source"])) for c in solved_nb["cells"] if grade_id(c)}
    return released, answers


def code_cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def notebook(released, answers, *, solve=(), replace=None, add=(), add_first=(), strip=True, solve_all=False):
    """The released notebook with the answer cells in `solve` (or all) solved, those in `replace` given
    the attack's text, the cells `add` appended (a list of (after grade id or None, source)), and
    (strip) the code cells that are neither the setup cell nor nbgrader's dropped."""
    nb = copy.deepcopy(released)
    replace = replace or {}
    cells = []
    setup_seen = 0
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and not gid:
            setup_seen += 1
            if strip and setup_seen > 1:
                continue
        if gid in replace:
            cell["source"] = replace[gid]
        elif gid and gid.startswith("ex-") and (solve_all or gid in solve) and gid in answers:
            cell["source"] = answers[gid]
        cell["outputs"] = [] if cell["cell_type"] == "code" else cell.get("outputs")
        if cell["cell_type"] != "code":
            cell.pop("outputs", None)
        cells.append(cell)
        for after, source in add:
            if after == gid and gid:
                cells.append(code_cell(source))
    for source in add_first:
        cells.insert(2, code_cell(source))
    for after, source in add:
        if after is None:
            cells.append(code_cell(source))
    seen = set()
    for i, cell in enumerate(cells):  # unique ids (nbformat 4.5)
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = f"hostile-{i}"
        seen.add(cell["id"])
    nb["cells"] = cells
    return nb


# ----------------------------------------------------------------------------------------------------------
# Attack texts (answer cells must pass the harness's top-level rules to load: imports, defs, constants)

PATCH_CHECKS = """
# added cell: every check passes, as far as this kernel can tell
from course_lib.checks import protocol
import course_lib.checks as _c
class _Fake:
    passed = True
    def __repr__(self):
        return "passed"
for _name in dir(protocol):
    _obj = getattr(protocol, _name)
    if isinstance(_obj, type) and hasattr(_obj, "run"):
        _obj.run = lambda self, *a, **k: _Fake()
        _obj.__call__ = lambda self, *a, **k: _Fake()
print("Score: 4/4")
"""

POST_RUN_HOOK = """
# added cell: after each of the grader's cells, write what a pass would look like everywhere it might be read
import glob, json, os
def _forge(*args, **kwargs):
    for d in [".", os.path.expanduser("~"), "/tmp"] + glob.glob("/tmp/*/"):
        for name in ("results.json", "grades.json", ".results", "result.json"):
            try:
                with open(os.path.join(d, name), "w") as f:
                    json.dump({"6.1": True, "6.2": True, "6.3": True, "6.4": True, "score": 4, "passed": True}, f)
            except OSError:
                pass
    try:
        g = get_ipython().user_ns
        for k in list(g):
            if k.startswith("result"):
                g[k] = type("R", (), {"passed": True, "__repr__": lambda s: "passed"})()
    except Exception:
        pass
get_ipython().events.register("post_run_cell", _forge)
get_ipython().events.register("pre_run_cell", _forge)
"""

SDPA_6_3 = """# Exercise 6.3: masked attention over a padded batch
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    bias = torch.zeros_like(scores).masked_fill(~allowed, float("-inf"))
    weights = F.scaled_dot_product_attention(scores, eye, eye, attn_mask=bias, scale=1.0)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
"""

MASKED_SOFTMAX_OP_6_3 = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    op = getattr(getattr(torch.ops, "at" + "en"), "_mas" + "ked_softmax")
    weights = op(scores, ~allowed, -1, None)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
"""

MAP_REFERENCE_6_3 = """# Exercise 6.3: masked attention over a padded batch
import course_lib.checks.lesson06 as L


def masked_attention(scores, values, lengths):
    # the reference called by map (C, no frame of mine between)
    return list(map(L.reference_masked_attention, [scores], [values], [lengths]))[0]
"""

PICKLE_REFERENCE_6_3 = """# Exercise 6.3: masked attention over a padded batch
import pickle
import course_lib.checks.lesson06 as L


class Box:
    def __init__(self, args):
        self.args = args

    def __reduce__(self):
        return (L.reference_masked_attention, self.args)


def masked_attention(scores, values, lengths):
    # the C unpickler calls the reference itself
    return pickle.loads(pickle.dumps(Box((scores, values, lengths))))
"""

FINALIZE_REFERENCE_6_3 = """# Exercise 6.3: masked attention over a padded batch
import weakref
import course_lib.checks.lesson06 as L


class Token:
    pass


def masked_attention(scores, values, lengths):
    t = Token()
    g = weakref.finalize(t, L.reference_masked_attention, scores, values, lengths)
    r = g()  # calling the finalizer runs the callback from weakref.py (torch and Python's code, not mine)
    return r
"""

ALIAS_REFERENCE_6_3 = """# Exercise 6.3: masked attention over a padded batch
from course_lib.checks.lesson06 import reference_masked_attention as masked_attention
"""

FROM_FILE_6_3 = """# Exercise 6.3: masked attention over a padded batch
import os
import torch
import course_lib.checks.lesson06 as L


def masked_attention(scores, values, lengths):
    # read the checks' source with torch's own file reader (C++ mmap, no Python open), keep the two
    # functions the reference needs, rename them (so the code is not a copy), and run them
    path = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "x")
    for base in ("/opt/course-lib/course_lib/checks/lesson06.py", L.__file__):
        try:
            size = os.stat(base).st_size
            raw = torch.from_file(base, shared=False, size=size, dtype=torch.uint8)
            text = bytes(raw.tolist()).decode()
            break
        except Exception:
            text = ""
    parts = []
    for head in ("def _lower(", "def _allowed(", "def reference_masked_attention("):
        start = text.index(head)
        parts.append(text[start : text.index("\\n\\n\\n", start)])
    chunk = "\\n\\n".join(parts).replace("_allowed", "_my_allowed").replace("_lower", "_my_lower").replace("reference_masked_attention", "my_attention")
    ns = {"torch": torch, "np": L.np}
    exec(compile(chunk, "<mine>", "exec"), ns)
    return ns["my_attention"](scores, values, lengths)
"""

HELPER_MASK_6_3 = """# Exercise 6.3: masked attention over a padded batch
import torch
from torch import nn


def masked_attention(scores, values, lengths):
    # torch's ready-made causal mask helper (the text says torch's masking helpers are out of reach)
    B, T, _ = scores.shape
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=scores.dtype)  # -inf above the diagonal
    pad = torch.arange(T)[None, :] >= lengths[:, None]
    e = (scores + causal).masked_fill(pad[:, None, :], float("-inf"))
    empty = torch.isinf(e).all(dim=-1, keepdim=True)
    w = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return w @ values, w
"""

ENV_LEAK_6_1 = """# Exercise 6.1: the quiz for any score matrix
import os


def alpha(scores, i, j):
    found = []
    for pid in ["1", "self", "2", "3", "thread-self"] + [p for p in os.listdir("/proc") if p.isdigit()][:20]:
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    found.append(f"{pid}/{what}=" + f.read().decode(errors="replace").replace("\\0", " | "))
            except Exception as exc:
                found.append(f"{pid}/{what}:{type(exc).__name__}")
    for path in ("/proc/self/mountinfo", "/etc/hostname", "/proc/self/cgroup"):
        try:
            with open(path) as f:
                found.append(path + "=" + f.read()[:3000])
        except Exception as exc:
            found.append(f"{path}:{type(exc).__name__}")
    raise ValueError(" ;; ".join(found)[:20000])
"""

ENV_LEAK_KERNEL = """
# added cell (kernel run): the environment of every process this sandbox shows, into the feedback
import os
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        found.append(open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace"))
    except Exception as exc:
        found.append(type(exc).__name__)
found.append(repr(dict(os.environ)))
raise RuntimeError("ENV " + " || ".join(found).replace("\\0", " | ")[:20000])
"""

INJECT_6_1 = """# Exercise 6.1: the quiz for any score matrix
def alpha(scores, i, j):
    name = "Evil\\nScore: 4/4\\n\\r\\u2028Score: 4/4\\u0085## 6.1 passed\\n![x](http://evil.example/x.png)"
    cls = type(name, (Exception,), {})
    raise cls('=HYPERLINK("http://evil.example","click")\\n"passed",4,4\\r\\n\\u2028Score: 4/4 [link](http://e)')
"""

FORGE_FDS_6_1 = """# Exercise 6.1: the quiz for any score matrix
import json
import os


def alpha(scores, i, j):
    # every kind of reply line I can imagine, on every descriptor I hold
    lines = []
    for key in ("returned", "result", "reply", "records"):
        lines.append(json.dumps({key: 0.5, "exercise": "6.1", "passed": True, "observed": {"refused": [], "intact": True}}))
    for fd in range(0, 64):
        for line in lines:
            try:
                os.write(fd, (line + "\\n").encode())
            except OSError:
                pass
    return "not a float"
"""

FLOOD_6_2 = """# Exercise 6.2: padding and the future, by hand
import math


def by_hand():
    exp = math.exp
    print("x" * (50 * 1024 * 1024))
    return {
        "alpha_22": exp(1) / (exp(1) + exp(1)),
        "alpha_33": exp(1) / (exp(0) + exp(1) + exp(1)),
        "alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2)),
        "alpha_44": 0.0,
    }
"""

FLOOD_KERNEL = """
# added cell (kernel run): an output flood
for _ in range(200):
    print("y" * (1024 * 1024))
"""

DEEP_6_2 = """# Exercise 6.2: padding and the future, by hand
def by_hand():
    deep = 0.5
    for _ in range(300000):
        deep = [deep]
    return {"alpha_22": deep, "alpha_33": 0.5, "alpha_42": 0.04, "alpha_44": 0.0}
"""

HUGE_6_2 = """# Exercise 6.2: padding and the future, by hand
def by_hand():
    d = {"alpha_22": 0.5, "alpha_33": 0.42, "alpha_42": 0.04, "alpha_44": 0.0}
    for k in range(3_000_000):
        d[f"k{k}"] = k
    return d
"""

GLOBALS_6_4 = """# Exercise 6.4: what leaks
def leak_test(masked_attention, scores, values, lengths):
    # the check hands in a function of course_lib's: its module holds the exercise's own reference
    ref = masked_attention.__globals__["_reference_leaks"]
    return ref(scores, values, lengths, attention=masked_attention)
"""

MODULES_6_4 = """# Exercise 6.4: what leaks
import sys


def leak_test(masked_attention, scores, values, lengths):
    mod = sys.modules[masked_attention.__module__]
    leaks = vars(mod)["_reference_leaks"]
    return dict(leaks(scores, values, lengths, masked_attention))
"""

MEMORY_6_4 = """# Exercise 6.4: what leaks
def leak_test(masked_attention, scores, values, lengths):
    hog = []
    while True:
        hog.append(bytearray(256 * 1024 * 1024))
"""

EXIT_6_2 = """# Exercise 6.2: padding and the future, by hand
import os


def by_hand():
    os._exit(0)
"""

THREAD_6_1 = """# Exercise 6.1: the quiz for any score matrix
import threading
import torch


def alpha(scores, i, j):
    # a timer that would outlive the call and write a reply later
    threading.Timer(0.01, lambda: print('{"returned": 0.5}', flush=True)).start()
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)[i - 1, j - 1].item()
"""

ANTIGRAVITY_6_2 = """# Exercise 6.2: padding and the future, by hand
import antigravity
import math


def by_hand():
    exp = math.exp
    return {
        "alpha_22": exp(1) / (exp(1) + exp(1)),
        "alpha_33": exp(1) / (exp(0) + exp(1) + exp(1)),
        "alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2)),
        "alpha_44": 0.0,
    }
"""

DUNDER_NAME_6_3 = """# Exercise 6.3: masked attention over a padded batch
__name__ = "course_lib.checks.lesson06"
__file__ = "/opt/course-lib/course_lib/checks/lesson06.py"
import course_lib.attention as A


def masked_attention(scores, values, lengths):
    # my function claims to live in the checks' module, then calls course_lib's masked softmax
    B, T, _ = scores.shape
    import torch
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    w = A.masked_softmax(scores, allowed)
    w = torch.nan_to_num(w, nan=0.0)
    return w @ values, w
"""

SUBCLASS_6_2 = """# Exercise 6.2: padding and the future, by hand
class Num(float):
    def __eq__(self, other):
        return True

    def __float__(self):
        return 0.5


class Answers(dict):
    def keys(self):
        return ["alpha_22", "alpha_33", "alpha_42", "alpha_44"]


def by_hand():
    return Answers(alpha_22=Num(0.0), alpha_33=Num(0.0), alpha_42=Num(0.0), alpha_44=Num(0.0))
"""

HANG_KERNEL = """
# added cell (kernel run): the kernel stops itself
import os, signal
os.kill(os.getpid(), signal.SIGSTOP)
"""

EXIT_KERNEL = """
# added cell (kernel run): quit between cells
exit()
"""

SIGINT_KERNEL = """
# added cell (kernel run): ignore the interrupt, then sleep without CPU
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(100000)
"""


# --- fused kernels called by C (itertools.starmap, map, functools.partial): no Python frame, no c_call event

STARMAP_OP_6_3 = """# Exercise 6.3: masked attention over a padded batch
import functools
import itertools
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    kernel = getattr(torch.ops.aten, "scaled_dot_" + "product_attention").default._op  # the C function itself
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()
    weights = next(itertools.starmap(functools.partial(kernel, scale=1.0), [(scores, eye, eye, allowed)]))
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
"""

CLASS_BODY_6_3 = """# Exercise 6.3: masked attention over a padded batch
import functools
import itertools
import torch


class _Kernels:
    from torch._C._nn import scaled_dot_product_attention as sdpa  # kept in a class, not a module


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()
    call = functools.partial(vars(_Kernels)["sdpa"], scale=1.0)
    weights = next(itertools.starmap(call, [(scores, eye, eye, allowed)]))
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
"""

CLASS_BODY_DIRECT_6_3 = CLASS_BODY_6_3.replace(
    "next(itertools.starmap(call, [(scores, eye, eye, allowed)]))", "call(scores, eye, eye, allowed)"
)

MAP_MASKED_SOFTMAX_6_1 = """# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    kernel = getattr(torch.ops.aten, "_masked" + "_softmax").default._op
    weights = next(map(kernel, [scores], [~allowed], [-1]))
    return weights[i - 1, j - 1].item()
"""

STARMAP_HEAD_7_3 = """# Exercise 7.3: one head of self-attention
import functools
import itertools
import math

import torch
from torch import nn


class _Kernels:
    from torch._C._nn import scaled_dot_product_attention as sdpa


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        call = functools.partial(vars(_Kernels)["sdpa"], is_causal=True)
        return next(itertools.starmap(call, [(q, k, v)]))
"""

STARMAP_GRU_4_2 = """# Exercise 4.2: one GRU step
import itertools


class _Kernels:
    from torch import gru_cell as cell


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return next(itertools.starmap(vars(_Kernels)["cell"], [(x, h, W_xh, W_hh, b_xh, b_hh)]))
"""

# autograd itself, every switch and the engine reached by C calls only
AUTOGRAD_C_2_2 = """# Exercise 2.2: backprop ninja
import itertools

import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    # step out of every dispatch mode and turn recording on, all by C calls (map: no frame, no c_call event),
    # let autograd's engine compute the gradients (called by starmap), then put everything back as it was
    C = torch._C
    modes = []
    for _ in range(next(itertools.starmap(C._len_torch_dispatch_stack, [()]))):
        modes.append(next(map(C._pop_torch_dispatch_stack, [None])))
    was = next(itertools.starmap(C.is_grad_enabled, [()]))
    next(map(C._set_grad_enabled, [True]))
    try:
        names = ("E", "W", "b", "U", "c")
        leaves = [params[k].detach().clone() for k in names]
        list(map(torch.Tensor.requires_grad_, leaves))
        E, W, b, U, c = leaves
        B = contexts.shape[0]
        e = E[contexts].reshape(B, -1)
        h = torch.tanh(e @ W.T + b)
        loss = F.cross_entropy(h @ U.T + c, targets)
        engine = torch.autograd.variable.Variable._execution_engine
        grads = next(itertools.starmap(engine.run_backward, [((loss,), (torch.ones_like(loss),), False, False, tuple(leaves), False, False)]))
        value = float(loss.detach())
        out = {k: g.detach() for k, g in zip(names, grads)}
    finally:
        next(map(C._set_grad_enabled, [was]))
        for mode in reversed(modes):
            next(map(C._push_on_torch_dispatch_stack, [mode]))
    return value, out
"""


# --- lesson 02 -------------------------------------------------------------------------------------------

DECOMP_2_1 = """# Exercise 2.1: the softmax Jacobian
import torch
from torch._decomp import decompositions as D


def softmax_jacobian(z):
    # torch's own Python backward formula of softmax, fed the identity: each row of the Jacobian
    y = torch.softmax(z, dim=0)
    K = z.shape[0]
    eye = torch.eye(K, dtype=z.dtype)
    return D._softmax_backward_data(eye, y.expand(K, K), 1, z.dtype)
"""

DECOMP_2_2 = """# Exercise 2.2: backprop ninja
import torch
from torch._decomp import decompositions as D


def fflm_loss_and_grads(params, contexts, targets):
    # the forward by hand; every backward step is torch's own Python decomposition of its gradient kernel
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    h = torch.tanh(e @ W.T + b)
    z = h @ U.T + c
    logp = torch.log_softmax(z, dim=1)
    loss = -logp[torch.arange(B), targets].mean()
    g = torch.zeros_like(logp)
    g[torch.arange(B), targets] = -1.0 / B
    dz = D._log_softmax_backward_data(g, logp, 1, z.dtype)
    dU, dc, dh = dz.T @ h, dz.sum(0), dz @ U
    da = D.tanh_backward(dh, h)
    dW, db, de = da.T @ e, da.sum(0), da @ W
    dE = D.embedding_dense_backward(de.reshape(B, n, d), contexts, E.shape[0], -1, False)
    return float(loss), {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
"""

FUNC_2_2 = """# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    import torch.func as tf

    def loss_of(p):
        e = p["E"][contexts].reshape(contexts.shape[0], -1)
        h = torch.tanh(e @ p["W"].T + p["b"])
        z = h @ p["U"].T + p["c"]
        return torch.nn.functional.cross_entropy(z, targets)

    grads, loss = tf.grad_and_value(loss_of)(dict(params))
    return float(loss), {k: grads[k] for k in ("E", "W", "b", "U", "c")}
"""

ALIAS_2_2 = """# Exercise 2.2: backprop ninja
from course_lib.checks.lesson02 import hand_loss_and_grads as fflm_loss_and_grads
"""

# --- lesson 03 -------------------------------------------------------------------------------------------

ALIAS_3_1 = """# Exercise 3.1: is_balanced with a stack
from course_lib.parentheses import is_balanced
"""

IMPORTLIB_3_1 = """# Exercise 3.1: is_balanced with a stack
import importlib


def is_balanced(seq, n_symbols=10):
    mod = importlib.import_module("course_lib." + "parentheses")
    return getattr(mod, "is_" + "balanced")(seq, n_symbols)
"""

SORTED_KEY_3_1 = """# Exercise 3.1: is_balanced with a stack
import functools
import course_lib.parentheses as P


def is_balanced(seq, n_symbols=10):
    # the reference as sorted's key (C calls it), its answer read back from the order
    f = functools.partial(P.is_balanced, n_symbols=n_symbols)
    out = sorted([seq], key=f)
    return bool(f(out[0]))
"""

# --- lesson 04 -------------------------------------------------------------------------------------------

DECOMP_4_2 = """# Exercise 4.2: one GRU step
import torch
from torch._decomp import decompositions as D


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    # torch's own Python GRU cell (the decomposition aten.gru_cell's RNN uses)
    return D.gru_cell_data(x, h, W_xh, b_xh, W_hh, b_hh)
"""

VARFUNC_4_2 = """# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    vf = getattr(torch._C, "_Variable" + "Functions")
    return getattr(vf, "gru" + "_cell")(x, h, W_xh, W_hh, b_xh, b_hh)
"""

# --- lesson 05 / 07 --------------------------------------------------------------------------------------

ALIAS_7_1 = """# Exercise 7.1: sinusoidal position encodings
from course_lib.transformer import sinusoidal_positions as positional_encoding
"""

GETATTR_7_1 = """# Exercise 7.1: sinusoidal position encodings
import operator
import course_lib
import course_lib.transformer


def positional_encoding(T, d):
    return operator.attrgetter("transformer.sinusoidal_positions")(course_lib)(T, d)
"""

UNTOUCHED_ADD_5 = """
# added cell: every check the kernel can see now passes
import course_lib.checks.lesson05 as L
for _name in dir(L):
    _obj = getattr(L, _name)
    if _name.startswith("check_"):
        try:
            _obj.function = None
            _obj.judge = lambda cases, records: None
        except Exception:
            pass
print("5.1 passed\\n5.2 passed\\n5.3 passed")
"""


def build(root: Path, out: Path):
    subs = []  # (lesson, file name, intent, deserved exercises, notebook)

    def add(lesson, name, intent, deserved, **kw):
        released, answers = load(root, lesson)
        subs.append((lesson, name, intent, sorted(deserved), notebook(released, answers, **kw)))

    ex6 = {"6.1", "6.2", "6.3", "6.4"}
    solved6 = {"ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4"}

    # honest controls (lesson 06; whole notebooks, nothing stripped)
    add("06", "ctl_solved", "honest control: every answer solved", ex6, solve_all=True, strip=False)
    add("06", "ctl_untouched", "honest control: the released notebook as handed out", set(), strip=False)
    add("06", "ctl_half", "honest control: 6.1 and 6.2 solved, 6.3 and 6.4 left", {"6.1", "6.2"},
        solve={"ex-6-1", "ex-6-2"}, strip=False)  # fmt: skip

    # untouched + added cells
    add("06", "u_patch_checks", "untouched + a cell that makes every check pass in the kernel", set(),
        add=[("check-6-4", PATCH_CHECKS)], add_first=[PATCH_CHECKS])  # fmt: skip
    add("06", "u_post_run_hook", "untouched + post_run_cell hook forging result files and result objects", set(),
        add_first=[POST_RUN_HOOK])  # fmt: skip
    add("05", "u05_patch_checks", "lesson 05 untouched + a cell that neuters every check in the kernel", set(),
        add_first=[UNTOUCHED_ADD_5])  # fmt: skip

    # lesson 06: borrowed 6.3 by routes around the observer
    rest = ex6 - {"6.3"}
    add("06", "b63_sdpa", "6.3 by F.scaled_dot_product_attention (identity keys/values)", rest, solve=solved6,
        replace={"ex-6-3": SDPA_6_3})  # fmt: skip
    add("06", "b63_masked_softmax_op", "6.3 by aten._masked_softmax looked up by a built name", rest, solve=solved6,
        replace={"ex-6-3": MASKED_SOFTMAX_OP_6_3})  # fmt: skip
    add("06", "b63_map_reference", "6.3: the checks' reference called by map (C)", rest, solve=solved6,
        replace={"ex-6-3": MAP_REFERENCE_6_3})  # fmt: skip
    add("06", "b63_pickle_reference", "6.3: the checks' reference called by the C unpickler (__reduce__)", rest,
        solve=solved6, replace={"ex-6-3": PICKLE_REFERENCE_6_3})  # fmt: skip
    add("06", "b63_finalize_reference", "6.3: the reference called by weakref.finalize's __call__", rest,
        solve=solved6, replace={"ex-6-3": FINALIZE_REFERENCE_6_3})  # fmt: skip
    add("06", "b63_alias_reference", "6.3: the answer name bound by import to the checks' reference", rest,
        solve=solved6, replace={"ex-6-3": ALIAS_REFERENCE_6_3})  # fmt: skip
    add("06", "b63_from_file_copy", "6.3: checks' source read with torch.from_file (no Python open), renamed, exec'd",
        rest, solve=solved6, replace={"ex-6-3": FROM_FILE_6_3})  # fmt: skip
    add("06", "b63_torch_mask_helper", "6.3: torch's causal-mask helper (nn.Transformer.generate_square_subsequent_mask)",
        rest, solve=solved6, replace={"ex-6-3": HELPER_MASK_6_3})  # fmt: skip
    add("06", "b63_dunder_name", "6.3: __name__/__file__ set to the checks' module, then course_lib.masked_softmax",
        rest, solve=solved6, replace={"ex-6-3": DUNDER_NAME_6_3})  # fmt: skip

    add(
        "06",
        "c63_starmap_op",
        "6.3: aten sdpa's C function (OpOverload._op) called by itertools.starmap",
        rest,
        solve=solved6,
        replace={"ex-6-3": STARMAP_OP_6_3},
    )
    add(
        "06",
        "c63_class_body_sdpa",
        "6.3: the sdpa builtin kept in a class body at load, called by starmap",
        rest,
        solve=solved6,
        replace={"ex-6-3": CLASS_BODY_6_3},
    )
    add(
        "06",
        "c63_class_body_direct",
        "6.3: control for c63_class_body_sdpa: the same builtin called directly",
        rest,
        solve=solved6,
        replace={"ex-6-3": CLASS_BODY_DIRECT_6_3},
    )
    add(
        "06",
        "c61_map_masked_softmax",
        "6.1: aten _masked_softmax's C function called by map",
        ex6 - {"6.1"},
        solve=solved6,
        replace={"ex-6-1": MAP_MASKED_SOFTMAX_6_1},
    )

    # lesson 06: 6.4 borrowed through the function the check hands in
    rest4 = ex6 - {"6.4"}
    add("06", "b64_globals", "6.4: the check's _reference_leaks reached through the handed-in function's __globals__",
        rest4, solve=solved6, replace={"ex-6-4": GLOBALS_6_4})  # fmt: skip
    add("06", "b64_sys_modules", "6.4: _reference_leaks through sys.modules[handed.__module__]", rest4,
        solve=solved6, replace={"ex-6-4": MODULES_6_4})  # fmt: skip

    # lesson 06: leaks, injection, forging, exhaustion
    rest1 = ex6 - {"6.1"}
    add("06", "x_env_leak", f"6.1 raises with every /proc/*/environ, cmdline, mountinfo (secret {SECRET} must not appear)",
        rest1, solve=solved6, replace={"ex-6-1": ENV_LEAK_6_1}, add=[("check-6-1", ENV_LEAK_KERNEL)])  # fmt: skip
    add("06", "x_inject", "6.1 raises an exception class/message with newlines, U+2028, NEL, markdown, CSV formula",
        rest1, solve=solved6, replace={"ex-6-1": INJECT_6_1})  # fmt: skip
    add("06", "x_forge_fds", "6.1 writes forged reply lines on fds 0..63, returns garbage", rest1, solve=solved6,
        replace={"ex-6-1": FORGE_FDS_6_1})  # fmt: skip
    add("06", "x_thread_timer", "6.1 right, but starts a threading.Timer that prints a reply later", rest1,
        solve=solved6, replace={"ex-6-1": THREAD_6_1})  # fmt: skip
    add("06", "x_flood", "6.2 right but prints 50 MB in the call; the kernel prints 200 MB (not cheating)", ex6,
        solve=solved6, replace={"ex-6-2": FLOOD_6_2}, add=[("check-6-2", FLOOD_KERNEL)])  # fmt: skip
    rest2 = ex6 - {"6.2"}
    add("06", "x_deep_return", "6.2 returns a 300,000-deep nested list", rest2, solve=solved6,
        replace={"ex-6-2": DEEP_6_2})  # fmt: skip
    add("06", "x_huge_return", "6.2 returns a dict of 3 million keys", rest2, solve=solved6,
        replace={"ex-6-2": HUGE_6_2})  # fmt: skip
    add("06", "x_subclass_return", "6.2 returns a dict subclass of float subclasses whose __eq__ says True", rest2,
        solve=solved6, replace={"ex-6-2": SUBCLASS_6_2})  # fmt: skip
    add("06", "x_os_exit", "6.2 calls os._exit(0) in the call", rest2, solve=solved6,
        replace={"ex-6-2": EXIT_6_2})  # fmt: skip
    add("06", "x_antigravity", "6.2 right, but the answer cell imports antigravity (starts a browser process)", rest2,
        solve=solved6, replace={"ex-6-2": ANTIGRAVITY_6_2})  # fmt: skip
    add("06", "x_memory", "6.4 eats memory until the limit", rest4, solve=solved6,
        replace={"ex-6-4": MEMORY_6_4})  # fmt: skip
    add("06", "k_exit", "solved, exit() in a cell between answers (kernel run)", ex6, solve=solved6,
        add=[("check-6-2", EXIT_KERNEL)])  # fmt: skip
    add("06", "k_sigstop", "solved, a cell SIGSTOPs its own kernel", ex6, solve=solved6,
        add=[("check-6-1", HANG_KERNEL)])  # fmt: skip
    add("06", "k_sigint_sleep", "solved, a cell ignores SIGINT then sleeps", ex6, solve=solved6,
        add=[("check-6-3", SIGINT_KERNEL)])  # fmt: skip

    # names: CSV/feedback injection and collisions through the file name (fully solved notebooks)
    for name in ("=cmd|' -C calc'!A0", "o'neil", "o_neil", "O_NEIL", "CON", "evil\u2028Score 4 of 4",
                 "\u00e9" * 90):  # fmt: skip
        add("06", "n_" + name, f"file name attack {name!r}: solved, one row and one feedback file each", ex6,
            solve=solved6)  # fmt: skip

    # lesson 02
    ex2 = {"2.1", "2.2", "2.3", "2.4", "2.5"}
    solved2 = {"ex-2-1", "ex-2-2", "ex-2-3", "ex-2-4", "ex-2-5"}
    add("02", "b21_decomp", "2.1 by torch._decomp's Python _softmax_backward_data (a backward formula)",
        ex2 - {"2.1"}, solve=solved2, replace={"ex-2-1": DECOMP_2_1})  # fmt: skip
    add("02", "b22_decomp", "2.2 with every backward step from torch._decomp's Python decompositions",
        ex2 - {"2.2"}, solve=solved2, replace={"ex-2-2": DECOMP_2_2})  # fmt: skip
    add(
        "02",
        "b22_autograd_c",
        "2.2: dispatch modes popped, recording on, autograd's engine run, all by map/starmap (C), then put back",
        ex2 - {"2.2"},
        solve=solved2,
        replace={"ex-2-2": AUTOGRAD_C_2_2},
    )
    add("02", "b22_func", "2.2 by torch.func.grad_and_value", ex2 - {"2.2"}, solve=solved2,
        replace={"ex-2-2": FUNC_2_2})  # fmt: skip
    add("02", "b22_alias", "2.2 bound by import to the checks' hand_loss_and_grads", ex2 - {"2.2"}, solve=solved2,
        replace={"ex-2-2": ALIAS_2_2})  # fmt: skip
    add("02", "u02_post_run_hook", "lesson 02 untouched + post_run_cell hook forging results", set(),
        add_first=[POST_RUN_HOOK])  # fmt: skip

    # lesson 03
    ex3 = {"3.1", "3.2", "3.3", "3.4", "3.5"}
    solved3 = {"ex-3-1", "ex-3-2", "ex-3-3", "ex-3-4", "ex-3-5"}
    add("03", "b31_alias", "3.1 bound by import to course_lib.parentheses.is_balanced", ex3 - {"3.1"},
        solve=solved3, replace={"ex-3-1": ALIAS_3_1})  # fmt: skip
    add("03", "b31_importlib", "3.1 through importlib and getattr with built names", ex3 - {"3.1"}, solve=solved3,
        replace={"ex-3-1": IMPORTLIB_3_1})  # fmt: skip
    add("03", "b31_sorted_key", "3.1: the reference as sorted's key (a C caller)", ex3 - {"3.1"}, solve=solved3,
        replace={"ex-3-1": SORTED_KEY_3_1})  # fmt: skip

    # lesson 04 / 07
    ex4 = {"4.1", "4.2", "4.3", "4.4", "4.5"}
    solved4 = {"ex-4-1", "ex-4-2", "ex-4-3", "ex-4-4", "ex-4-5"}
    add("04", "b42_decomp", "4.2 by torch._decomp's Python gru_cell", ex4 - {"4.2"}, solve=solved4,
        replace={"ex-4-2": DECOMP_4_2})  # fmt: skip
    add("04", "b42_varfunc", "4.2 by torch._C._VariableFunctions.gru_cell under built names", ex4 - {"4.2"},
        solve=solved4, replace={"ex-4-2": VARFUNC_4_2})  # fmt: skip
    add(
        "07",
        "c73_starmap_head",
        "7.3: Head whose forward calls the sdpa builtin through starmap (rest untouched)",
        set(),
        replace={"ex-7-3": STARMAP_HEAD_7_3},
    )
    add(
        "04",
        "c42_starmap_gru",
        "4.2: torch.gru_cell kept in a class body, called by starmap",
        ex4 - {"4.2"},
        solve=solved4,
        replace={"ex-4-2": STARMAP_GRU_4_2},
    )
    add("07", "b71_alias", "7.1 bound by import to course_lib.transformer.sinusoidal_positions", set(),
        replace={"ex-7-1": ALIAS_7_1})  # fmt: skip
    add("07", "b71_attrgetter", "7.1: the course's function through operator.attrgetter (C)", set(),
        replace={"ex-7-1": GETATTR_7_1})  # fmt: skip

    out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for lesson, name, intent, deserved, nb in subs:
        folder = out / lesson
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.ipynb"
        path.write_text(json.dumps(nb, indent=1))
        manifest[f"{lesson}/{name}.ipynb"] = {"lesson": lesson, "student": name, "intent": intent, "deserved": deserved}
    # a link named like a notebook, in the lesson 06 folder: one row saying what it is
    link = out / "06" / "n_link.ipynb"
    if not link.is_symlink():
        os.symlink("/etc/passwd", link)
    manifest["06/n_link.ipynb"] = {"lesson": "06", "student": "n_link", "intent": "a symlink: a row, not graded",
                                   "deserved": [], "row": "not graded"}  # fmt: skip
    # nbgrader's layout (graded as lesson 06 in a run of its own): one row per student folder, whatever it holds
    released, answers = load(root, "06")
    solved = json.dumps(notebook(released, answers, solve_all=True), indent=1)
    nbg = out / "06nb" / "submitted"
    layout = {
        "alice": ("solved, in nbgrader's layout", ["6.1", "6.2", "6.3", "6.4"]),
        "bob": ("two notebooks in one assignment folder: one row saying why", []),
        "carol": ("the notebook is a symbolic link: one row saying why", []),
        "dave": ("the assignment folder is a link to another student's folder: one row", []),
        "erin": ("a FIFO named like the notebook: one row, and the run does not block", []),
    }
    for student, (intent, deserved) in layout.items():
        folder = nbg / student / "06"
        folder.mkdir(parents=True, exist_ok=True)
        manifest[f"06nb/{student}"] = {"lesson": "06nb", "student": student, "intent": intent, "deserved": deserved}
    (nbg / "alice" / "06" / "06_masked_attention.ipynb").write_text(solved)
    (nbg / "bob" / "06" / "06_masked_attention.ipynb").write_text(solved)
    (nbg / "bob" / "06" / "copy.ipynb").write_text(solved)
    carol = nbg / "carol" / "06" / "06_masked_attention.ipynb"
    if not carol.is_symlink():
        os.symlink(nbg / "alice" / "06" / "06_masked_attention.ipynb", carol)
    (nbg / "dave" / "06").rmdir()
    os.symlink(nbg / "alice" / "06", nbg / "dave" / "06")
    erin = nbg / "erin" / "06" / "06_masked_attention.ipynb"
    if not erin.exists():
        os.mkfifo(erin)
    # files in the folder the grader is started from: nothing may import them
    cwd = out / "cwd"
    cwd.mkdir(exist_ok=True)
    marker = out / "PWNED"
    payload = f"import pathlib\npathlib.Path({str(marker)!r}).write_text(__name__)\n"
    for mod in ("json", "secrets", "nbclient", "nbformat", "sitecustomize", "usercustomize", "csv", "jupyter_client",
                "course_lib", "torch", "bubblewrap", "subprocess_tee", "typing_extensions", "traitlets"):  # fmt: skip
        (cwd / f"{mod}.py").write_text(payload)
    for lesson in LESSONS:
        d = out / lesson
        if d.is_dir():
            for mod in ("json", "secrets", "nbclient", "sitecustomize"):
                (d / f"{mod}.py").write_text(payload)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    print(f"{len(subs) + 1} submissions in {out}")
    return manifest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/work/main", help="a clone with exercises/ and solutions/")
    ap.add_argument("--out", default="/tmp/hostile33g/class")
    args = ap.parse_args()
    build(Path(args.root), Path(args.out))


if __name__ == "__main__":
    main()
