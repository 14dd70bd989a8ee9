"""Right answers, written from the exercise texts alone (the baseline: each must pass its check).

RIGHT[exercise] is the answer cell's code as a student would type it in the exercises notebook.
"""

RIGHT = {}

# ---------------------------------------------------------------- lesson 02
RIGHT["2.1"] = """
import torch


def softmax_jacobian(z):
    y = torch.softmax(z, dim=0)
    return torch.diag(y) - torch.outer(y, y)
"""

RIGHT["2.2"] = """
import torch


def fflm_loss_and_grads(params, contexts, targets):
    E, W, b, U, c = (params[k] for k in "EWbUc")
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    a = e @ W.T + b
    h = torch.tanh(a)
    z = h @ U.T + c
    zmax = z.max(dim=1, keepdim=True).values
    logp = z - zmax - torch.log(torch.exp(z - zmax).sum(dim=1, keepdim=True))
    loss = -logp[torch.arange(B), targets].mean()
    dz = torch.exp(logp)
    dz[torch.arange(B), targets] -= 1
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
"""

RIGHT["2.3"] = """
def train_sgd(params, batches, lr, loss_and_grads):
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        losses.append(float(loss))
        params = {k: params[k] - lr * grads[k] for k in params}
    return losses, params
"""

RIGHT["2.4"] = """
def bptt_step(dh, h, h_prev, x, W_hh):
    da = dh * (1 - h**2)
    dW_xh = da.T @ x
    dW_hh = da.T @ h_prev
    db_h = da.sum(0)
    dh_prev = da @ W_hh
    return dW_xh, dW_hh, db_h, dh_prev
"""

RIGHT["2.5"] = """
import torch


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    T = dhs.shape[0]
    dW_xh = torch.zeros(W_hh.shape[0], xs.shape[2], dtype=hs.dtype)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros(W_hh.shape[0], dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(hs[0])
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
"""

# ---------------------------------------------------------------- lesson 03
RIGHT["3.1"] = """
def is_balanced(seq, n_symbols=10):
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        else:
            if not stack or stack.pop() != n_symbols - 1 - s:
                return False
    return not stack
"""

RIGHT["3.2"] = """
def transpose_closers(seq, rng, n_symbols=10):
    half = n_symbols // 2
    closers = [p for p, s in enumerate(seq) if s >= half]
    pairs = []
    for q in closers:
        colour = n_symbols - 1 - seq[q]
        count, open_at = 0, []
        for r in range(q):
            if seq[r] == colour:
                count += 1
            elif seq[r] == seq[q]:
                count -= 1
            open_at.append(count > 0)
        for p in closers:
            if p < q and seq[p] != seq[q] and all(open_at[p:q]):
                pairs.append((p, q))
    if not pairs:
        raise ValueError("no pair of closers can be exchanged")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
"""

RIGHT["3.3"] = """
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
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
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
"""

RIGHT["3.4"] = """
import torch.nn.functional as F


def train_epoch(model, batches, optimizer):
    losses = []
    for tokens, lengths, labels in batches:
        logits = model(tokens, lengths)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""

RIGHT["3.5"] = """
from course_lib import parentheses as P


def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    curves = {}
    for _ in range(epochs):
        train_epoch(model, batches, optimizer)
        for name, acc in P.accuracies(model, test_sets).items():
            curves.setdefault(name, []).append(acc)
    return curves
"""

# ---------------------------------------------------------------- lesson 04
RIGHT["4.1"] = """
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            h = x.new_zeros(x.shape[0], self.hidden_size)
            c = x.new_zeros(x.shape[0], self.hidden_size)
        else:
            h, c = state
        gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c
"""

RIGHT["4.2"] = """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    gx = x @ W_xh.T + b_xh
    gh = h @ W_hh.T + b_hh
    xr, xz, xn = gx.chunk(3, dim=1)
    hr, hz, hn = gh.chunk(3, dim=1)
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return z * h + (1 - z) * n
"""

RIGHT["4.3"] = """
def param_count(kind, input_size, hidden_size, num_layers=1):
    gates = {"lstm": 4, "gru": 3}[kind]
    total = 0
    for layer in range(num_layers):
        inp = input_size if layer == 0 else hidden_size
        total += gates * (hidden_size * inp + hidden_size * hidden_size + 2 * hidden_size)
    return total
"""

RIGHT["4.4"] = """
import torch


def set_forget_bias(lstm, value):
    with torch.no_grad():
        for cell in lstm.cells:
            H = cell.b_xh.shape[0] // 4
            cell.b_xh[H : 2 * H] = value
            cell.b_hh[H : 2 * H] = 0.0
    return lstm
"""

RIGHT["4.5"] = """
import statistics


def memory_table(train, T_values, seeds):
    table = {}
    for T in T_values:
        runs = [train(T, seed) for seed in seeds]
        table[T] = {"runs": runs, "mean": statistics.mean(runs), "sd": statistics.stdev(runs)}
    return table
"""

# ---------------------------------------------------------------- lesson 05
RIGHT["5.1"] = """
import torch


def additive_scores(query, keys, W_q, W_k, v):
    q = query @ W_q.T
    k = keys @ W_k.T
    return torch.tanh(q[:, None, :] + k) @ v
"""

RIGHT["5.2"] = """
import math

import torch


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    T_out = tgt_in.shape[1]
    real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]
    h = states[torch.arange(B, device=states.device), lengths - 1]
    logits, weights = [], []
    for i in range(T_out):
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(~real, float("-inf"))
        alpha = torch.softmax(e, dim=1)
        c = (alpha[:, :, None] * states).sum(1)
        y = model.tgt_embed(tgt_in[:, i])
        h = model.decoder(torch.cat([y, c], dim=1), h)
        logits.append(model.out(torch.cat([h, c], dim=1)))
        weights.append(alpha)
    return torch.stack(logits, dim=1), torch.stack(weights, dim=1)
"""

RIGHT["5.3"] = """
import torch

from course_lib.seq2seq import encode_pairs


def alignment(model, source, target, vocab):
    device = next(model.parameters()).device
    src, src_lengths, tgt_in, tgt_out = encode_pairs([source], [target], vocab, device=device)
    with torch.no_grad():
        _, weights = model(src, src_lengths, tgt_in)
    return weights[0]
"""

# ---------------------------------------------------------------- lesson 06
RIGHT["6.1"] = """
import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return float(weights[i - 1, j - 1])
"""

RIGHT["6.2"] = """
import math


def by_hand():
    exp = math.exp
    # row 2 keeps keys 1, 2 (scores 1, 1); row 3 keeps 1..3 (0, 1, 1); row 4 is padding: it sees keys 1..3 (-1, -1, 2)
    a22 = exp(1) / (exp(1) + exp(1))
    a33 = exp(1) / (exp(0) + exp(1) + exp(1))
    a42 = exp(-1) / (exp(-1) + exp(-1) + exp(2))
    a44 = 0.0
    return {"alpha_22": a22, "alpha_33": a33, "alpha_42": a42, "alpha_44": a44}
"""

RIGHT["6.3"] = """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))
    padding = torch.arange(T, device=scores.device)[None, :] < lengths[:, None]
    mask = causal[None, :, :] & padding[:, None, :]
    masked = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
"""

RIGHT["6.4"] = """
import torch


def leak_test(masked_attention, scores, values, lengths):
    output, _ = masked_attention(scores, values, lengths)
    T = values.shape[1]
    pos = torch.arange(T)
    real = pos[None, :] < lengths[:, None]
    pad_values = values.clone()
    pad_values[~real] += 100.0
    out_pad, _ = masked_attention(scores, pad_values, lengths)
    padding = float((out_pad - output).abs()[real].max()) if real.any() else 0.0
    last = int(lengths[0]) - 1
    last_values = values.clone()
    last_values[0, last] += 100.0
    out_last, _ = masked_attention(scores, last_values, lengths)
    moved = (out_last - output).abs()
    own = float(moved[0, last].max())
    earlier = float(moved[0, :last].max()) if last > 0 else 0.0
    return {"padding": padding, "last token": own, "last token, earlier queries": earlier}
"""

# ---------------------------------------------------------------- lesson 07
RIGHT["7.1"] = """
import torch


def positional_encoding(T, d):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    i = torch.arange(d // 2, dtype=torch.float32)[None, :]
    angle = pos / 10000 ** (2 * i / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
"""

RIGHT["7.2"] = """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)
"""

RIGHT["7.3"] = """
import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        return att @ v
"""

RIGHT["7.4"] = """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))
"""

RIGHT["7.5"] = """
class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        return self.net(x)
"""

RIGHT["7.6"] = """
class Block(nn.Module):
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
"""

RIGHT["7.7"] = """
import torch.nn.functional as F


class GPT(nn.Module):
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
        logits = self.lm_head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return logits, loss
"""

RIGHT["7.9"] = """
import torch


def top_k_probs(logits, k, temperature=1.0):
    scaled = logits / temperature
    kth = torch.topk(scaled, k).values[-1]
    scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)
"""
