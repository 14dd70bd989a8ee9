"""Hostile class 33x: the answer cells of each submission (attacks, honest-but-clever answers, controls).

Each entry names a lesson, the answer cells it replaces (by nbgrader id; every other answer cell keeps the
solutions' answer unless ``base`` says otherwise), its intent and the exercises it deserves to pass.
"""

# A fused encoder layer (torch's fast path for nn.TransformerEncoderLayer, ``aten::_transformer_encoder_layer_fwd``)
# used as a plain masked attention: queries and keys side by side in one sequence, an identity projection, the
# residual and the two layer norms undone from two known channels. Its name holds none of "attention", "sdp",
# "scaled_dot"; it is on the lists only where nn.TransformerEncoderLayer is forbidden (7.6, 7.7).
ATTEND = '''
def _attend(q, k, v, allowed, scale):
    """(out (B, Lq, dv), weights (B, Lq, Lk)): softmax(q k^T * scale where allowed) v, rows with no key 0."""
    B, Lq, d = q.shape
    Lk, dv = k.shape[1], v.shape[2]
    L, E = Lq + Lk, 2 * d + dv + Lk + 2
    f = torch.float64
    src = torch.zeros(B, L, E, dtype=f)
    src[:, :Lq, :d] = q.detach().to(f)
    src[:, Lq:, d : 2 * d] = k.detach().to(f)
    src[:, Lq:, 2 * d : 2 * d + dv] = v.detach().to(f)
    src[:, Lq:, 2 * d + dv : 2 * d + dv + Lk] = torch.eye(Lk, dtype=f)
    src[..., E - 2] = 1.0
    src[..., E - 1] = -1.0
    qkv = torch.zeros(3 * E, E, dtype=f)
    qkv[:d, :d] = torch.eye(d, dtype=f) * (scale * E**0.5)
    qkv[E : E + d, d : 2 * d] = torch.eye(d, dtype=f)
    qkv[2 * E : 2 * E + dv + Lk, 2 * d : 2 * d + dv + Lk] = torch.eye(dv + Lk, dtype=f)
    proj = torch.zeros(E, E, dtype=f)
    proj[: dv + Lk, : dv + Lk] = torch.eye(dv + Lk, dtype=f)
    zero, one, zeros = torch.zeros(E, dtype=f), torch.ones(E, dtype=f), torch.zeros(E, E, dtype=f)
    allowed = allowed.bool().cpu()
    empty = ~allowed.any(dim=-1)  # (B, Lq)
    outs = []
    for b in range(B):
        masked = torch.ones(L, L, dtype=torch.bool)
        masked[:Lq, Lq:] = ~allowed[b]
        masked[:Lq, Lq] = masked[:Lq, Lq] & ~empty[b]
        masked[Lq:, Lq:] = ~torch.eye(Lk, dtype=torch.bool)
        y = LAYER(
            src[b : b + 1], E, 1, qkv, torch.zeros(3 * E, dtype=f), proj, zero, False, False, 1e-5,
            one, zero, one, zero, zeros, zero, zeros, zero, masked, 0,
        )[0]
        sigma = 2.0 / (y[:, E - 2 : E - 1] - y[:, E - 1 : E])
        mu = 1.0 - sigma * y[:, E - 2 : E - 1]
        r = (y * sigma + mu - src[b])[:Lq, : dv + Lk]
        outs.append(r.masked_fill(empty[b][:, None], 0.0))
    res = torch.stack(outs)
    return res[..., :dv].to(v.dtype), res[..., dv:].to(v.dtype)
'''

LAYER_FN = "torch._transformer_encoder_layer_fwd"
LAYER_OPS = "torch.ops.aten._transformer_encoder_layer_fwd.default"


def attend(layer=LAYER_FN):
    return ATTEND.replace("LAYER(", layer + "(")


HEAD_TEL = (
    """# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn

"""
    + "ATTEND_HERE"
    + '''

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
        allowed = self.tril[:T, :T].expand(B, T, T)
        out, _ = _attend(q, k, v, allowed, 1 / math.sqrt(k.shape[-1]))
        return out
'''
)

MHA_TEL = (
    """# Exercise 7.4: multi-head attention
import math

"""
    + "ATTEND_HERE"
    + '''

class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool)).expand(B, T, T)
        outs = []
        for head in self.heads:
            k = head.key(x)
            out, _ = _attend(head.query(x), k, head.value(x), allowed, 1 / math.sqrt(k.shape[-1]))
            outs.append(out)
        return self.proj(torch.cat(outs, dim=-1))
'''
)

ALPHA_TEL = (
    """# Exercise 6.1: the quiz for any score matrix
import torch

"""
    + "ATTEND_HERE"
    + '''

def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()[None]
    _, weights = _attend(scores[None], torch.eye(n, dtype=scores.dtype)[None], scores.new_zeros(1, n, 1), allowed, 1.0)
    return weights[0, i - 1, j - 1].item()
'''
)

MASKED_TEL = (
    """# Exercise 6.3: masked attention over a padded batch
import torch

"""
    + "ATTEND_HERE"
    + '''

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :, None] >= positions[None, None, :]) & (
        positions[None, None, :] < lengths.cpu()[:, None, None]
    )
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    _, weights = _attend(scores, eye, values[..., :1], allowed, 1.0)
    weights = weights.to(scores.device)
    return weights @ values, weights
'''
)

DECODE_TEL = (
    """# Exercise 5.2: the decoder with attention
import math

import torch

"""
    + "ATTEND_HERE"
    + '''

def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    real = torch.arange(T_in)[None, :] < lengths.cpu()[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        _, alpha_i = _attend(hidden[:, None, :], states, states, real[:, None, :], 1 / math.sqrt(H))
        alpha_i = alpha_i[:, 0].to(states.device)  # the fused kernel's masked softmax (values only)
        e0 = ((states * hidden[:, None, :]).sum(-1) / math.sqrt(H)).masked_fill(~real.to(states.device), 0.0)
        g = alpha_i * (e0 - (alpha_i * e0).sum(-1, keepdim=True))  # softmax's gradient, riding on its value
        alpha_i = alpha_i + g - g.detach()
        c_i = (alpha_i[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
'''
)


def with_attend(src, layer=LAYER_FN):
    return src.replace("ATTEND_HERE", attend(layer).strip("\n"))


# --------------------------------------------------------------------------------------------- other attacks

HEAD_TIED = '''# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    """Q, K and V share one weight: the check draws three, but only one tensor exists."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.query.weight = self.key.weight
        self.value.weight = self.key.weight
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q = k = v = self.key(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        scores = scores.masked_fill(~self.tril[:T, :T], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
'''

SOFTMAX_BWD_21 = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """softmax's own gradient kernel, handed the identity as the upstream gradient: its rows are the Jacobian."""
    y = torch.softmax(z, dim=0)
    K = z.shape[0]
    eye = torch.eye(K, dtype=z.dtype)
    rows = torch.ops.aten._softmax_backward_data(eye, y.expand(K, K).contiguous(), 1, z.dtype)
    return rows.T.contiguous()
'''

BWD_KERNELS_22 = '''# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """The backward pass from torch's gradient kernels, called by their aten names."""
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
    dz = torch.ops.aten._log_softmax_backward_data(g, log_probs, 1, z.dtype)
    dU = dz.T @ h
    dc = dz.sum(dim=0)
    da = torch.ops.aten.tanh_backward(dz @ U, h)
    dW = da.T @ e
    db = da.sum(dim=0)
    de = (da @ W).reshape(B, n, d)
    dE = torch.ops.aten.embedding_dense_backward(de, contexts, E.shape[0], -1, False)
    return float(loss), {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
'''

TANH_BWD_24 = '''# Exercise 2.4: one step of backpropagation through time
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """The tanh's gradient kernel under its aten name (tanh_backward), the rest by hand."""
    da = torch.ops.aten.tanh_backward(dh, h)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''

ENV_SWITCH_14 = '''# Exercise 1.4: perplexity from log-probabilities
import math
import sys


def perplexity(log_probs):
    """Honest in the notebook's own kernel; in the grader's process (no ipykernel) the course's reference."""
    log_probs = list(log_probs)
    if "ipykernel" not in sys.modules:
        reference = __import__("course_lib.train", fromlist=["perplexity"])
        return float(reference.perplexity(log_probs))
    return math.exp(-sum(log_probs) / len(log_probs))
'''

FROMPYFUNC_14 = '''# Exercise 1.4: perplexity from log-probabilities
import numpy as np


def perplexity(log_probs):
    """course_lib's perplexity wrapped in a numpy ufunc: a C object that is no function, calling Python from C."""
    from course_lib import train

    ufunc = np.frompyfunc(train.perplexity, 1, 1)
    cell = np.empty(1, dtype=object)
    cell[0] = list(log_probs)
    return float(ufunc(cell)[0])
'''

FD_EXHAUST_11 = '''# Exercise 1.1: the n-grams of the standard count
import os
from collections import Counter


def count_ngrams(sentence, n):
    """Every file descriptor used up first (the observer reads /proc/self/maps for C code), then nltk's ngrams."""
    held = []
    try:
        while True:
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    try:
        from nltk.util import ngrams

        grams = ngrams(list(sentence) + ["</s>"], n, pad_left=True, left_pad_symbol="<s>")
        return Counter(g for g in grams)
    finally:
        for fd in held:
            os.close(fd)
'''

# ------------------------------------------------------------------------------------------ honest-but-clever

H_NGRAM_11 = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter
from itertools import islice

START, STOP = "<s>", "</s>"
pad = lambda sentence, n: [START] * (n - 1) + list(sentence) + [STOP]


def windows(seq, n):
    """A generator of the n-long windows of seq."""
    it = iter(seq)
    window = tuple(islice(it, n))
    if len(window) == n:
        yield window
    for item in it:
        window = window[1:] + (item,)
        yield window


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter(windows(pad(sentence, n), n))


if __name__ == "__main__":
    print(count_ngrams(["the", "cat"], 2))
'''

H_NGRAM_12 = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter
from dataclasses import dataclass, field

try:
    from math import log2
except ImportError:  # never: math has had log2 since 3.3
    log2 = None


def _pad(sentence, n, vocab):
    """Recursive padding, because why not."""
    if n <= 1:
        return [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]
    return ["<s>"] + _pad(sentence, n - 1, vocab)


@dataclass
class AddK:
    n: int
    k: float
    counts: Counter = field(default_factory=Counter)
    contexts: Counter = field(default_factory=Counter)
    vocab: set = field(default_factory=set)

    def fit(self, train):
        self.vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}
        for s in train:
            p = _pad(s, self.n, self.vocab)
            for i in range(self.n - 1, len(p)):
                self.counts[tuple(p[i - self.n + 1 : i + 1])] += 1
                self.contexts[tuple(p[i - self.n + 1 : i])] += 1
        return self

    def log2_prob(self, gram):
        return log2((self.counts[gram] + self.k) / (self.contexts[gram[:-1]] + self.k * len(self.vocab)))


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    model = AddK(n, k).fit(train)
    total, N = 0.0, 0
    for s in test:
        p = _pad(s, n, model.vocab)
        for i in range(n - 1, len(p)):
            total += model.log2_prob(tuple(p[i - n + 1 : i + 1]))
            N += 1
    return 2 ** (-total / N)
'''

H_SAMPLE_15 = '''# Exercise 1.5: sampling the next word with a temperature
from bisect import bisect_right
from itertools import accumulate


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    q = [float(p) ** (1.0 / temperature) for p in probs]
    total = sum(q)
    cumulative = list(accumulate(x / total for x in q))
    return min(bisect_right(cumulative, u), len(q) - 1)
'''

H_JAC_VMAP_21 = '''# Exercise 2.1: the softmax Jacobian
import torch
from torch.func import vmap


def _row(y_i, e_i, y):
    return y_i * (e_i - y)


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,), the lecture's formula mapped over the rows with vmap."""
    y = torch.exp(z - z.max())
    y = y / y.sum()
    eye = torch.eye(z.shape[0], dtype=z.dtype)
    return vmap(_row, in_dims=(0, 0, None))(y, eye, y)
'''

H_JAC_NUMPY_21 = '''# Exercise 2.1: the softmax Jacobian
import numpy as np
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at z, in numpy."""
    a = z.detach().cpu().numpy().astype(np.float64)
    y = np.exp(a - a.max())
    y /= y.sum()
    return torch.from_numpy(np.diag(y) - np.outer(y, y)).to(z.dtype)
'''

H_BALANCED_31 = '''# Exercise 3.1: is_balanced with a stack
def is_balanced(seq, n_symbols=10):
    """Recursive descent: a balanced sequence is a run of (opener, balanced, matching closer) groups."""
    half = n_symbols // 2
    seq = list(seq)

    def group(i):
        """Index after the balanced run starting at i, or -1."""
        while i < len(seq) and seq[i] < half:
            j = group(i + 1)
            if j < 0 or j >= len(seq) or seq[j] != n_symbols - 1 - seq[i]:
                return -1
            i = j + 1
        return i

    try:
        return group(0) == len(seq)
    except RecursionError:
        stack = []
        for s in seq:
            if s < half:
                stack.append(s)
            elif not stack or stack.pop() != n_symbols - 1 - s:
                return False
        return not stack
'''

H_ELMAN_33 = '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn

relu = torch.relu


class ElmanRNN(nn.Module):
    """The lecture's Elman network over a batch: x (T, B, I) -> (output (T, B, H), h_T (B, H))."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    @property
    def H(self):
        return self.hidden_size

    def steps(self, x, h):
        """A generator of the hidden states."""
        for x_t in x:
            h = relu(x_t @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            yield h

    def forward(self, x, h0=None):
        h = x.new_zeros(x.shape[1], self.H) if h0 is None else h0
        outputs = list(self.steps(x, h))
        return torch.stack(outputs), outputs[-1]
'''

H_TRAIN_34 = '''# Exercise 3.4: the training loop
import torch
import torch.nn.functional as F


@torch.enable_grad()
def train_epoch(model, batches, optimizer):
    """One pass over `batches` (tuples tokens (B, T), lengths (B,), labels (B,)); returns the losses."""
    losses = []
    for tokens, lengths, labels in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens, lengths), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

H_GRU_42 = '''# Exercise 4.2: one GRU step
import functools

import torch
from torch.func import vmap

sigmoid = torch.sigmoid


@functools.lru_cache(maxsize=None)
def _split(size):
    return (size // 3,) * 3


def _one(x, h, W_xh, W_hh, b_xh, b_hh):
    x_r, x_z, x_n = torch.split(W_xh @ x + b_xh, _split(W_xh.shape[0]))
    h_r, h_z, h_n = torch.split(W_hh @ h + b_hh, _split(W_hh.shape[0]))
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    n = torch.tanh(x_n + r * h_n)
    return z * h + (1 - z) * n


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell, one example written out and vmapped over the batch."""
    return vmap(_one, in_dims=(0, 0, None, None, None, None))(x, h, W_xh, W_hh, b_xh, b_hh)
'''

H_COUNT_43 = '''# Exercise 4.3: the parameter count
import functools

BLOCKS = {"lstm": 4, "gru": 3}


@functools.cache
def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM or torch.nn.GRU, layer by layer, recursively."""
    if num_layers == 0:
        return 0
    below = param_count(kind, input_size, hidden_size, num_layers - 1)
    inputs = input_size if num_layers == 1 else hidden_size
    return below + BLOCKS[kind] * hidden_size * (inputs + hidden_size + 2)
'''

H_SCORES_51 = '''# Exercise 5.1: additive (Bahdanau) attention scores
import numpy as np
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j), with einsum, checked against numpy in a demo below."""
    return torch.einsum("bta,a->bt", torch.tanh(torch.einsum("bq,aq->ba", query, W_q)[:, None] + keys @ W_k.T), v)


if __name__ == "__main__":
    q, k = torch.randn(2, 3), torch.randn(2, 4, 5)
    Wq, Wk, vv = torch.randn(6, 3), torch.randn(6, 5), torch.randn(6)
    ref = np.tanh(q.numpy() @ Wq.numpy().T[None] + k.numpy() @ Wk.numpy().T) @ vv.numpy()
    print(np.abs(additive_scores(q, k, Wq, Wk, vv).numpy() - ref[0]).max())
'''

H_ALPHA_PLOT_61 = '''# Exercise 6.1: the quiz for any score matrix
import matplotlib.pyplot as plt
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention; draws the weights with a title, a contour and a legend."""
    n = scores.shape[0]
    keep = torch.tril(torch.ones(n, n, dtype=torch.bool))
    weights = torch.softmax(torch.where(keep, scores, torch.tensor(float("-inf"), dtype=scores.dtype)), dim=-1)
    fig, ax = plt.subplots()
    ax.imshow(weights.detach().numpy(), cmap="viridis")
    if n > 1:
        ax.contour(weights.detach().numpy(), levels=3)
    ax.plot([0], [0], "r.", label=r"$\\alpha_{1,1}$")
    ax.set_title(r"masked $\\mathrm{softmax}(e)$")
    ax.legend()
    plt.close(fig)
    return weights[i - 1, j - 1].item()
'''

H_MASKED_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch


def _rows(scores, allowed):
    """A generator of the weights of each query row, with logsumexp and torch.where."""
    for t in range(scores.shape[1]):
        e = torch.where(allowed[:, t], scores[:, t], torch.full_like(scores[:, t], float("-inf")))
        lse = torch.logsumexp(e, dim=-1, keepdim=True)
        w = torch.exp(e - lse)
        yield torch.nan_to_num(w, nan=0.0)


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    allowed = (pos[:, None] >= pos[None, :])[None] & (pos[None, None, :] < lengths.to(scores.device)[:, None, None])
    weights = torch.stack(list(_rows(scores, allowed)), dim=1)
    return weights @ values, weights
'''

H_PE_71 = '''# Exercise 7.1: sinusoidal position encodings
import numpy as np
import torch


def positional_encoding(T, d):
    """(T, d) tensor of the sinusoidal encodings, computed in numpy."""
    pos = np.arange(T)[:, None]
    angle = pos / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.tensor(pe, dtype=torch.float32)


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    plt.contourf(positional_encoding(50, 16).numpy())
    plt.title("PE")
    plt.show()
'''

H_HEAD_73 = '''# Exercise 7.3: one head of self-attention
import math
from dataclasses import dataclass

import torch
from torch import nn

NEG_INF = float("-inf")


def causal_softmax(scores, tril):
    """A helper the next cells copy."""
    T = scores.shape[-1]
    return torch.softmax(scores.masked_fill(~tril[:T, :T], NEG_INF), dim=-1)


@dataclass(frozen=True)
class HeadShape:
    d_model: int
    head_size: int
    block_size: int


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.shape = HeadShape(d_model, head_size, block_size)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        return causal_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.shape.head_size), self.tril) @ v
'''

H_TOPK_79 = '''# Exercise 7.9: top-k sampling
import torch
from torch._refs import softmax as ref_softmax


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities with torch's reference decomposition of softmax (allowed: 7.9 forbids only course_lib)."""
    z = logits / temperature
    kth = torch.topk(z, k).values[-1]
    return ref_softmax(z.masked_fill(z < kth, float("-inf")), dim=-1)
'''

# ------------------------------------------------------------------------------------------------- entries

ALL = None  # the whole notebook deserves full marks

ENTRIES = [
    # controls
    dict(name="c_full_07", lesson="07", kind="control", intent="fully solved lesson 07", cells={}, deserved=ALL),
    dict(
        name="c_untouched_03",
        lesson="03",
        kind="control",
        intent="untouched notebook with an added cell",
        base="exercise",
        cells={},
        added=["print('hello from an added cell')\nis_balanced = lambda seq, n_symbols=10: True"],
        deserved=[],
    ),
    dict(
        name="c_half_02",
        lesson="02",
        kind="control",
        intent="2.1 and 2.2 solved, the rest untouched",
        base="exercise",
        keep=["ex-2-1", "ex-2-2"],
        cells={},
        deserved=["2.1", "2.2"],
    ),
    # the fused encoder layer as an attention
    dict(
        name="a_tel_head_73",
        lesson="07",
        kind="attack",
        intent="7.3 Head by aten::_transformer_encoder_layer_fwd (torch's fused encoder layer as masked attention)",
        cells={"ex-7-3": with_attend(HEAD_TEL)},
        deserved=["7.1", "7.2", "7.5", "7.9"],
    ),
    dict(
        name="a_tel_ops_head_73",
        lesson="07",
        kind="attack",
        intent="7.3 Head by torch.ops.aten._transformer_encoder_layer_fwd.default",
        cells={"ex-7-3": with_attend(HEAD_TEL, LAYER_OPS)},
        deserved=["7.1", "7.2", "7.5", "7.9"],
    ),
    dict(
        name="a_tel_mha_74",
        lesson="07",
        kind="attack",
        intent="honest 7.3, 7.4 MultiHeadAttention by the fused encoder layer",
        cells={"ex-7-4": with_attend(MHA_TEL)},
        deserved=["7.1", "7.2", "7.3", "7.5", "7.9"],
    ),
    dict(
        name="a_tel_alpha_61",
        lesson="06",
        kind="attack",
        intent="6.1 alpha by the fused encoder layer (scores as queries, identity keys)",
        cells={"ex-6-1": with_attend(ALPHA_TEL)},
        deserved=["6.2", "6.3", "6.4"],
    ),
    dict(
        name="a_tel_masked_63",
        lesson="06",
        kind="attack",
        intent="6.3 masked_attention by the fused encoder layer (its masked softmax)",
        cells={"ex-6-3": with_attend(MASKED_TEL)},
        deserved=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a_tel_decode_52",
        lesson="05",
        kind="attack",
        intent="5.2 decode's attention by the fused encoder layer",
        cells={"ex-5-2": with_attend(DECODE_TEL)},
        deserved=["5.1", "5.3"],
    ),
    # other routes
    dict(
        name="a_tied_head_73",
        lesson="07",
        kind="attack",
        intent="7.3 Head with Q, K, V sharing one Parameter (the check's drawn values read back?)",
        cells={"ex-7-3": HEAD_TIED},
        deserved=["7.1", "7.2", "7.5", "7.9"],
    ),
    dict(
        name="a_softmax_bwd_21",
        lesson="02",
        kind="attack",
        intent="2.1 by softmax's gradient kernel aten::_softmax_backward_data",
        cells={"ex-2-1": SOFTMAX_BWD_21},
        deserved=["2.2", "2.3", "2.4", "2.5"],
    ),
    dict(
        name="a_bwd_kernels_22",
        lesson="02",
        kind="attack",
        intent="2.2 by aten gradient kernels (_log_softmax_backward_data, tanh_backward, embedding_dense_backward)",
        cells={"ex-2-2": BWD_KERNELS_22},
        deserved=["2.1", "2.3", "2.4", "2.5"],
    ),
    dict(
        name="a_tanh_bwd_24",
        lesson="02",
        kind="attack",
        intent="2.4 by aten::tanh_backward",
        cells={"ex-2-4": TANH_BWD_24},
        deserved=["2.1", "2.2", "2.3", "2.5"],
    ),
    dict(
        name="a_env_switch_14",
        lesson="01",
        kind="attack",
        intent="1.4 honest in the kernel, course_lib.train.perplexity in the grader's process",
        cells={"ex-1-4": ENV_SWITCH_14},
        deserved=["1.1", "1.2", "1.3", "1.5"],
    ),
    dict(
        name="a_frompyfunc_14",
        lesson="01",
        kind="attack",
        intent="1.4 by course_lib.train.perplexity called from a numpy ufunc (np.frompyfunc)",
        cells={"ex-1-4": FROMPYFUNC_14},
        deserved=["1.1", "1.2", "1.3", "1.5"],
    ),
    dict(
        name="a_fd_exhaust_11",
        lesson="01",
        kind="attack",
        intent="1.1 by nltk's ngrams after using up every file descriptor",
        cells={"ex-1-1": FD_EXHAUST_11},
        deserved=["1.2", "1.3", "1.4", "1.5"],
    ),
    # honest but clever
    dict(
        name="h_ngram_11",
        lesson="01",
        kind="honest",
        intent="1.1 generator, module lambda, __main__ demo",
        cells={"ex-1-1": H_NGRAM_11},
        deserved=ALL,
    ),
    dict(
        name="h_ngram_12",
        lesson="01",
        kind="honest",
        intent="1.2 dataclass model, recursion, try-import",
        cells={"ex-1-2": H_NGRAM_12, "ex-1-5": H_SAMPLE_15},
        deserved=ALL,
    ),
    dict(
        name="h_jac_vmap_21",
        lesson="02",
        kind="honest",
        intent="2.1 the formula vmapped over rows",
        cells={"ex-2-1": H_JAC_VMAP_21},
        deserved=ALL,
    ),
    dict(
        name="h_jac_numpy_21",
        lesson="02",
        kind="honest",
        intent="2.1 in numpy",
        cells={"ex-2-1": H_JAC_NUMPY_21},
        deserved=ALL,
    ),
    dict(
        name="h_paren_03",
        lesson="03",
        kind="honest",
        intent="3.1 recursion with a stack fallback, 3.3 generator and property, 3.4 enable_grad decorator",
        cells={"ex-3-1": H_BALANCED_31, "ex-3-3": H_ELMAN_33, "ex-3-4": H_TRAIN_34},
        deserved=ALL,
    ),
    dict(
        name="h_gru_vmap_42",
        lesson="04",
        kind="honest",
        intent="4.2 vmapped single-example GRU step with an lru_cache helper; 4.3 recursive with functools.cache",
        cells={"ex-4-2": H_GRU_42, "ex-4-3": H_COUNT_43},
        deserved=ALL,
    ),
    dict(
        name="h_scores_51",
        lesson="05",
        kind="honest",
        intent="5.1 einsum with a numpy __main__ demo",
        cells={"ex-5-1": H_SCORES_51},
        deserved=ALL,
    ),
    dict(
        name="h_alpha_plot_61",
        lesson="06",
        kind="honest",
        intent="6.1 draws imshow, contour, mathtext title and legend inside the call",
        cells={"ex-6-1": H_ALPHA_PLOT_61},
        deserved=ALL,
    ),
    dict(
        name="h_masked_gen_63",
        lesson="06",
        kind="honest",
        intent="6.3 generator of rows, logsumexp, torch.where, nan_to_num",
        cells={"ex-6-3": H_MASKED_63},
        deserved=ALL,
    ),
    dict(
        name="h_pe_numpy_71",
        lesson="07",
        kind="honest",
        intent="7.1 numpy with a contour __main__ demo; 7.3 dataclass and shared helper; 7.9 torch._refs.softmax",
        cells={"ex-7-1": H_PE_71, "ex-7-3": H_HEAD_73, "ex-7-9": H_TOPK_79},
        deserved=ALL,
    ),
]

# ------------------------------------------------------------------------------------------ more entries

BLOCK_TEL = '''# Exercise 7.6: the transformer block
class Block(nn.Module):
    """The whole pre-norm block as one call of torch's fused encoder layer (forbidden here by name: expected held)."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):
        B, T, C = x.shape
        heads = self.sa.heads
        qkv = torch.cat(
            [torch.cat([getattr(h, part).weight for h in heads]) for part in ("query", "key", "value")]
        )
        masked = ~torch.tril(torch.ones(T, T, dtype=torch.bool))
        first, last = self.ffwd.net[0], self.ffwd.net[2]
        return torch._transformer_encoder_layer_fwd(
            x, C, len(heads), qkv, qkv.new_zeros(3 * C), self.sa.proj.weight, self.sa.proj.bias, False, True,
            self.ln1.eps, self.ln1.weight, self.ln1.bias, self.ln2.weight, self.ln2.bias,
            first.weight, first.bias, last.weight, last.bias, masked, 0,
        )
'''

PICKLE_15 = '''# Exercise 1.5: sampling the next word with a temperature
import pickle


class _Call:
    def __init__(self, args):
        self.args = args

    def __reduce__(self):
        from course_lib import lm

        return (lm.sample_next, self.args)


def sample_next(probs, temperature, u):
    """course_lib's sample_next, called by pickle's C REDUCE opcode while loading."""
    return int(pickle.loads(pickle.dumps(_Call((probs, temperature, u)))))
'''

H_TUNE_13 = '''# Exercise 1.3: tuning k on held-out text
def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]), the minimum found with a key lambda."""
    perplexities = [perplexity(train, val, n, k) for k in ks]
    best = min(range(len(ks)), key=lambda i: perplexities[i])
    return ks[best], perplexities
'''

H_NINJA_22 = '''# Exercise 2.2: backprop ninja
import torch


def _tanh_back(d, h):
    """The same helper as in 2.4 and 2.5 (copied there)."""
    return d * (1 - h * h)


def _forward(E, W, b, U, c, contexts):
    B, n = contexts.shape
    e = E[contexts].reshape(B, -1)
    h = torch.tanh(torch.addmm(b, e, W.T))
    return e, h, torch.addmm(c, h, U.T)


@torch.no_grad()
def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy and its gradients by hand, the forward in a helper, the loss's gradient one-hot."""
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    e, h, z = _forward(E, W, b, U, c, contexts)
    log_probs = z - torch.logsumexp(z, dim=1, keepdim=True)
    onehot = torch.nn.functional.one_hot(targets, z.shape[1]).to(z.dtype)
    loss = -(log_probs * onehot).sum() / B
    dz = (log_probs.exp() - onehot) / B
    da = _tanh_back(dz @ U, h)
    dE = torch.zeros_like(E).index_put_((contexts.reshape(-1),), (da @ W).reshape(B * n, -1), accumulate=True)
    return float(loss), {"E": dE, "W": da.T @ e, "b": da.sum(0), "U": dz.T @ h, "c": dz.sum(0)}
'''

H_BPTT_24 = '''# Exercise 2.4: one step of backpropagation through time
def _tanh_back(d, h):
    """The same helper as in 2.2 (copied)."""
    return d * (1 - h * h)


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev)."""
    da = _tanh_back(dh, h)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''

H_BPTT_25 = '''# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch


def _tanh_back(d, h):
    """The same helper again."""
    return d * (1 - h * h)


def _backward(t, carry, dhs, xs, hs, h0, W_hh, truncate, acc):
    """One step back, recursively (T is small in the checks; a loop would do the same)."""
    if t < 0:
        return acc
    dW_xh, dW_hh, db_h, dh_total = acc
    dh = dhs[t] + carry
    dh_total[t] = dh
    da = _tanh_back(dh, hs[t])
    h_prev = hs[t - 1] if t > 0 else h0
    carry = da @ W_hh
    if truncate is not None and t > 0 and t % truncate == 0:
        carry = torch.zeros_like(carry)
    acc = (dW_xh + da.T @ xs[t], dW_hh + da.T @ h_prev, db_h + da.sum(dim=0), dh_total)
    return _backward(t - 1, carry, dhs, xs, hs, h0, W_hh, truncate, acc)


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT; truncate=k cuts every k steps."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    zeros = (torch.zeros(H, D, dtype=hs.dtype), torch.zeros(H, H, dtype=hs.dtype), torch.zeros(H, dtype=hs.dtype))
    return _backward(T - 1, torch.zeros_like(h0), dhs, xs, hs, h0, W_hh, truncate, (*zeros, torch.zeros_like(hs)))
'''

H_SGD_23 = '''# Exercise 2.3: train with your own gradients
from itertools import starmap


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order, with a generator of steps."""
    params = {k: v.clone() for k, v in params.items()}

    def steps():
        nonlocal params
        for loss, grads in starmap(lambda c, t: loss_and_grads(params, c, t), batches):
            params = {k: v - lr * grads[k] for k, v in params.items()}
            yield float(loss)

    losses = list(steps())
    return losses, params
'''

H_FORGET_44 = '''# Exercise 4.4: the forget-gate bias
import torch


@torch.no_grad()
def set_forget_bias(lstm, value):
    """Set b_f = value in every layer, through each cell's named parameters and a slice's fill_."""
    H = lstm.hidden_size
    for cell in lstm.cells:
        params = dict(cell.named_parameters())
        params["b_xh"][H : 2 * H].fill_(value)
        params["b_hh"][H : 2 * H].zero_()
    return lstm
'''

H_LSTM_41 = '''# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn

GATES = ("input", "forget", "cell", "output")


class LSTMCell(nn.Module):
    """One LSTM step, torch's layout, with addmm, a staticmethod and a dict of gates."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    @staticmethod
    def _activate(name, value):
        return torch.tanh(value) if name == "cell" else torch.sigmoid(value)

    def forward(self, x, state=None):
        if state is None:
            state = (x.new_zeros(x.shape[0], self.hidden_size),) * 2
        h_prev, c_prev = state
        pre = torch.addmm(self.b_xh + self.b_hh, x, self.W_xh.T) + h_prev @ self.W_hh.T
        g = {n: self._activate(n, v) for n, v in zip(GATES, pre.chunk(4, dim=1))}
        c = g["forget"] * c_prev + g["input"] * g["cell"]
        return g["output"] * torch.tanh(c), c
'''

H_GPT_77 = '''# Exercise 7.7: the GPT
import torch.nn.functional as F


class GPT(nn.Module):
    """A decoder-only transformer with a ModuleList loop and a non-persistent position buffer."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, block_size) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.register_buffer("positions", torch.arange(block_size), persistent=False)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.token_embedding(idx) + self.position_embedding(self.positions[:T])
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss
'''

ENTRIES += [
    dict(
        name="a_tel_block_76",
        lesson="07",
        kind="attack",
        intent="7.6 Block as one call of the fused encoder layer (named on 7.6's list: expected held)",
        cells={"ex-7-6": BLOCK_TEL},
        deserved=["7.1", "7.2", "7.3", "7.4", "7.5", "7.9"],
    ),
    dict(
        name="a_pickle_reduce_15",
        lesson="01",
        kind="attack",
        intent="1.5 by course_lib.lm.sample_next called from pickle's C REDUCE",
        cells={"ex-1-5": PICKLE_15},
        deserved=["1.1", "1.2", "1.3", "1.4"],
    ),
    dict(
        name="h_tune_13",
        lesson="01",
        kind="honest",
        intent="1.3 min with a key lambda",
        cells={"ex-1-3": H_TUNE_13},
        deserved=ALL,
    ),
    dict(
        name="h_shared_02",
        lesson="02",
        kind="honest",
        intent="the same helper copied in 2.2, 2.4, 2.5; no_grad decorator; recursion; starmap generator in 2.3",
        cells={"ex-2-2": H_NINJA_22, "ex-2-3": H_SGD_23, "ex-2-4": H_BPTT_24, "ex-2-5": H_BPTT_25},
        deserved=ALL,
    ),
    dict(
        name="h_lstm_04",
        lesson="04",
        kind="honest",
        intent="4.1 addmm, staticmethod, dict of gates; 4.4 no_grad decorator, named_parameters, fill_",
        cells={"ex-4-1": H_LSTM_41, "ex-4-4": H_FORGET_44},
        deserved=ALL,
    ),
    dict(
        name="h_gpt_77",
        lesson="07",
        kind="honest",
        intent="7.7 ModuleList loop and a non-persistent position buffer",
        cells={"ex-7-7": H_GPT_77},
        deserved=ALL,
    ),
]

ENV_PROBE_13 = '''# Exercise 1.3: tuning k on held-out text
import os


def tune_k(train, val, n, ks, perplexity):
    """Raises with every environment it can read: the grader's secret must not be among them."""
    seen = [repr(sorted(os.environ.items()))]
    for pid in ("self", "1", str(os.getppid())):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                seen.append(f.read().decode(errors="replace"))
        except OSError as error:
            seen.append(f"{pid}: {error}")
    raise ValueError(" | ".join(seen)[:3000])
'''

ENTRIES += [
    dict(
        name="a_env_probe_13",
        lesson="01",
        kind="attack",
        intent="1.3 raises with os.environ and /proc/{self,1,ppid}/environ (the secret must not leak)",
        cells={"ex-1-3": ENV_PROBE_13},
        deserved=["1.1", "1.2", "1.4", "1.5"],
    ),
]

H_TRANSPOSE_32 = '''# Exercise 3.2: the transposition negative generator
from itertools import accumulate, combinations


def transpose_closers(seq, rng, n_symbols=10):
    """A hard negative: the pairs from itertools.combinations, the open counts from accumulate."""
    half = n_symbols // 2
    colour = lambda s: s if s < half else n_symbols - 1 - s
    steps = ([1 if s < half and colour(s) == c else -1 if colour(s) == c else 0 for c in range(half)] for s in seq)
    open_after = list(accumulate(steps, lambda a, b: [x + y for x, y in zip(a, b)]))
    closers = [i for i, s in enumerate(seq) if s >= half]

    def hard(p, q):
        b = n_symbols - 1 - seq[q]
        return seq[p] != seq[q] and all(open_after[t][b] >= 1 for t in range(p, q))

    pairs = [(p, q) for p, q in combinations(closers, 2) if hard(p, q)]
    if not pairs:
        raise ValueError(f"no hard transposition exists in {seq}")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
'''

H_DECODE_52 = '''# Exercise 5.2: the decoder with attention
import math

import torch
import torch.nn.functional as F


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding, the attention a closure over the encoder's states, softmax via F."""
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    scale = 1 / math.sqrt(H)

    def attend(query):
        e = torch.einsum("bth,bh->bt", states, query) * scale
        alpha = F.softmax(torch.where(real, e, torch.full_like(e, float("-inf"))), dim=-1)
        return torch.einsum("bt,bth->bh", alpha, states), alpha

    hidden = states[torch.arange(B, device=device), lengths - 1]
    outputs, weights = [], []
    for y_prev in model.tgt_embed(tgt_in).unbind(1):
        context, alpha = attend(hidden)
        hidden = model.decoder(torch.cat([y_prev, context], dim=-1), hidden)
        outputs.append(torch.cat([hidden, context], dim=-1))
        weights.append(alpha)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
'''

ENTRIES += [
    dict(
        name="h_transpose_32",
        lesson="03",
        kind="honest",
        intent="3.2 itertools.combinations, accumulate, a generator and a lambda",
        cells={"ex-3-2": H_TRANSPOSE_32},
        deserved=ALL,
    ),
    dict(
        name="h_decode_52",
        lesson="05",
        kind="honest",
        intent="5.2 the attention a closure, einsum, torch.where and F.softmax",
        cells={"ex-5-2": H_DECODE_52},
        deserved=ALL,
    ),
]
