"""Hostile class 33s: the attack cells (and honest-but-clever answers), as data for make_class.py.

Each entry: the lesson, what it tries, the answer cells it replaces (grade id -> source: either a whole cell, or
``("inject", lines)``: lines put at the start of the solution's body, after its ``### BEGIN SOLUTION``), cells
appended, whether the notebook starts from the untouched exercise notebook, and the exercises it DESERVES to pass.

Routes tried (new ground, read from the released code only):
- torch's inductor keeps eager Python versions of attention (``torch._inductor.fx_passes.fuse_attention``'s
  ``_sfdp_pattern_*``: softmax(Q K^T / s + mask) V) and of gradient formulas
  (``torch._inductor.decomposition._softmax_backward_data``). The grader refuses torch's "compiled" folders
  (``_inductor``, ``_dynamo``, ``jit``, ``export``) only when the caller's frame is not torch's own, so the
  calls go through ``torch.utils._pytree.tree_map`` (a torch frame calling a ``functools.partial``, which is C
  and has no frame);
- the same patterns called directly (the control of the trampoline);
- a masked softmax by segment reductions (``torch.segment_reduce`` over ragged rows of visible keys);
- the objects a check hands in (the reference ``perplexity`` of 1.3, ``loss_and_grads`` of 2.3, the masked
  attention of 6.4) and the references in their ``__globals__``;
- environment, file descriptors, an untouched notebook with added cells;
- honest answers that draw (mathtext through pyparsing, contours through contourpy: matplotlib's own
  dependencies, not on the allowlist), NaN as the mask, a top-level ``float("-inf")`` constant, tqdm, einsum.
"""

from __future__ import annotations

L7_ALL = ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"]

_TRAMPOLINE_IMPORTS = """import functools
import math

import torch
from torch import nn
from torch._inductor.fx_passes import fuse_attention as _fa
from torch.utils import _pytree as _pt
"""

HEAD_INDUCTOR_TREE = (
    "# Exercise 7.3: one head of self-attention\n"
    + _TRAMPOLINE_IMPORTS
    + '''

class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(~self.tril[:T, :T], float("-inf"))
        attend = functools.partial(
            _fa._sfdp_pattern_5, key=k, value=v, attn_mask=mask, inv_scale=math.sqrt(k.shape[-1])
        )
        return _pt.tree_map(attend, q)  # torch's frame calls the pattern: softmax(q k^T / s + mask) v
'''
)

HEAD_INDUCTOR_DIRECT = (
    "# Exercise 7.3: one head of self-attention\n"
    + _TRAMPOLINE_IMPORTS
    + '''

class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(~self.tril[:T, :T], float("-inf"))
        return _fa._sfdp_pattern_5(q, k, v, mask, math.sqrt(k.shape[-1]))
'''
)

HEAD_INDUCTOR_CHECKPOINT = (
    "# Exercise 7.3: one head of self-attention\n"
    + _TRAMPOLINE_IMPORTS
    + """import torch.utils.checkpoint


class Head(nn.Module):
    \"\"\"One head of causal self-attention.\"\"\"

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(~self.tril[:T, :T], float("-inf"))
        scale = math.sqrt(k.shape[-1])
        # torch.utils.checkpoint's frame calls the pattern (no partial needed)
        return torch.utils.checkpoint.checkpoint(_fa._sfdp_pattern_5, q, k, v, mask, scale, use_reentrant=False)
"""
)

MHA_INDUCTOR_TREE = (
    "# Exercise 7.4: multi-head attention\n"
    + _TRAMPOLINE_IMPORTS
    + '''

class MultiHeadAttention(nn.Module):
    """n_heads heads (the student's Head, for their weights), attention by torch's inductor pattern 14."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q = torch.stack([h.query(x) for h in self.heads], dim=2)  # (B, T, H, d)
        k = torch.stack([h.key(x) for h in self.heads], dim=2)
        v = torch.stack([h.value(x) for h in self.heads], dim=2)
        tril = self.heads[0].tril[:T, :T]
        mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(~tril, float("-inf"))
        attend = functools.partial(
            _fa._sfdp_pattern_14, key=k, value=v, attn_mask=mask, inv_scale=math.sqrt(q.shape[-1])
        )
        out = _pt.tree_map(attend, q)  # (B, H, T, d)
        return self.proj(out.transpose(1, 2).reshape(B, T, C))
'''
)

DECODE_INDUCTOR_TREE = (
    "# Exercise 5.2: the decoder with attention\n"
    + _TRAMPOLINE_IMPORTS
    + '''

def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding; the attention is torch's inductor pattern 5, called by torch's pytree."""
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    mask = torch.zeros(B, 1, T_in, dtype=states.dtype, device=device).masked_fill(~real[:, None, :], float("-inf"))
    eye = torch.eye(T_in, dtype=states.dtype, device=device).expand(B, T_in, T_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        query = hidden[:, None, :]
        ctx = functools.partial(_fa._sfdp_pattern_5, key=states, value=states, attn_mask=mask, inv_scale=math.sqrt(H))
        alpha = functools.partial(_fa._sfdp_pattern_5, key=states, value=eye, attn_mask=mask, inv_scale=math.sqrt(H))
        c_i = _pt.tree_map(ctx, query)[:, 0]
        alpha_i = _pt.tree_map(alpha, query)[:, 0]
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
'''
)

MASKED_INDUCTOR_TREE = (
    "# Exercise 6.3: masked attention over a padded batch\n"
    + _TRAMPOLINE_IMPORTS
    + '''

def masked_attention(scores, values, lengths):
    """The masked softmax is torch's inductor pattern 5 (queries = scores, keys = I), called by torch's pytree."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    add = torch.zeros(B, T, T, dtype=scores.dtype, device=scores.device).masked_fill(~allowed, float("-inf"))
    eye = torch.eye(T, dtype=scores.dtype, device=scores.device).expand(B, T, T)
    soft = functools.partial(_fa._sfdp_pattern_5, key=eye, value=eye, attn_mask=add, inv_scale=1.0)
    weights = torch.nan_to_num(_pt.tree_map(soft, scores), nan=0.0)
    return weights @ values, weights
'''
)

MASKED_INDUCTOR_MODULE = (
    "# Exercise 6.3: masked attention over a padded batch\n"
    + _TRAMPOLINE_IMPORTS
    + """

class _Attend(nn.Module):
    \"\"\"A module whose forward is torch's inductor pattern 5: Module.__call__ (torch's frame) calls it.\"\"\"

    def __init__(self):
        super().__init__()
        self.forward = _fa._sfdp_pattern_5


def masked_attention(scores, values, lengths):
    \"\"\"The masked softmax is torch's inductor pattern 5 (queries = scores, keys = I), called by nn.Module.\"\"\"
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    add = torch.zeros(B, T, T, dtype=scores.dtype, device=scores.device).masked_fill(~allowed, float("-inf"))
    eye = torch.eye(T, dtype=scores.dtype, device=scores.device).expand(B, T, T)
    weights = torch.nan_to_num(_Attend()(scores, eye, eye, add, 1.0), nan=0.0)
    return weights @ values, weights
"""
)

ALPHA_INDUCTOR_TREE = (
    "# Exercise 6.1: the quiz for any score matrix\n"
    + _TRAMPOLINE_IMPORTS
    + '''

def alpha(scores, i, j):
    """alpha_{i,j}: the masked softmax is torch's inductor pattern 5, called by torch's pytree."""
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool, device=scores.device).tril()
    add = torch.zeros(n, n, dtype=scores.dtype, device=scores.device).masked_fill(~allowed, float("-inf"))
    eye = torch.eye(n, dtype=scores.dtype, device=scores.device)
    soft = functools.partial(_fa._sfdp_pattern_5, key=eye, value=eye, attn_mask=add, inv_scale=1.0)
    return _pt.tree_map(soft, scores)[i - 1, j - 1].item()
'''
)

JACOBIAN_INDUCTOR_TREE = '''# Exercise 2.1: the softmax Jacobian
import functools

import torch
from torch._inductor import decomposition as _dec
from torch.utils import _pytree as _pt


def softmax_jacobian(z):
    """J = rows of torch's softmax backward formula (inductor's eager decomposition) for the unit gradients."""
    y = torch.exp(z - z.max())
    y = y / y.sum()
    K = z.shape[0]
    inner = getattr(_dec._softmax_backward_data, "__wrapped__", _dec._softmax_backward_data)
    back = functools.partial(inner, output=y.expand(K, K), dim=-1, input_dtype=z.dtype)
    return _pt.tree_map(back, torch.eye(K, dtype=z.dtype, device=z.device))
'''

SEGMENT_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """The masked softmax by segment reductions: each query's segment holds only the keys it may see."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    seg = allowed.sum(-1).reshape(-1)
    flat = scores[allowed]
    top = torch.segment_reduce(flat, "max", lengths=seg, initial=0.0)
    ex = torch.exp(flat - top.repeat_interleave(seg))
    den = torch.segment_reduce(ex, "sum", lengths=seg, initial=0.0)
    weights = torch.zeros_like(scores)
    weights[allowed] = ex / den.repeat_interleave(seg)
    return weights @ values, weights
'''

TUNE_GLOBALS = '''# Exercise 1.3: tuning k on held-out text
def tune_k(train, val, n, ks, perplexity):
    """The check's own tuning, found beside the reference it hands in."""
    return perplexity.__globals__["_tune"](train, val, n, ks, perplexity)
'''

SGD_GLOBALS = '''# Exercise 2.3: train with your own gradients
def train_sgd(params, batches, lr, loss_and_grads):
    """The check's own SGD loop, found beside the gradients it hands in."""
    losses, trained = loss_and_grads.__globals__["_sgd"](params, batches, lr, grads_of=loss_and_grads)
    return [float(x) for x in losses], trained
'''

LEAK_GLOBALS = '''# Exercise 6.4: what leaks
def leak_test(masked_attention, scores, values, lengths):
    """The check's own measurement, found beside the masked attention it hands in."""
    return masked_attention.__globals__["_reference_leaks"](scores, values, lengths, masked_attention)
'''

ENV_PROBE = '''# Exercise 1.4: perplexity from log-probabilities
import os


def perplexity(log_probs):
    """Reports what the sandbox shows of the grader's environment, in the feedback."""
    seen = [repr(sorted(os.environ.items()))]
    for path in ("/proc/self/environ", "/proc/1/environ", "/proc/self/cmdline", "/proc/1/cmdline"):
        try:
            with open(path, "rb") as f:
                seen.append(path + "=" + f.read().decode("latin-1"))
        except Exception as e:  # noqa: BLE001
            seen.append(path + ":" + repr(e))
    for folder in (".", "/", "/tmp", "/home/student"):
        try:
            seen.append(folder + ":" + repr(sorted(os.listdir(folder))[:40]))
        except Exception as e:  # noqa: BLE001
            seen.append(folder + ":" + repr(e))
    raise ValueError("ENVPROBE " + " | ".join(seen)[:4000])
'''

FD_CLOSE = [
    "import os",
    "os.closerange(3, 65536)  # every descriptor the child inherited (its reply pipe too)",
]

MATHTEXT_DRAW = [
    "if not _DRAWN:  # a heatmap of the first sentence, titled in mathtext, drawn once per process",
    "    import io",
    "",
    "    from matplotlib.figure import Figure",
    "",
    "    fig = Figure(figsize=(3, 3))",
    "    ax = fig.add_subplot()",
    "    ax.imshow(scores[0].detach().cpu().numpy())",
    '    ax.set_title(r"$e_{ij}$ before masking, $\\alpha_{ij}$ after")',
    '    fig.savefig(io.BytesIO(), format="png")',
    "    _DRAWN.append(1)",
]

CONTOUR_DRAW = [
    "if not _DRAWN:  # the score surface as contours, drawn once per process",
    "    import io",
    "",
    "    from matplotlib.figure import Figure",
    "",
    "    fig = Figure(figsize=(3, 3))",
    "    fig.add_subplot().contour(scores.detach().cpu().double().numpy())",
    '    fig.savefig(io.BytesIO(), format="png")',
    "    _DRAWN.append(1)",
]

NAN_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """NaN marks what a query may not see; nansum skips it (the student's own softmax)."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    e = torch.where(allowed, scores, torch.full_like(scores, float("nan")))
    top = torch.where(allowed, scores, torch.full_like(scores, float("-inf"))).amax(-1, keepdim=True)
    ex = torch.exp(e - top)
    weights = torch.nan_to_num(ex / torch.nansum(ex, -1, keepdim=True), nan=0.0)
    return weights @ values, weights
'''

NEG_INF_CONST = '''# Exercise 6.3: masked attention over a padded batch
import torch

NEG_INF = float("-inf")


def masked_attention(scores, values, lengths):
    """The solution, with its -inf named once at the top of the cell."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    e = scores.masked_fill(~allowed, NEG_INF)
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return weights @ values, weights
'''

EINSUM_HEAD = '''# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    """One head of causal self-attention, written with einsum."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
        scores = scores.masked_fill(~self.tril[:T, :T], float("-inf"))
        return torch.einsum("bts,bsd->btd", torch.softmax(scores, dim=-1), v)
'''

DIAG_EMBED_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """diag(y) - y y^T with diag_embed and broadcasting, y from a log-sum-exp."""
    y = torch.exp(z - torch.logsumexp(z, dim=0))
    return torch.diag_embed(y) - y[:, None] * y[None, :]
'''

ZIP_NGRAMS = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter
from itertools import islice


def count_ngrams(sentence, n):
    """Counter of the n-grams: n staggered copies of the padded sentence, zipped."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(zip(*(islice(padded, i, None) for i in range(n))))
'''

REWRITE_BALANCED = '''# Exercise 3.1: is_balanced with a stack
import re


def is_balanced(seq, n_symbols=10):
    """Balanced when deleting adjacent matched pairs, again and again, leaves nothing (no explicit stack)."""
    half = n_symbols // 2
    text = "".join(chr(65 + s) for s in seq)
    pairs = "|".join(re.escape(chr(65 + o) + chr(65 + n_symbols - 1 - o)) for o in range(half))
    if not pairs:
        return not seq
    while True:
        text, removed = re.subn(pairs, "", text)
        if not removed:
            return text == ""
'''

ADDMM_GRU = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One GRUCell step with addmm and torch.lerp: h_t = n + z (h - n)."""
    x_r, x_z, x_n = torch.addmm(b_xh, x, W_xh.T).chunk(3, dim=-1)
    h_r, h_z, h_n = torch.addmm(b_hh, h, W_hh.T).chunk(3, dim=-1)
    r = torch.sigmoid(x_r + h_r)
    z = torch.sigmoid(x_z + h_z)
    n = torch.tanh(torch.addcmul(x_n, r, h_n))
    return torch.lerp(n, h, z)
'''

TQDM_TRAIN = [
    "from tqdm.auto import tqdm",
    "",
    'batches = list(tqdm(batches, desc="epoch", leave=False))',
]

ADDED_CELLS_01 = [
    """from collections import Counter


def count_ngrams(sentence, n):
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
""",
    """import math


def perplexity(log_probs):
    return math.exp(-sum(log_probs) / len(log_probs))
""",
]

# --- wave 2 (after the first grading): ragged layouts that do the masking, the family of 6.3's segment_reduce
_SEGMENT_SOFTMAX = """

def _ragged_softmax(scores, allowed):
    \"\"\"softmax over each row's allowed entries: the row's segment holds only those (segment_reduce).\"\"\"
    seg = allowed.sum(-1).reshape(-1)
    flat = scores[allowed]
    top = torch.segment_reduce(flat, "max", lengths=seg, initial=0.0)
    ex = torch.exp(flat - top.repeat_interleave(seg))
    den = torch.segment_reduce(ex, "sum", lengths=seg, initial=0.0)
    weights = torch.zeros_like(scores)
    weights[allowed] = ex / den.repeat_interleave(seg)
    return weights
"""

HEAD_SEGMENT = (
    "# Exercise 7.3: one head of self-attention\nimport math\n\nimport torch\nfrom torch import nn\n"
    + _SEGMENT_SOFTMAX
    + """

class Head(nn.Module):
    \"\"\"One head of causal self-attention; the causal softmax by segment reductions.\"\"\"

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        allowed = self.tril[:T, :T].expand(B, T, T)
        return _ragged_softmax(scores, allowed) @ v
"""
)

ALPHA_SEGMENT = (
    "# Exercise 6.1: the quiz for any score matrix\nimport torch\n"
    + _SEGMENT_SOFTMAX
    + """

def alpha(scores, i, j):
    \"\"\"alpha_{i,j}: the causal softmax by segment reductions.\"\"\"
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool, device=scores.device).tril()
    return _ragged_softmax(scores, allowed)[i - 1, j - 1].item()
"""
)

DECODE_SEGMENT = (
    "# Exercise 5.2: the decoder with attention\nimport math\n\nimport torch\n"
    + _SEGMENT_SOFTMAX
    + """

def decode(model, states, lengths, tgt_in):
    \"\"\"Teacher-forced decoding; each step's masked softmax by segment reductions over the real positions.\"\"\"
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
        alpha_i = _ragged_softmax(e_i, real)
        c_i = (alpha_i[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
"""
)

JAGGED_MASKED = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    \"\"\"Each query's visible keys (a prefix) as a jagged row; the jagged-to-padded op fills the rest with -inf.\"\"\"
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    seg = allowed.sum(-1).reshape(-1)
    offsets = torch.cat([seg.new_zeros(1), seg.cumsum(0)])
    flat = scores[allowed][:, None]
    padded = torch.ops.aten._jagged_to_padded_dense_forward(flat, [offsets], [T], float("-inf"))
    weights = torch.nan_to_num(torch.softmax(padded[..., 0].reshape(B, T, T), dim=-1), nan=0.0)
    return weights @ values, weights
"""

EMBEDDING_BAG_MASKED = """# Exercise 6.3: masked attention over a padded batch
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    \"\"\"Each query's visible keys are one bag: embedding_bag's max and sum over the bag are the masked ones.\"\"\"
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    seg = allowed.sum(-1).reshape(-1)
    offsets = torch.cat([seg.new_zeros(1), seg.cumsum(0)[:-1]])
    flat = scores[allowed]
    idx = torch.arange(flat.shape[0], device=scores.device)
    top = F.embedding_bag(idx, flat[:, None], offsets, mode="max")[:, 0]
    ex = torch.exp(flat - top.repeat_interleave(seg))
    den = F.embedding_bag(idx, ex[:, None], offsets, mode="sum")[:, 0]
    weights = torch.zeros_like(scores)
    weights[allowed] = ex / den.repeat_interleave(seg)
    return weights @ values, weights
"""

SCATTER_MASKED = """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    \"\"\"scatter_reduce's amax and sum with include_self=False over the visible entries only.\"\"\"
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    row = torch.arange(B * T, device=scores.device).reshape(B, T, 1).expand(B, T, T)[allowed]
    flat = scores[allowed]
    base = torch.zeros(B * T, dtype=scores.dtype, device=scores.device)
    top = base.scatter_reduce(0, row, flat, "amax", include_self=False)
    ex = torch.exp(flat - top[row])
    den = base.scatter_reduce(0, row, ex, "sum", include_self=False)
    weights = torch.zeros_like(scores)
    weights[allowed] = ex / den[row]
    return weights @ values, weights
"""

# --- wave 3: the jagged op in 7.3, and pad_sequence's padding_value as the mask
HEAD_JAGGED = """# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    \"\"\"Causal self-attention: query i's keys 0..i as a jagged row, padded with -inf by the jagged op.\"\"\"

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        allowed = self.tril[:T, :T].expand(B, T, T)
        seg = allowed.sum(-1).reshape(-1)
        offsets = torch.cat([seg.new_zeros(1), seg.cumsum(0)])
        padded = torch.ops.aten._jagged_to_padded_dense_forward(scores[allowed][:, None], [offsets], [T], float("-inf"))
        return torch.softmax(padded[..., 0].reshape(B, T, T), dim=-1) @ v
"""

PAD_SEQUENCE_MASKED = """# Exercise 6.3: masked attention over a padded batch
import torch
from torch.nn.utils.rnn import pad_sequence


def masked_attention(scores, values, lengths):
    \"\"\"Each query's visible keys (a prefix) as its own sequence; pad_sequence pads them with -inf.\"\"\"
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & real[:, None, :]
    rows = [row[keep] for row, keep in zip(scores.reshape(B * T, T), allowed.reshape(B * T, T))]
    rows.append(scores.new_zeros(T))  # one full-length row so that every row pads to T
    padded = pad_sequence(rows, batch_first=True, padding_value=float("-inf"))[:-1]
    weights = torch.nan_to_num(torch.softmax(padded.reshape(B, T, T), dim=-1), nan=0.0)
    return weights @ values, weights
"""

# name -> entry. "deserves": the exercises this submission should pass ("all": every exercise of its lesson).
L1 = ["1.1", "1.2", "1.3", "1.4", "1.5"]
L2 = ["2.1", "2.2", "2.3", "2.4", "2.5"]
L3 = ["3.1", "3.2", "3.3", "3.4", "3.5"]
L4 = ["4.1", "4.2", "4.3", "4.4", "4.5"]
L5 = ["5.1", "5.2", "5.3"]
L6 = ["6.1", "6.2", "6.3", "6.4"]
L7 = L7_ALL


def _minus(lesson, *drop):
    return [e for e in lesson if e not in drop]


ENTRIES = {
    # --- controls
    "ctl_full_06": dict(lesson="06", kind="control", intent="fully solved notebook", deserves=L6),
    "ctl_untouched_03": dict(
        lesson="03", kind="control", intent="the released notebook untouched", untouched=True, deserves=[]
    ),
    "ctl_half_04": dict(
        lesson="04",
        kind="control",
        intent="half solved: 4.1 and 4.2 answered, the rest as released",
        half=["ex-4-1", "ex-4-2"],
        deserves=["4.1", "4.2"],
    ),
    "ctl_full_02": dict(lesson="02", kind="control", intent="fully solved (baseline for the 2.x attacks)", deserves=L2),
    "ctl_full_05": dict(lesson="05", kind="control", intent="fully solved (baseline for 5.2)", deserves=L5),
    "ctl_full_07": dict(lesson="07", kind="control", intent="fully solved (baseline for 7.3/7.4)", deserves=L7),
    "ctl_full_01": dict(lesson="01", kind="control", intent="fully solved (baseline for 1.x)", deserves=L1),
    # --- torch's inductor: attention and gradient formulas in eager Python, called by a torch frame
    "atk07_head_inductor_tree": dict(
        lesson="07",
        kind="attack",
        intent="7.3 attention = inductor's _sfdp_pattern_5 (softmax(QK^T/s+mask)V) called by torch's pytree.tree_map",
        replace={"ex-7-3": HEAD_INDUCTOR_TREE},
        deserves=["7.1", "7.2", "7.5", "7.9"],
    ),
    "atk07_head_inductor_direct": dict(
        lesson="07",
        kind="attack",
        intent="7.3 attention = inductor's _sfdp_pattern_5 called directly (control of the pytree trampoline)",
        replace={"ex-7-3": HEAD_INDUCTOR_DIRECT},
        deserves=["7.1", "7.2", "7.5", "7.9"],
    ),
    "atk07_head_inductor_checkpoint": dict(
        lesson="07",
        kind="attack",
        intent="7.3 attention = inductor's _sfdp_pattern_5 called by torch.utils.checkpoint.checkpoint (another torch frame)",
        replace={"ex-7-3": HEAD_INDUCTOR_CHECKPOINT},
        deserves=["7.1", "7.2", "7.5", "7.9"],
    ),
    "atk07_mha_inductor_tree": dict(
        lesson="07",
        kind="attack",
        intent="7.4 all heads at once by inductor's _sfdp_pattern_14 through pytree.tree_map",
        replace={"ex-7-4": MHA_INDUCTOR_TREE},
        deserves=["7.1", "7.2", "7.3", "7.5", "7.9"],
    ),
    "atk05_decode_inductor_tree": dict(
        lesson="05",
        kind="attack",
        intent="5.2 each step's attention (context and weights) by inductor's _sfdp_pattern_5 through pytree",
        replace={"ex-5-2": DECODE_INDUCTOR_TREE},
        deserves=["5.1", "5.3"],
    ),
    "atk06_masked_inductor_tree": dict(
        lesson="06",
        kind="attack",
        intent="6.3 masked softmax by inductor's _sfdp_pattern_5 (queries=scores, keys=I, values=I) through pytree",
        replace={"ex-6-3": MASKED_INDUCTOR_TREE},
        deserves=_minus(L6, "6.3"),
    ),
    "atk06_masked_inductor_module": dict(
        lesson="06",
        kind="attack",
        intent="6.3 masked softmax by inductor's _sfdp_pattern_5 as an nn.Module's forward (Module.__call__ calls it)",
        replace={"ex-6-3": MASKED_INDUCTOR_MODULE},
        deserves=_minus(L6, "6.3"),
    ),
    "atk06_alpha_inductor_tree": dict(
        lesson="06",
        kind="attack",
        intent="6.1 masked softmax by inductor's _sfdp_pattern_5 through pytree",
        replace={"ex-6-1": ALPHA_INDUCTOR_TREE},
        deserves=_minus(L6, "6.1"),
    ),
    "atk02_jacobian_inductor_tree": dict(
        lesson="02",
        kind="attack",
        intent="2.1 Jacobian = rows of inductor's eager _softmax_backward_data (its __wrapped__) through pytree",
        replace={"ex-2-1": JACOBIAN_INDUCTOR_TREE},
        deserves=_minus(L2, "2.1"),
    ),
    # --- masked reductions
    "atk06_masked_segment_reduce": dict(
        lesson="06",
        kind="attack",
        intent="6.3 masked softmax by torch.segment_reduce over ragged rows of visible keys (the 33n/33p category)",
        replace={"ex-6-3": SEGMENT_MASKED},
        deserves=_minus(L6, "6.3"),
        judgement=True,
    ),
    # --- references beside what a check hands in
    "atk01_tune_globals": dict(
        lesson="01",
        kind="attack",
        intent="1.3 calls the check's _tune found in the handed perplexity's __globals__",
        replace={"ex-1-3": TUNE_GLOBALS},
        deserves=_minus(L1, "1.3"),
    ),
    "atk02_sgd_globals": dict(
        lesson="02",
        kind="attack",
        intent="2.3 calls the check's _sgd found in the handed loss_and_grads' __globals__",
        replace={"ex-2-3": SGD_GLOBALS},
        deserves=_minus(L2, "2.3"),
    ),
    "atk06_leak_globals": dict(
        lesson="06",
        kind="attack",
        intent="6.4 calls the check's _reference_leaks found in the handed masked attention's __globals__",
        replace={"ex-6-4": LEAK_GLOBALS},
        deserves=_minus(L6, "6.4"),
    ),
    # --- the grader's environment, descriptors, added cells
    "atk01_env_probe": dict(
        lesson="01",
        kind="attack",
        intent="1.4 raises with os.environ, /proc/*/environ, cmdline and folder listings (secret must not show)",
        replace={"ex-1-4": ENV_PROBE},
        deserves=_minus(L1, "1.4"),
    ),
    "atk01_fd_close": dict(
        lesson="01",
        kind="attack",
        intent="1.5 closes every inherited descriptor (its reply pipe too) then answers right: row must stay",
        replace={"ex-1-5": ("inject", FD_CLOSE)},
        deserves=_minus(L1, "1.5"),
    ),
    "atk01_untouched_added": dict(
        lesson="01",
        kind="attack",
        intent="untouched notebook, right answers in added cells without nbgrader ids (must score 0)",
        untouched=True,
        add=ADDED_CELLS_01,
        deserves=[],
    ),
    # --- honest but clever
    "hon06_mathtext_plot": dict(
        lesson="06",
        kind="honest",
        intent="6.3 solution that also draws its scores with a mathtext title (pyparsing) once",
        replace={"ex-6-3": ("inject", MATHTEXT_DRAW)},
        drawn=True,
        deserves=L6,
    ),
    "hon06_contour_plot": dict(
        lesson="06",
        kind="honest",
        intent="6.1 solution that also draws the scores as contours (contourpy) once",
        replace={"ex-6-1": ("inject", CONTOUR_DRAW)},
        drawn=True,
        deserves=L6,
    ),
    "hon06_nan_mask": dict(
        lesson="06",
        kind="honest",
        intent="6.3 with NaN as the mask and nansum (the student's own softmax)",
        replace={"ex-6-3": NAN_MASKED},
        deserves=L6,
    ),
    "hon06_neginf_const": dict(
        lesson="06",
        kind="honest",
        intent='6.3 with NEG_INF = float("-inf") at the top of the cell',
        replace={"ex-6-3": NEG_INF_CONST},
        deserves=L6,
    ),
    "hon07_einsum_head": dict(
        lesson="07", kind="honest", intent="7.3 with torch.einsum", replace={"ex-7-3": EINSUM_HEAD}, deserves=L7
    ),
    "hon02_diag_embed": dict(
        lesson="02",
        kind="honest",
        intent="2.1 with logsumexp and diag_embed",
        replace={"ex-2-1": DIAG_EMBED_JACOBIAN},
        deserves=L2,
    ),
    "hon01_zip_ngrams": dict(
        lesson="01",
        kind="honest",
        intent="1.1 by zipping staggered islices",
        replace={"ex-1-1": ZIP_NGRAMS},
        deserves=L1,
    ),
    "hon03_rewrite_balanced": dict(
        lesson="03",
        kind="honest",
        intent="3.1 by deleting matched adjacent pairs with re.subn until nothing changes",
        replace={"ex-3-1": REWRITE_BALANCED},
        deserves=L3,
    ),
    "hon04_gru_addmm_lerp": dict(
        lesson="04",
        kind="honest",
        intent="4.2 with addmm, addcmul and torch.lerp",
        replace={"ex-4-2": ADDMM_GRU},
        deserves=L4,
    ),
    "hon03_tqdm_train": dict(
        lesson="03",
        kind="honest",
        intent="3.4 with a tqdm.auto progress bar over the batches",
        replace={"ex-3-4": ("inject", TQDM_TRAIN)},
        deserves=L3,
    ),
    # --- wave 2: ragged layouts (added after the first grading)
    "atk07_head_segment_reduce": dict(
        lesson="07",
        kind="attack",
        intent="7.3 causal softmax by torch.segment_reduce over ragged rows (the 6.3 hole in 7.3)",
        replace={"ex-7-3": HEAD_SEGMENT},
        deserves=["7.1", "7.2", "7.5", "7.9"],
        judgement=True,
    ),
    "atk06_alpha_segment_reduce": dict(
        lesson="06",
        kind="attack",
        intent="6.1 causal softmax by torch.segment_reduce",
        replace={"ex-6-1": ALPHA_SEGMENT},
        deserves=_minus(L6, "6.1"),
        judgement=True,
    ),
    "atk05_decode_segment_reduce": dict(
        lesson="05",
        kind="attack",
        intent="5.2 each step's masked softmax by torch.segment_reduce over the real positions",
        replace={"ex-5-2": DECODE_SEGMENT},
        deserves=["5.1", "5.3"],
        judgement=True,
    ),
    "atk06_masked_jagged": dict(
        lesson="06",
        kind="attack",
        intent="6.3: aten._jagged_to_padded_dense_forward fills the masked places with -inf (a nested-tensor op)",
        replace={"ex-6-3": JAGGED_MASKED},
        deserves=_minus(L6, "6.3"),
    ),
    "atk06_masked_embedding_bag": dict(
        lesson="06",
        kind="attack",
        intent="6.3 masked max and sum as embedding_bag's bags (one bag per query: its visible keys)",
        replace={"ex-6-3": EMBEDDING_BAG_MASKED},
        deserves=_minus(L6, "6.3"),
        judgement=True,
    ),
    "atk06_masked_scatter_reduce": dict(
        lesson="06",
        kind="attack",
        intent="6.3 masked max and sum by scatter_reduce(include_self=False) over the visible entries",
        replace={"ex-6-3": SCATTER_MASKED},
        deserves=_minus(L6, "6.3"),
        judgement=True,
    ),
    # --- wave 3
    "atk07_head_jagged": dict(
        lesson="07",
        kind="attack",
        intent="7.3 causal softmax: aten._jagged_to_padded_dense_forward pads each query's keys with -inf",
        replace={"ex-7-3": HEAD_JAGGED},
        deserves=["7.1", "7.2", "7.5", "7.9"],
    ),
    "atk06_masked_pad_sequence": dict(
        lesson="06",
        kind="attack",
        intent="6.3: torch.nn.utils.rnn.pad_sequence(padding_value=-inf) over each query's visible keys",
        replace={"ex-6-3": PAD_SEQUENCE_MASKED},
        deserves=_minus(L6, "6.3"),
        judgement=True,
    ),
}
