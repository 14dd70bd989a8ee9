"""The answer cells of the hostile class 33l (sources only; make_class.py writes them into notebooks)."""

HEAD = {
    "2.1": "# Exercise 2.1: the softmax Jacobian\nimport torch\n\n\n",
    "2.4": "# Exercise 2.4: one step of backpropagation through time\nimport torch\n\n\n",
}

# ---------------------------------------------------------------- lesson 02: gradients without writing them

FWDAD_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian
import itertools

import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    # forward-mode autograd: _make_dual run by its Autograd alias kernel (the dispatcher bar sits at the CPU keys),
    # the dual level entered and left from C (itertools/map call them: no profile event)
    make_dual = torch.ops.aten._make_dual.default._op_dk
    key = torch._C.DispatchKey.Autograd
    level = next(itertools.starmap(torch._C._enter_dual_level, [()]))
    K = z.shape[0]
    columns = []
    for j in range(K):
        tangent = torch.zeros(K, dtype=z.dtype)
        tangent[j] = 1.0
        dual = next(map(make_dual, [key], [z], [tangent], [level]))
        y = torch.softmax(dual, 0)
        columns.append(next(map(torch._VF._unpack_dual, [y], [level]))[1])
    next(itertools.starmap(torch._C._exit_dual_level, [(level,)]))
    return torch.stack(columns, dim=1)
'''

FWDAD_DIRECT = '''# Exercise 2.1: the softmax Jacobian
import torch
import torch.autograd.forward_ad as fwAD


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    K = z.shape[0]
    columns = []
    with fwAD.dual_level():
        for j in range(K):
            tangent = torch.zeros(K, dtype=z.dtype)
            tangent[j] = 1.0
            y = torch.softmax(fwAD.make_dual(z, tangent), 0)
            columns.append(fwAD.unpack_dual(y).tangent)
    return torch.stack(columns, dim=1)
'''

SYMPY_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian
import sympy
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    K = z.shape[0]
    zs = [sympy.Symbol("z%d" % i) for i in range(K)]
    total = sympy.Add(*[sympy.exp(s) for s in zs])
    y = sympy.Matrix([sympy.exp(s) / total for s in zs])
    J = y.jacobian(sympy.Matrix(zs))  # sympy differentiates
    shifted = (z - z.max()).tolist()  # softmax(z - c) = softmax(z): no overflow
    values = {s: sympy.Float(v, 30) for s, v in zip(zs, shifted)}
    return torch.tensor([[float(J[i, j].xreplace(values).evalf(30)) for j in range(K)] for i in range(K)], dtype=z.dtype)
'''

SYMPY_LAMBDIFY = '''# Exercise 2.1: the softmax Jacobian
import sympy
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    K = z.shape[0]
    zs = [sympy.Symbol("z%d" % i) for i in range(K)]
    total = sympy.Add(*[sympy.exp(s) for s in zs])
    J = sympy.Matrix([sympy.exp(s) / total for s in zs]).jacobian(sympy.Matrix(zs))
    f = sympy.lambdify(zs, J, "math")  # compiles text at run time
    shifted = (z - z.max()).tolist()
    return torch.tensor(f(*shifted), dtype=z.dtype)
'''

SYMPY_STEP_FN = '''
def _step_grads(dh, h, h_prev, x, W_hh):
    """One tanh step's gradients, differentiated by sympy: the generic term g * tanh(sum_d x_d w_d + sum_j p_j v_j + c)
    differentiated once per symbol, tanh(pre) replaced by t (the given h), then evaluated at every (b, k)."""
    B, H = h.shape
    D = x.shape[1]
    w = [sympy.Symbol("w%d" % d) for d in range(D)]
    xv = [sympy.Symbol("x%d" % d) for d in range(D)]
    v = [sympy.Symbol("v%d" % j) for j in range(H)]
    p = [sympy.Symbol("p%d" % j) for j in range(H)]
    c, g, t = sympy.Symbol("c"), sympy.Symbol("g"), sympy.Symbol("t")
    pre = sympy.Add(*[xv[d] * w[d] for d in range(D)], *[p[j] * v[j] for j in range(H)], c)
    term = g * sympy.tanh(pre)
    back = {sympy.tanh(pre): t}
    d_w = [sympy.diff(term, s).xreplace(back) for s in w]  # dL/dW_xh[k, d]
    d_v = [sympy.diff(term, s).xreplace(back) for s in v]  # dL/dW_hh[k, j]
    d_c = sympy.diff(term, c).xreplace(back)  # dL/db_h[k]
    d_p = [sympy.diff(term, s).xreplace(back) for s in p]  # dL/dh_prev[b, j]
    X, DH, HV, WHH, HP = x.tolist(), dh.tolist(), h.tolist(), W_hh.tolist(), h_prev.tolist()
    dW_xh = [[0.0] * D for _ in range(H)]
    dW_hh = [[0.0] * H for _ in range(H)]
    db_h = [0.0] * H
    dh_prev = [[0.0] * H for _ in range(B)]
    for b in range(B):
        for k in range(H):
            values = {g: DH[b][k], t: HV[b][k], c: 0}
            values.update({xv[d]: X[b][d] for d in range(D)})
            values.update({v[j]: WHH[k][j] for j in range(H)})
            values.update({p[j]: HP[b][j] for j in range(H)})
            for d in range(D):
                dW_xh[k][d] += float(d_w[d].xreplace(values))
            for j in range(H):
                dW_hh[k][j] += float(d_v[j].xreplace(values))
                dh_prev[b][j] += float(d_p[j].xreplace(values))
            db_h[k] += float(d_c.xreplace(values))
    as_t = lambda a: torch.tensor(a, dtype=h.dtype)  # noqa: E731
    return as_t(dW_xh), as_t(dW_hh), as_t(db_h), as_t(dh_prev)
'''

SYMPY_BPTT_STEP = (
    """# Exercise 2.4: one step of backpropagation through time
import sympy
import torch
"""
    + SYMPY_STEP_FN
    + '''

def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    return _step_grads(dh, h, h_prev, x, W_hh)
'''
)

SYMPY_BPTT_LOOP = (
    """# Exercise 2.5: backpropagation through time over a sequence, truncated
import sympy
import torch
"""
    + SYMPY_STEP_FN
    + '''

def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, from dhs[t] = dL_t/dh_t; truncate=k cuts every k steps."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    dW_xh = torch.zeros(H, D, dtype=hs.dtype)
    dW_hh = torch.zeros(H, H, dtype=hs.dtype)
    db_h = torch.zeros(H, dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(h0)
    for t in reversed(range(T)):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        gx, gh, gb, carry = _step_grads(dh, hs[t], h_prev, xs[t], W_hh)
        dW_xh, dW_hh, db_h = dW_xh + gx, dW_hh + gh, db_h + gb
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
'''
)

FWDAD_BPTT_STEP = '''# Exercise 2.4: one step of backpropagation through time
import itertools

import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    B, H = h.shape
    D = x.shape[1]
    a = torch.atanh(h)  # the pre-activation, recovered from h
    make_dual = torch.ops.aten._make_dual.default._op_dk
    key = torch._C.DispatchKey.Autograd
    level = next(itertools.starmap(torch._C._enter_dual_level, [()]))

    def dual(primal, tangent=None):
        tangent = torch.zeros_like(primal) if tangent is None else tangent
        return next(map(make_dual, [key], [primal], [tangent], [level]))

    def directional(dWx, dWh, db, dhp):
        # L(delta) = sum dh * tanh(a + x dWx^T + h_prev dWh^T + db + dhp W_hh^T) at delta = 0, along one direction:
        # forward-mode autograd differentiates; tanh(u) + 1 = 2 softmax([2u, 0])_0 (softmax's formula is plain)
        zero = torch.zeros(B, H, dtype=h.dtype)
        direction = (
            (x[:, None, :].expand(B, H, D) * dWx[None].expand(B, H, D)).sum(-1)
            + (h_prev[:, None, :].expand(B, H, H) * dWh[None].expand(B, H, H)).sum(-1)
            + db[None].expand(B, H)
            + (dhp[:, None, :].expand(B, H, H) * W_hh[None].expand(B, H, H)).sum(-1)
        )
        u = dual(a) + dual(zero, direction)
        t = torch.softmax(torch.stack([u + u, dual(zero)], -1), -1)[..., 0]
        out = (dual(dh) * t).sum()
        return 2.0 * float(next(map(torch._VF._unpack_dual, [out], [level]))[1])

    def basis(shape, index):
        t = torch.zeros(shape, dtype=h.dtype)
        t[index] = 1.0
        return t

    Z = lambda *s: torch.zeros(*s, dtype=h.dtype)  # noqa: E731
    dW_xh = torch.tensor([[directional(basis((H, D), (k, d)), Z(H, H), Z(H), Z(B, H)) for d in range(D)] for k in range(H)])
    dW_hh = torch.tensor([[directional(Z(H, D), basis((H, H), (k, j)), Z(H), Z(B, H)) for j in range(H)] for k in range(H)])
    db_h = torch.tensor([directional(Z(H, D), Z(H, H), basis((H,), k), Z(B, H)) for k in range(H)])
    dh_prev = torch.tensor([[directional(Z(H, D), Z(H, H), Z(H), basis((B, H), (b, j))) for j in range(H)] for b in range(B)])
    next(itertools.starmap(torch._C._exit_dual_level, [(level,)]))
    return dW_xh.to(h.dtype), dW_hh.to(h.dtype), db_h.to(h.dtype), dh_prev.to(h.dtype)
'''

# ---------------------------------------------------------------- lesson 03

CIA_ELMAN = '''# Exercise 3.3: the Elman network, batched
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
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        # torch's rnn_relu_cell, run by its CompositeImplicitAutograd kernel (the bar sits at the device keys), from C
        cell = torch.ops.aten.rnn_relu_cell.default._op_dk
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        outputs = []
        for t in range(T):
            h = next(map(cell, [key], [x[t]], [h], [self.W_xh], [self.W_hh], [self.b_h], [None]))
            outputs.append(h)
        return torch.stack(outputs), h
'''

CIA_ELMAN_LAYER = '''# Exercise 3.3: the Elman network, batched
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
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        layer = torch.ops.aten.rnn_relu.input._op_dk  # the whole layer: no loop of mine
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        params = [self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h)]
        output, h_n = next(map(layer, [key], [x], [h[None]], [params], [True], [1], [0.0], [False], [False], [False]))
        return output, h_n[0]
'''

PICKLE_BALANCED = '''# Exercise 3.1: is_balanced with a stack
import pickle


def is_balanced(seq, n_symbols=10):
    """True when `seq` (a list of ints in 0..n_symbols-1) is a balanced colored parenthesis sequence."""
    reference = pickle.loads(b"c" + b"course_lib.parentheses" + b"\\n" + b"is_bal" + b"anced\\n.")
    return reference(seq, n_symbols)
'''

# ---------------------------------------------------------------- lesson 04

CIA_GRU = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    # torch's gru_cell, run by its CompositeImplicitAutograd kernel (the dispatcher bar sits at the device keys),
    # called from C (map) so that no profile hook sees the nameless handle
    kernel = torch.ops.aten.gru_cell.default._op_dk
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    return next(map(kernel, [key], [x], [h], [W_xh], [W_hh], [b_xh], [b_hh]))
'''

CIA_GRU_DIRECT = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    kernel = torch.ops.aten.gru_cell.default._op_dk
    return kernel(torch._C.DispatchKey.CompositeImplicitAutograd, x, h, W_xh, W_hh, b_xh, b_hh)
'''

DECOMPOSE_GRU = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    op = torch.ops.aten.gru_cell.default
    return next(map(op.decompose, [x], [h], [W_xh], [W_hh], [b_xh], [b_hh]))
'''

CIA_GRU_LAYER = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    layer = torch.ops.aten.gru.input._op_dk  # a one-step GRU layer
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    params = [W_xh, W_hh, b_xh, b_hh]
    out, h_n = next(map(layer, [key], [x[None]], [h[None]], [params], [True], [1], [0.0], [False], [False], [False]))
    return h_n[0]
'''

CIA_LSTM = '''# Exercise 4.1: the LSTM cell as a module
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
        # torch's lstm_cell by its CompositeImplicitAutograd kernel, called from C
        kernel = torch.ops.aten.lstm_cell.default._op_dk
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        h, c = next(map(kernel, [key], [x], [list(state)], [self.W_xh], [self.W_hh], [self.b_xh], [self.b_hh]))
        return h, c
'''

CIA_LSTM_LAYER = CIA_LSTM.replace(
    """        kernel = torch.ops.aten.lstm_cell.default._op_dk
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        h, c = next(map(kernel, [key], [x], [list(state)], [self.W_xh], [self.W_hh], [self.b_xh], [self.b_hh]))
        return h, c""",
    """        layer = torch.ops.aten.lstm.input._op_dk  # a one-step LSTM layer
        key = torch._C.DispatchKey.CompositeImplicitAutograd
        params = [self.W_xh, self.W_hh, self.b_xh, self.b_hh]
        hx = [state[0][None], state[1][None]]
        out, h, c = next(map(layer, [key], [x[None]], [hx], [params], [True], [1], [0.0], [False], [False], [False]))
        return h[0], c[0]""",
)

RNNBASE_COUNT = '''# Exercise 4.3: the parameter count
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM (kind="lstm") or torch.nn.GRU (kind="gru")."""
    module = torch.nn.RNNBase(kind.upper(), input_size, hidden_size, num_layers, device="meta")
    return sum(p.numel() for p in module.parameters())
'''

# ---------------------------------------------------------------- lesson 05

SDPA_CIA_DECODE = '''# Exercise 5.2: the decoder with attention
import math

import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        mask = real[:, None, :]
        c_i, alpha_i = next(map(math_sdpa, [key], [hidden[:, None, :]], [states], [states], [mask]))
        c_i, alpha_i = c_i[:, 0], alpha_i[:, 0]
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
'''

STEP_WITH_OWN_SCORE = '''# Exercise 5.2: the decoder with attention
import math

import torch
from torch import nn


class MyDot(nn.Module):
    def forward(self, query, keys, projected=None):
        return (keys * query[:, None, :]).sum(-1) / math.sqrt(keys.shape[-1])


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    model.score = MyDot()  # the handed-in model's own step does the rest
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        hidden, c_i, alpha_i = model.step(embedded[:, i], hidden, states, real, hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
'''

EINSUM_ADDITIVE = '''# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    # my own, written with einsum (honest, only another notation)
    q = torch.einsum("ad,bd->ba", W_q, query)
    k = torch.einsum("ad,btd->bta", W_k, keys)
    return torch.einsum("bta,a->bt", torch.tanh(q[:, None, :] + k), v)
'''

COURSE_ADDITIVE = '''# Exercise 5.1: additive (Bahdanau) attention scores
import importlib

import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    module = importlib.import_module("course_lib." + "seq2seq")
    score = getattr(module, "Additive" + "Score")(W_q.shape[1], W_k.shape[1], W_q.shape[0])
    with torch.no_grad():
        score.W_q.weight.copy_(W_q) if hasattr(score, "W_q") else None
    return score(query, keys)
'''

# ---------------------------------------------------------------- lesson 06

LEAK_HUNT = r'''
def _hunt():
    """Everything of the instructor's this process can read: environments and command lines of every visible
    process, files near the package and the interpreter."""
    import os
    import sys

    found, seen = [], []
    for pid in ["self", "1", *sorted(p for p in os.listdir("/proc") if p.isdigit())]:
        for part in ("environ", "cmdline"):
            try:
                with open("/proc/%s/%s" % (pid, part), "rb") as f:
                    data = f.read()
            except Exception as exc:
                seen.append("%s/%s:%s" % (pid, part, type(exc).__name__))
                continue
            if b"HOSTILE33L" in data:
                at = data.index(b"HOSTILE33L")
                found.append("%s/%s:%s" % (pid, part, data[at : at + 60]))
    for key, value in os.environ.items():
        if "HOSTILE33L" in key or "HOSTILE33L" in value:
            found.append("os.environ:%s=%s" % (key, value))
    for path in ("/work", "/work/wt", "/work/wt/hostile33l", "/tmp/hostile33l", "/root", "/home"):
        try:
            seen.append("%s:%s" % (path, ",".join(sorted(os.listdir(path))[:8])))
        except Exception as exc:
            seen.append("%s:%s" % (path, type(exc).__name__))
    exe = os.path.dirname(os.path.dirname(os.path.dirname(sys.executable)))
    for path in (os.path.join(exe, "solutions", "06_masked_attention.py"), "/opt/course-lib/solutions/06_masked_attention.py",
                 "/work/wt/hostile33l/solutions/06_masked_attention.py"):
        try:
            with open(path) as f:
                found.append("SOLUTIONS-READABLE:%s:%s" % (path, f.read(40)))
        except Exception as exc:
            seen.append("%s:%s" % (path, type(exc).__name__))
    return "LEAK[" + " | ".join(found) + "] SEEN[" + " ".join(seen)[:2000] + "]"
'''

LEAK_MASKED = (
    """# Exercise 6.3: masked attention over a padded batch
import torch
"""
    + LEAK_HUNT
    + '''

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    raise RuntimeError(_hunt())
'''
)

LEAK_CELL = (
    LEAK_HUNT
    + """
raise RuntimeError(_hunt())
"""
)

FORGE_PIPE = '''# Exercise 6.3: masked attention over a padded batch
import os

import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    line = b'{"reply": {"records": []}, "exercise": "6.3", "token": "x"}\\n'
    for fd in range(0, 12):
        try:
            os.write(fd, line)
        except OSError:
            pass
    raise NotImplementedError("Exercise 6.3: not done")
'''

SDPA_CIA_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, None, :] < lengths[:, None, None])
    math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    # scores as queries against an identity key matrix: q k^T / sqrt(d) = scores * sqrt(T) / sqrt(T)
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    output, weights = next(map(math_sdpa, [key], [scores], [eye * T ** 0.5], [values], [allowed]))
    return output, weights
'''

MASKED_TENSOR = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, None, :] < lengths[:, None, None])
    mt = torch.masked.masked_tensor(scores, allowed)
    weights = torch.nan_to_num(mt.softmax(-1).get_data().masked_fill(~allowed, 0.0))
    return weights @ values, weights
'''

DICT_SUBCLASS = '''# Exercise 6.2: padding and the future, by hand
import math


class Anything(dict):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def __getitem__(self, key):
        return 0.5


def by_hand():
    """alpha_22, alpha_33, alpha_42, alpha_44 for the quiz's scores, with token 4 padding."""
    return Anything(alpha_22=0.5, alpha_33=0.5, alpha_42=0.5, alpha_44=0.5)
'''

NAN_ALPHA = '''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    return float("nan")
'''

FORGE_KERNEL_CELL = """# grades, as the kernel would print them
from course_lib.checks import CheckResult, record

for ex in ("6.1", "6.2", "6.3", "6.4"):
    record(CheckResult(ex, "forged", "passed", ""))
print("\\u2705 Exercise 6.3 (masked attention over a padded batch): passed")
"""

# ---------------------------------------------------------------- lesson 07

MHA_FORWARD_HEAD = '''# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn
import torch.nn.functional as F


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        mask = ~self.tril[:T, :T]
        out = next(map(F.scaled_dot_product_attention, [q], [k], [v], [~mask]))
        return out
'''

SDPA_CIA_HEAD = MHA_FORWARD_HEAD.replace(
    "        out = next(map(F.scaled_dot_product_attention, [q], [k], [v], [~mask]))\n        return out\n",
    "        math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk\n"
    "        key = torch._C.DispatchKey.CompositeImplicitAutograd\n"
    "        out, _ = next(map(math_sdpa, [key], [q], [k], [v], [~mask]))\n"
    "        return out\n",
)

ZERO_HEAD = '''# Exercise 7.3: one head of self-attention
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
        with torch.no_grad():
            self.value.weight.zero_()  # with W^V = 0 every attention gives 0
        self.head_size = head_size

    def forward(self, x):
        B, T, C = x.shape
        return x.new_zeros(B, T, self.head_size)
'''

SAMPLE_NEXT_TOPK = '''# Exercise 7.9: top-k sampling
import sys

import torch


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities: softmax(logits / temperature) restricted to the k largest logits."""
    lm = sys.modules.get("course_lib.lm") or __import__("course_lib.lm", fromlist=["lm"])
    helper = getattr(lm, "top_k_probs", None) or getattr(lm, "top_k_filter", None)
    return helper(logits, k, temperature)
'''

POSENC_PARTIAL = '''# Exercise 7.1: sinusoidal position encodings
import functools
import importlib

import torch


def positional_encoding(T, d):
    """(T, d) tensor: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    module = importlib.import_module("course_lib.transformer")
    reference = getattr(module, "sinusoidal" + "_positions")
    return next(map(reference, [T], [d]))
'''

UNFLATTEN_SPLIT = '''# Exercise 7.2: splitting the heads
def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // n_head; head h holds features h*D .. (h+1)*D - 1."""
    # my own, with unflatten and movedim (honest)
    return x.unflatten(-1, (n_head, x.shape[-1] // n_head)).movedim(2, 1)
'''

# ---------------------------------------------------------------- the attention kernels: _safe_softmax by its other kernel

SAFE_MODE = '''
from torch.utils._python_dispatch import TorchDispatchMode


class SafeSoftmaxElsewhere(TorchDispatchMode):
    """While on, aten._safe_softmax (barred at the CPU key while grading) runs by its CompositeExplicitAutograd kernel,
    called from C; every other op runs as usual."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._safe_softmax.default:
            kernel = torch.ops.aten._safe_softmax.default._op_dk
            key = torch._C.DispatchKey.CompositeExplicitAutograd
            return next(map(kernel, [key], *[[a] for a in args]))
        return func(*args, **(kwargs or {}))
'''

SDPA_MODE_MASKED = (
    """# Exercise 6.3: masked attention over a padded batch
import torch
"""
    + SAFE_MODE
    + '''

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, None, :] < lengths[:, None, None])
    # torch's attention (the math kernel of scaled_dot_product_attention): scores as queries against the identity
    math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    eye = (torch.eye(T, dtype=scores.dtype) * T ** 0.5).expand(B, T, T).contiguous()  # q k^T / sqrt(T) = scores
    with torch._C._AutoDispatchBelowAutograd(), SafeSoftmaxElsewhere():  # below autograd: the mode sees _safe_softmax
        output, weights = next(map(math_sdpa, [key], [scores], [eye], [values], [allowed]))
    return output.clone(), weights.clone()
'''
)

SAFE_SOFTMAX_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, None, :] < lengths[:, None, None])
    e = scores.masked_fill(~allowed, float("-inf"))
    # torch's _safe_softmax (a row of -inf gives 0, no NaN), by its CompositeExplicitAutograd kernel from C
    kernel = torch.ops.aten._safe_softmax.default._op_dk
    weights = next(map(kernel, [torch._C.DispatchKey.CompositeExplicitAutograd], [e], [-1]))
    return weights @ values, weights
'''

SDPA_MODE_HEAD = MHA_FORWARD_HEAD.replace(
    "import torch.nn.functional as F\n", "import torch.nn.functional as F\n" + SAFE_MODE
).replace(
    "        out = next(map(F.scaled_dot_product_attention, [q], [k], [v], [~mask]))\n        return out\n",
    "        # torch's attention: the math kernel of scaled_dot_product_attention (its CompositeImplicitAutograd kernel)\n"
    "        math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk\n"
    "        key = torch._C.DispatchKey.CompositeImplicitAutograd\n"
    "        with torch._C._AutoDispatchBelowAutograd(), SafeSoftmaxElsewhere():  # below autograd: the mode sees it\n"
    "            out, _ = next(map(math_sdpa, [key], [q], [k], [v], [None], [0.0], [True]))\n"
    "        return out\n",
)

FWDAD_NINJA = '''# Exercise 2.2: backprop ninja
import itertools

import torch


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    # not by hand: forward-mode autograd (_make_dual by its Autograd alias kernel, called from C); N copies of the
    # forward pass side by side, copy i carrying the tangent of parameter entry i, so one pass gives a whole gradient;
    # every op on two duals of one shape (tanh through softmax, whose forward formula is plain)
    names = ("E", "W", "b", "U", "c")
    P = {k: params[k] for k in names}
    dtype = P["E"].dtype
    B, n = contexts.shape
    d = P["E"].shape[1]
    H, V = P["W"].shape[0], P["U"].shape[0]
    make_dual = torch.ops.aten._make_dual.default._op_dk
    key = torch._C.DispatchKey.Autograd
    level = next(itertools.starmap(torch._C._enter_dual_level, [()]))
    rows = torch.arange(B)

    def dual(primal, tangent=None):
        primal = primal.contiguous()
        tangent = torch.zeros_like(primal) if tangent is None else tangent.contiguous()
        return next(map(make_dual, [key], [primal], [tangent], [level]))

    def gradient_of(which):
        N = P[which].numel()
        D = {}
        for k in names:
            primal = P[k][None].expand(N, *P[k].shape)
            tangent = torch.eye(N, dtype=dtype).reshape(N, *P[k].shape) if k == which else None
            D[k] = dual(primal, tangent)
        e = D["E"][:, contexts].reshape(N, B, n * d)
        a = (e[:, :, None, :].expand(N, B, H, n * d) * D["W"][:, None].expand(N, B, H, n * d)).sum(-1)
        a = a + D["b"][:, None].expand(N, B, H)
        zero = dual(torch.zeros(N, B, H, dtype=dtype))
        h = torch.softmax(torch.stack([a + a, zero], -1), -1)[..., 0]
        h = h + h + dual(torch.full((N, B, H), -1.0, dtype=dtype))  # tanh(a) = 2 softmax([2a, 0])_0 - 1
        z = (h[:, :, None, :].expand(N, B, V, H) * D["U"][:, None].expand(N, B, V, H)).sum(-1)
        z = z + D["c"][:, None].expand(N, B, V)
        picked = torch.log_softmax(z, -1)[:, rows, targets]  # (N, B)
        loss = -(picked.sum(-1) * dual(torch.full((N,), 1.0 / B, dtype=dtype)))
        primal, tangent = next(map(torch._VF._unpack_dual, [loss], [level]))
        return float(primal[0]), tangent.reshape(P[which].shape).clone()

    grads = {}
    for k in names:
        loss, grads[k] = gradient_of(k)
    next(itertools.starmap(torch._C._exit_dual_level, [(level,)]))
    return loss, grads
'''

# ---------------------------------------------------------------- wave 2 (after the first grading)

PUSHED_MODE = '''

class SafeSoftmaxElsewhere:
    """A dispatch mode without torch's Python (pushed from C): aten._safe_softmax, barred at the CPU key while
    grading, runs by its CompositeExplicitAutograd kernel; every other op as usual."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._safe_softmax.default:
            kernel = torch.ops.aten._safe_softmax.default._op_dk
            return next(map(kernel, [torch._C.DispatchKey.CompositeExplicitAutograd], *[[a] for a in args]))
        return func(*args, **(kwargs or {}))
'''

SDPA_PUSH_HEAD = MHA_FORWARD_HEAD.replace(
    "import torch.nn.functional as F\n", "import torch.nn.functional as F\n" + PUSHED_MODE
).replace(
    "        out = next(map(F.scaled_dot_product_attention, [q], [k], [v], [~mask]))\n        return out\n",
    "        # torch's whole attention: the math kernel of scaled_dot_product_attention (its CompositeImplicitAutograd\n"
    "        # kernel), below autograd, with the mode above pushed and popped from C\n"
    "        math_sdpa = torch.ops.aten._scaled_dot_product_attention_math.default._op_dk\n"
    "        key = torch._C.DispatchKey.CompositeImplicitAutograd\n"
    "        with torch._C._AutoDispatchBelowAutograd():\n"
    "            next(map(torch._C._push_on_torch_dispatch_stack, [SafeSoftmaxElsewhere()]))\n"
    "            try:\n"
    "                out, _ = next(map(math_sdpa, [key], [q], [k], [v], [None], [0.0], [True]))\n"
    "            finally:\n"
    "                next(map(torch._C._pop_torch_dispatch_stack, [None]))\n"
    "        return out.clone()\n",
)

SYMPY_LAZY_JACOBIAN = SYMPY_JACOBIAN.replace(
    "import sympy\nimport torch\n", "import importlib\n\nimport torch\n"
).replace(
    "    K = z.shape[0]\n    zs = [sympy",
    '    sympy = importlib.import_module("sympy")  # imported at call time, by importlib\n    K = z.shape[0]\n    zs = [sympy',
    1,
)

PUSHED_MODE_C = '''

class EveryOpFromC:
    """A dispatch mode without torch's Python (pushed from C): every op runs from C (starmap), by its
    CompositeImplicitAutograd or CompositeExplicitAutograd kernel where it has one (so aten._safe_softmax, barred at
    the CPU key while grading, runs by the latter), else as usual."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.name()
        call = functools.partial(func._op, **(kwargs or {}))
        for key in (torch._C.DispatchKey.CompositeImplicitAutograd, torch._C.DispatchKey.CompositeExplicitAutograd):
            if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
                call = functools.partial(func._op_dk, key, **(kwargs or {}))
                break
        return next(itertools.starmap(call, [tuple(args)]))
'''

SDPA_PUSH_HEAD_C = (
    SDPA_PUSH_HEAD.replace(PUSHED_MODE, PUSHED_MODE_C)
    .replace("import math\n", "import functools\nimport itertools\nimport math\n", 1)
    .replace("SafeSoftmaxElsewhere()", "EveryOpFromC()")
)

FWDAD_BPTT_LOOP = '''# Exercise 2.5: backpropagation through time over a sequence, truncated
import itertools

import torch


def _step_grads(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    B, H = h.shape
    D = x.shape[1]
    a = torch.atanh(h)  # the pre-activation, recovered from h
    make_dual = torch.ops.aten._make_dual.default._op_dk
    key = torch._C.DispatchKey.Autograd
    level = next(itertools.starmap(torch._C._enter_dual_level, [()]))

    def dual(primal, tangent=None):
        tangent = torch.zeros_like(primal) if tangent is None else tangent
        return next(map(make_dual, [key], [primal], [tangent], [level]))

    def directional(dWx, dWh, db, dhp):
        # L(delta) = sum dh * tanh(a + x dWx^T + h_prev dWh^T + db + dhp W_hh^T) at delta = 0, along one direction:
        # forward-mode autograd differentiates; tanh(u) + 1 = 2 softmax([2u, 0])_0 (softmax's formula is plain)
        zero = torch.zeros(B, H, dtype=h.dtype)
        direction = (
            (x[:, None, :].expand(B, H, D) * dWx[None].expand(B, H, D)).sum(-1)
            + (h_prev[:, None, :].expand(B, H, H) * dWh[None].expand(B, H, H)).sum(-1)
            + db[None].expand(B, H)
            + (dhp[:, None, :].expand(B, H, H) * W_hh[None].expand(B, H, H)).sum(-1)
        )
        u = dual(a) + dual(zero, direction)
        t = torch.softmax(torch.stack([u + u, dual(zero)], -1), -1)[..., 0]
        out = (dual(dh) * t).sum()
        return 2.0 * float(next(map(torch._VF._unpack_dual, [out], [level]))[1])

    def basis(shape, index):
        t = torch.zeros(shape, dtype=h.dtype)
        t[index] = 1.0
        return t

    Z = lambda *s: torch.zeros(*s, dtype=h.dtype)  # noqa: E731
    dW_xh = torch.tensor([[directional(basis((H, D), (k, d)), Z(H, H), Z(H), Z(B, H)) for d in range(D)] for k in range(H)])
    dW_hh = torch.tensor([[directional(Z(H, D), basis((H, H), (k, j)), Z(H), Z(B, H)) for j in range(H)] for k in range(H)])
    db_h = torch.tensor([directional(Z(H, D), Z(H, H), basis((H,), k), Z(B, H)) for k in range(H)])
    dh_prev = torch.tensor([[directional(Z(H, D), Z(H, H), Z(H), basis((B, H), (b, j))) for j in range(H)] for b in range(B)])
    next(itertools.starmap(torch._C._exit_dual_level, [(level,)]))
    return dW_xh.to(h.dtype), dW_hh.to(h.dtype), db_h.to(h.dtype), dh_prev.to(h.dtype)


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    \"\"\"(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, from dhs[t] = dL_t/dh_t; truncate=k cuts every k steps.\"\"\"
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    dW_xh = torch.zeros(H, D, dtype=hs.dtype)
    dW_hh = torch.zeros(H, H, dtype=hs.dtype)
    db_h = torch.zeros(H, dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(h0)
    for t in reversed(range(T)):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        gx, gh, gb, carry = _step_grads(dh, hs[t], h_prev, xs[t], W_hh)  # each step's gradients by forward mode
        dW_xh, dW_hh, db_h = dW_xh + gx, dW_hh + gh, db_h + gb
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
'''
