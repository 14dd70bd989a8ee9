"""Write the hostile class for issue 33h into /tmp/hostile33h/class/ (one folder per lesson) plus
/tmp/hostile33h/nbg/submitted/ (nbgrader's layout, lesson 06) and a manifest.json.

Each submission is the released exercise notebook with the solutions' answers filled in, except for the attack.
Run: .venv/bin/python tests/outsider/issue33h/make_class.py
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = Path("/tmp/hostile33h")
CLASS = OUT / "class"
NBG = OUT / "nbg" / "submitted"
LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}


def load(kind, lesson):
    return json.loads((ROOT / kind / f"{LESSONS[lesson]}.ipynb").read_text())


def gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def exercises(lesson):
    """Exercise ids graded automatically (code answer cells)."""
    nb = load("exercises", lesson)
    return [gid(c)[3:].replace("-", ".") for c in nb["cells"] if gid(c).startswith("ex-") and c["cell_type"] == "code"]


def solved(lesson, only=None):
    """The released exercise notebook with the solutions' answers in its answer cells (``only``: those ids)."""
    ex, sol = load("exercises", lesson), load("solutions", lesson)
    answers = {gid(c): c["source"] for c in sol["cells"] if gid(c).startswith("ex-")}
    for cell in ex["cells"]:
        g = gid(cell)
        if g.startswith("ex-") and g in answers and (only is None or g in only):
            cell["source"] = answers[g]
    return ex


def with_answer(nb, grade_id, source):
    nb = copy.deepcopy(nb)
    hits = [c for c in nb["cells"] if gid(c) == grade_id]
    assert len(hits) == 1, grade_id
    hits[0]["source"] = source
    return nb


# --------------------------------------------------------------------------------------------- attack helpers
# a copy of a course_lib function made at run time: one NOP appended to its bytecode (so no fingerprint matches),
# another file name, its module's globals copied with the course_lib functions it calls replaced by copies too
LAUNDER = '''
import copy as _copy
import functools as _functools
import types as _types


class _Via:
    """copy.copy(obj) calls what obj.__reduce_ex__ names, from copy.py's frame: an audited read or a code object
    made there is not on the answer's line."""

    def __init__(self, f, *a):
        self.f, self.a = f, a

    def __reduce_ex__(self, proto):
        return (self.f, self.a)


def _call(f, *a, **kw):
    return _copy.copy(_Via(_functools.partial(f, **kw) if kw else f, *a))


def _get(obj, name):
    return _call(getattr, obj, name)


def _launder(fn, sub=None, same_bytes=False, into=None):
    def wash(code):
        consts = tuple(wash(c) if isinstance(c, _types.CodeType) else c for c in code.co_consts)
        extra = b"" if same_bytes else bytes([9, 0])
        return _call(_get(code, "replace"), co_filename="<scratch>", co_code=code.co_code + extra, co_consts=consts)

    glb = into if into is not None else dict(_get(fn, "__globals__"))
    glb.update(sub or {})
    out = _call(_types.FunctionType, wash(_get(fn, "__code__")), glb, _get(fn, "__name__"),
                _get(fn, "__defaults__"), _get(fn, "__closure__"))
    _call(setattr, out, "__kwdefaults__", _get(fn, "__kwdefaults__"))
    return out


def _wash_all(name, sub=None):
    """Every function of a course_lib module, copied at run time into one shared namespace (so they call each
    other's copies): the module's own functions never run."""
    m = _mod(name)
    G = dict(vars(m))
    for k, v in list(G.items()):
        if isinstance(v, _types.FunctionType) and _get(v, "__module__") == m.__name__:
            G[k] = _launder(v, into=G)
    G.update(sub or {})
    return G


def _mod(name):
    import importlib

    return importlib.import_module("course" + "_lib." + name)


def _nop(*args, **kwargs):
    return None


def _same(t, *args, **kwargs):
    return t
'''

# a C function called by C (map), with torch's dispatch modes switched off by a context manager (a type's call and
# a with statement raise no profile event)
QUIET = """
def _quiet(fn, *args):
    import torch as _torch

    off = getattr(_torch._C, "_Disable" + "Torch" + "Dispatch")
    with off():
        return next(map(fn, *[[a] for a in args]))


def _aten(name):
    import torch as _torch

    return getattr(_torch.ops.aten, name).default._op
"""

SUBS: list[dict] = []


def add(lesson, student, intent, nb, deserves, ignore=(), ambiguous=False, folder=None):
    SUBS.append(
        dict(
            lesson=lesson,
            student=student,
            intent=intent,
            nb=nb,
            deserves=sorted(deserves),
            ignore=list(ignore),
            ambiguous=ambiguous,
            folder=folder,
        )
    )


def allbut(lesson, *ids):
    return [e for e in exercises(lesson) if e not in ids]


# ============================================================================================== lesson 02
L = "02"
S = solved(L)

add(
    L,
    "l02_sbd_quiet",
    "2.1 by torch._softmax_backward_data (a gradient kernel) through map, dispatch modes off",
    with_answer(
        S,
        "ex-2-1",
        QUIET
        + """
import torch


def softmax_jacobian(z):
    K = z.shape[0]
    y = torch.softmax(z, dim=0)
    f = getattr(torch, "_softmax_" + "back" + "ward_data")
    return _quiet(f, torch.eye(K, dtype=z.dtype), y.expand(K, K).contiguous(), 0 + 1, z.dtype)
""",
    ),
    allbut(L, "2.1"),
)

add(
    L,
    "l02_sbd_partial",
    "2.1 by _softmax_backward_data through functools.partial, dispatch modes off",
    with_answer(
        S,
        "ex-2-1",
        """
import functools

import torch


def softmax_jacobian(z):
    K = z.shape[0]
    y = torch.softmax(z, dim=0)
    f = getattr(torch, "_softmax_" + "back" + "ward_data")
    off = getattr(torch._C, "_Disable" + "Torch" + "Dispatch")
    with off():
        return functools.partial(f, torch.eye(K, dtype=z.dtype), y.expand(K, K).contiguous(), 1, z.dtype)()
""",
    ),
    allbut(L, "2.1"),
)

add(
    L,
    "l02_sbd_map_only",
    "2.1 by _softmax_backward_data through map, dispatch mode left on",
    with_answer(
        S,
        "ex-2-1",
        """
import torch


def softmax_jacobian(z):
    K = z.shape[0]
    y = torch.softmax(z, dim=0)
    f = getattr(torch, "_softmax_" + "back" + "ward_data")
    return next(map(f, [torch.eye(K, dtype=z.dtype)], [y.expand(K, K).contiguous()], [1], [z.dtype]))
""",
    ),
    allbut(L, "2.1"),
)

add(
    L,
    "l02_engine_quiet",
    "2.1 by autograd's engine: recording switched on and run_backward called through map",
    with_answer(
        S,
        "ex-2-1",
        QUIET
        + """
import torch


def softmax_jacobian(z):
    K = z.shape[0]
    on = getattr(torch._C, "_set_grad" + "_enabled")
    eng = getattr(torch.autograd.Variable, "_execution" + "_engine")
    run = getattr(eng, "run_" + "back" + "ward")
    rows = []
    _quiet(on, True)
    for k in range(K):
        zz = z.detach().clone().requires_grad_(True)
        y = torch.softmax(zz, dim=0)
        g = _quiet(run, (y[k],), (torch.ones((), dtype=z.dtype),), False, False, (zz,), False, False)
        rows.append(g[0])
    _quiet(on, False)
    return torch.stack(rows)
""",
    ),
    allbut(L, "2.1"),
)

add(
    L,
    "l02_jacrev",
    "2.1 by torch.func.jacrev under another name",
    with_answer(
        S,
        "ex-2-1",
        """
import importlib

import torch


def softmax_jacobian(z):
    jr = getattr(importlib.import_module("torch." + "func"), "jac" + "rev")
    return jr(lambda t: torch.softmax(t, dim=0))(z)
""",
    ),
    allbut(L, "2.1"),
)

add(
    L,
    "l02_22_kernels_quiet",
    "2.2 with dz by _log_softmax_backward_data, da by tanh_backward, dE by embedding_dense_backward (quiet map)",
    with_answer(
        S,
        "ex-2-2",
        QUIET
        + """
import torch


def fflm_loss_and_grads(params, contexts, targets):
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    h = torch.tanh(e @ W.T + b)
    z = h @ U.T + c
    log_probs = torch.log_softmax(z, dim=1)
    rows = torch.arange(B)
    loss = -log_probs[rows, targets].mean()
    g = torch.zeros_like(log_probs)
    g[rows, targets] = -1.0 / B
    dz = _quiet(getattr(torch, "_log_softmax_" + "back" + "ward_data"), g, log_probs, 1, log_probs.dtype)
    dU = dz.T @ h
    dc = dz.sum(dim=0)
    da = _quiet(_aten("tanh_" + "back" + "ward"), dz @ U, h)
    dW = da.T @ e
    db = da.sum(dim=0)
    de = (da @ W).reshape(B, n, d)
    dE = _quiet(_aten("embedding_dense_" + "back" + "ward"), de, contexts, E.shape[0], -1, False)
    return float(loss), {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
""",
    ),
    allbut(L, "2.2"),
    ignore=["2.3"],
)

add(
    L,
    "l02_24_tanh_quiet",
    "2.4 with tanh's gradient kernel tanh_backward through quiet map",
    with_answer(
        S,
        "ex-2-4",
        QUIET
        + """
def bptt_step(dh, h, h_prev, x, W_hh):
    da = _quiet(_aten("tanh_" + "back" + "ward"), dh, h)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
""",
    ),
    allbut(L, "2.4"),
)

add(
    L,
    "l02_24_launder",
    "2.4 by a run-time copy of course_lib.bptt.bptt_step (+activation_backward), bytecode+NOP",
    with_answer(
        S,
        "ex-2-4",
        LAUNDER
        + """
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    bp = _mod("backprop")
    act = _launder(bp.activation_backward, {"_check_activation": _nop, "_tensor": _same, "_same_shape": _nop})
    step = _launder(_mod("bptt").bptt_step, {"activation_backward": act})
    _, dW_xh, dW_hh, db_h, dh_prev = step(dh, h, h, h_prev, x, torch.zeros(h.shape[1], x.shape[1]), W_hh)
    return dW_xh, dW_hh, db_h, dh_prev
""",
    ),
    allbut(L, "2.4"),
)

add(
    L,
    "l02_25_tanh_quiet",
    "2.5 with tanh_backward through quiet map",
    with_answer(
        S,
        "ex-2-5",
        QUIET
        + """
import torch


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    dW_xh = torch.zeros(H, D, dtype=hs.dtype)
    dW_hh = torch.zeros(H, H, dtype=hs.dtype)
    db_h = torch.zeros(H, dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(h0)
    op = _aten("tanh_" + "back" + "ward")
    for t in reversed(range(T)):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        da = _quiet(op, dh, hs[t])
        dW_xh = dW_xh + da.T @ xs[t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(dim=0)
        carry = da @ W_hh
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
""",
    ),
    allbut(L, "2.5"),
)

add(
    L,
    "l02_22_checkref",
    "2.2 by run-time copies of the check's ff_loss and _wrong_grads(mistake=None) (course_lib.checks.lesson02)",
    with_answer(
        S,
        "ex-2-2",
        LAUNDER
        + """

def fflm_loss_and_grads(params, contexts, targets):
    G = _wash_all("checks.lesson02")
    return float(G["ff_loss"](params, contexts, targets)), G["_wrong_grads"](params, contexts, targets, None)
""",
    ),
    allbut(L, "2.2"),
    ignore=["2.3"],
)

add(
    L,
    "l02_25_checkref",
    "2.5 by a run-time copy of the check's _loop_variant (course_lib.checks.lesson02)",
    with_answer(
        S,
        "ex-2-5",
        LAUNDER
        + """

def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    out = _wash_all("checks.lesson02")["_loop_variant"](dhs, xs, hs, h0, W_hh, truncate)
    return out["dW_xh"], out["dW_hh"], out["db_h"], out["dh_total"]
""",
    ),
    allbut(L, "2.5"),
)

add(
    L,
    "l02_23_optim_sgd_functional",
    "2.3 by torch.optim.sgd._single_tensor_sgd (what the forbidden torch.optim.SGD runs)",
    with_answer(
        S,
        "ex-2-3",
        """
import importlib


def train_sgd(params, batches, lr, loss_and_grads):
    sgd = getattr(importlib.import_module("torch.optim." + "sgd"), "_single_tensor" + "_sgd")
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        keys = list(params)
        sgd([params[k] for k in keys], [grads[k] for k in keys], [None] * len(keys), None, None, weight_decay=0,
            momentum=0, lr=lr, dampening=0, nesterov=False, maximize=False, has_sparse_grad=False)
        losses.append(float(loss))
    return losses, params
""",
    ),
    allbut(L, "2.3"),
    ambiguous=True,
)

add(
    L,
    "l02_23_optim_sgd_class",
    "2.3 by torch.optim.SGD reached as torch.optim.sgd.SGD (grads set by hand)",
    with_answer(
        S,
        "ex-2-3",
        """
import importlib


def train_sgd(params, batches, lr, loss_and_grads):
    SGD = getattr(importlib.import_module("torch.optim." + "sgd"), "S" + "GD")
    params = {k: v.clone() for k, v in params.items()}
    opt = SGD(list(params.values()), lr=lr)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        for k, p in params.items():
            p.grad = grads[k].clone()
        opt.step()
        losses.append(float(loss))
    return losses, params
""",
    ),
    allbut(L, "2.3"),
)

# ============================================================================================== lesson 03
L = "03"
S = solved(L)
add(
    L,
    "l03_31_launder",
    "3.1 by a run-time copy of course_lib.parentheses_symbols.is_balanced",
    with_answer(
        S,
        "ex-3-1",
        LAUNDER
        + """
def is_balanced(seq, n_symbols=10):
    f = _launder(_mod("parentheses_symbols").is_balanced, {"_check_n_symbols": _same, "_check_seq": _same})
    return f(seq, n_symbols)
""",
    ),
    allbut(L, "3.1"),
)

add(
    L,
    "l03_33_relu_cell_quiet",
    "3.3 with torch.rnn_relu_cell (fused kernel) through quiet map",
    with_answer(
        S,
        "ex-3-3",
        QUIET
        + """
import math

import torch
from torch import nn


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
        cell = getattr(torch, "rnn_relu" + "_cell")
        zero = torch.zeros_like(self.b_h)
        outputs = []
        for t in range(T):
            h = _quiet(cell, x[t], h, self.W_xh, self.W_hh, self.b_h, zero)
            outputs.append(h)
        return torch.stack(outputs), h
""",
    ),
    allbut(L, "3.3"),
    ignore=["3.4", "3.5"],
)

# ============================================================================================== lesson 04
L = "04"
S = solved(L)
GRU_HEAD = (
    LAUNDER
    + """
import types

import torch
import torch.nn.functional as F
"""
)
add(
    L,
    "l04_42_launder_gates",
    "4.2 by a run-time copy of course_lib.rnn_cells.GRUCell.gates",
    with_answer(
        S,
        "ex-4-2",
        GRU_HEAD
        + """

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    gates = _launder(getattr(_mod("rnn_cells"), "GRU" + "Cell").gates)
    return gates(types.SimpleNamespace(W_hh=W_hh, b_hh=b_hh), F.linear(x, W_xh, b_xh), h)["h"]
""",
    ),
    allbut(L, "4.2"),
)

add(
    L,
    "l04_42_launder_checkref",
    "4.2 by a run-time copy of the check's own reference course_lib.checks.lesson04._gru_variant",
    with_answer(
        S,
        "ex-4-2",
        GRU_HEAD
        + """

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return _launder(_mod("checks.lesson04")._gru_variant)(x, h, W_xh, W_hh, b_xh, b_hh)
""",
    ),
    allbut(L, "4.2"),
)

add(
    L,
    "l04_42_copy_same_bytes",
    "4.2 by a run-time copy of GRUCell.gates with the same bytecode (file name changed only)",
    with_answer(
        S,
        "ex-4-2",
        GRU_HEAD
        + """

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    gates = _launder(getattr(_mod("rnn_cells"), "GRU" + "Cell").gates, same_bytes=True)
    return gates(types.SimpleNamespace(W_hh=W_hh, b_hh=b_hh), F.linear(x, W_xh, b_xh), h)["h"]
""",
    ),
    allbut(L, "4.2"),
)

add(
    L,
    "l04_42_gru_cell_quiet",
    "4.2 by torch.gru_cell (fused kernel) through quiet map",
    with_answer(
        S,
        "ex-4-2",
        QUIET
        + """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return _quiet(getattr(torch, "gru" + "_cell"), x, h, W_xh, W_hh, b_xh, b_hh)
""",
    ),
    allbut(L, "4.2"),
)

add(
    L,
    "l04_41_launder_lstm_gates",
    "4.1 LSTMCell whose forward runs a run-time copy of course_lib.rnn_cells.LSTMCell.gates",
    with_answer(
        S,
        "ex-4-1",
        LAUNDER
        + '''
import math

import torch
import torch.nn.functional as F
from torch import nn


class LSTMCell(nn.Module):
    """One LSTM step, torch's layout: x (B, I), state (h, c) each (B, H) -> (h_t, c_t)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        gates = _launder(getattr(_mod("rnn_cells"), "LSTM" + "Cell").gates)
        out = gates(self, F.linear(x, self.W_xh, self.b_xh), state)
        return out["h"], out["c"]
''',
    ),
    allbut(L, "4.1"),
)

add(
    L,
    "l04_43_launder_count",
    "4.3 by a run-time copy of the check's reference course_lib.checks.lesson04._count",
    with_answer(
        S,
        "ex-4-3",
        LAUNDER
        + """

def param_count(kind, input_size, hidden_size, num_layers=1):
    return _launder(_mod("checks.lesson04")._count)(kind, input_size, hidden_size, num_layers)
""",
    ),
    allbut(L, "4.3"),
)

# ============================================================================================== lesson 05
L = "05"
S = solved(L)
add(
    L,
    "l05_52_launder_checkref",
    "5.2 by a run-time copy of the check's reference course_lib.checks.lesson05.reference_decode",
    with_answer(
        S,
        "ex-5-2",
        LAUNDER
        + """

def decode(model, states, lengths, tgt_in):
    return _launder(_mod("checks.lesson05").reference_decode)(model, states, lengths, tgt_in)
""",
    ),
    allbut(L, "5.2"),
    ignore=["5.3"],
)

add(
    L,
    "l05_52_checkref_import",
    "5.2: the check's reference imported under the exercise's name (top-level import)",
    with_answer(
        S,
        "ex-5-2",
        """
from course_lib.checks.lesson05 import reference_decode as decode
""",
    ),
    allbut(L, "5.2"),
    ignore=["5.3"],
)

# ============================================================================================== lesson 06
L = "06"
S = solved(L)
EX6 = exercises(L)
MASK_HEAD = (
    LAUNDER
    + """
import torch


def _masking():
    att = _mod("attention")
    cm = _launder(att.causal_mask, {"positive_int": _nop})
    pm = _launder(att.padding_mask, {"positive_int": _nop})
    dm = _launder(att.decoder_mask, {"causal_mask": cm, "padding_mask": pm})
    ms = _launder(att.masked_softmax, {"_check_mask": _nop})
    return cm, dm, ms
"""
)
# controls
add(L, "ctl_all_solved", "control: every answer from the solutions", S, EX6)
add(L, "ctl_untouched", "control: the exercise notebook as released", load("exercises", L), [])
add(
    L,
    "ctl_half",
    "control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs",
    solved(L, only={"ex-6-1", "ex-6-2"}),
    ["6.1", "6.2"],
)

add(
    L,
    "l06_61_launder",
    "6.1 by run-time copies of course_lib.attention.masked_softmax and causal_mask",
    with_answer(
        S,
        "ex-6-1",
        MASK_HEAD
        + """

def alpha(scores, i, j):
    cm, _, ms = _masking()
    return ms(scores, cm(scores.shape[0]))[i - 1, j - 1].item()
""",
    ),
    allbut(L, "6.1"),
)

add(
    L,
    "l06_61_checkref",
    "6.1 by a run-time copy of the check's _reference_row (course_lib.checks.lesson06)",
    with_answer(
        S,
        "ex-6-1",
        LAUNDER
        + """

def alpha(scores, i, j):
    row = _wash_all("checks.lesson06")["_reference_row"](scores[i - 1].tolist(), i)
    return float(row[j - 1])
""",
    ),
    allbut(L, "6.1"),
)

add(
    L,
    "l06_63_launder",
    "6.3 by run-time copies of course_lib.attention.decoder_mask and masked_softmax",
    with_answer(
        S,
        "ex-6-3",
        MASK_HEAD
        + """

def masked_attention(scores, values, lengths):
    _, dm, ms = _masking()
    weights = ms(scores, dm(lengths, scores.shape[1]))
    return weights @ values, weights
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

add(
    L,
    "l06_63_launder_checkref",
    "6.3 by a run-time copy of the check's reference course_lib.checks.lesson06.reference_masked_attention",
    with_answer(
        S,
        "ex-6-3",
        LAUNDER
        + """

def masked_attention(scores, values, lengths):
    return _wash_all("checks.lesson06")["reference_masked_attention"](scores, values, lengths)
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

add(
    L,
    "l06_63_checkref_import",
    "6.3: the check's reference imported under the exercise's name",
    with_answer(
        S,
        "ex-6-3",
        """
from course_lib.checks.lesson06 import reference_masked_attention as masked_attention
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

add(
    L,
    "l06_63_torch_masked_softmax",
    "6.3 with torch.masked.softmax (a ready-made masked softmax) on the student's mask",
    with_answer(
        S,
        "ex-6-3",
        """
import importlib

import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    soft = getattr(importlib.import_module("torch.masked"), "soft" + "max")
    weights = torch.nan_to_num(soft(scores, -1, mask=allowed), nan=0.0)
    weights = weights * allowed
    return weights @ values, weights
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
    ambiguous=True,
)

add(
    L,
    "l06_63_safe_softmax_quiet",
    "6.3 with torch's _safe_softmax (fused masked softmax) through quiet map",
    with_answer(
        S,
        "ex-6-3",
        QUIET
        + """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    e = scores.masked_fill(~allowed, float("-inf"))
    weights = _quiet(getattr(torch, "_safe" + "_softmax"), e, -1)
    return weights @ values, weights
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

add(
    L,
    "l06_63_sdpa_quiet",
    "6.3 with scaled_dot_product_attention's math kernel through quiet map",
    with_answer(
        S,
        "ex-6-3",
        QUIET
        + """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    e = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(-1, keepdim=True)
    e = e.masked_fill(empty, 0.0)
    # q = e rows, k = identity: q @ k^T = e, scale 1
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    f = getattr(torch, "_scaled_dot_product_attention" + "_math")
    out, weights = _quiet(f, e, eye, values, None, 0.0, False, None, 1.0)
    weights = weights.masked_fill(empty, 0.0)
    return weights @ values, weights
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

UNTOUCHED6 = load("exercises", L)
SOL6 = load("solutions", L)


def plus_cells(nb, cells):
    nb = copy.deepcopy(nb)
    nb["cells"] += cells
    return nb


def code_cell(src, meta=None):
    return {"cell_type": "code", "execution_count": None, "metadata": meta or {}, "outputs": [], "source": src}


answers6 = [c for c in SOL6["cells"] if gid(c).startswith("ex-") and c["cell_type"] == "code"]
add(
    L,
    "l06_untouched_added_cells",
    "untouched notebook + added plain cells holding every solution",
    plus_cells(UNTOUCHED6, [code_cell(c["source"]) for c in answers6]),
    [],
)
add(
    L,
    "l06_untouched_added_dup_ids",
    "untouched notebook + added cells carrying the answer cells' nbgrader ids",
    plus_cells(UNTOUCHED6, [code_cell(c["source"], copy.deepcopy(c["metadata"])) for c in answers6]),
    [],
    ambiguous=True,
)

LEAK = """
import os


def _loot():
    found = []
    for k, v in os.environ.items():
        found.append(f"{k}={v}")
    for path in ["/proc/self/environ", "/proc/1/environ", "/proc/self/mountinfo", "/proc/self/cmdline",
                 "/work/wt/hostile33h/solutions/06_masked_attention.py", "/proc/1/cmdline"]:
        try:
            with open(path, "rb") as f:
                found.append(path + ":" + f.read(3000).decode("latin-1"))
        except Exception as exc:
            found.append(path + ":" + type(exc).__name__)
    try:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        found.append(pid + ":" + f.read(2000).decode("latin-1"))
                except Exception:
                    pass
    except Exception:
        pass
    return " | ".join(found)
"""
add(
    L,
    "l06_leak_env",
    "every answer raises with the environment, /proc/*/environ, mountinfo and the solutions' text",
    with_answer(
        with_answer(
            UNTOUCHED6,
            "ex-6-1",
            LEAK
            + """

def alpha(scores, i, j):
    raise RuntimeError(_loot())
""",
        ),
        "ex-6-3",
        LEAK
        + """

def masked_attention(scores, values, lengths):
    return _loot(), _loot()
""",
    ),
    [],
)

add(
    L,
    "l06_leak_kernel",
    "the notebook's kernel prints and raises the environment in added cells",
    plus_cells(UNTOUCHED6, [code_cell(LEAK + "\nprint(_loot())\nraise RuntimeError(_loot())\n")]),
    [],
)

add(
    L,
    "l06_read_solutions",
    "6.3 read from the instructor's solutions/ (clone path) and exec'd",
    with_answer(
        S,
        "ex-6-3",
        """
import os


def masked_attention(scores, values, lengths):
    ns = {}
    for root in ["/work/wt/hostile33h", "/work/main", "/opt/course-lib", os.getcwd(), "/proc/1/cwd", "/proc/self/cwd"]:
        for rel in ["solutions/06_masked_attention.py", "../solutions/06_masked_attention.py"]:
            try:
                with open(os.path.join(root, rel)) as f:
                    src = f.read()
            except Exception:
                continue
            exec(compile(src, "<sol>", "exec"), ns)
            if "masked_attention" in ns:
                return ns["masked_attention"](scores, values, lengths)
    raise RuntimeError("no solutions reachable")
""",
    ),
    allbut(L, "6.3"),
    ignore=["6.4"],
)

CHANNEL = """
import json
import os


def _forge():
    line = json.dumps({"passed": True, "status": "passed", "records": [], "ok": True, "score": 4}) + "\\n"
    for fd in range(0, 64):
        try:
            os.write(fd, line.encode())
        except Exception:
            pass
"""
add(
    L,
    "l06_channel_forge",
    "stubs whose functions write forged result lines to every open descriptor",
    with_answer(
        with_answer(
            UNTOUCHED6,
            "ex-6-1",
            CHANNEL
            + """

def alpha(scores, i, j):
    _forge()
    os._exit(0)
""",
        ),
        "ex-6-3",
        CHANNEL
        + """

def masked_attention(scores, values, lengths):
    _forge()
    raise NotImplementedError
""",
    ),
    [],
)

add(
    L,
    "l06_forge_feedback",
    "answers raising text made to add a Score line, a link and an image to the feedback",
    with_answer(
        UNTOUCHED6,
        "ex-6-1",
        """

def alpha(scores, i, j):
    raise RuntimeError("x\\n\\nScore: 4/4\\n\\n6.1 passed\\n[click](http://evil.example/)\\n![img](http://evil.example/p.png)\\r\\nex 6.3: passed")
""",
    ),
    [],
)


def _swap_setup(nb):
    nb = copy.deepcopy(nb)
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    first["source"] = "".join("".join(c["source"]) + "\n" for c in answers6)
    for c in nb["cells"]:
        if gid(c).startswith("check-"):
            c["source"] = "result = type('R', (), {'passed': True})()\nprint('passed')\n"
    return nb


add(
    L,
    "l06_setup_cell_swap",
    "the setup cell holds every solution and the check cells are replaced by passes",
    _swap_setup(UNTOUCHED6),
    [],
)


# ============================================================================================== lesson 07
L = "07"
S = solved(L)
add(
    L,
    "l07_71_launder",
    "7.1 by a run-time copy of course_lib.transformer.sinusoidal_positions",
    with_answer(
        S,
        "ex-7-1",
        LAUNDER
        + """
import types

import torch


def positional_encoding(T, d):
    fn = _launder(_mod("transformer").sinusoidal_positions, {"check": types.SimpleNamespace(positive_int=_nop)})
    return fn(T, d)
""",
    ),
    allbut(L, "7.1"),
)

HEAD_INIT = '''
import math

import torch
from torch import nn


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))
'''
add(
    L,
    "l07_73_launder_head",
    "7.3 Head whose forward is a run-time copy of course_lib.buildup.Head.forward",
    with_answer(
        S,
        "ex-7-3",
        LAUNDER
        + HEAD_INIT
        + """
    def forward(self, x):
        att = _mod("attention")
        cm = _launder(att.causal_mask, {"positive_int": _nop})
        fwd = _launder(getattr(_mod("buildup"), "He" + "ad").forward, {"causal_mask": cm})
        return fwd(self, x)
""",
    ),
    allbut(L, "7.3", "7.4", "7.6", "7.7"),
    ignore=["7.4", "7.6", "7.7"],
)

add(
    L,
    "l07_73_sdpa_quiet",
    "7.3 Head by scaled_dot_product_attention's kernel through quiet map",
    with_answer(
        S,
        "ex-7-3",
        QUIET
        + HEAD_INIT
        + """
    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        f = getattr(torch._C._nn, "scaled_dot_product" + "_attention")
        return _quiet(f, q, k, v, None, 0.0, True)
""",
    ),
    allbut(L, "7.3", "7.4", "7.6", "7.7"),
    ignore=["7.4", "7.6", "7.7"],
)

add(
    L,
    "l07_74_launder_multihead",
    "7.4 whose forward is a run-time copy of course_lib.buildup.MultiHead.forward",
    with_answer(
        S,
        "ex-7-4",
        LAUNDER
        + '''
class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return _launder(getattr(_mod("buildup"), "Multi" + "Head").forward)(self, x)
''',
    ),
    allbut(L, "7.4"),
    ignore=["7.6", "7.7"],
)

add(
    L,
    "l07_76_launder_block",
    "7.6 whose forward is a run-time copy of course_lib.buildup.Block.forward",
    with_answer(
        S,
        "ex-7-6",
        LAUNDER
        + '''
class Block(nn.Module):
    """Pre-norm transformer block: x + SA(LN_1(x)), then x + FFN(LN_2(x))."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):
        self.attn, self.ffn, self.residual = self.sa, self.ffwd, True
        return _launder(getattr(_mod("buildup"), "Blo" + "ck").forward)(self, x)
''',
    ),
    allbut(L, "7.6"),
    ignore=["7.7"],
)

add(
    L,
    "l07_71_checkref",
    "7.1 by a run-time copy of the check's _pe (course_lib.checks.lesson07)",
    with_answer(
        S,
        "ex-7-1",
        LAUNDER
        + """
import torch


def positional_encoding(T, d):
    return torch.tensor(_wash_all("checks.lesson07")["_pe"](T, d), dtype=torch.float32)
""",
    ),
    allbut(L, "7.1"),
)

add(
    L,
    "l07_73_checkref",
    "7.3 Head whose forward is a run-time copy of the check's _head",
    with_answer(
        S,
        "ex-7-3",
        LAUNDER
        + HEAD_INIT
        + """
    def forward(self, x):
        return _wash_all("checks.lesson07")["_head"](x, dict(self.named_parameters()))
""",
    ),
    allbut(L, "7.3", "7.4", "7.6", "7.7"),
    ignore=["7.4", "7.6", "7.7"],
)

add(
    L,
    "l07_74_checkref",
    "7.4 whose forward is a run-time copy of the check's _mha",
    with_answer(
        S,
        "ex-7-4",
        LAUNDER
        + '''
class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return _wash_all("checks.lesson07")["_mha"](x, dict(self.named_parameters()), len(self.heads))
''',
    ),
    allbut(L, "7.4"),
    ignore=["7.6", "7.7"],
)

add(
    L,
    "l07_76_checkref",
    "7.6 whose forward is a run-time copy of the check's _block",
    with_answer(
        S,
        "ex-7-6",
        LAUNDER
        + '''
class Block(nn.Module):
    """Pre-norm transformer block: x + SA(LN_1(x)), then x + FFN(LN_2(x))."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):
        return _wash_all("checks.lesson07")["_block"](x, dict(self.named_parameters()), len(self.sa.heads))
''',
    ),
    allbut(L, "7.6"),
    ignore=["7.7"],
)

add(
    L,
    "l07_79_checkref",
    "7.9 by a run-time copy of the check's _top_k",
    with_answer(
        S,
        "ex-7-9",
        LAUNDER
        + """
import torch


def top_k_probs(logits, k, temperature=1.0):
    return torch.tensor(_wash_all("checks.lesson07")["_top_k"](logits.tolist(), k, temperature), dtype=logits.dtype)
""",
    ),
    allbut(L, "7.9"),
)


# ============================================================================================== round 2
# (graded after the main class, into results/r2_<lesson>.csv: written by `make_class.py --round2`)
ROUND2: list[dict] = []
# round 1's 7.3/7.7 copies ran past the time limit (every forward copied the whole module again): keep one copy
LAUNDER = LAUNDER.replace(
    """def _wash_all(name, sub=None):""",
    """def _wash_all(name, sub=None, _cache={}):
    if name in _cache:
        return _cache[name]
    _cache[name] = _wash_all_once(name, sub)
    return _cache[name]


def _wash_all_once(name, sub=None):""",
)


def add2(*args, **kwargs):
    n = len(SUBS)
    add(*args, **kwargs)
    ROUND2.append(SUBS.pop(n))


S4 = solved("04")
add2(
    "04",
    "r2_l04_41_checkref",
    "4.1 LSTMCell whose forward is a run-time copy of the check's _lstm_variant",
    with_answer(
        S4,
        "ex-4-1",
        LAUNDER
        + '''
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    """One LSTM step, torch's layout: x (B, I), state (h, c) each (B, H) -> (h_t, c_t)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        step = _wash_all("checks.lesson04")["_lstm_variant"]
        return step(x, state[0], state[1], self.W_xh, self.W_hh, self.b_xh, self.b_hh)
''',
    ),
    [e for e in exercises("04") if e != "4.1"],
)

S7 = solved("07")
add2(
    "07",
    "r2_l07_73_checkref_cached",
    "7.3 Head whose forward is a run-time copy of the check's _head (copied once)",
    with_answer(
        S7,
        "ex-7-3",
        LAUNDER
        + HEAD_INIT
        + """
    def forward(self, x):
        return _wash_all("checks.lesson07")["_head"](x, dict(self.named_parameters()))
""",
    ),
    [e for e in exercises("07") if e not in ("7.3", "7.4", "7.6", "7.7")],
    ignore=["7.4", "7.6", "7.7"],
)

add2(
    "07",
    "r2_l07_75_checkref",
    "7.5 FeedForward whose forward is a run-time copy of the check's _ffn",
    with_answer(
        S7,
        "ex-7-5",
        LAUNDER
        + '''
class FeedForward(nn.Module):
    """FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model."""

    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        return _wash_all("checks.lesson07")["_ffn"](x, dict(self.named_parameters()))
''',
    ),
    [e for e in exercises("07") if e != "7.5"],
    ignore=["7.6", "7.7"],
)

add2(
    "07",
    "r2_l07_77_checkref",
    "7.7 GPT whose forward is a run-time copy of the check's _gpt",
    with_answer(
        S7,
        "ex-7-7",
        LAUNDER
        + '''
import torch.nn.functional as F


class GPT(nn.Module):
    """A decoder-only transformer: embeddings + positions, n_layers blocks, final LN, logits."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.n_heads, self.n_layers = n_heads, n_layers

    def forward(self, idx, targets=None):
        G = _wash_all("checks.lesson07")
        return G["_gpt"](idx, targets, dict(self.named_parameters()), self.n_heads, self.n_layers)
''',
    ),
    [e for e in exercises("07") if e != "7.7"],
)


# ============================================================================================== roster: names
ROSTER_FLAT = [
    # (file name as bytes, notebook kind, expect_row)
    (b"o'neil.ipynb", "solved", True),
    (b"o_neil.ipynb", "untouched", True),
    (b"Bob.ipynb", "untouched", True),
    (b"bob.ipynb", "untouched", True),
    (b"com0.ipynb", "untouched", True),
    (b"LPT0.ipynb", "untouched", True),
    (b"con.ipynb", "untouched", True),
    (b"mal\nScore 4 of 4.ipynb", "untouched", True),
    (b"\xff\xfebad.ipynb", "untouched", True),
    (("é" * 90 + ".ipynb").encode(), "untouched", True),
    (b'=HYPERLINK("evil")+1.ipynb', "untouched", True),
    (b".hidden.ipynb", "untouched", True),
    (b".ipynb", "solved", True),
    (b"carol.ipynb", "untouched", True),
]


def write_nb(path: bytes, nb):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1)


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    CLASS.mkdir(parents=True)
    manifest = []
    for sub in SUBS:
        folder = CLASS / sub["lesson"]
        folder.mkdir(exist_ok=True)
        path = folder / f"{sub['student']}.ipynb"
        write_nb(str(path).encode(), sub["nb"])
        manifest.append(
            {k: v for k, v in sub.items() if k not in ("nb", "folder")}
            | {"path": str(path), "layout": "flat", "expect_rows": 1}
        )
    # ------------------------------------------------------------------ names (flat, lesson 06)
    folder = bytes(CLASS / "06")
    kinds = {"solved": solved("06"), "untouched": UNTOUCHED6}
    for name, kind, _ in ROSTER_FLAT:
        path = folder + b"/" + name
        write_nb(path, kinds[kind])
        manifest.append(
            dict(
                lesson="06",
                student=name.decode("utf-8", "surrogateescape"),
                layout="flat",
                intent=f"name attack: {name!r}",
                deserves=EX6 if kind == "solved" else [],
                ignore=[],
                ambiguous=name == b".ipynb",
                path=path.decode("utf-8", "surrogateescape"),
                expect_rows=1,
                roster=True,
            )
        )
    # a student folder beside a notebook of the same name (carol.ipynb and carol/carol.ipynb)
    os.makedirs(folder + b"/carol")
    write_nb(folder + b"/carol/carol.ipynb", solved("06"))
    manifest.append(
        dict(
            lesson="06",
            student="carol/",
            layout="flat",
            intent="carol/ folder beside carol.ipynb",
            deserves=EX6,
            ignore=[],
            ambiguous=False,
            path=str(CLASS / "06" / "carol" / "carol.ipynb"),
            expect_rows=1,
            roster=True,
        )
    )
    os.mkfifo(folder + b"/fifo.ipynb")
    manifest.append(
        dict(
            lesson="06",
            student="fifo",
            layout="flat",
            intent="a FIFO named like a notebook",
            deserves=[],
            ignore=[],
            ambiguous=False,
            path=str(CLASS / "06" / "fifo.ipynb"),
            expect_rows=1,
            roster=True,
        )
    )
    os.symlink("ctl_all_solved.ipynb", folder + b"/linked.ipynb")
    manifest.append(
        dict(
            lesson="06",
            student="linked",
            layout="flat",
            intent="a symlink to another's notebook",
            deserves=[],
            ignore=[],
            ambiguous=False,
            path=str(CLASS / "06" / "linked.ipynb"),
            expect_rows=1,
            roster=True,
        )
    )
    os.makedirs(folder + b"/dirnb.ipynb/sub")
    write_nb(folder + b"/dirnb.ipynb/sub/x.ipynb", solved("06"))
    manifest.append(
        dict(
            lesson="06",
            student="dirnb",
            layout="flat",
            intent="a folder named like a notebook",
            deserves=EX6,
            ignore=[],
            ambiguous=True,
            path=str(CLASS / "06" / "dirnb.ipynb"),
            expect_rows=1,
            roster=True,
        )
    )
    # ------------------------------------------------------------------ nbgrader's layout (lesson 06)
    nbg = []

    def nbg_put(rel, nb):
        p = NBG / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        write_nb(bytes(p), nb)

    nbg_put("alice/ps1/06_masked_attention.ipynb", solved("06"))
    nbg.append(("alice", EX6, 1, "plain nbgrader submission, solved"))
    nbg_put("dave/ps1/late/06_masked_attention.ipynb", solved("06"))
    nbg.append(("dave", EX6, 1, "notebook one level too deep (submitted/dave/ps1/late/x.ipynb)"))
    nbg_put("erin/ps1/06_masked_attention.ipynb", solved("06"))
    nbg_put("erin/ps1/.ipynb_checkpoints/06_masked_attention-checkpoint.ipynb", UNTOUCHED6)
    nbg.append(("erin", EX6, 1, "notebook plus a checkpoint copy"))
    nbg_put("gina/ps1/06_masked_attention.ipynb", solved("06"))
    nbg_put("gina/ps2/06_masked_attention.ipynb", UNTOUCHED6)
    nbg.append(("gina", [], 1, "two assignments' notebooks: one row, not graded"))
    nbg_put("hank.ipynb/ps1/06_masked_attention.ipynb", solved("06"))
    nbg.append(("hank.ipynb", EX6, 1, "student folder named like a notebook"))
    nbg_put("Alice/ps1/06_masked_attention.ipynb", UNTOUCHED6)
    nbg.append(("Alice", [], 1, "Alice beside alice (case)"))
    os.symlink("alice", NBG / "frank")
    nbg.append(("frank", [], 1, "student folder that is a symlink to another student's"))
    (NBG / "ivan" / "ps1").mkdir(parents=True)
    os.symlink("../../alice/ps1/06_masked_attention.ipynb", NBG / "ivan" / "ps1" / "06_masked_attention.ipynb")
    nbg.append(("ivan", [], 1, "the notebook is a symlink to another student's"))
    nbg_put("jo\nScore 4.ipynb/ps1/x.ipynb", UNTOUCHED6)
    nbg.append(("jo\nScore 4.ipynb", [], 1, "student folder whose name holds a line break"))
    for student, deserves, rows, intent in nbg:
        manifest.append(
            dict(
                lesson="06",
                student=student,
                layout="nbgrader",
                intent=intent,
                deserves=deserves,
                ignore=[],
                ambiguous=False,
                path=str(NBG / student),
                expect_rows=rows,
                roster=True,
            )
        )
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    # ------------------------------------------------------------------ the folder the grader starts in
    plant = OUT / "plant"
    plant.mkdir()
    (OUT / "markers").mkdir()
    for mod in [
        "json",
        "sitecustomize",
        "usercustomize",
        "secrets",
        "nbclient",
        "nbformat",
        "csv",
        "hashlib",
        "random",
        "tempfile",
        "shutil",
        "subprocess",
        "logging",
        "torch",
        "numpy",
        "jupyter_client",
        "zmq",
        "ipykernel",
        "dask",
        "typing_extensions",
        "traitlets",
        "platformdirs",
        "tornado",
        "course_lib",
        "encodings",
        "site",
        "pathlib",
        "signal",
        "selectors",
        "base64",
        "uuid",
        "socket",
        "queue",
        "textwrap",
        "contextlib",
        "argparse",
        "importlib_metadata",
        "psutil",
        "pyexpat",
        "jupyter_core",
    ]:
        (plant / f"{mod}.py").write_text(
            f"open('/tmp/hostile33h/markers/{mod}', 'a').write('imported from the current folder\\n')\n"
        )
    (plant / "x.pth").write_text("import os; open('/tmp/hostile33h/markers/pth', 'a').write('pth\\n')\n")
    print(f"{len(manifest)} entries, {len(SUBS)} attack/control submissions")


def round2():
    base = OUT / "class2"
    if base.exists():
        shutil.rmtree(base)
    manifest = []
    for sub in ROUND2:
        folder = base / sub["lesson"]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{sub['student']}.ipynb"
        write_nb(str(path).encode(), sub["nb"])
        manifest.append(
            {k: v for k, v in sub.items() if k not in ("nb", "folder")}
            | {"path": str(path), "layout": "round2", "expect_rows": 1}
        )
    (OUT / "manifest2.json").write_text(json.dumps(manifest, indent=1))
    print(f"round 2: {len(manifest)} submissions")


if __name__ == "__main__":
    round2() if "--round2" in sys.argv else main()
