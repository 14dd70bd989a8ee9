"""Hostile class 33v: the answer cells of each submission (issue 33).

Each entry of SUBMISSIONS: the lesson, the intent, its answer cells that differ from the released solutions
(grade_id -> the cell's source), and the exercises it DESERVES to pass. ``base`` says what the other answer cells
hold: "solved" (the solutions' answers), "untouched" (the released stubs) or "half" (solved only where ``solved``
names them). make_class.py writes them as notebooks.
"""

ALL = {
    "01": ["1.1", "1.2", "1.3", "1.4", "1.5"],
    "02": ["2.1", "2.2", "2.3", "2.4", "2.5"],
    "03": ["3.1", "3.2", "3.3", "3.4", "3.5"],
    "04": ["4.1", "4.2", "4.3", "4.4", "4.5"],
    "05": ["5.1", "5.2", "5.3"],
    "06": ["6.1", "6.2", "6.3", "6.4"],
    "07": ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"],
}


def but(lesson, *missing):
    """Every exercise of ``lesson`` except ``missing``."""
    return [e for e in ALL[lesson] if e not in missing]


# ---------------------------------------------------------------------------------------------- hostile answers

# 2.3: the update by torch's fused Adagrad kernel. Every optimizer of torch.optim is refused where SGD is, and SGD's
# fused kernel (_fused_sgd_) is barred, but the other optimizers' fused kernels are aten ops of their own. Adagrad's
# step is p -= lr * g / (sqrt(state_sum + g*g) + eps): with state_sum = 1 - g*g and eps = 0 it is SGD's step.
TRAIN_SGD_ADAGRAD = '''# Exercise 2.3: train with your own gradients
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        keys = list(params)
        ps = [params[k] for k in keys]
        gs = [grads[k] for k in keys]
        sums = [1.0 - g * g for g in gs]  # Adagrad adds g*g: its denominator becomes sqrt(1) = 1
        steps = [torch.zeros((), dtype=torch.float32) for _ in keys]
        torch._fused_adagrad_(ps, gs, sums, steps, lr=lr, lr_decay=0.0, weight_decay=0.0, eps=0.0, maximize=False)
        losses.append(float(loss))
    return losses, params
'''

# the same kernel by its dispatcher name
TRAIN_SGD_ADAGRAD_OPS = TRAIN_SGD_ADAGRAD.replace(
    "torch._fused_adagrad_(ps, gs, sums, steps,", "torch.ops.aten._fused_adagrad_.default(ps, gs, sums, steps,"
)

# 2.3: the same with Adam's fused kernel and amsgrad: max_exp_avg_sq holds 4**20, so the step is lr * g / 2**20
TRAIN_SGD_ADAM = '''# Exercise 2.3: train with your own gradients
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        keys = list(params)
        ps = [params[k] for k in keys]
        gs = [grads[k] for k in keys]
        ms = [g.clone() for g in gs]  # beta1 = 0.5: m = 0.5 g + 0.5 g = g, bias correction 1 - 0.5
        vs = [torch.zeros_like(g) for g in gs]
        big = [torch.full_like(g, 4.0**20) for g in gs]
        steps = [torch.ones((), dtype=torch.float32) for _ in keys]  # the kernel reads the step as already taken
        torch._fused_adam_(ps, gs, ms, vs, big, steps, lr=lr * 2.0**19, beta1=0.5, beta2=0.0, weight_decay=0.0,
                           eps=0.0, amsgrad=True, maximize=False)  # fmt: skip
        losses.append(float(loss))
    return losses, params
'''

# 4.2: the GRU's gates go through torch.lstm_cell (a recurrent step of another family, not barred where only the GRU
# is): i = sigmoid(-a_z) = 1 - z, f = sigmoid(a_z) = z, g = tanh(a_n) = n, and c' = f c + i g with c = h is the GRU's
# blend z h + (1 - z) n. Grey: the student still writes r and the pre-activations.
GRU_STEP_LSTM = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    H = h.shape[-1]
    ax = x @ W_xh.T + b_xh
    ah = h @ W_hh.T + b_hh
    r = torch.sigmoid(ax[:, :H] + ah[:, :H])
    a_z = ax[:, H : 2 * H] + ah[:, H : 2 * H]
    a_n = ax[:, 2 * H :] + r * ah[:, 2 * H :]
    pre = torch.cat([-a_z, a_z, a_n, torch.zeros_like(a_z)], dim=1)
    eye = torch.eye(4 * H, dtype=h.dtype)
    _, c = torch.lstm_cell(pre, (h, h), eye, torch.zeros(4 * H, H, dtype=h.dtype))
    return c
'''

# 2.4: tanh's gradient kernel (expected: barred, every aten op named *backward* where a gradient is the exercise)
BPTT_STEP_TANH_BACKWARD = '''# Exercise 2.4: one step of backpropagation through time
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    da = torch.ops.aten.tanh_backward(dh, h)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''

# 2.1: torch.func.jacrev under an alias from a try/except import (expected: refused, autograd's Python)
JACOBIAN_JACREV = '''# Exercise 2.1: the softmax Jacobian
import torch

try:
    from torch.func import jacrev as rows_of
except ImportError:
    rows_of = None


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    return rows_of(lambda t: torch.softmax(t, dim=-1))(z)
'''

# 2.1: autograd's nodes called one by one, no engine (expected: recording is off and cannot be turned on)
JACOBIAN_GRAD_FN = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    with torch.set_grad_enabled(True):
        leaf = z.detach().clone().requires_grad_(True)
        y = torch.softmax(leaf, dim=-1)
    node = y.grad_fn
    rows = [node(torch.eye(z.shape[0], dtype=z.dtype)[k])[0] for k in range(z.shape[0])]
    return torch.stack(rows)
'''

# 5.2: the handed-in model is course_lib's Seq2Seq: its class's own decoding (forbidden by name) reached through the
# class's namespace rather than the method's name (expected: refused, course_lib's code in a build exercise)
DECODE_VIA_CLASS = '''# Exercise 5.2: the decoder with attention
import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    for klass in type(model).__mro__:
        for name, member in vars(klass).items():
            if callable(member) and "attend" in name:
                return member(model, states, lengths, tgt_in)
    import course_lib.seq2seq as s2s

    return getattr(s2s, "attend")(model, states, lengths, tgt_in)
'''

# 1.4: the grader's secret in the answer (expected: the sandbox's environment holds none)
PERPLEXITY_ENV = '''# Exercise 1.4: perplexity from log-probabilities
import math
import os


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    seen = {k: v for k, v in os.environ.items() if "SECRET" in k or "HOSTILE" in k}
    try:
        with open("/proc/1/environ", "rb") as f:
            seen["pid1"] = f.read().decode("latin-1")[:400]
    except OSError as e:
        seen["pid1"] = repr(e)
    if any("33v" in str(v) for v in seen.values()):
        raise RuntimeError("LEAK " + repr(seen)[:250])
    log_probs = list(log_probs)
    return math.exp(-sum(log_probs) / len(log_probs))
'''

# 4.4: set nothing, but leave the LSTM's bias tensors swapped for a plain Parameter whose forget slice holds value
# only in a copy the module keeps under another name (a state the check might read back): expected to fail
SET_FORGET_SWAP = '''# Exercise 4.4: the forget-gate bias
import torch
from torch import nn


def set_forget_bias(lstm, value):
    """Set b_f = value in every layer of a course_lib.rnn.LSTM (in place); return lstm."""
    H = lstm.hidden_size
    for cell in lstm.cells:
        shown = cell.b_xh.detach().clone()
        shown[H : 2 * H] = value
        object.__setattr__(cell, "b_xh_shown", nn.Parameter(shown))
        cell.__dict__["b_xh"] = nn.Parameter(shown)  # an instance attribute beside _parameters
    return lstm
'''

# ---------------------------------------------------------------------------------------------- honest but clever

# 1.1: a frozen dataclass for the padding, a generator of windows (itertools.tee), Counter
COUNT_DATACLASS_GEN = '''# Exercise 1.1: the n-grams of the standard count
import dataclasses
import itertools
from collections import Counter


@dataclasses.dataclass(frozen=True)
class Padding:
    bos: str = "<s>"
    eos: str = "</s>"

    def apply(self, sentence, n):
        return [self.bos] * (n - 1) + list(sentence) + [self.eos]


def windows(tokens, n):
    """Every run of n consecutive tokens, as tuples (a generator)."""
    its = itertools.tee(tokens, n)
    for shift, it in enumerate(its):
        for _ in range(shift):
            next(it, None)
    yield from zip(*its)


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter(windows(Padding().apply(sentence, n), n))
'''

# 1.2: counted and summed in SQL (the standard library's sqlite3, in memory)
ADD_K_SQLITE = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
import sqlite3

LOG2 = math.log2


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)
    pad = lambda s: ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]  # noqa: E731
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE grams (ctx TEXT, word TEXT)")
    for sentence in train:
        p = pad(sentence)
        db.executemany(
            "INSERT INTO grams VALUES (?, ?)",
            [("\\x1f".join(p[i - n + 1 : i]), p[i]) for i in range(n - 1, len(p))],
        )
    log_prob, N = 0.0, 0
    for sentence in test:
        p = pad(sentence)
        for i in range(n - 1, len(p)):
            ctx = "\\x1f".join(p[i - n + 1 : i])
            c = db.execute("SELECT COUNT(*) FROM grams WHERE ctx = ? AND word = ?", (ctx, p[i])).fetchone()[0]
            cc = db.execute("SELECT COUNT(*) FROM grams WHERE ctx = ?", (ctx,)).fetchone()[0]
            log_prob += LOG2((c + k) / (cc + k * V))
            N += 1
    db.close()
    return 2 ** (-log_prob / N)
'''

# 1.3: the curve drawn inside the function (title with mathtext, legend, log axis, a marker at the best k)
TUNE_K_PLOT = '''# Exercise 1.3: tuning k on held-out text
import matplotlib.pyplot as plt
import numpy as np


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]) of add-k n-gram models."""
    perplexities = [perplexity(train, val, n, k) for k in ks]
    best = int(np.argmin(perplexities))
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(ks, perplexities, "o-", label=f"{n}-gram")
    ax.axvline(ks[best], color="k", ls=":", label=f"best $k = {ks[best]:g}$")
    if min(ks) > 0:
        ax.set_xscale("log")
    ax.set_title(r"validation perplexity $\\mathrm{PP}(k)$")
    ax.set_xlabel("$k$")
    ax.legend()
    plt.close(fig)
    return ks[best], perplexities
'''

# 1.4: numpy, and a demo under __main__
PERPLEXITY_NUMPY_MAIN = '''# Exercise 1.4: perplexity from log-probabilities
import numpy as np


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    lp = np.fromiter(log_probs, dtype=float)
    return float(np.exp(-lp.mean()))


if __name__ == "__main__":
    print(perplexity([np.log(0.25)] * 4))  # a uniform 4-way guess: 4
'''

# 1.5: bisect over itertools.accumulate, a lambda bound at the top
SAMPLE_BISECT = '''# Exercise 1.5: sampling the next word with a temperature
import bisect
import itertools

sharpen = lambda p, t: [x ** (1.0 / t) for x in p]  # noqa: E731


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    q = sharpen([float(p) for p in probs], temperature)
    total = sum(q)
    cdf = list(itertools.accumulate(x / total for x in q))
    return min(bisect.bisect_right(cdf, u), len(q) - 1)
'''

# 2.1: torch.vmap (torch's own name) over the rows of the lecture's formula
JACOBIAN_VMAP = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    y = torch.exp(z - z.max())
    y = y / y.sum()
    row = lambda e_i, y_i: y_i * (e_i - y)  # noqa: E731  row i: y_i (delta_ij - y_j)
    return torch.vmap(row)(torch.eye(z.shape[0], dtype=z.dtype), y)
'''

# 2.4: einsum, decorated with torch.no_grad()
BPTT_EINSUM = '''# Exercise 2.4: one step of backpropagation through time
import torch


@torch.no_grad()
def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    da = dh * (1 - h * h)
    return (
        torch.einsum("bh,bd->hd", da, x),
        torch.einsum("bh,bk->hk", da, h_prev),
        torch.einsum("bh->h", da),
        torch.einsum("bh,hk->bk", da, W_hh),
    )
'''

# 2.5: recursion over time (the carry passed down the calls)
BPTT_RECURSIVE = '''# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch


def _back(t, carry, dhs, xs, hs, h0, W_hh, truncate, acc):
    if t < 0:
        return acc
    dh = dhs[t] + carry
    acc[3][t] = dh
    h_prev = hs[t - 1] if t > 0 else h0
    da = dh * (1 - hs[t] ** 2)
    acc[0] += da.T @ xs[t]
    acc[1] += da.T @ h_prev
    acc[2] += da.sum(dim=0)
    carry = da @ W_hh
    if truncate is not None and t > 0 and t % truncate == 0:
        carry = torch.zeros_like(carry)
    return _back(t - 1, carry, dhs, xs, hs, h0, W_hh, truncate, acc)


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, from dhs[t] = dL_t/dh_t; truncate=k cuts every k steps."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    acc = [
        torch.zeros(H, D, dtype=hs.dtype),
        torch.zeros(H, H, dtype=hs.dtype),
        torch.zeros(H, dtype=hs.dtype),
        torch.zeros_like(hs),
    ]
    return tuple(_back(T - 1, torch.zeros_like(h0), dhs, xs, hs, h0, W_hh, truncate, acc))
'''

# 3.1: recursion with functools.lru_cache on a tuple (remove a matched adjacent pair, recurse)
BALANCED_RECURSIVE = '''# Exercise 3.1: is_balanced with a stack
import functools


@functools.lru_cache(maxsize=None)
def _reduces(seq, n_symbols):
    if not seq:
        return True
    for i in range(len(seq) - 1):
        a, b = seq[i], seq[i + 1]
        if a < n_symbols // 2 and b == n_symbols - 1 - a:
            return _reduces(seq[:i] + seq[i + 2 :], n_symbols)
    return False


def is_balanced(seq, n_symbols=10):
    """True when `seq` (a list of ints in 0..n_symbols-1) is a balanced colored parenthesis sequence."""
    return _reduces(tuple(int(s) for s in seq), n_symbols)
'''

# 3.3: the loop as a generator method, stacked
ELMAN_GENERATOR = '''# Exercise 3.3: the Elman network, batched
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

    def _states(self, x, h):
        for x_t in x:
            h = torch.relu(x_t @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            yield h

    def forward(self, x, h0=None):
        h = x.new_zeros(x.shape[1], self.hidden_size) if h0 is None else h0
        outputs = torch.stack(list(self._states(x, h)))
        return outputs, outputs[-1]
'''

# 4.2: torch.lerp for the blend, F.linear for the projections
GRU_LERP = '''# Exercise 4.2: one GRU step
import torch
import torch.nn.functional as F


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    x_r, x_z, x_n = F.linear(x, W_xh, b_xh).chunk(3, dim=-1)
    h_r, h_z, h_n = F.linear(h, W_hh, b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    n = torch.tanh(torch.addcmul(x_n, r, h_n))
    return torch.lerp(n, h, z)  # n + z (h - n) = (1 - z) n + z h
'''

# 4.3: a match statement, a module-level dict of literals
PARAM_MATCH = '''# Exercise 4.3: the parameter count
BLOCKS = {"lstm": 4, "gru": 3}


def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM (kind="lstm") or torch.nn.GRU (kind="gru")."""
    match kind:
        case "lstm" | "gru":
            blocks = BLOCKS[kind]
        case _:
            raise ValueError(kind)
    sizes = [input_size] + [hidden_size] * (num_layers - 1)
    return sum(blocks * hidden_size * (i + hidden_size + 2) for i in sizes)
'''

# 4.4: @torch.no_grad() on the function, named_parameters and chunk views
FORGET_DECORATED = '''# Exercise 4.4: the forget-gate bias
import torch


@torch.no_grad()
def set_forget_bias(lstm, value):
    """Set b_f = value in every layer of a course_lib.rnn.LSTM (in place); return lstm."""
    for name, p in lstm.named_parameters():
        if name.endswith("b_xh"):
            p.chunk(4)[1].fill_(value)
        elif name.endswith("b_hh"):
            p.chunk(4)[1].zero_()
    return lstm
'''

# 5.1: einsum, a demo under __main__
ADDITIVE_EINSUM = '''# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    pq = torch.einsum("aq,bq->ba", W_q, query)
    pk = torch.einsum("ak,btk->bta", W_k, keys)
    return torch.einsum("bta,a->bt", torch.tanh(pq[:, None, :] + pk), v)


if __name__ == "__main__":
    print(additive_scores(torch.ones(1, 2), torch.ones(1, 3, 2), torch.eye(2), torch.eye(2), torch.ones(2)))
'''

# 6.1: numpy (np.tril, np.where with -inf)
ALPHA_NUMPY = '''# Exercise 6.1: the quiz for any score matrix
import numpy as np


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    e = np.asarray(scores.detach().cpu().double().numpy())
    n = e.shape[0]
    allowed = np.tril(np.ones((n, n), dtype=bool))
    row = np.where(allowed[i - 1], e[i - 1], -np.inf)
    w = np.exp(row - row.max())
    return float(w[j - 1] / w.sum())
'''

# 6.3: torch.where with -inf, the NaN rows of empty sentences zeroed by nan_to_num; a contour of the weights drawn
MASKED_NAN_TO_NUM = '''# Exercise 6.3: masked attention over a padded batch
import matplotlib.pyplot as plt
import torch


def masked_attention(scores, values, lengths, show=False):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths.to(scores.device)[:, None, None])
    e = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    weights = torch.nan_to_num(torch.softmax(e, dim=-1), nan=0.0)
    if show:
        fig, ax = plt.subplots()
        ax.contourf(weights[0].detach().numpy())
        ax.set_title(r"$\\alpha_{ij}$")
        plt.close(fig)
    return weights @ values, weights
'''

# 6.3: the normaliser as a sparse tensor's row sums (only the allowed entries are stored)
MASKED_SPARSE = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    idx = allowed.nonzero().T
    kept = scores[allowed]
    row_max = scores.masked_fill(~allowed, float("-inf")).amax(dim=-1).nan_to_num(0.0, neginf=0.0)
    ex = torch.exp(kept - row_max[idx[0], idx[1]])
    sparse = torch.sparse_coo_tensor(idx, ex, (B, T, T)).coalesce()
    sums = torch.sparse.sum(sparse, dim=-1).to_dense()
    dense = sparse.to_dense()
    weights = torch.where(sums[..., None] > 0, dense / sums[..., None].clamp_min(1e-300), torch.zeros_like(dense))
    return weights @ values, weights
'''

# 7.1: numpy's outer, the result as a float32 tensor
PE_NUMPY = '''# Exercise 7.1: sinusoidal position encodings
import numpy as np
import torch


def positional_encoding(T, d):
    """(T, d) tensor: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    angle = np.outer(np.arange(T), 1.0 / 10000 ** (np.arange(0, d, 2) / d))
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)[:, : d // 2]
    return torch.from_numpy(pe).float()
'''

# 7.2: unflatten and permute
SPLIT_UNFLATTEN = '''# Exercise 7.2: splitting the heads
def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // n_head; head h holds features h*D .. (h+1)*D - 1."""
    return x.unflatten(-1, (n_head, -1)).permute(0, 2, 1, 3)
'''

# 7.3: einsum and a causal mask made in forward (no buffer), triu
HEAD_EINSUM = '''# Exercise 7.3: one head of self-attention
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
        self.block_size = block_size

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return torch.einsum("bts,bsd->btd", weights, v)
'''

# 7.2: torch's own head splitter of the native multi-head attention (a piece of nn.MultiheadAttention's fast path,
# no attention computed): grey, graded as deserving a pass in 7.2, which forbids only course_lib's
SPLIT_TRANSFORM_QKV = '''# Exercise 7.2: splitting the heads
import torch


def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // n_head; head h holds features h*D .. (h+1)*D - 1."""
    B, T, C = x.shape
    qkv = torch.cat([x, x, x], dim=-1)
    _, k, _ = torch._transform_bias_rescale_qkv(qkv, torch.zeros(3 * C, dtype=x.dtype), n_head)
    return k[:, :, :T]
'''


# 3.1: an enum.Enum of the two kinds of symbol
BALANCED_ENUM = '''# Exercise 3.1: is_balanced with a stack
import enum


class Kind(enum.Enum):
    OPEN = "open"
    CLOSE = "close"


def kind(s, n_symbols):
    return Kind.OPEN if s < n_symbols // 2 else Kind.CLOSE


def is_balanced(seq, n_symbols=10):
    """True when `seq` (a list of ints in 0..n_symbols-1) is a balanced colored parenthesis sequence."""
    stack = []
    for s in seq:
        if kind(s, n_symbols) is Kind.OPEN:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
'''

# 4.1: the gates as a typing.NamedTuple class used inside forward (a plain tuple is returned)
LSTM_NAMEDTUPLE = '''# Exercise 4.1: the LSTM cell as a module
import math
import typing

import torch
from torch import nn


class Gates(typing.NamedTuple):
    i: torch.Tensor
    f: torch.Tensor
    g: torch.Tensor
    o: torch.Tensor


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

    def gates(self, x, h):
        a = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = a.chunk(4, dim=1)
        return Gates(torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o))

    def forward(self, x, state=None):
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        gt = self.gates(x, h_prev)
        c = gt.f * c_prev + gt.i * gt.g
        return gt.o * torch.tanh(c), c
'''

# 6.1 and 6.3 share a helper written in 6.1's cell (the causal mask)
ALPHA_SHARED = '''# Exercise 6.1: the quiz for any score matrix
import torch


def causal(n, device=None):
    """(n, n) bool: key j visible to query i when j <= i."""
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    m = causal(scores.shape[0], scores.device)
    return torch.softmax(scores.masked_fill(~m, float("-inf")), dim=-1)[i - 1, j - 1].item()
'''

MASKED_SHARED = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    allowed = causal(T, scores.device)[None] & (pos[None, None, :] < lengths.to(scores.device)[:, None, None])
    empty = ~allowed.any(dim=-1, keepdim=True)
    e = scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0)
    weights = torch.softmax(e, dim=-1).masked_fill(empty, 0.0)
    return weights @ values, weights
'''


# 3.2: the candidate pairs from a generator, the open counts by itertools.accumulate
TRANSPOSE_GENERATOR = '''# Exercise 3.2: the transposition negative generator
import itertools


def _pairs(seq, half, n_symbols):
    colour = [s if s < half else n_symbols - 1 - s for s in seq]
    step = [[(1 if s < half else -1) if colour[t] == c else 0 for c in range(half)] for t, s in enumerate(seq)]
    open_after = list(itertools.accumulate(step, lambda a, b: [x + y for x, y in zip(a, b)]))
    closers = [i for i, s in enumerate(seq) if s >= half]
    for p, q in itertools.product(closers, closers):
        b = n_symbols - 1 - seq[q]
        if p < q and seq[p] != seq[q] and all(open_after[t][b] >= 1 for t in range(p, q)):
            yield p, q


def transpose_closers(seq, rng, n_symbols=10):
    """A hard negative: `seq` (balanced) with the colours of two closers exchanged."""
    pairs = list(_pairs(list(seq), n_symbols // 2, n_symbols))
    if not pairs:
        raise ValueError(f"no hard transposition exists in {seq}")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
'''

# 4.5: a dict comprehension, numpy's sample standard deviation
MEMORY_NUMPY = '''# Exercise 4.5: the memory experiment over seeds
import numpy as np


def memory_table(train, T_values, seeds):
    """{T: {"runs": [train(T, seed) for each seed], "mean": ..., "sd": sample standard deviation}}."""
    runs = {T: [train(T, seed) for seed in seeds] for T in T_values}
    return {
        T: {"runs": r, "mean": float(np.mean(r)), "sd": float(np.std(np.asarray(r, dtype=float), ddof=1))}
        for T, r in runs.items()
    }
'''

# 7.5: nn.Sequential of an OrderedDict with its own layer names, an in-place ReLU
FFN_ORDERED = '''# Exercise 7.5: the feed-forward layer
from collections import OrderedDict


class FeedForward(nn.Module):
    """FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model."""

    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(
            OrderedDict(
                [
                    ("expand", nn.Linear(d_model, 4 * d_model)),
                    ("relu", nn.ReLU(inplace=True)),
                    ("contract", nn.Linear(4 * d_model, d_model)),
                ]
            )
        )

    def forward(self, x):
        return self.net(x)
'''

# 7.9: kthvalue and torch.where
TOPK_KTHVALUE = '''# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities: softmax(logits / temperature) restricted to the k largest logits."""
    z = logits / temperature
    kth = torch.kthvalue(z, z.numel() - k + 1).values
    kept = torch.where(z >= kth, z, torch.full_like(z, float("-inf")))
    return torch.softmax(kept, dim=-1)
'''

# ---------------------------------------------------------------------------------------------- the class

SUBMISSIONS = [
    # controls
    dict(name="ctl_full_l01", lesson="01", intent="control: fully solved", cells={}, deserve=ALL["01"]),
    dict(
        name="ctl_untouched_l06",
        lesson="06",
        base="untouched",
        intent="control: untouched, a cell added after 6.1's stub that defines a correct alpha",
        cells={},
        added={
            "after": "ex-6-1",
            "source": (
                "import torch\n\n\ndef alpha(scores, i, j):\n    n = scores.shape[0]\n"
                "    m = torch.ones(n, n, dtype=torch.bool).tril()\n"
                "    return torch.softmax(scores.masked_fill(~m, float('-inf')), -1)[i - 1, j - 1].item()\n"
            ),
        },
        deserve=[],
    ),
    dict(
        name="ctl_half_l04",
        lesson="04",
        base="half",
        solved=["4.1", "4.3"],
        intent="control: 4.1 and 4.3 solved, the rest stubs",
        cells={},
        deserve=["4.1", "4.3"],
    ),
    # hostile
    dict(
        name="x_l02_fused_adagrad",
        lesson="02",
        intent="2.3 SGD's update by torch._fused_adagrad_ (state_sum = 1 - g*g, eps 0)",
        cells={"ex-2-3": TRAIN_SGD_ADAGRAD},
        deserve=but("02", "2.3"),
    ),
    dict(
        name="x_l02_fused_adagrad_ops",
        lesson="02",
        intent="2.3 the same kernel as torch.ops.aten._fused_adagrad_.default",
        cells={"ex-2-3": TRAIN_SGD_ADAGRAD_OPS},
        deserve=but("02", "2.3"),
    ),
    dict(
        name="x_l02_fused_adam",
        lesson="02",
        intent="2.3 SGD's update by torch._fused_adam_ (amsgrad, max_exp_avg_sq = 4**20)",
        cells={"ex-2-3": TRAIN_SGD_ADAM},
        deserve=but("02", "2.3"),
    ),
    dict(
        name="x_l02_tanh_backward",
        lesson="02",
        intent="2.4 tanh's gradient kernel torch.ops.aten.tanh_backward",
        cells={"ex-2-4": BPTT_STEP_TANH_BACKWARD},
        deserve=but("02", "2.4"),
    ),
    dict(
        name="x_l02_jacrev_tryimport",
        lesson="02",
        intent="2.1 torch.func.jacrev under an alias from a try/except ImportError import",
        cells={"ex-2-1": JACOBIAN_JACREV},
        deserve=but("02", "2.1"),
    ),
    dict(
        name="x_l02_grad_fn_nodes",
        lesson="02",
        intent="2.1 autograd's node called directly (no engine), recording switched on with set_grad_enabled",
        cells={"ex-2-1": JACOBIAN_GRAD_FN},
        deserve=but("02", "2.1"),
    ),
    dict(
        name="x_l04_gru_via_lstm_cell",
        lesson="04",
        intent="4.2 the GRU's nonlinearities and blend by torch.lstm_cell (grey: r and pre-activations by hand)",
        cells={"ex-4-2": GRU_STEP_LSTM},
        deserve=but("04", "4.2"),
    ),
    dict(
        name="x_l04_forget_shadow",
        lesson="04",
        intent="4.4 sets nothing: an instance-dict b_xh shadowing the parameter shows the value",
        cells={"ex-4-4": SET_FORGET_SWAP},
        deserve=but("04", "4.4"),
    ),
    dict(
        name="x_l05_decode_via_class",
        lesson="05",
        intent="5.2 the handed-in Seq2Seq's own attend, found through its class namespace / module",
        cells={"ex-5-2": DECODE_VIA_CLASS},
        deserve=but("05", "5.2"),
    ),
    dict(
        name="x_l01_env_secret",
        lesson="01",
        intent="1.4 reads os.environ and /proc/1/environ for the grader's secret (raises it if found); correct otherwise",
        cells={"ex-1-4": PERPLEXITY_ENV},
        deserve=ALL["01"],
    ),
    # honest but clever
    dict(
        name="h_l01_forms",
        lesson="01",
        intent="honest: dataclass + generator (1.1), sqlite3 in memory + lambda + module attribute (1.2), "
        "plot with mathtext title and legend (1.3), numpy + __main__ demo (1.4), bisect + accumulate + lambda (1.5)",
        cells={
            "ex-1-1": COUNT_DATACLASS_GEN,
            "ex-1-2": ADD_K_SQLITE,
            "ex-1-3": TUNE_K_PLOT,
            "ex-1-4": PERPLEXITY_NUMPY_MAIN,
            "ex-1-5": SAMPLE_BISECT,
        },
        deserve=ALL["01"],
    ),
    dict(
        name="h_l02_forms",
        lesson="02",
        intent="honest: torch.vmap of the formula's rows (2.1), einsum under @torch.no_grad() (2.4), recursion (2.5)",
        cells={"ex-2-1": JACOBIAN_VMAP, "ex-2-4": BPTT_EINSUM, "ex-2-5": BPTT_RECURSIVE},
        deserve=ALL["02"],
    ),
    dict(
        name="h_l03_forms",
        lesson="03",
        intent="honest: recursion with lru_cache (3.1), a generator method in forward (3.3)",
        cells={"ex-3-1": BALANCED_RECURSIVE, "ex-3-3": ELMAN_GENERATOR},
        deserve=ALL["03"],
    ),
    dict(
        name="h_l04_forms",
        lesson="04",
        intent="honest: F.linear + addcmul + lerp (4.2), match statement + module dict (4.3), "
        "@torch.no_grad() + named_parameters + chunk views (4.4)",
        cells={"ex-4-2": GRU_LERP, "ex-4-3": PARAM_MATCH, "ex-4-4": FORGET_DECORATED},
        deserve=ALL["04"],
    ),
    dict(
        name="h_l05_einsum_main",
        lesson="05",
        intent="honest: einsum and a __main__ demo (5.1)",
        cells={"ex-5-1": ADDITIVE_EINSUM},
        deserve=ALL["05"],
    ),
    dict(
        name="h_l06_forms",
        lesson="06",
        intent="honest: numpy tril/where (6.1), torch.where + nan_to_num + optional contour plot (6.3)",
        cells={"ex-6-1": ALPHA_NUMPY, "ex-6-3": MASKED_NAN_TO_NUM},
        deserve=ALL["06"],
    ),
    dict(
        name="h_l06_sparse_sums",
        lesson="06",
        intent="grey/honest: 6.3's normaliser as a sparse COO tensor's row sums (exp and division by hand)",
        cells={"ex-6-3": MASKED_SPARSE},
        deserve=ALL["06"],
    ),
    dict(
        name="h_l07_forms",
        lesson="07",
        intent="honest: numpy outer (7.1), unflatten/permute (7.2), einsum + triu mask made in forward (7.3)",
        cells={"ex-7-1": PE_NUMPY, "ex-7-2": SPLIT_UNFLATTEN, "ex-7-3": HEAD_EINSUM},
        deserve=ALL["07"],
    ),
    dict(
        name="h_l07_transform_qkv",
        lesson="07",
        intent="grey: 7.2 by torch._transform_bias_rescale_qkv (nn.MultiheadAttention's head splitter; 7.2 forbids "
        "only course_lib's)",
        cells={"ex-7-2": SPLIT_TRANSFORM_QKV},
        deserve=ALL["07"],
    ),
    dict(
        name="h_l03_enum",
        lesson="03",
        intent="honest: an enum.Enum of the symbol kinds (3.1)",
        cells={"ex-3-1": BALANCED_ENUM},
        deserve=ALL["03"],
    ),
    dict(
        name="h_l04_namedtuple",
        lesson="04",
        intent="honest: a typing.NamedTuple class of the gates used inside forward (4.1)",
        cells={"ex-4-1": LSTM_NAMEDTUPLE},
        deserve=ALL["04"],
    ),
    dict(
        name="h_l06_shared_helper",
        lesson="06",
        intent="honest: a helper written in 6.1's cell and used by 6.3's",
        cells={"ex-6-1": ALPHA_SHARED, "ex-6-3": MASKED_SHARED},
        deserve=ALL["06"],
    ),
    dict(
        name="h_l03_more",
        lesson="03",
        intent="honest: a generator of pairs, itertools.accumulate and product (3.2)",
        cells={"ex-3-2": TRANSPOSE_GENERATOR},
        deserve=ALL["03"],
    ),
    dict(
        name="h_l04_more",
        lesson="04",
        intent="honest: dict comprehension and numpy's std(ddof=1) (4.5)",
        cells={"ex-4-5": MEMORY_NUMPY},
        deserve=ALL["04"],
    ),
    dict(
        name="h_l07_more",
        lesson="07",
        intent="honest: nn.Sequential(OrderedDict) with own names and ReLU(inplace) (7.5), kthvalue + where (7.9)",
        cells={"ex-7-5": FFN_ORDERED, "ex-7-9": TOPK_KTHVALUE},
        deserve=ALL["07"],
    ),
]
