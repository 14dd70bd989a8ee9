# ruff: noqa: E501  (the answer cells are kept exactly as a student types them)
"""An outsider's set of student answers for the build exercises of lessons 02-07 (issue 34).

Written from the exercise texts alone (exercises/*.ipynb), without reading the checks or their tests.
Each entry: lesson, exercise id, kind ("mistake", "borrowed", or "correct" for the right answers used as
prerequisites and as a baseline), a one-line description, and the answer cell's source exactly as a student
would type it. Most mistakes are written as one small edit of the right answer (``_variant``), so the
stored ``source`` is still the whole cell.
"""

from __future__ import annotations

CORRECT: dict[str, str] = {}

# ---------------------------------------------------------------------------------------------- lesson 02
CORRECT["2.2"] = '''# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    E, W, b, U, c = params["E"], params["W"], params["b"], params["U"], params["c"]
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    a = e @ W.T + b
    h = torch.tanh(a)
    z = h @ U.T + c
    z_shift = z - z.max(dim=1, keepdim=True).values
    log_p = z_shift - torch.log(torch.exp(z_shift).sum(dim=1, keepdim=True))
    rows = torch.arange(B)
    loss = -log_p[rows, targets].mean()
    dz = torch.exp(log_p)
    dz[rows, targets] -= 1
    dz = dz / B
    dU = dz.T @ h
    dc = dz.sum(0)
    dh = dz @ U
    da = dh * (1 - h**2)
    dW = da.T @ e
    db = da.sum(0)
    de = da @ W
    dE = torch.zeros_like(E)
    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))
    return loss, {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
'''

CORRECT["2.4"] = '''# Exercise 2.4: one step of backpropagation through time
def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    da = dh * (1 - h * h)
    dW_xh = da.T @ x
    dW_hh = da.T @ h_prev
    db_h = da.sum(0)
    dh_prev = da @ W_hh
    return dW_xh, dW_hh, db_h, dh_prev
'''

CORRECT["2.5"] = '''# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, from dhs[t] = dL_t/dh_t; truncate=k cuts every k steps."""
    T = dhs.shape[0]
    H, D = W_hh.shape[0], xs.shape[2]
    dW_xh = torch.zeros(H, D, dtype=dhs.dtype)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros(H, dtype=dhs.dtype)
    dh_total = torch.zeros_like(dhs)
    carry = torch.zeros_like(dhs[0])
    for t in range(T - 1, -1, -1):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        da = dh * (1 - hs[t] ** 2)
        dW_xh = dW_xh + da.T @ xs[t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(0)
        carry = da @ W_hh
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
'''

# ---------------------------------------------------------------------------------------------- lesson 03
CORRECT["3.3"] = '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    """The lecture's Elman network over a batch: x (T, B, I) -> (output (T, B, H), h_T (B, H))."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        if h0 is None:
            h = torch.zeros(B, self.hidden_size, dtype=x.dtype, device=x.device)
        else:
            h = h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
'''

# ---------------------------------------------------------------------------------------------- lesson 04
CORRECT["4.1"] = '''# Exercise 4.1: the LSTM cell as a module
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
            h = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            c = torch.zeros_like(h)
        else:
            h, c = state
        gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c_t = f * c + i * g
        h_t = o * torch.tanh(c_t)
        return h_t, c_t
'''

CORRECT["4.2"] = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    gx = x @ W_xh.T + b_xh
    gh = h @ W_hh.T + b_hh
    x_r, x_z, x_n = gx.chunk(3, dim=1)
    h_r, h_z, h_n = gh.chunk(3, dim=1)
    r = torch.sigmoid(x_r + h_r)
    z = torch.sigmoid(x_z + h_z)
    n = torch.tanh(x_n + r * h_n)
    return z * h + (1 - z) * n
'''

# ---------------------------------------------------------------------------------------------- lesson 05
CORRECT["5.1"] = '''# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    q = query @ W_q.T  # (B, a)
    k = keys @ W_k.T  # (B, T, a)
    return torch.tanh(q[:, None, :] + k) @ v
'''

CORRECT["5.2"] = '''# Exercise 5.2: the decoder with attention
import math

import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    lengths = lengths.to(states.device)
    real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]  # (B, T_in)
    h = states[torch.arange(B, device=states.device), lengths - 1]  # last real encoder state
    logits, weights = [], []
    for i in range(tgt_in.shape[1]):
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)  # (B, T_in)
        e = e.masked_fill(~real, float("-inf"))
        alpha = torch.softmax(e, dim=1)
        c = (alpha[:, :, None] * states).sum(1)  # (B, H)
        y = model.tgt_embed(tgt_in[:, i])
        h = model.decoder(torch.cat([y, c], dim=1), h)
        logits.append(model.out(torch.cat([h, c], dim=1)))
        weights.append(alpha)
    return torch.stack(logits, dim=1), torch.stack(weights, dim=1)
'''

# ---------------------------------------------------------------------------------------------- lesson 06
CORRECT["6.3"] = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))  # (T, T)
    real_key = torch.arange(T, device=scores.device)[None, :] < lengths[:, None]  # (B, T)
    allowed = causal[None, :, :] & real_key[:, None, :]  # (B, T, T): the padding mask is on the keys
    e = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(e, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # an empty sentence: no key at all
    return weights @ values, weights
'''

# ---------------------------------------------------------------------------------------------- lesson 07
CORRECT["7.1"] = '''# Exercise 7.1: sinusoidal position encodings
import torch


def positional_encoding(T, d):
    """(T, d) tensor: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float32)
    angle = pos / 10000 ** (two_i / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
'''

CORRECT["7.3"] = '''# Exercise 7.3: one head of self-attention
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
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        w = torch.softmax(w, dim=-1)
        return w @ v
'''

CORRECT["7.4"] = '''# Exercise 7.4: multi-head attention
class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))
'''

CORRECT["7.5"] = '''# Exercise 7.5: the feed-forward layer
class FeedForward(nn.Module):
    """FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model."""

    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        return self.net(x)
'''

CORRECT["7.6"] = '''# Exercise 7.6: the transformer block
class Block(nn.Module):
    """Pre-norm transformer block: x + SA(LN_1(x)), then x + FFN(LN_2(x))."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x
'''

CORRECT["7.7"] = '''# Exercise 7.7: the GPT
import torch.nn.functional as F


class GPT(nn.Module):
    """A decoder-only transformer: embeddings + positions, n_layers blocks, final LN, logits."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))
        x = self.ln_f(self.blocks(x))
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return logits, loss
'''

CORRECT["7.9"] = '''# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities: softmax(logits / temperature) restricted to the k largest logits."""
    z = logits / temperature
    kth = torch.topk(z, k).values[-1]
    z = z.masked_fill(z < kth, float("-inf"))
    return torch.softmax(z, dim=-1)
'''

# Which earlier answers an exercise's answer needs in the notebook (run first, right versions): 7.5's cell
# uses `nn`, `torch` and `math`, which the notebook imports in 7.3's cell.
NEEDS = {"7.4": ["7.3"], "7.5": ["7.3"], "7.6": ["7.3", "7.4", "7.5"], "7.7": ["7.3", "7.4", "7.5", "7.6"]}

ENTRIES: list[dict] = []


def _add(lesson, ex, kind, what, source):
    ENTRIES.append({"lesson": lesson, "exercise": ex, "kind": kind, "what": what, "source": source})


def _variant(ex, what, *edits, kind="mistake"):
    """The right answer of `ex` with each (old, new) edit applied once (old must be there exactly once)."""
    src = CORRECT[ex]
    for old, new in edits:
        assert src.count(old) == 1, (ex, what, old)
        src = src.replace(old, new)
    _add(ex.split(".")[0].zfill(2), ex, kind, what, src)


for _ex in CORRECT:
    _add(_ex.split(".")[0].zfill(2), _ex, "correct", "the right answer (baseline)", CORRECT[_ex])

# ============================================================================ 2.2 mistakes
_variant(
    "2.2",
    "sum over the batch instead of the mean in the backward pass (dz not divided by B)",
    ("    dz = dz / B\n", ""),
)
_variant(
    "2.2",
    "repeated word ids: dE[contexts] += de keeps one of the repeated rows",
    ("    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))\n", "    dE[contexts] += de.reshape(B, n, d)\n"),
)
_variant(
    "2.2",
    "tanh derivative from the pre-activation: 1 - a**2 instead of 1 - h**2",
    ("da = dh * (1 - h**2)", "da = dh * (1 - a**2)"),
)
_variant(
    "2.2",
    "db averaged again over the batch (da.mean(0)) although dz already has 1/B",
    ("db = da.sum(0)", "db = da.mean(0)"),
)
_variant(
    "2.2",
    "naive softmax without subtracting the max (overflows for large logits)",
    ("    z_shift = z - z.max(dim=1, keepdim=True).values\n", "    z_shift = z\n"),
)
_variant(
    "2.2",
    "de split back in the wrong order: context ids read column-major (contexts.T)",
    ("dE.index_add_(0, contexts.reshape(-1),", "dE.index_add_(0, contexts.T.reshape(-1),"),
)
_variant(
    "2.2",
    "dE made in float32 (torch.zeros(V, d)) while the parameters are float64",
    ("dE = torch.zeros_like(E)", "dE = torch.zeros(E.shape[0], d)"),
)
_variant(
    "2.2",
    "context length hard-coded to the experiment's 3 words",
    ("e = E[contexts].reshape(B, n * d)", "e = E[contexts].reshape(B, 3 * d)"),
)
_variant(
    "2.2",
    "forgot to subtract the one-hot target from the probabilities (dz = p / B)",
    ("    dz[rows, targets] -= 1\n", ""),
)

# ============================================================================ 2.4 mistakes
_variant("2.4", "dh_prev through W_hh transposed (da @ W_hh.T)", ("dh_prev = da @ W_hh", "dh_prev = da @ W_hh.T"))
_variant("2.4", "dW_hh transposed (h_prev.T @ da)", ("dW_hh = da.T @ h_prev", "dW_hh = h_prev.T @ da"))
_variant("2.4", "skipped the tanh derivative (da = dh)", ("da = dh * (1 - h * h)", "da = dh"))
_variant(
    "2.4", "tanh derivative taken at h_prev instead of h", ("da = dh * (1 - h * h)", "da = dh * (1 - h_prev * h_prev)")
)
_variant("2.4", "db_h averaged over the batch", ("db_h = da.sum(0)", "db_h = da.mean(0)"))
_variant(
    "2.4", "dh_prev sent back without the tanh derivative (dh @ W_hh)", ("dh_prev = da @ W_hh", "dh_prev = dh @ W_hh")
)

# ============================================================================ 2.5 mistakes
_variant(
    "2.5",
    "h_prev at t = 0 taken as hs[-1] (wraps around) instead of h0",
    ("h_prev = hs[t - 1] if t > 0 else h0", "h_prev = hs[t - 1]"),
)
_variant(
    "2.5",
    "truncation off by one: cut where (t + 1) is a multiple of k",
    ("t > 0 and t % truncate == 0", "(t + 1) % truncate == 0"),
)
_variant(
    "2.5",
    "dh_total records only the step's own gradient dhs[t], not the carry",
    ("dh_total[t] = dh", "dh_total[t] = dhs[t]"),
)
_variant("2.5", "the carry from step t+1 never added (state not carried back)", ("dh = dhs[t] + carry", "dh = dhs[t]"))
_variant(
    "2.5",
    "accumulators made in float32 and updated in place (silently downcast float64)",
    (
        "    dW_xh = torch.zeros(H, D, dtype=dhs.dtype)\n    dW_hh = torch.zeros_like(W_hh)\n"
        "    db_h = torch.zeros(H, dtype=dhs.dtype)\n",
        "    dW_xh = torch.zeros(H, D)\n    dW_hh = torch.zeros(H, H)\n    db_h = torch.zeros(H)\n",
    ),
    ("dW_xh = dW_xh + da.T @ xs[t]", "dW_xh += da.T @ xs[t]"),
    ("dW_hh = dW_hh + da.T @ h_prev", "dW_hh += da.T @ h_prev"),
    ("db_h = db_h + da.sum(0)", "db_h += da.sum(0)"),
)
_variant(
    "2.5",
    "adds the carry into the caller's dhs in place (modifies an input)",
    ("        dh = dhs[t] + carry\n", "        dhs[t] += carry\n        dh = dhs[t]\n"),
)
_variant(
    "2.5",
    "chunks counted from the end of the sequence ((T - t) % k)",
    ("t > 0 and t % truncate == 0", "t > 0 and (T - t) % truncate == 0"),
)

# ============================================================================ 3.3 mistakes
_variant("3.3", "tanh instead of the lecture's ReLU", ("h = torch.relu(", "h = torch.tanh("))
_variant(
    "3.3",
    "h0 ignored: always starts from zeros",
    (
        "        if h0 is None:\n            h = torch.zeros(B, self.hidden_size, dtype=x.dtype, device=x.device)\n"
        "        else:\n            h = h0\n",
        "        h = torch.zeros(B, self.hidden_size, dtype=x.dtype, device=x.device)\n",
    ),
)
_variant(
    "3.3",
    "state not carried: every step reads h0's state instead of h_{t-1}",
    (
        "            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n            outputs.append(h)\n",
        "            h_t = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n            outputs.append(h_t)\n",
    ),
    ("return torch.stack(outputs), h", "return torch.stack(outputs), h_t"),
)
_variant(
    "3.3", "initialised uniform in (-1, 1), not scaled by 1/sqrt(H)", ("k = 1 / math.sqrt(hidden_size)", "k = 1.0")
)
_variant(
    "3.3",
    "outputs shifted by one: h_{t-1} appended before the update (h_0..h_{T-1})",
    (
        "            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n            outputs.append(h)\n",
        "            outputs.append(h)\n            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n",
    ),
)
_variant("3.3", "W_hh not transposed (h @ W_hh)", ("h @ self.W_hh.T", "h @ self.W_hh"))
_variant(
    "3.3",
    "state detached every step (no BPTT through the recurrence)",
    ("            outputs.append(h)\n", "            outputs.append(h)\n            h = h.detach()\n"),
)
_variant(
    "3.3",
    "bias initialised to zeros instead of uniform",
    ("torch.empty(hidden_size).uniform_(-k, k)", "torch.zeros(hidden_size)"),
)
_variant(
    "3.3",
    "the state made in float32 regardless of x's dtype",
    ("h = torch.zeros(B, self.hidden_size, dtype=x.dtype, device=x.device)", "h = torch.zeros(B, self.hidden_size)"),
)

# ============================================================================ 4.1 mistakes
_variant(
    "4.1",
    "gates unpacked in the order i, f, o, g",
    ("i, f, g, o = gates.chunk(4, dim=1)", "i, f, o, g = gates.chunk(4, dim=1)"),
)
_variant("4.1", "h_t = o * c_t (forgot the tanh of the cell state)", ("h_t = o * torch.tanh(c_t)", "h_t = o * c_t"))
_variant(
    "4.1",
    "candidate g through a sigmoid instead of tanh",
    (
        "torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)",
        "torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(g), torch.sigmoid(o)",
    ),
)
_variant(
    "4.1", "state unpacked as (c, h) instead of (h, c)", ("            h, c = state\n", "            c, h = state\n")
)
_variant(
    "4.1",
    "b_hh never added in forward",
    (
        "gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh",
        "gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T",
    ),
)
_variant(
    "4.1",
    "initialised with 1/sqrt(input_size) instead of 1/sqrt(H)",
    ("k = 1 / math.sqrt(hidden_size)", "k = 1 / math.sqrt(input_size)"),
)
_variant(
    "4.1",
    "zero state made in float32 regardless of x's dtype",
    (
        "h = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)",
        "h = torch.zeros(x.shape[0], self.hidden_size)",
    ),
)
_variant("4.1", "returns (c_t, h_t) instead of (h_t, c_t)", ("return h_t, c_t", "return c_t, h_t"))

# ============================================================================ 4.2 mistakes
_variant(
    "4.2",
    "reset gate applied before the product (the lecture's form): (r * h) @ W_hn.T",
    (
        "    n = torch.tanh(x_n + r * h_n)\n",
        "    H = h.shape[1]\n    n = torch.tanh(x_n + (r * h) @ W_hh[2 * H:].T + b_hh[2 * H:])\n",
    ),
)
_variant(
    "4.2",
    "update gate the other way round: (1 - z) * h + z * n",
    ("return z * h + (1 - z) * n", "return (1 - z) * h + z * n"),
)
_variant(
    "4.2",
    "blocks unpacked as z, r, n",
    (
        "    x_r, x_z, x_n = gx.chunk(3, dim=1)\n    h_r, h_z, h_n = gh.chunk(3, dim=1)\n",
        "    x_z, x_r, x_n = gx.chunk(3, dim=1)\n    h_z, h_r, h_n = gh.chunk(3, dim=1)\n",
    ),
)
_variant(
    "4.2",
    "b_hn added outside the reset gate",
    ("    gh = h @ W_hh.T + b_hh\n", "    gh = h @ W_hh.T + b_hh\n    H = h.shape[1]\n"),
    ("n = torch.tanh(x_n + r * h_n)", "n = torch.tanh(x_n + r * (h_n - b_hh[2 * H:]) + b_hh[2 * H:])"),
)
_variant(
    "4.2",
    "z * h done in place on the caller's h (h.mul_(z))",
    ("    return z * h + (1 - z) * n\n", "    h.mul_(z)\n    return h + (1 - z) * n\n"),
)
_variant(
    "4.2",
    "candidate n through a sigmoid instead of tanh",
    ("n = torch.tanh(x_n + r * h_n)", "n = torch.sigmoid(x_n + r * h_n)"),
)

# ============================================================================ 5.1 mistakes
_variant("5.1", "W_q not transposed (query @ W_q)", ("q = query @ W_q.T", "q = query @ W_q"))
_variant("5.1", "forgot the tanh", ("return torch.tanh(q[:, None, :] + k) @ v", "return (q[:, None, :] + k) @ v"))
_variant(
    "5.1",
    "query broadcast on the wrong axis (q[None] instead of q[:, None])",
    ("q[:, None, :] + k", "q[None, :, :] + k"),
)
_variant(
    "5.1",
    "returns the softmax of the scores instead of the scores",
    ("return torch.tanh(q[:, None, :] + k) @ v", "return torch.softmax(torch.tanh(q[:, None, :] + k) @ v, dim=-1)"),
)
_variant(
    "5.1",
    "sums the features instead of the dot product with v",
    ("return torch.tanh(q[:, None, :] + k) @ v", "return torch.tanh(q[:, None, :] + k).sum(-1)"),
)
_variant(
    "5.1",
    "scaled by sqrt(a) like dot-product attention",
    ("return torch.tanh(q[:, None, :] + k) @ v", "return torch.tanh(q[:, None, :] + k) @ v / v.shape[0] ** 0.5"),
)

# ============================================================================ 5.2 mistakes
_variant(
    "5.2",
    "h0 = the encoder state at the last position, padding included",
    ("h = states[torch.arange(B, device=states.device), lengths - 1]", "h = states[:, -1]"),
)
_variant(
    "5.2",
    "scores not scaled by 1/sqrt(H)",
    ("e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)", "e = (states @ h[:, :, None]).squeeze(2)"),
)
_variant("5.2", "padding not masked", ('        e = e.masked_fill(~real, float("-inf"))\n', ""))
_variant(
    "5.2",
    "logits read a context recomputed from the new state h_i (Luong style) instead of c_i",
    (
        "        logits.append(model.out(torch.cat([h, c], dim=1)))\n",
        "        e2 = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)\n"
        '        c2 = (torch.softmax(e2.masked_fill(~real, float("-inf")), dim=1)[:, :, None] * states).sum(1)\n'
        "        logits.append(model.out(torch.cat([h, c2], dim=1)))\n",
    ),
)
_variant(
    "5.2",
    "GRU input in the order [c; y] instead of [y; c]",
    ("model.decoder(torch.cat([y, c], dim=1), h)", "model.decoder(torch.cat([c, y], dim=1), h)"),
)
_variant(
    "5.2", "softmax over the batch axis (dim=0)", ("alpha = torch.softmax(e, dim=1)", "alpha = torch.softmax(e, dim=0)")
)
_variant(
    "5.2",
    "h0 off by one: states[b, lengths[b]] (the end marker's next position)",
    (
        "h = states[torch.arange(B, device=states.device), lengths - 1]",
        "h = states[torch.arange(B, device=states.device), lengths.clamp(max=T_in - 1)]",
    ),
)
_variant(
    "5.2",
    "the padding mask built on the CPU (fails on a GPU) and lengths - 1 as the mask edge",
    (
        "real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]",
        "real = torch.arange(T_in)[None, :] < (lengths[:, None] - 1)",
    ),
)

# ============================================================================ 6.3 mistakes
_variant("6.3", "padding mask on the query axis instead of the keys", ("real_key[:, None, :]", "real_key[:, :, None]"))
_variant("6.3", "mask direction: triu (the future) instead of tril", ("causal = torch.tril(", "causal = torch.triu("))
_variant(
    "6.3",
    "softmax over the queries (dim=1)",
    ("weights = torch.softmax(e, dim=-1)", "weights = torch.softmax(e, dim=1)"),
)
_variant(
    "6.3",
    "NaN left in for an empty sentence",
    ("    weights = torch.nan_to_num(weights, nan=0.0)  # an empty sentence: no key at all\n", ""),
)
_variant(
    "6.3",
    "masked with -1e9 instead of -inf (an empty sentence gets uniform weights, not 0)",
    ('e = scores.masked_fill(~allowed, float("-inf"))', "e = scores.masked_fill(~allowed, -1e9)"),
)
_variant(
    "6.3",
    "masked_fill_ on the caller's scores (modifies an input)",
    ('e = scores.masked_fill(~allowed, float("-inf"))', 'e = scores.masked_fill_(~allowed, float("-inf"))'),
)
_variant(
    "6.3",
    "strict past: tril(diagonal=-1), a query cannot see itself",
    (
        "torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))",
        "torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device), diagonal=-1)",
    ),
)
_variant(
    "6.3",
    "padding off by one: keys j <= lengths[b] allowed",
    ("[None, :] < lengths[:, None]", "[None, :] <= lengths[:, None]"),
)

# ============================================================================ 7.1 mistakes
_variant(
    "7.1",
    "sin and cos swapped (the slide's cosine first)",
    (
        "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
        "pe[:, 0::2] = torch.cos(angle)\n    pe[:, 1::2] = torch.sin(angle)",
    ),
)
_variant(
    "7.1",
    "exponent doubled: 2 * (2i) / d",
    ("angle = pos / 10000 ** (two_i / d)", "angle = pos / 10000 ** (2 * two_i / d)"),
)
_variant(
    "7.1",
    "layout [sin | cos] concatenated instead of interleaved",
    (
        "    pe = torch.zeros(T, d)\n    pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)\n",
        "    pe = torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)\n",
    ),
)
_variant(
    "7.1",
    "positions 1..T instead of 0..T-1",
    (
        "pos = torch.arange(T, dtype=torch.float32)[:, None]",
        "pos = torch.arange(1, T + 1, dtype=torch.float32)[:, None]",
    ),
)
_variant(
    "7.1",
    "forgot the 2 in 2i/d (pair index i over d)",
    ("two_i = torch.arange(0, d, 2, dtype=torch.float32)", "two_i = torch.arange(d // 2, dtype=torch.float32)"),
)

# ============================================================================ 7.3 mistakes
_variant(
    "7.3",
    "scaled by sqrt(d_model) (C ** -0.5, as in the video) instead of sqrt(d_k)",
    ("/ math.sqrt(k.shape[-1])", "/ math.sqrt(C)"),
)
_variant(
    "7.3",
    "nn.Linear's default bias kept on the projections",
    (
        "        self.key = nn.Linear(d_model, head_size, bias=False)\n        self.query = nn.Linear(d_model, head_size, bias=False)\n"
        "        self.value = nn.Linear(d_model, head_size, bias=False)\n",
        "        self.key = nn.Linear(d_model, head_size)\n        self.query = nn.Linear(d_model, head_size)\n"
        "        self.value = nn.Linear(d_model, head_size)\n",
    ),
)
_variant("7.3", "no causal mask", ('        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))\n', ""))
_variant(
    "7.3",
    "mask the wrong way round (triu: only the future is seen)",
    ("torch.tril(torch.ones(block_size, block_size))", "torch.triu(torch.ones(block_size, block_size))"),
)
_variant("7.3", "softmax over the queries (dim=1)", ("w = torch.softmax(w, dim=-1)", "w = torch.softmax(w, dim=1)"))
_variant("7.3", "K Q^T instead of Q K^T", ("w = q @ k.transpose(-2, -1)", "w = k @ q.transpose(-2, -1)"))
_variant(
    "7.3",
    "mask applied after the softmax (zeros, rows no longer sum to 1)",
    (
        '        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))\n        w = torch.softmax(w, dim=-1)\n',
        "        w = torch.softmax(w, dim=-1)\n        w = w.masked_fill(self.tril[:T, :T] == 0, 0.0)\n",
    ),
)
_variant("7.3", "mask not cut to T (uses the full block_size mask)", ("self.tril[:T, :T] == 0", "self.tril == 0"))
_variant(
    "7.3",
    "no 1/sqrt(d_k) scaling",
    ("w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])", "w = q @ k.transpose(-2, -1)"),
)

# ============================================================================ 7.4 mistakes
_variant(
    "7.4",
    "forgot W^O in forward (concatenation returned)",
    (
        "return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))",
        "return torch.cat([head(x) for head in self.heads], dim=-1)",
    ),
)
_variant(
    "7.4",
    "heads and head size swapped: d_model // n_heads heads of n_heads features",
    (
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])",
        "nn.ModuleList([Head(d_model, n_heads, block_size) for _ in range(d_model // n_heads)])",
    ),
)
_variant(
    "7.4",
    "W^O without its bias b^O",
    ("self.proj = nn.Linear(d_model, d_model)", "self.proj = nn.Linear(d_model, d_model, bias=False)"),
)
_variant(
    "7.4",
    "one Head repeated n_heads times (shared weights)",
    (
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])",
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size)] * n_heads)",
    ),
)
_variant(
    "7.4",
    "heads concatenated in reverse order",
    ("[head(x) for head in self.heads]", "[head(x) for head in reversed(self.heads)]"),
)
_variant(
    "7.4",
    "every head of full size d_model, W^O from n_heads * d_model",
    (
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])",
        "nn.ModuleList([Head(d_model, d_model, block_size) for _ in range(n_heads)])",
    ),
    ("self.proj = nn.Linear(d_model, d_model)", "self.proj = nn.Linear(n_heads * d_model, d_model)"),
)

# ============================================================================ 7.5 mistakes
_variant(
    "7.5",
    "no nonlinearity",
    ("nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear", "nn.Linear(d_model, 4 * d_model), nn.Linear"),
)
_variant("7.5", "GELU instead of ReLU", ("nn.ReLU()", "nn.GELU()"))
_variant(
    "7.5",
    "d_ff = d_model (forgot the factor 4)",
    (
        "nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model)",
        "nn.Linear(d_model, d_model), nn.ReLU(), nn.Linear(d_model, d_model)",
    ),
)
_variant(
    "7.5",
    "second layer without its bias b_2",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model, bias=False))"),
)
_variant(
    "7.5",
    "dropout added as in the video",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.Dropout(0.2))"),
)
_variant(
    "7.5",
    "ReLU after the second layer too",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.ReLU())"),
)
_add(
    "07",
    "7.5",
    "correct",
    "right answer with raw parameters in the x @ W1 layout (text: 'name its layers as you like')",
    '''# Exercise 7.5: the feed-forward layer
class FeedForward(nn.Module):
    """FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model."""

    def __init__(self, d_model):
        super().__init__()
        k1, k2 = 1 / math.sqrt(d_model), 1 / math.sqrt(4 * d_model)
        self.W1 = nn.Parameter(torch.empty(d_model, 4 * d_model).uniform_(-k1, k1))
        self.b1 = nn.Parameter(torch.empty(4 * d_model).uniform_(-k1, k1))
        self.W2 = nn.Parameter(torch.empty(4 * d_model, d_model).uniform_(-k2, k2))
        self.b2 = nn.Parameter(torch.empty(d_model).uniform_(-k2, k2))

    def forward(self, x):
        return torch.relu(x @ self.W1 + self.b1) @ self.W2 + self.b2
''',
)

# ============================================================================ 7.6 mistakes
_variant(
    "7.6",
    "post-norm instead of pre-norm",
    (
        "        x = x + self.sa(self.ln1(x))\n        x = x + self.ffwd(self.ln2(x))\n",
        "        x = self.ln1(x + self.sa(x))\n        x = self.ln2(x + self.ffwd(x))\n",
    ),
)
_variant(
    "7.6",
    "x += in place (changes the caller's x)",
    (
        "        x = x + self.sa(self.ln1(x))\n        x = x + self.ffwd(self.ln2(x))\n",
        "        x += self.sa(self.ln1(x))\n        x += self.ffwd(self.ln2(x))\n",
    ),
)
_variant("7.6", "ln1 used for both sub-layers", ("x = x + self.ffwd(self.ln2(x))", "x = x + self.ffwd(self.ln1(x))"))
_variant(
    "7.6",
    "residual taken from the normalised x",
    ("        x = x + self.sa(self.ln1(x))\n", "        x = self.ln1(x)\n        x = x + self.sa(x)\n"),
)
_variant(
    "7.6",
    "parallel sub-layers (both read the block's input)",
    (
        "        x = x + self.sa(self.ln1(x))\n        x = x + self.ffwd(self.ln2(x))\n",
        "        x = x + self.sa(self.ln1(x)) + self.ffwd(self.ln2(x))\n",
    ),
)
_variant("7.6", "no residual around the feed-forward", ("x = x + self.ffwd(self.ln2(x))", "x = self.ffwd(self.ln2(x))"))
_variant(
    "7.6",
    "MultiHeadAttention built with (d_model, d_model // n_heads, ...) (head count and size confused)",
    (
        "self.sa = MultiHeadAttention(d_model, n_heads, block_size)",
        "self.sa = MultiHeadAttention(d_model, d_model // n_heads, block_size)",
    ),
)

# ============================================================================ 7.7 mistakes
_variant(
    "7.7",
    "position table of vocab_size rows instead of block_size",
    (
        "self.position_embedding = nn.Embedding(block_size, d_model)",
        "self.position_embedding = nn.Embedding(vocab_size, d_model)",
    ),
)
_variant("7.7", "final layer norm defined but not applied", ("x = self.ln_f(self.blocks(x))", "x = self.blocks(x)"))
_variant(
    "7.7",
    "positions 1..T (off by one), with a table of block_size + 1 rows",
    (
        "self.position_embedding = nn.Embedding(block_size, d_model)",
        "self.position_embedding = nn.Embedding(block_size + 1, d_model)",
    ),
    ("torch.arange(T, device=idx.device)", "torch.arange(1, T + 1, device=idx.device)"),
)
_variant(
    "7.7",
    "targets shifted again (the batcher already did)",
    (
        "        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))\n",
        "        loss = F.cross_entropy(logits[:, :-1].reshape(B * (T - 1), -1), targets[:, 1:].reshape(B * (T - 1)))\n",
    ),
)
_variant(
    "7.7",
    "one Block repeated n_layers times (shared weights)",
    (
        "nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])",
        "nn.Sequential(*[Block(d_model, n_heads, block_size)] * n_layers)",
    ),
)
_variant(
    "7.7", "loss summed instead of averaged", ("targets.reshape(B * T))", 'targets.reshape(B * T), reduction="sum")')
)
_variant(
    "7.7",
    "lm_head without bias",
    ("self.lm_head = nn.Linear(d_model, vocab_size)", "self.lm_head = nn.Linear(d_model, vocab_size, bias=False)"),
)
_variant(
    "7.7",
    "targets flattened time-major (targets.T) against batch-major logits",
    ("targets.reshape(B * T))", "targets.T.reshape(B * T))"),
)

# ============================================================================ 7.9 mistakes
_variant("7.9", "temperature multiplied instead of divided", ("z = logits / temperature", "z = logits * temperature"))
_variant(
    "7.9",
    "exactly k kept (topk indices), ties dropped",
    (
        '    kth = torch.topk(z, k).values[-1]\n    z = z.masked_fill(z < kth, float("-inf"))\n',
        '    keep = torch.topk(z, k).indices\n    z = torch.full_like(z, float("-inf")).scatter(0, keep, z[keep])\n',
    ),
)
_variant(
    "7.9",
    "softmax first, then zeroed outside the top k (not renormalised)",
    (
        '    z = z.masked_fill(z < kth, float("-inf"))\n    return torch.softmax(z, dim=-1)\n',
        "    p = torch.softmax(z, dim=-1)\n    return p.masked_fill(z < kth, 0.0)\n",
    ),
)
_variant("7.9", "divides the caller's logits in place", ("z = logits / temperature", "z = logits.div_(temperature)"))
_variant(
    "7.9",
    "keeps k + 1 tokens (off by one)",
    ("kth = torch.topk(z, k).values[-1]", "kth = torch.topk(z, min(k + 1, z.numel())).values[-1]"),
)
_variant("7.9", "strict > drops the k-th logit itself", ("z.masked_fill(z < kth,", "z.masked_fill(z <= kth,"))

# ================================================================================== borrowed answers
_B = "borrowed"
_add(
    "02",
    "2.2",
    _B,
    ".backward() on a copy of the parameters (autograd, as the experiment's referee)",
    """# Exercise 2.2: backprop ninja
import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    h = torch.tanh(leaves["E"][contexts].reshape(B, -1) @ leaves["W"].T + leaves["b"])
    loss = F.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
    loss.backward()
    return loss.detach(), {k: v.grad for k, v in leaves.items()}
""",
)
_add(
    "02",
    "2.2",
    _B,
    "torch.func.grad (function transform)",
    """# Exercise 2.2: backprop ninja
import torch
import torch.nn.functional as F
from torch.func import grad_and_value


def _loss(p, contexts, targets):
    B = contexts.shape[0]
    h = torch.tanh(p["E"][contexts].reshape(B, -1) @ p["W"].T + p["b"])
    return F.cross_entropy(h @ p["U"].T + p["c"], targets)


def fflm_loss_and_grads(params, contexts, targets):
    grads, loss = grad_and_value(_loss)(dict(params), contexts, targets)
    return loss, grads
""",
)
_add(
    "02",
    "2.2",
    _B,
    "forward-mode autodiff: torch.func.jacfwd over the parameters",
    """# Exercise 2.2: backprop ninja
import torch
import torch.nn.functional as F
from torch import func


def _loss(p, contexts, targets):
    B = contexts.shape[0]
    h = torch.tanh(p["E"][contexts].reshape(B, -1) @ p["W"].T + p["b"])
    return F.cross_entropy(h @ p["U"].T + p["c"], targets)


def fflm_loss_and_grads(params, contexts, targets):
    p = dict(params)
    grads = func.jacfwd(_loss)(p, contexts, targets)
    return _loss(p, contexts, targets), grads
""",
)
_add(
    "02",
    "2.2",
    _B,
    "the checks module's own hand-written reference (checks.hand_loss_and_grads)",
    """# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    return checks.hand_loss_and_grads(params, contexts, targets)
""",
)
_add(
    "02",
    "2.2",
    _B,
    "course_lib.backprop's backward functions reached through importlib",
    """# Exercise 2.2: backprop ninja
import importlib

import torch

bp = importlib.import_module("course_" + "lib.back" + "prop")


def fflm_loss_and_grads(params, contexts, targets):
    E, W, b, U, c = params["E"], params["W"], params["b"], params["U"], params["c"]
    B, n = contexts.shape
    e = E[contexts].reshape(B, -1)
    a = e @ W.T + b
    h = torch.tanh(a)
    z = h @ U.T + c
    loss = bp.cross_entropy(z, targets)
    dz = bp.cross_entropy_backward(z, targets)
    dh, dU, dc = bp.linear_backward(dz, h, U)
    da = bp.activation_backward(dh, a, h, "tanh")
    de, dW, db = bp.linear_backward(da, e, W)
    dE = bp.embedding_backward(de.reshape(B, n, -1), contexts, E.shape[0])
    return loss, {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
""",
)
_add(
    "02",
    "2.4",
    _B,
    "torch.autograd.grad reached by getattr, on a graph rebuilt from atanh(h)",
    """# Exercise 2.4: one step of backpropagation through time
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    a = torch.atanh(h).detach().requires_grad_()
    W = W_hh.detach().clone().requires_grad_()
    hp = h_prev.detach().clone().requires_grad_()
    a_full = a + hp @ W.T - (hp @ W.T).detach()  # the recurrent part, differentiable
    out = torch.tanh(a_full)
    g = getattr(torch.autograd, "gr" + "ad")
    da, dW_hh, dh_prev = g(out, [a, W, hp], dh)
    return da.T @ x, dW_hh, da.sum(0), dh_prev
""",
)
_add(
    "02",
    "2.5",
    _B,
    "course_lib.bptt.bptt_step called in the loop",
    """# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch
from course_lib import bptt as _lib


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    T, H = dhs.shape[0], W_hh.shape[0]
    W_xh = torch.zeros(H, xs.shape[2], dtype=dhs.dtype)
    dW_xh, dW_hh, db_h = 0, 0, 0
    dh_total = torch.zeros_like(dhs)
    carry = torch.zeros_like(dhs[0])
    for t in range(T - 1, -1, -1):
        dh_total[t] = dhs[t] + carry
        h_prev = hs[t - 1] if t > 0 else h0
        _, gx, gh, gb, carry = _lib.bptt_step(dh_total[t], torch.atanh(hs[t]), hs[t], h_prev, xs[t], W_xh, W_hh)
        dW_xh, dW_hh, db_h = dW_xh + gx, dW_hh + gh, db_h + gb
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
""",
)
_add(
    "03",
    "3.3",
    _B,
    "torch's low-level op torch.rnn_relu_cell in the loop",
    CORRECT["3.3"].replace(
        "            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n",
        "            h = torch.rnn_relu_cell(x[t], h, self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h))\n",
    ),
)
_add(
    "03",
    "3.3",
    _B,
    "course_lib.rnn.ElmanRNN's cell (ElmanCell) doing the steps, parameters shared",
    """# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn
from course_lib.rnn import ElmanCell as _Cell


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        cell = _Cell(self.input_size, self.hidden_size, dtype=x.dtype)
        for name, p in cell.named_parameters():
            setattr(cell, name, getattr(self, name, None) if hasattr(self, name) else p)
        h = torch.zeros(x.shape[1], self.hidden_size, dtype=x.dtype) if h0 is None else h0
        outputs = []
        for t in range(x.shape[0]):
            h = torch.relu(x[t] @ self.W_xh.T + self.b_h + h @ self.W_hh.T) if False else cell.step(
                x[t] @ self.W_xh.T + self.b_h, h)
            outputs.append(h)
        return torch.stack(outputs), h
""",
)
_add(
    "04",
    "4.1",
    _B,
    "subclass of course_lib.rnn.LSTMCell (same parameter names)",
    '''# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn
from course_lib.rnn import LSTMCell as _LibCell


class LSTMCell(_LibCell):
    """One LSTM step, torch's layout."""
''',
)
_add(
    "04",
    "4.1",
    _B,
    "course_lib's methods taken in the class body (forward = LibCell.forward), own __init__",
    """# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn
import course_lib.rnn_cells as _rc


class LSTMCell(nn.Module):
    n_blocks, state_is_pair, torch_class = 4, True, nn.LSTMCell

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, True
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    forward = _rc._Cell.forward
    zero_state = _rc._Cell.zero_state
    output = _rc._Cell.output
    input_projection = _rc.LSTMCell.input_projection
    gates = _rc.LSTMCell.gates
    step = _rc.LSTMCell.step
""",
)
_add(
    "04",
    "4.1",
    _B,
    "torch's low-level op torch.lstm_cell",
    CORRECT["4.1"].replace(
        """        gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c_t = f * c + i * g
        h_t = o * torch.tanh(c_t)
""",
        """        h_t, c_t = torch.lstm_cell(x, (h, c), self.W_xh, self.W_hh, self.b_xh, self.b_hh)
""",
    ),
)
_add(
    "04",
    "4.1",
    _B,
    "nn.LSTMCell.forward taken in the class body, torch's names as properties",
    """# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, True
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    weight_ih = property(lambda self: self.W_xh)
    weight_hh = property(lambda self: self.W_hh)
    bias_ih = property(lambda self: self.b_xh)
    bias_hh = property(lambda self: self.b_hh)
    _torch_forward = nn.LSTMCell.forward

    def forward(self, x, state=None):
        return self._torch_forward(x, state)
""",
)
_add(
    "04",
    "4.2",
    _B,
    "torch's low-level op torch.gru_cell",
    """# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return torch.gru_cell(x, h, W_xh, W_hh, b_xh, b_hh)
""",
)
_add(
    "04",
    "4.2",
    _B,
    "nn.GRUCell with the weights copied in",
    """# Exercise 4.2: one GRU step
import torch
from torch import nn


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    cell = nn.GRUCell(x.shape[1], h.shape[1]).to(x.dtype)
    with torch.no_grad():
        cell.weight_ih.copy_(W_xh), cell.weight_hh.copy_(W_hh), cell.bias_ih.copy_(b_xh), cell.bias_hh.copy_(b_hh)
    return cell(x, h)
""",
)
_add(
    "04",
    "4.2",
    _B,
    "course_lib's GRUCell.gates reached by getattr on the package",
    """# Exercise 4.2: one GRU step
import torch
import course_lib


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    Cell = getattr(getattr(course_lib, "rnn"), "GRU" + "Cell")
    cell = Cell(x.shape[1], h.shape[1], dtype=x.dtype)
    with torch.no_grad():
        cell.W_xh.copy_(W_xh), cell.W_hh.copy_(W_hh), cell.b_xh.copy_(b_xh), cell.b_hh.copy_(b_hh)
    return cell(x, h)
""",
)
_add(
    "05",
    "5.1",
    _B,
    "course_lib.seq2seq.AdditiveScore with the weights copied in",
    """# Exercise 5.1: additive (Bahdanau) attention scores
import torch
from course_lib import seq2seq as s2s


def additive_scores(query, keys, W_q, W_k, v):
    scorer = s2s.AdditiveScore(W_q.shape[1], W_k.shape[1], W_q.shape[0]).to(query.dtype)
    params = dict(scorer.named_parameters())
    with torch.no_grad():
        for p in params.values():
            p.zero_()
        for name, p in params.items():
            for mine in (W_q, W_k, v):
                if p.shape == mine.shape and float(p.abs().sum()) == 0:
                    p.copy_(mine)
                    break
    return scorer(query, keys)
""",
)
_add(
    "05",
    "5.2",
    _B,
    "the checks module's reference decoder (checks.reference_decode)",
    """# Exercise 5.2: the decoder with attention
import math

import torch


def decode(model, states, lengths, tgt_in):
    return checks.reference_decode(model, states, lengths, tgt_in)
""",
)
_add(
    "05",
    "5.2",
    _B,
    "F.scaled_dot_product_attention for the attention step (weights recomputed for the return)",
    CORRECT["5.2"].replace(
        """        alpha = torch.softmax(e, dim=1)
        c = (alpha[:, :, None] * states).sum(1)  # (B, H)
""",
        """        alpha = torch.softmax(e, dim=1)
        c = torch.nn.functional.scaled_dot_product_attention(
            h[:, None, :], states, states, attn_mask=real[:, None, :]
        ).squeeze(1)
""",
    ),
)
_add(
    "05",
    "5.2",
    _B,
    "course_lib.seq2seq.attend for the weights and the context",
    CORRECT["5.2"].replace(
        """        e = e.masked_fill(~real, float("-inf"))
        alpha = torch.softmax(e, dim=1)
        c = (alpha[:, :, None] * states).sum(1)  # (B, H)
""",
        """        c, alpha = __import__("course_lib.seq2seq", fromlist=["attend"]).attend(e, states, real)
""",
    ),
)
_add(
    "06",
    "6.3",
    _B,
    "the checks module's reference (checks.reference_masked_attention)",
    """# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    return checks.reference_masked_attention(scores, values, lengths)
""",
)
_add(
    "06",
    "6.3",
    _B,
    "F.scaled_dot_product_attention with the scores as queries and an identity as keys",
    """# Exercise 6.3: masked attention over a padded batch
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    real_key = torch.arange(T)[None, :] < lengths[:, None]
    allowed = causal[None] & real_key[:, None, :]
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    output = F.scaled_dot_product_attention(scores, eye, values, attn_mask=allowed, scale=1.0)
    weights = F.scaled_dot_product_attention(scores, eye, torch.eye(T, dtype=scores.dtype).expand(B, T, T),
                                             attn_mask=allowed, scale=1.0)
    return output, weights
""",
)
_add(
    "06",
    "6.3",
    _B,
    "course_lib.attention's masks and masked_softmax",
    """# Exercise 6.3: masked attention over a padded batch
import torch
from course_lib import attention as A


def masked_attention(scores, values, lengths):
    T = scores.shape[1]
    weights = A.masked_softmax(scores, A.decoder_mask(lengths, T))
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
""",
)
_add(
    "07",
    "7.1",
    _B,
    "course_lib.transformer.sinusoidal_positions through getattr",
    """# Exercise 7.1: sinusoidal position encodings
import torch
import course_lib.transformer as tr


def positional_encoding(T, d):
    return getattr(tr, "sinusoidal_" + "positions")(T, d)
""",
)
_add(
    "07",
    "7.1",
    _B,
    "the checks module's encoding (checks._pe)",
    """# Exercise 7.1: sinusoidal position encodings
import torch


def positional_encoding(T, d):
    return torch.as_tensor(checks._pe(T, d), dtype=torch.float32)
""",
)
_add(
    "07",
    "7.3",
    _B,
    "F.scaled_dot_product_attention(is_causal=True)",
    CORRECT["7.3"].replace(
        """        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        w = torch.softmax(w, dim=-1)
        return w @ v
""",
        """        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
""",
    ),
)
_add(
    "07",
    "7.3",
    _B,
    "course_lib.buildup.Head.forward taken in the class body",
    """# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn
from course_lib import buildup


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    forward = buildup.Head.forward
""",
)
_add(
    "07",
    "7.3",
    _B,
    "course_lib's Head copied with inspect.getsource + exec",
    """# Exercise 7.3: one head of self-attention
import inspect
import math

import torch
from torch import nn
from course_lib import buildup

_ns = dict(vars(buildup))
exec(inspect.getsource(buildup.Head).replace("nn.Linear(d_model, d_k)", "nn.Linear(d_model, d_k, bias=False)")
     .replace("def __init__(self, d_model: int, d_k: int)", "def __init__(self, d_model, d_k, block_size=None)"), _ns)
Head = _ns["Head"]
""",
)
_add(
    "07",
    "7.4",
    _B,
    "nn.MultiheadAttention inside, the heads kept only as parameters",
    """# Exercise 7.4: multi-head attention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        T, C = x.shape[1], x.shape[2]
        mha = nn.MultiheadAttention(C, self.n_heads, bias=False, batch_first=True).to(x.dtype)
        w_in = torch.cat([torch.cat([h.query.weight for h in self.heads]), torch.cat([h.key.weight for h in self.heads]),
                          torch.cat([h.value.weight for h in self.heads])])
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        out, _ = torch.nn.functional.multi_head_attention_forward(
            x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), C, self.n_heads, w_in, None, None, None, False, 0.0,
            self.proj.weight, self.proj.bias, training=False, need_weights=False, attn_mask=mask)
        return out.transpose(0, 1)
""",
)
_add(
    "07",
    "7.4",
    _B,
    "course_lib.buildup.MultiHead.forward taken in the class body",
    """# Exercise 7.4: multi-head attention
from course_lib.buildup import MultiHead as _MH


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    forward = _MH.forward
""",
)
_add(
    "07",
    "7.5",
    _B,
    "course_lib.buildup.FeedForward subclassed, its GELU swapped for ReLU via F",
    """# Exercise 7.5: the feed-forward layer
import importlib

_b = importlib.import_module("course_lib.buildup")


class FeedForward(_b.FeedForward):
    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))
""",
)
_add(
    "07",
    "7.6",
    _B,
    "course_lib.transformer.SelfAttentionBlock's pre-norm forward taken in the class body",
    """# Exercise 7.6: the transformer block
from course_lib import buildup as _bu


class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.residual = True

    attn = property(lambda self: self.sa)
    ffn = property(lambda self: self.ffwd)
    forward = _bu.Block.forward
""",
)
_add(
    "07",
    "7.7",
    _B,
    "course_lib.buildup.BuildUpLM.forward taken, names mapped by properties",
    """# Exercise 7.7: the GPT
import torch.nn.functional as F
from course_lib.buildup import BuildUpLM as _LM


class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    wte = property(lambda self: self.token_embedding)
    wpe = property(lambda self: self.position_embedding)
    _lib_forward = _LM.forward

    def forward(self, idx, targets=None):
        logits, _ = self._lib_forward(idx)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())
""",
)
_add(
    "07",
    "7.9",
    _B,
    "the checks module's rule (checks._top_k)",
    """# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    return torch.as_tensor(checks._top_k(logits, k, temperature))
""",
)
