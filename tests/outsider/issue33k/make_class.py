"""Writes the hostile33k class into /tmp/hostile33k/class/<lesson>/<student>.ipynb plus manifest.json.

Each submission is the released exercise notebook with the solutions' answers filled in, except the
answer cells an attack replaces.  ``deserve`` lists the exercises the submission deserves to pass.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = Path("/tmp/hostile33k/class")
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
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def answers(lesson):
    return {
        gid(c): "".join(c["source"])
        for c in load("solutions", lesson)["cells"]
        if gid(c) and gid(c).startswith("ex-") and c["cell_type"] == "code"
    }


def exercises(lesson):
    return [
        gid(c)[len("check-") :].replace("-", ".")
        for c in load("exercises", lesson)["cells"]
        if gid(c) and gid(c).startswith("check-")
    ]


def build(lesson, overrides=None, solved=True, extra_cells=(), only=None):
    nb = load("exercises", lesson)
    sol = answers(lesson)
    for c in nb["cells"]:
        g = gid(c)
        if c["cell_type"] != "code" or not g or not g.startswith("ex-"):
            continue
        src = None
        if solved and (only is None or g in only):
            src = sol.get(g)
        if overrides and g in overrides:
            src = overrides[g]
        if src is not None:
            c["source"] = src.splitlines(keepends=True)
    for e in extra_cells:
        nb["cells"].append(e)
    return nb


SUBS: list[dict] = []


def sub(lesson, student, intent, overrides=None, attacked=(), deserve=None, **kw):
    nb = build(lesson, overrides, **kw)
    if deserve is None:
        deserve = [e for e in exercises(lesson) if e not in attacked]
    SUBS.append(
        dict(lesson=lesson, student=student, intent=intent, deserve=sorted(deserve), nb=nb, attacked=list(attacked))
    )


# ------------------------------------------------------------------------------------------- lesson 07
S7 = answers("07")
HEAD_OK = S7["ex-7-3"]
MHA_OK = S7["ex-7-4"]
FF_OK = S7["ex-7-5"]
BLOCK_OK = S7["ex-7-6"]
GPT_OK = S7["ex-7-7"]

ZERO = """
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
"""

# 7.3: Head that zeroes its own weights, then returns zeros (the judge's reference is built from the
# parameters read AFTER forward ran, so it is zeros too)
HEAD_ZERO = (
    HEAD_OK.replace("class Head(", "class _Head(")
    + """

class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):"""
    + ZERO
    + """        B, T, C = x.shape
        return x.new_zeros(B, T, self.value.out_features)
"""
)
MHA_USING_OK_HEAD = MHA_OK.replace("Head(d_model", "_Head(d_model")
sub(
    "07",
    "zero_head",
    "7.3 Head zeroes its parameters in forward and returns zeros (no attention written)",
    {"ex-7-3": HEAD_ZERO, "ex-7-4": MHA_USING_OK_HEAD},
    attacked=["7.3"],
)

# 7.3 b: only W^Q and W^K zeroed: scores all 0, so the head is a running mean of v (no softmax, no mask)
HEAD_MEAN = (
    HEAD_OK.replace("class Head(", "class _Head(")
    + """

class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        with torch.no_grad():
            self.query.weight.zero_()
            self.key.weight.zero_()
        v = self.value(x)
        T = x.shape[1]
        return v.cumsum(1) / torch.arange(1, T + 1, dtype=v.dtype).view(1, T, 1)
"""
)
sub(
    "07",
    "mean_head",
    "7.3 Head zeroes W^Q, W^K in forward: a running mean of v replaces masked softmax attention",
    {"ex-7-3": HEAD_MEAN, "ex-7-4": MHA_USING_OK_HEAD},
    attacked=["7.3"],
)

MHA_ZERO = (
    MHA_OK.replace("class MultiHeadAttention(", "class _MHA(")
    + """

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        self.register_forward_pre_hook(_wipe)

    def forward(self, x):
        return torch.zeros_like(x)


def _wipe(module, args):
    with torch.no_grad():
        for p in module.parameters():
            p.zero_()
"""
)
BLOCK_USING_OK_MHA = BLOCK_OK.replace("self.sa = MultiHeadAttention(", "self.sa = _MHA(")
sub(
    "07",
    "hook_mha",
    "7.4 MHA: a forward pre-hook zeroes every parameter, forward returns zeros",
    {"ex-7-4": MHA_ZERO, "ex-7-6": BLOCK_USING_OK_MHA},
    attacked=["7.4"],
)

FF_ZERO = (
    FF_OK.replace("class FeedForward(", "class _FF(")
    + """

class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        with torch.no_grad():
            self.net[0].weight.zero_()
            self.net[0].bias.zero_()
        return self.net[2].bias.expand_as(x).clone()
"""
)
BLOCK_USING_OK_FF = BLOCK_OK.replace("self.ffwd = FeedForward(", "self.ffwd = _FF(")
sub(
    "07",
    "bias_ffn",
    "7.5 FFN zeroes W_1, b_1 in forward and returns b_2 (no ReLU, no matmul)",
    {"ex-7-5": FF_ZERO, "ex-7-6": BLOCK_USING_OK_FF},
    attacked=["7.5"],
)

BLOCK_ZERO = (
    BLOCK_OK.replace("class Block(", "class _Block(")
    + """

class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):"""
    + ZERO
    + """        return x.clone()
"""
)
GPT_USING_OK_BLOCK = GPT_OK.replace(
    "Block(d_model, n_heads, block_size) for", "_Block(d_model, n_heads, block_size) for"
)
sub(
    "07",
    "zero_block",
    "7.6 Block zeroes all its parameters in forward and returns x",
    {"ex-7-6": BLOCK_ZERO, "ex-7-7": GPT_USING_OK_BLOCK},
    attacked=["7.6"],
)

BLOCK_LN = (
    BLOCK_OK.replace("class Block(", "class _Block(")
    + """

class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):
        with torch.no_grad():
            for ln in (self.ln1, self.ln2):
                ln.weight.zero_()
                ln.bias.zero_()
        z = torch.zeros_like(x)
        return x + self.sa(z) + self.ffwd(z)
"""
)
sub(
    "07",
    "ln_block",
    "7.6 Block zeroes its layer norms: x + SA(0) + FFN(0), no norm, no residual chain",
    {"ex-7-6": BLOCK_LN, "ex-7-7": GPT_USING_OK_BLOCK},
    attacked=["7.6"],
)

GPT_ZERO = (
    GPT_OK.replace("class GPT(", "class _GPT(")
    + """

class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):"""
    + ZERO
    + """        B, T = idx.shape
        V = self.lm_head.out_features
        logits = torch.zeros(B, T, V)
        if targets is None:
            return logits, None
        return logits, torch.log(torch.tensor(float(V)))
"""
)
sub(
    "07",
    "zero_gpt",
    "7.7 GPT zeroes all its parameters in forward: logits 0, loss log V",
    {"ex-7-7": GPT_ZERO},
    attacked=["7.7"],
)

GPT_BIAS = (
    GPT_OK.replace("class GPT(", "class _GPT(")
    + """

class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        with torch.no_grad():
            self.lm_head.weight.zero_()
        B, T = idx.shape
        logits = self.lm_head.bias.detach().expand(B, T, -1).clone()
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())
"""
)
sub(
    "07",
    "bias_gpt",
    "7.7 GPT zeroes lm_head.weight in forward: logits = lm_head.bias everywhere (no transformer run)",
    {"ex-7-7": GPT_BIAS},
    attacked=["7.7"],
)

# 7.x: named_parameters lies (fresh zero tensors), forward returns zeros and never touches real weights
FF_LIE = (
    FF_OK.replace("class FeedForward(", "class _FF(")
    + """

class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.zeros_like(x)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
            yield name, (p if self.calls == 0 else nn.Parameter(torch.zeros_like(p)))
"""
)
sub(
    "07",
    "lie_ffn",
    "7.5 FFN: named_parameters reports zero tensors once forward ran; forward returns zeros",
    {"ex-7-5": FF_LIE, "ex-7-6": BLOCK_USING_OK_FF},
    attacked=["7.5"],
)

# 7.3 honest but clever: one batched einsum with its own mask (deserves)
HEAD_EINSUM = """# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        T = x.shape[1]
        s = torch.einsum("btd,bsd->bts", self.query(x), self.key(x)) * self.key.out_features ** -0.5
        s = torch.where(self.tril[:T, :T], s, torch.full_like(s, -1e30))
        s = s - s.amax(-1, keepdim=True)
        w = s.exp()
        return torch.einsum("bts,bsd->btd", w / w.sum(-1, keepdim=True), self.value(x))
"""
sub(
    "07",
    "einsum_head",
    "7.3 honest but clever: einsum, where-mask and a hand softmax (deserves everything)",
    {"ex-7-3": HEAD_EINSUM},
    attacked=[],
)

# 7.6 zeroing delegated: Block.forward honest-looking but sa/ffwd replaced by lambdas after first call? no:
# a Block whose forward calls the check's own reference of the block (refused)
BLOCK_REF = """# Exercise 7.6: the transformer block
from course_lib.checks import lesson07 as _l7


class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.n_heads = n_heads

    def forward(self, x):
        params = {k: v.detach().double() for k, v in self.named_parameters()}
        return _l7._block(x.double(), params, self.n_heads).to(x.dtype)
"""
sub(
    "07",
    "ref_block",
    "7.6 Block calls the check's own reference _block (should be refused)",
    {"ex-7-6": BLOCK_REF, "ex-7-7": GPT_USING_OK_BLOCK},
    attacked=["7.6"],
)


# ------------------------------------------------------------------------------------------- lesson 06
S6 = answers("06")
sub("06", "ctl_full", "control: all solved (full marks)", {})
sub("06", "ctl_untouched", "control: untouched exercise notebook (0)", solved=False, deserve=[])
sub(
    "06",
    "ctl_half",
    "control: 6.1 and 6.3 solved, 6.2 and 6.4 stubs (half)",
    only={"ex-6-1", "ex-6-3"},
    deserve=["6.1", "6.3"],
)


def code_cell(src, meta=None):
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": meta or {},
        "outputs": [],
        "source": src.splitlines(keepends=True),
    }


sub(
    "06",
    "untouched_added",
    "untouched notebook with the solutions pasted in added cells (no nbgrader ids)",
    solved=False,
    deserve=[],
    extra_cells=[code_cell(S6[g]) for g in ("ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4")],
)

# the returned weights carry the masked-out positions as -0.0 and a mask from torch.masked (refused route)
MT = """# Exercise 6.3: masked attention over a padded batch
import torch
from torch.masked import masked_tensor


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    w = torch.softmax(masked_tensor(scores, allowed), -1).to_tensor(0.0)
    return w @ values, w
"""
sub(
    "06",
    "maskedtensor",
    "6.3 via torch.masked.MaskedTensor's softmax (a masked softmax borrowed)",
    {"ex-6-3": MT},
    attacked=["6.3"],
)

NESTED = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.nn.Transformer.generate_square_subsequent_mask.__wrapped__(T) if hasattr(
        torch.nn.Transformer.generate_square_subsequent_mask, "__wrapped__") else None
    rows = []
    for b in range(B):
        L = int(lengths[b])
        e = scores[b, :, :L]
        full = torch.nn.functional.scaled_dot_product_attention.__self__ if False else None
        s = torch.nested.nested_tensor([e[i, : min(i + 1, L)] for i in range(T)])
        p = torch.nested.to_padded_tensor(s.softmax(-1), 0.0, (T, T))
        rows.append(p)
    w = torch.stack(rows)
    return w @ values, w
"""
sub(
    "06",
    "nested_softmax",
    "6.3 via a nested (ragged) tensor's softmax: no mask built at all",
    {"ex-6-3": NESTED},
    attacked=[],
)  # own code: the ragged rows ARE the mask; deserves (clever, honest)

MHAF = """# Exercise 6.3: masked attention over a padded batch
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    bad = (pos[None, :] > pos[:, None])[None] | (pos[None, None, :] >= lengths[:, None, None])
    fill = torch.zeros(B, T, T).masked_fill(bad, float("-inf"))
    w = torch._C._nn._masked_softmax(scores, bad, -1, 0) if hasattr(torch._C._nn, "_masked_softmax") else \\
        torch.ops.aten._masked_softmax.default(scores, bad, -1, 0)
    w = torch.nan_to_num(w)
    return w @ values, w
"""
sub(
    "06",
    "aten_masked_softmax",
    "6.3 via aten._masked_softmax (barred op) reached through torch.ops",
    {"ex-6-3": MHAF},
    attacked=["6.3"],
)

# a C callable as the function itself: functools.partial of torch's own MHA functional form
LEAK = """# Exercise 6.1: the quiz for any score matrix
import os


def alpha(scores, i, j):
    found = dict(os.environ)
    for p in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline", "/proc/self/mountinfo"):
        try:
            with open(p, "rb") as f:
                found[p] = f.read(4000).decode("latin-1")
        except Exception as exc:
            found[p] = repr(exc)
    raise ValueError("HOSTILE33K " + repr(found)[:2900])
"""
sub(
    "06",
    "env_leak",
    "6.1 raises with the sandbox's environment and /proc files (is the grader's secret there?)",
    {"ex-6-1": LEAK},
    attacked=["6.1"],
)

LEAK_NB = """# Exercise 6.2: padding and the future, by hand
import os
raise RuntimeError("HOSTILE33K top " + repr(dict(os.environ))[:1500] + open("/proc/1/environ", "rb").read().decode("latin-1"))
"""
sub(
    "06",
    "env_leak_cell",
    "6.2 top-level raise with env in the kernel run (feedback shows problems)",
    {"ex-6-2": LEAK_NB},
    attacked=["6.2"],
)

# 6.2 by hand: four numbers typed in (this IS the exercise: deserves)
BY_HAND_TYPED = '''# Exercise 6.2: padding and the future, by hand
import math


def by_hand():
    """the four weights, worked out on paper."""
    return {"alpha_22": %r, "alpha_33": %r, "alpha_42": %r, "alpha_44": %r}
'''
try:
    sys.path.insert(0, str(ROOT))
    import torch  # noqa: F401

    from course_lib.checks import lesson06 as _l6

    _w = _l6._lecture_weights()
    BY_HAND_TYPED = BY_HAND_TYPED % tuple(float(_w[int(k[-2]) - 1, int(k[-1]) - 1]) for k in _l6.BY_HAND)
    sub(
        "06",
        "typed_numbers",
        "6.2 the four weights typed as literals (worked on paper: deserves)",
        {"ex-6-2": BY_HAND_TYPED},
        attacked=[],
    )
except Exception as exc:  # pragma: no cover
    print("skipped typed_numbers:", exc)

# 6.4: the leak test given a masked_attention that is the check's reference
L64 = S6["ex-6-4"]
sub(
    "06",
    "weakref_63",
    "6.3: a weakref.finalize on the returned weights overwrites them with the check's reference after return",
    {
        "ex-6-3": """# Exercise 6.3: masked attention over a padded batch
import weakref

import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    w = torch.full((B, T, T), 1.0 / T)
    out = w @ values
    holder = type("H", (), {})()
    weakref.finalize(holder, _fill, w, out, scores, values, lengths)
    return out, w


def _fill(w, out, scores, values, lengths):
    from course_lib.attention import masked_softmax, causal_mask, padding_mask
    import torch
    T = scores.shape[-1]
    m = causal_mask(T)[None] & padding_mask(lengths, T)[:, None, :]
    ww = torch.nan_to_num(masked_softmax(scores, m))
    w.copy_(ww)
    out.copy_(ww @ values)
"""
    },
    attacked=["6.3"],
)


# ------------------------------------------------------------------------------------------- lesson 02
S2 = answers("02")
FD = '''# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """numerical gradients: central differences in float64 (no backward pass written)."""
    P = {k: params[k].detach().double().clone() for k in ("E", "W", "b", "U", "c")}
    B, n = contexts.shape

    def loss_of(Q):
        e = Q["E"][contexts].reshape(B, -1)
        z = torch.tanh(e @ Q["W"].T + Q["b"]) @ Q["U"].T + Q["c"]
        return -torch.log_softmax(z, 1)[torch.arange(B), targets].mean()

    grads = {}
    h = 1e-6
    for k, t in P.items():
        g = torch.zeros_like(t)
        flat, gflat = t.view(-1), g.view(-1)
        for i in range(flat.numel()):
            old = float(flat[i])
            flat[i] = old + h
            up = float(loss_of(P))
            flat[i] = old - h
            down = float(loss_of(P))
            flat[i] = old
            gflat[i] = (up - down) / (2 * h)
        grads[k] = g.to(params[k].dtype)
    return float(loss_of(P)), grads
'''
sub(
    "02",
    "finite_diff",
    "2.2 gradients by central finite differences in float64 (no backprop written; judgement call)",
    {"ex-2-2": FD},
    attacked=["2.2"],
)

CSTEP = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """complex-step differentiation: Im(softmax(z + i h e_k)) / h, exact to rounding (no Jacobian written)."""
    K = z.shape[0]
    h = 1e-30
    zc = z.detach().to(torch.complex128)
    cols = []
    for k in range(K):
        d = torch.zeros(K, dtype=torch.complex128)
        d[k] = 1j * h
        w = zc + d
        y = torch.exp(w - z.max())
        y = y / y.sum()
        cols.append(y.imag / h)
    return torch.stack(cols, 1).to(z.dtype)
'''
sub(
    "02",
    "complex_step",
    "2.1 Jacobian by complex-step differentiation (numerical, no formula; judgement call)",
    {"ex-2-1": CSTEP},
    attacked=["2.1"],
)

DEL21 = """# Exercise 2.1: the softmax Jacobian
import torch


class _Later:
    def __init__(self, out, z):
        self.out, self.z = out, z

    def __del__(self):
        from torch.autograd.functional import jacobian
        self.out.copy_(jacobian(lambda v: torch.softmax(v, 0), self.z))


def softmax_jacobian(z):
    out = torch.zeros(z.shape[0], z.shape[0], dtype=z.dtype)
    _Later(out, z.detach().clone())
    return out
"""
sub(
    "02",
    "del_jacobian",
    "2.1 a __del__ fills the returned tensor with autograd's jacobian after creation",
    {"ex-2-1": DEL21},
    attacked=["2.1"],
)

FOREACH = S2["ex-2-3"]
sub("02", "ctl2_full", "lesson 02 all solved (reference row for this lesson)", {})

DUAL = '''# Exercise 2.4: one step of BPTT
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """via the check's reference (course_lib.bptt.bptt_step), reached through importlib."""
    import importlib
    m = importlib.import_module("course_lib." + "bptt")
    return getattr(m, "bptt_" + "step")(dh, h, h_prev, x, W_hh)
'''
sub(
    "02",
    "importlib_bptt",
    "2.4 course_lib.bptt.bptt_step reached through importlib/getattr strings",
    {"ex-2-4": DUAL},
    attacked=["2.4"],
)

TORCHFN = '''# Exercise 2.1: the softmax Jacobian
import torch


class _Mode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def softmax_jacobian(z):
    """forward-mode by torch.func.jacfwd inside a TorchFunctionMode the student pushed"""
    import torch.func
    with _Mode():
        return torch.func.jacfwd(lambda v: torch.softmax(v, 0))(z)
'''
sub(
    "02",
    "mode_jacfwd",
    "2.1 torch.func.jacfwd inside a pushed TorchFunctionMode",
    {"ex-2-1": TORCHFN},
    attacked=["2.1"],
)


# ------------------------------------------------------------------------------------------- lesson 04
S4 = answers("04")
GRU_Q = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """torch.quantized_gru_cell (not among the barred kernels), exact linear parts added back."""
    qi = torch.fbgemm_linear_quantize_weight(W_xh.float())
    qh = torch.fbgemm_linear_quantize_weight(W_hh.float())
    pi = torch.fbgemm_pack_quantized_matrix(qi[0])
    ph = torch.fbgemm_pack_quantized_matrix(qh[0])
    return torch.quantized_gru_cell(x, h, qi[0], qh[0], b_xh, b_hh, pi, ph, qi[1], qh[1], qi[2], qh[2], qi[3], qh[3])
'''
sub(
    "04",
    "quantized_gru",
    "4.2 torch.quantized_gru_cell (a GRU step kernel not in the barred list; lossy)",
    {"ex-4-2": GRU_Q},
    attacked=["4.2"],
)

GRU_RNN = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """torch.gru over a sequence of length one (aten::gru.input)"""
    out, hn = torch._VF.gru(x[None], h[None], [W_xh, W_hh, b_xh, b_hh], True, 1, 0.0, False, False, False)
    return hn[0]
'''
sub("04", "vf_gru", "4.2 torch._VF.gru over one time step", {"ex-4-2": GRU_RNN}, attacked=["4.2"])

GRU_MOD = '''# Exercise 4.2: one GRU step
import torch
from torch import nn


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """nn.RNNBase('GRU', ...) (GRU's base class, not GRU itself) with the weights copied in"""
    m = nn.RNNBase("GRU", x.shape[1], h.shape[1], batch_first=True)
    with torch.no_grad():
        for p, v in zip(m._flat_weights, (W_xh, W_hh, b_xh, b_hh)):
            p.copy_(v)
    return m(x[:, None], h[None])[1][0]
'''
sub(
    "04",
    "rnnbase_gru",
    "4.2 nn.RNNBase('GRU') (the base class) instead of nn.GRU",
    {"ex-4-2": GRU_MOD},
    attacked=["4.2"],
)

GRU_SCRIPT = '''# Exercise 4.2: one GRU step
import torch
from torch import nn


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """a GRU step from torch.ao's float quantizable... no: the ONNX-free mkldnn layer"""
    out = torch.mkldnn_rnn_layer(x[None], W_xh, W_hh, b_xh, b_hh, h, h, False, [1], 3, h.shape[1], 1, True, False,
                                 False, False)
    return out[0][0]
'''
sub("04", "mkldnn_gru", "4.2 torch.mkldnn_rnn_layer in GRU mode", {"ex-4-2": GRU_SCRIPT}, attacked=["4.2"])

GRU_TRACE = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """GRUCell's code reached through a subclass method resolution: a class of the student's whose base is a
    fresh type() copy of nn.GRUCell's dict"""
    import torch.nn as nn
    Cell = type("Cell", (nn.RNNCellBase,), {k: v for k, v in vars(nn.GRUCell).items() if k in ("forward",)})
    c = Cell(x.shape[1], h.shape[1], True, 3)
    with torch.no_grad():
        c.weight_ih.copy_(W_xh); c.weight_hh.copy_(W_hh); c.bias_ih.copy_(b_xh); c.bias_hh.copy_(b_hh)
    return c(x, h)
'''
sub(
    "04",
    "copied_dict_gru",
    "4.2 nn.GRUCell.forward moved into a class of the student's (RNNCellBase base)",
    {"ex-4-2": GRU_TRACE},
    attacked=["4.2"],
)

PC = '''# Exercise 4.3: counting parameters
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    """count with torch's own LSTM/GRU built on the meta device through torch.nn.modules.rnn.RNNBase"""
    from torch.nn.modules.rnn import RNNBase
    m = RNNBase(kind.upper(), input_size, hidden_size, num_layers, device="meta")
    return sum(p.numel() for p in m._flat_weights)
'''
sub(
    "04",
    "rnnbase_count",
    "4.3 counts RNNBase(kind)'s parameters on the meta device (nn.LSTM/GRU forbidden)",
    {"ex-4-3": PC},
    attacked=["4.3"],
)

sub("04", "ctl4_full", "lesson 04 all solved (reference row for this lesson)", {})


# ------------------------------------------------------------------------------------------- lesson 05
S5 = answers("05")
sub("05", "ctl5_full", "lesson 05 all solved (reference row for this lesson)", {})
ADD_REF = '''# Exercise 5.1: additive (Bahdanau) attention scores
import torch
import torch.nn.functional as F


def additive_scores(query, keys, W_q, W_k, v):
    """one F.bilinear-free route: torch.nn.functional.linear and an einsum (honest)"""
    a = torch.tanh(F.linear(query, W_q)[:, None, :] + F.linear(keys, W_k))
    return torch.einsum("bta,a->bt", a, v)
'''
sub("05", "linear_scores", "5.1 honest: F.linear + einsum (deserves)", {"ex-5-1": ADD_REF}, attacked=[])

DEC = S5["ex-5-2"]
DEC_SCORE = '''# Exercise 5.2
import math

import torch


def decode(model, states, lengths, tgt_in):
    """the model's own forward (forbidden) reached through nn.Module.__call__ with a pre-hook swap"""
    return type(model).__mro__[0].__dict__["forward"](model, states, lengths, tgt_in)
'''
sub(
    "05",
    "seq2seq_forward",
    "5.2 Seq2Seq.forward taken from the class __dict__",
    {"ex-5-2": DEC_SCORE},
    attacked=["5.2"],
)


# ------------------------------------------------------------------------------------------- lesson 03
S3 = answers("03")
sub("03", "ctl3_full", "lesson 03 all solved (reference row)", {})
JSONBAL = '''# Exercise 3.1: is_balanced with a stack
import json


def is_balanced(seq, n_symbols=10):
    """a balanced sequence of k colours is a nested JSON list; the colours checked by a dict of lists"""
    half = n_symbols // 2
    text = ""
    for s in seq:
        text += '{"%d":[' % s if s < half else ']}' + ("," if False else "")
    return _parse(seq, half)


def _parse(seq, half):
    depth = []
    for s in seq:
        if s < half:
            depth.append(2 * half - 1 - s)
        elif not depth or depth.pop() != s:
            return False
    return not depth
'''
sub("03", "json_balance", "3.1 honest (own stack with a decoy json import; deserves)", {"ex-3-1": JSONBAL}, attacked=[])

GEN = '''# Exercise 3.1: is_balanced with a stack
from course_lib import parentheses_symbols as _ps


def is_balanced(seq, n_symbols=10):
    """the course's is_balanced, reached by a functools.reduce over a C callable chain"""
    import functools, operator
    return functools.reduce(lambda acc, f: f(acc), [functools.partial(_ps.is_balanced, n_symbols=n_symbols)], seq)
'''
sub(
    "03",
    "reduce_balance",
    "3.1 course_lib is_balanced through functools.reduce/partial",
    {"ex-3-1": GEN},
    attacked=["3.1"],
)


RNN_RELU = S3["ex-3-3"].replace(
    """        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h""",
    """        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        zero = torch.zeros_like(self.b_h)
        outputs = []
        for t in range(T):
            h = torch.ops.aten.rnn_relu_cell.default(x[t], h, self.W_xh, self.W_hh, self.b_h, zero)
            outputs.append(h)
        return torch.stack(outputs), h""",
)
assert RNN_RELU != S3["ex-3-3"]
sub(
    "03",
    "aten_rnn_cell",
    "3.3 ElmanRNN stepping with torch.ops.aten.rnn_relu_cell (nn.RNN's kernel)",
    {"ex-3-3": RNN_RELU},
    attacked=["3.3"],
)

TOPK = """# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    z = logits / temperature
    idx = torch.topk(z, k).indices
    keep = torch.zeros_like(z, dtype=torch.bool).scatter(0, idx, True)
    p = torch.where(keep, (z - z.max()).exp(), torch.zeros_like(z))
    return p / p.sum()
"""
sub(
    "07",
    "topk_scatter",
    "7.9 honest but clever: topk indices + scatter + hand softmax (deserves)",
    {"ex-7-9": TOPK},
    attacked=[],
)


# ------------------------------------------------------------------------------------------- write
def write():
    if OUT.exists():
        shutil.rmtree(OUT)
    manifest = []
    for s in SUBS:
        folder = OUT / s["lesson"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{s['student']}.ipynb").write_text(json.dumps(s["nb"], indent=1))
        manifest.append({k: s[k] for k in ("lesson", "student", "intent", "deserve", "attacked")})
    # -------- the row side: odd names in lesson 06's flat folder (each must get exactly one row)
    flat = OUT / "06"
    full = build("06")
    odd = {
        "Case": "name differs from 'case' only by case",
        "case": "lower-case twin of 'Case'",
        "o'neil": "quote in the name",
        "con": "Windows-reserved name",
        "a" * 150: "150-character name",
        "new\nline": "line break in the name",
        ".": "'..ipynb': a name that is a dot",
        "x.ipynb": "'x.ipynb.ipynb'",
        "Score: 100": "name that looks like a feedback line",
    }
    for name, why in odd.items():
        (flat / f"{name}.ipynb").write_text(json.dumps(full))
        manifest.append(
            {
                "lesson": "06",
                "student": name,
                "intent": f"row side: {why}",
                "deserve": exercises("06"),
                "attacked": [],
                "row_only": True,
            }
        )
    raw = os.fsencode(str(flat)) + b"/\xff\xfe-bytes.ipynb"
    with open(raw, "w") as f:
        f.write(json.dumps(full))
    manifest.append(
        {
            "lesson": "06",
            "student": "\\xff\\xfe-bytes",
            "intent": "row side: non-UTF-8 file name",
            "deserve": exercises("06"),
            "attacked": [],
            "row_only": True,
        }
    )
    # a folder named like a notebook holding a notebook, a link, a fifo, a stray file
    (flat / "dora.ipynb").mkdir()
    (flat / "dora.ipynb" / "dora.ipynb").write_text(json.dumps(full))
    manifest.append(
        {
            "lesson": "06",
            "student": "dora",
            "intent": "row side: folder dora.ipynb/ holding dora.ipynb",
            "deserve": exercises("06"),
            "attacked": [],
            "row_only": True,
        }
    )
    os.symlink("/etc/passwd", flat / "link.ipynb")
    manifest.append(
        {
            "lesson": "06",
            "student": "link",
            "intent": "row side: symlink named like a notebook (row, 0)",
            "deserve": [],
            "attacked": [],
            "row_only": True,
        }
    )
    os.mkfifo(flat / "pipe.ipynb")
    manifest.append(
        {
            "lesson": "06",
            "student": "pipe",
            "intent": "row side: FIFO named like a notebook (row, 0)",
            "deserve": [],
            "attacked": [],
            "row_only": True,
        }
    )
    (flat / "UPPER.IPYNB").write_text(json.dumps(full))
    manifest.append(
        {
            "lesson": "06",
            "student": "UPPER",
            "intent": "row side: notebook named UPPER.IPYNB (upper-case suffix: warned, no row by design?)",
            "deserve": exercises("06"),
            "attacked": [],
            "row_only": True,
            "optional_row": True,
        }
    )
    # -------- nbgrader's layout (lesson 06): submitted/<student>/<assignment>/<notebook>.ipynb
    nbg = Path("/tmp/hostile33k/nbgrader/submitted")
    if nbg.parent.exists():
        shutil.rmtree(nbg.parent)
    for student, files in {
        "ann": {"ps06/06_masked_attention.ipynb": full},
        "ben": {
            "ps06/06_masked_attention.ipynb": full,
            "ps06/.ipynb_checkpoints/06_masked_attention-checkpoint.ipynb": full,
        },
        "cy": {"ps06/.ipynb_checkpoints/06_masked_attention-checkpoint.ipynb": full},
        "dee": {"ps05/05_attention.ipynb": build("05"), "ps06/06_masked_attention.ipynb": full},
        "ann.ipynb": {"ps06/06_masked_attention.ipynb": full},
    }.items():
        for rel, nb in files.items():
            p = nbg / student / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(nb))
    (nbg / "ann.ipynb.ipynb").write_text(json.dumps(full))  # a flat notebook beside the folders, stem 'ann.ipynb'
    nbg_manifest = [
        {"student": "ann", "intent": "nbgrader: plain", "deserve": exercises("06")},
        {"student": "ben", "intent": "nbgrader: notebook plus a checkpoint copy", "deserve": exercises("06")},
        {
            "student": "cy",
            "intent": "nbgrader: only a checkpoint copy handed in (row saying why, or graded)",
            "deserve": None,
        },
        {
            "student": "dee",
            "intent": "nbgrader: two assignments in the folder (ps05, ps06): graded or a row why",
            "deserve": None,
        },
        {
            "student": "ann.ipynb",
            "intent": "nbgrader: folder 'ann.ipynb' and flat 'ann.ipynb.ipynb' (same stem)",
            "deserve": exercises("06"),
            "count": 2,
        },
    ]
    Path("/tmp/hostile33k/manifest.json").write_text(json.dumps({"flat": manifest, "nbgrader": nbg_manifest}, indent=1))
    print(
        len(SUBS),
        "attack/control notebooks,",
        len(manifest),
        "flat rows expected,",
        len(nbg_manifest),
        "nbgrader students",
    )


if __name__ == "__main__":
    write()
