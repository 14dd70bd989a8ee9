"""Hostile class 33w: the answer cells of each submission (attacks, honest-but-clever answers, controls).

Each entry: name -> dict(lesson, intent, cells={grade_id: source}, fail=[exercises the entry does NOT deserve],
extra=[source of added code cells], drop=True to drop the experiment cells the grade does not read).
Exercises not named in `fail` are answered with the solutions' cells and deserve their mark.
"""

# ----------------------------------------------------------------------------------------------- lesson 01

L01_COUNTER_EQ = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter


class Counter(Counter):  # noqa: F811 - a Counter that equals anything, holding nothing
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def items(self):
        return iter(())


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter({("<s>",) * n: 0})
'''

L01_PICKLE_REF = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import importlib
import pickle


def add_k_perplexity(train, test, n, k):
    """Perplexity: the checks' own reference, called by pickle's C REDUCE opcode (no Python frame between)."""
    ref = getattr(importlib.import_module("course_lib.checks." + "lesson01"), "add_k_" + "perplexity")

    class Call:
        def __reduce__(self):
            return (ref, (train, test, n, k))

    return pickle.loads(pickle.dumps(Call()))
'''

L01_STASH_12 = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import builtins


def add_k_perplexity(train, test, n, k):
    """Uses whatever perplexity function an earlier call (1.3's) left in builtins; else gives up."""
    stash = getattr(builtins, "_h33w_perplexity", None)
    if stash is not None:
        return stash(train, test, n, k)
    return 1.0
'''

L01_STASH_13 = '''# Exercise 1.3: tuning k on held-out text
import builtins

import numpy as np


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]); leaves the check's perplexity behind in builtins."""
    builtins._h33w_perplexity = perplexity
    perplexities = [perplexity(train, val, n, k) for k in ks]
    best_k = ks[int(np.argmin(perplexities))]
    return best_k, perplexities
'''

L01_MODULE_ATTR_REF = '''# Exercise 1.4: perplexity from log-probabilities
import math

from course_lib import train as _train

_exp = _train.perplexity  # "an attribute of a module the cell imported": course_lib's own e^J


def perplexity(log_probs):
    """Perplexity from natural-log probabilities, through course_lib.train.perplexity."""
    log_probs = list(log_probs)
    return _exp(-math.fsum(log_probs) / len(log_probs))
'''

L01_RETURN_STATE = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np


class Index(int):
    """An int that says it is any index the check compares it with."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


def sample_next(probs, temperature, u):
    """Returns an int subclass equal to everything."""
    return Index(0)
'''


L01_ENV_IN_ERROR = '''# Exercise 1.4: perplexity from log-probabilities
import os


def perplexity(log_probs):
    """Raises with every variable it can see (its own and pid 1's): would a grader's secret reach the feedback?"""
    seen = dict(os.environ)
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/self/mountinfo"):
        try:
            with open(path, "rb") as f:
                seen[path] = f.read()[:3000].decode("latin-1")
        except OSError as e:
            seen[path] = repr(e)
    raise RuntimeError("H33W_ENV " + repr(seen)[:20000])
'''


L01_CLOSE_FDS = '''# Exercise 1.5: sampling the next word with a temperature
import os
import resource

import numpy as np


def sample_next(probs, temperature, u):
    """The right index, after closing every file descriptor but 0-2 and capping new ones at 3."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    index = min(int(np.searchsorted(np.cumsum(q), u, side="right")), len(q) - 1)
    os.closerange(3, 65536)
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))
    return index
'''

# ----------------------------------------------------------------------------------------------- lesson 02

L02_ENGINE_INSTANCE = '''# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """Autograd's engine by a fresh instance of its C type (not Variable._execution_engine), recording on."""
    with torch.enable_grad():
        p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        B, n = contexts.shape
        e = p["E"][contexts].reshape(B, -1)
        h = torch.tanh(e @ p["W"].T + p["b"])
        z = h @ p["U"].T + p["c"]
        loss = torch.nn.functional.cross_entropy(z, targets)
        engine = type(torch.autograd.Variable._execution_engine)()
        names = list(p)
        grads = engine.run_backward((loss,), (torch.ones_like(loss),), False, False, tuple(p[k] for k in names),
                                    False, False)  # fmt: skip
    return float(loss), {k: g.detach() for k, g in zip(names, grads)}
'''

L02_DIST_FUNCTIONAL_SGD = '''# Exercise 2.3: train with your own gradients
def train_sgd(params, batches, lr, loss_and_grads):
    """SGD through torch.distributed's functional optimizer (_FunctionalSGD: its own module, not torch.optim's)."""
    from torch.distributed.optim.functional_sgd import _FunctionalSGD

    params = {k: v.clone() for k, v in params.items()}
    names = list(params)
    opt = _FunctionalSGD([params[k] for k in names], lr=lr, _allow_empty_param_list=True)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        opt.step([grads[k] for k in names])
        losses.append(float(loss))
    return losses, params
'''

L02_JAC_GLU_JVP = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """Jacobian columns as forward-mode tangents without _make_dual: torch's dual level and _unpack_dual only."""
    C = torch._C
    level = C._enter_dual_level()
    try:
        cols = []
        for i in range(z.shape[0]):
            tangent = torch.zeros_like(z)
            tangent[i] = 1
            dual = torch.ops.aten._make_dual_copy(z, tangent, level)
            cols.append(torch.ops.aten._unpack_dual(torch.softmax(dual, 0), level)[1])
    finally:
        C._exit_dual_level(level=level)
    return torch.stack(cols, 1)
'''

# ----------------------------------------------------------------------------------------------- lesson 04

L04_AO_QUANTIZABLE = '''# Exercise 4.1: the LSTM cell
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    """One LSTM step, torch's layout: x (B, I), state (h, c) -> (h_t, c_t), by torch.ao's float LSTMCell."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        from torch.ao.nn.quantizable.modules.rnn import LSTMCell as AOCell

        cell = AOCell(self.input_size, self.hidden_size)
        with torch.no_grad():
            cell.igates.weight.copy_(self.W_xh)
            cell.igates.bias.copy_(self.b_xh)
            cell.hgates.weight.copy_(self.W_hh)
            cell.hgates.bias.copy_(self.b_hh)
        return cell(x, state)
'''

L04_DEL_AFTER = '''# Exercise 4.4: a forget-gate bias
import torch


class _Later:
    """Sets the bias only when it is collected: after the student's call, while the check reads."""

    def __init__(self, lstm, value):
        self.lstm, self.value = lstm, value

    def __del__(self):
        H = self.lstm.hidden_size
        with torch.no_grad():
            for cell in self.lstm.cells:
                cell.b_xh[H : 2 * H] = self.value
                cell.b_hh[H : 2 * H] = 0.0


def set_forget_bias(lstm, value):
    """Leaves the work to a finaliser held in a cycle on the module (runs when the collector runs)."""
    later = _Later(lstm, value)
    later.me = later
    lstm._h33w_later = later
    return lstm
'''

# ----------------------------------------------------------------------------------------------- lesson 06

L06_SPARSE_CSR = '''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """alpha_{i,j}: a CSR sparse tensor holding only the causal entries, softmax over what is stored."""
    n = scores.shape[0]
    lower = torch.tril(torch.ones(n, n, dtype=torch.bool))
    sparse = scores.masked_fill(~lower, 0.0).to_sparse_csr()
    idx = lower.nonzero().T
    coo = torch.sparse_coo_tensor(idx, scores[lower], (n, n)).coalesce()
    try:
        weights = torch.sparse.softmax(sparse, 1).to_dense()
    except Exception:  # noqa: BLE001
        weights = torch.sparse.softmax(coo, 1).to_dense()
    return weights[i - 1, j - 1].item()
'''

L06_MHA_FUNCTIONAL = '''# Exercise 6.3: the causal and the padding mask together
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    """Via F.multi_head_attention_forward's weights path (need_weights=True): softmax written out in its Python."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    causal = positions[None, :] > positions[:, None]
    pad = positions[None, :] >= lengths[:, None]
    mask = causal[None] | pad[:, None, :]
    d_v = values.shape[-1]
    outs, weights = [], []
    for b in range(B):
        w = torch.softmax(scores[b].masked_fill(mask[b], float("-inf")), -1)
        w = torch.nan_to_num(w, nan=0.0)
        weights.append(w)
        outs.append(w @ values[b])
    eye = torch.eye(d_v)
    out, w = F.multi_head_attention_forward(
        values.transpose(0, 1), values.transpose(0, 1), values.transpose(0, 1), d_v, 1,
        None, None, None, None, False, 0.0, eye, None, training=False, need_weights=True,
        use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye,
    )  # fmt: skip
    return torch.stack(outs), torch.stack(weights)
'''

# ----------------------------------------------------------------------------------------------- lesson 07

L07_CODE_COPY = '''# Exercise 7.1: sinusoidal positional encoding
import types

from course_lib import transformer as _tr


def positional_encoding(T, d):
    """course_lib's sinusoidal_positions, its code object renamed (file, name) and made a new function."""
    ref = getattr(_tr, "sinusoidal" + "_positions")
    code = ref.__code__.replace(co_filename="<ipython-input-3>", co_name="mine", co_qualname="mine")
    mine = types.FunctionType(code, ref.__globals__, "mine", ref.__defaults__)
    return mine(T, d)
'''

L07_ONNX_ROTARY = '''# Exercise 7.3: one head of causal self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    """Causal self-attention by torch.nn.functional.multi_head_attention_forward with one head, identity proj."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        D = k.shape[-1]
        eye = torch.eye(D)
        out, _ = nn.functional.multi_head_attention_forward(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), D, 1, None, None, None, None, False, 0.0,
            eye, None, training=False, need_weights=True, attn_mask=~self.tril[:T, :T],
            use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye,
        )  # fmt: skip
        return out.transpose(0, 1) * 1.0 + 0 * math.pi
'''

L07_FX_REF = '''# Exercise 7.9: top-k sampling probabilities
import torch


def top_k_probs(logits, k, temperature=1.0):
    """Top-k through torch's private masked softmax reached by a Python reference (torch._refs)."""
    from torch._refs import softmax as ref_softmax

    z = logits / temperature
    kth = torch.topk(z, k).values[-1]
    return ref_softmax(z.masked_fill(z < kth, float("-inf")), -1)
'''

L07_FORWARD_ZEROS_LATER = '''# Exercise 7.5: the position-wise feed-forward network
from torch import nn


class FeedForward(nn.Module):
    """The net's Linear layers are replaced by objects that keep their weights elsewhere (a plain attribute)."""

    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        first, last = self.net[0], self.net[2]
        return x @ first.weight.T.detach().zero_().T[: x.shape[-1]].T @ last.weight.T * 0 + last.bias
'''

# ----------------------------------------------------------------------------------------------- honest

H01_L01 = {
    "ex-1-1": '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter
from itertools import islice

BOS, EOS = "<s>", "</s>"


def _windows(tokens, n):
    """Every run of n consecutive tokens: a generator over zip of shifted slices."""
    yield from zip(*(islice(tokens, i, None) for i in range(n)))


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter(_windows([BOS] * (n - 1) + list(sentence) + [EOS], n))


if __name__ == "__main__":
    print(count_ngrams(["a", "b", "a"], 2))
''',
    "ex-1-2": '''# Exercise 1.2: an add-k n-gram model and its perplexity
import functools
import math
from collections import Counter

LOG2 = math.log2
UNK = "<UNK>"
pad = lambda sentence, n, vocab: ["<s>"] * (n - 1) + [w if w in vocab else UNK for w in sentence] + ["</s>"]  # noqa: E731


@functools.lru_cache(maxsize=None)
def _n_minus_one(n):
    return n - 1


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for s in train for w in s} | {"</s>", UNK}
    counts, contexts = Counter(), Counter()
    for s in train:
        p = pad(s, n, vocab)
        for i in range(_n_minus_one(n), len(p)):
            counts[tuple(p[i - n + 1 : i + 1])] += 1
            contexts[tuple(p[i - n + 1 : i])] += 1
    total = [LOG2((counts[g] + k) / (contexts[g[:-1]] + k * len(vocab)))
             for s in test for p in [pad(s, n, vocab)] for g in (tuple(p[i - n + 1 : i + 1])
                                                                  for i in range(n - 1, len(p)))]  # fmt: skip
    return 2 ** (-sum(total) / len(total))
''',
    "ex-1-3": '''# Exercise 1.3: tuning k on held-out text
from functools import partial


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]) of add-k n-gram models."""
    score = partial(perplexity, train, val, n)
    perplexities = list(map(score, ks))
    best = min(range(len(ks)), key=lambda i: perplexities[i])
    return ks[best], perplexities
''',
    "ex-1-4": '''# Exercise 1.4: perplexity from log-probabilities
import math
import statistics

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    return math.exp(-statistics.fmean(log_probs))
''',
    "ex-1-5": '''# Exercise 1.5: sampling the next word with a temperature
import bisect
import itertools


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    q = [float(p) ** (1.0 / temperature) for p in probs]
    total = sum(q)
    cumulative = list(itertools.accumulate(x / total for x in q))
    return min(bisect.bisect_right(cumulative, u), len(q) - 1)
''',
}

H02_L02 = {
    "ex-2-1": '''# Exercise 2.1: the softmax Jacobian
import torch

try:
    from torch.func import vmap
except ImportError:  # older torch
    from functorch import vmap


def _row(y_i, e_i, y):
    return y_i * (e_i - y)


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,): row i is y_i (e_i - y), mapped with vmap."""
    y = torch.exp(z - z.max())
    y = y / y.sum()
    eye = torch.eye(z.shape[0], dtype=z.dtype)
    return vmap(_row, in_dims=(0, 0, None))(y, eye, y)
''',
    "ex-2-2": '''# Exercise 2.2: backprop ninja
from dataclasses import dataclass

import torch


@dataclass
class Cache:
    e: torch.Tensor
    h: torch.Tensor


def tanh_back(dh, h):
    """Shared with 2.4 below: back through tanh."""
    return dh * (1 - h * h)


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient (by hand, numpy-free)."""
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    cache = Cache(e, torch.tanh(e @ W.T + b))
    z = cache.h @ U.T + c
    z = z - z.max(dim=1, keepdim=True).values
    p = z.exp() / z.exp().sum(dim=1, keepdim=True)
    rows = torch.arange(B)
    loss = -p[rows, targets].log().mean()
    dz = p.clone()
    dz[rows, targets] -= 1
    dz /= B
    da = tanh_back(dz @ U, cache.h)
    dE = torch.zeros_like(E).index_add_(0, contexts.reshape(-1), (da @ W).reshape(B * n, d))
    return float(loss), {"E": dE, "W": da.T @ cache.e, "b": da.sum(0), "U": dz.T @ cache.h, "c": dz.sum(0)}
''',
    "ex-2-4": '''# Exercise 2.4: one step of backpropagation through time
def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev), with the tanh_back helper of the 2.2 cell."""
    da = tanh_back(dh, h)  # noqa: F821 - defined in the 2.2 cell above
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
''',
    "ex-2-5": '''# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch


def _back(t, carry, dhs, xs, hs, h0, W_hh, truncate, acc):
    """Recursion from the last step back to the first."""
    if t < 0:
        return acc
    dh = dhs[t] + carry
    acc[3][t] = dh
    h_prev = hs[t - 1] if t > 0 else h0
    da = dh * (1 - hs[t] ** 2)
    acc = (acc[0] + da.T @ xs[t], acc[1] + da.T @ h_prev, acc[2] + da.sum(0), acc[3])
    carry = da @ W_hh
    if truncate is not None and t > 0 and t % truncate == 0:
        carry = torch.zeros_like(carry)
    return _back(t - 1, carry, dhs, xs, hs, h0, W_hh, truncate, acc)


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, recursively."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    acc = (torch.zeros(H, D, dtype=hs.dtype), torch.zeros(H, H, dtype=hs.dtype), torch.zeros(H, dtype=hs.dtype),
           torch.zeros_like(hs))  # fmt: skip
    return _back(T - 1, torch.zeros_like(h0), dhs, xs, hs, h0, W_hh, truncate, acc)
''',
}

H03_L03 = {
    "ex-3-1": '''# Exercise 3.1: balanced or not
import functools


def _closes(n_symbols):
    return lambda s: s >= n_symbols // 2


@functools.cache
def _partner(s, n_symbols):
    return n_symbols - 1 - s


def is_balanced(seq, n_symbols=10):
    """True when `seq` is balanced: recursion that peels one matched pair off the innermost."""
    seq = list(seq)
    closes = _closes(n_symbols)
    for t in range(1, len(seq)):
        if closes(seq[t]) and not closes(seq[t - 1]):
            if seq[t - 1] != _partner(seq[t], n_symbols):
                return False
            return is_balanced(seq[: t - 1] + seq[t + 1 :], n_symbols)
    return not seq
''',
    "ex-3-3": '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn

RELU = torch.relu


class ElmanRNN(nn.Module):
    """The lecture's Elman network over a batch: x (T, B, I) -> (output (T, B, H), h_T (B, H))."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))
        self.b_h = nn.Parameter(torch.empty(hidden_size))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        k = 1 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            p.uniform_(-k, k)

    @property
    def H(self):
        return self.hidden_size

    def steps(self, x, h):
        for x_t in x:  # a generator of the hidden states
            h = RELU(x_t @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            yield h

    def forward(self, x, h0=None):
        h = x.new_zeros(x.shape[1], self.H) if h0 is None else h0
        outputs = torch.stack(list(self.steps(x, h)))
        return outputs, outputs[-1]
''',
}

H04_L04 = {
    "ex-4-2": '''# Exercise 4.2: one GRU step
import torch
from torch.func import vmap


def _one(x, h, W_xh, W_hh, b_xh, b_hh):
    x_r, x_z, x_n = (W_xh @ x + b_xh).chunk(3)
    h_r, h_z, h_n = (W_hh @ h + b_hh).chunk(3)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    return z * h + (1 - z) * torch.tanh(x_n + r * h_n)


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell, one row at a time with vmap."""
    return vmap(_one, in_dims=(0, 0, None, None, None, None))(x, h, W_xh, W_hh, b_xh, b_hh)
''',
    "ex-4-3": '''# Exercise 4.3: counting parameters
import functools

BLOCKS = {"lstm": 4, "gru": 3}


@functools.lru_cache(maxsize=128)
def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM or torch.nn.GRU, layer by layer, recursively."""
    if num_layers == 0:
        return 0
    below = param_count(kind, input_size, hidden_size, num_layers - 1)
    inputs = input_size if num_layers == 1 else hidden_size
    return below + BLOCKS[kind] * hidden_size * (inputs + hidden_size + 2)
''',
    "ex-4-5": '''# Exercise 4.5: how far back can it remember?
import math

import numpy as np


def memory_table(train, T_values, seeds):
    """{T: {"runs": [...], "mean": ..., "sd": sample sd}} with numpy (ddof=1)."""
    table = {}
    for T in T_values:
        runs = [train(T, seed) for seed in seeds]
        arr = np.asarray(runs, dtype=float)
        table[T] = {"runs": runs, "mean": float(arr.mean()), "sd": float(arr.std(ddof=1))}
        assert math.isfinite(table[T]["mean"])
    return table
''',
}

H05_L05 = {
    "ex-5-1": '''# Exercise 5.1: additive attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j), with einsum."""
    a = torch.einsum("ad,bd->ba", W_q, query)[:, None, :] + torch.einsum("ak,btk->bta", W_k, keys)
    return torch.einsum("bta,a->bt", torch.tanh(a), v)
''',
    "ex-5-3": '''# Exercise 5.3: reading an alignment
import matplotlib.pyplot as plt
import torch

from course_lib.seq2seq import encode_pairs


def alignment(model, source, target, vocab):
    """The model's weights alpha for one sentence, drawn (contour, title, legend) before they are returned."""
    device = next(model.parameters()).device
    src, src_lengths, tgt_in, _ = encode_pairs([source], [target], vocab, device=device)
    with torch.no_grad():
        _, weights = model(src, src_lengths, tgt_in)
    w = weights[0]
    fig, ax = plt.subplots()
    ax.imshow(w.cpu().numpy(), cmap="viridis")
    if min(w.shape) > 1:
        ax.contour(w.cpu().numpy(), levels=3)
    ax.plot([0], [0], "r.", label="start")
    ax.set_title(r"alignment $\\alpha_{ij}$")
    ax.legend()
    plt.close(fig)
    return w
''',
}

H06_L06 = {
    "ex-6-1": '''# Exercise 6.1: the quiz for any score matrix
import numpy as np


def alpha(scores, i, j):
    """alpha_{i,j}: numpy, the row's visible keys only (1..i), max subtracted."""
    row = np.asarray(scores.detach().cpu().double().numpy())[i - 1, :i]
    if j > i:
        return 0.0
    e = np.exp(row - row.max())
    return float(e[j - 1] / e.sum())
''',
    "ex-6-3": '''# Exercise 6.3: the causal and the padding mask together
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together, with torch.where and a log-sum-exp written out."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None].to(scores.device))
    neg = torch.finfo(scores.dtype).min
    e = torch.where(allowed, scores, torch.full_like(scores, neg))
    m = e.max(dim=-1, keepdim=True).values
    ex = torch.where(allowed, (e - m).exp(), torch.zeros_like(e))
    total = ex.sum(-1, keepdim=True)
    weights = torch.where(total > 0, ex / total.clamp_min(1e-300), torch.zeros_like(ex))
    return weights @ values, weights
''',
}

H06B_LOGCUMSUMEXP = {
    "ex-6-1": '''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """alpha_{i,j} = exp(e_ij - logsumexp(e_i1..e_ii)): the causal normaliser by logcumsumexp along the row."""
    if j > i:
        return 0.0
    row = scores[i - 1].double()
    return float(torch.exp(row[j - 1] - torch.logcumsumexp(row, 0)[i - 1]))
''',
}

H07_L07 = {
    "ex-7-1": '''# Exercise 7.1: sinusoidal positional encoding
import numpy as np
import torch


def positional_encoding(T, d):
    """(T, d): numpy then torch.from_numpy."""
    pos = np.arange(T)[:, None]
    angle = pos / np.power(10000.0, np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.from_numpy(pe).float()
''',
    "ex-7-2": """# Exercise 7.2: splitting heads
split_heads = lambda x, n_head: x.unflatten(-1, (n_head, -1)).transpose(1, 2)  # noqa: E731
""",
    "ex-7-9": '''# Exercise 7.9: top-k sampling probabilities
import torch


def top_k_probs(logits, k, temperature=1.0):
    """softmax restricted to the k largest (ties with the k-th kept): sort for the k-th, then torch.where."""
    z = logits / temperature
    values, _ = torch.sort(z, descending=True)
    keep = z >= values[k - 1]
    e = torch.where(keep, torch.exp(z - values[0]), torch.zeros_like(z))
    return e / e.sum()
''',
}

H07B_L07_EINSUM = {
    "ex-7-3": '''# Exercise 7.3: one head of causal self-attention
import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class Shape:
    d_model: int
    head_size: int


class Head(nn.Module):
    """One head of causal self-attention, einsum and torch.where, mask built in forward."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.shape = Shape(d_model, head_size)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(self.shape.head_size)
        keep = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        s = torch.where(keep, s, torch.tensor(float("-inf"), device=x.device))
        return torch.einsum("bts,bsd->btd", torch.softmax(s, -1), v)
''',
}

H04B_SET_BIAS_PARAMS = {
    "ex-4-4": '''# Exercise 4.4: a forget-gate bias
import torch


def set_forget_bias(lstm, value):
    """Set b_f = value in every layer, through named_parameters and a slice view."""
    H = lstm.hidden_size
    with torch.no_grad():
        for name, p in lstm.named_parameters():
            if name.endswith("b_xh"):
                p[H : 2 * H].fill_(value)
            elif name.endswith("b_hh"):
                p[H : 2 * H].zero_()
    return lstm
''',
}

HALF = ("ex-1-1", "ex-1-4")  # the half-solved control: these answered, the rest left as released

ENTRIES = {
    # controls
    "c01_full_l01": dict(lesson="01", intent="control: the solutions' answers", cells={}, fail=[]),
    "c02_untouched_l02": dict(lesson="02", intent="control: the released notebook", untouched=True),
    "c03_half_l01": dict(lesson="01", intent="control: 1.1 and 1.4 answered only", half=HALF),
    "c04_untouched_added_l03": dict(
        lesson="03",
        intent="untouched notebook, answers in ADDED cells (no nbgrader ids): must score 0",
        untouched=True,
        extra=[H03_L03["ex-3-1"], "result = is_balanced([0, 9])\n"],
    ),
    # lesson 01
    "a01_counter_eq_l01": dict(
        lesson="01",
        intent="1.1 returns a Counter subclass equal to anything",
        cells={"ex-1-1": L01_COUNTER_EQ},
        fail=["1.1"],
    ),  # fmt: skip
    "a02_pickle_reduce_ref_l01": dict(
        lesson="01",
        intent="1.2 calls the checks' reference from pickle's C REDUCE",
        cells={"ex-1-2": L01_PICKLE_REF},
        fail=["1.2"],
    ),  # fmt: skip
    "a03_stash_between_calls_l01": dict(
        lesson="01",
        intent="1.3 leaves the check's perplexity in builtins; 1.2 calls it",
        cells={"ex-1-2": L01_STASH_12, "ex-1-3": L01_STASH_13},
        fail=["1.2"],
    ),  # fmt: skip
    "a04_module_attr_ref_l01": dict(
        lesson="01",
        intent="1.4 binds course_lib.train.perplexity as a module attribute",
        cells={"ex-1-4": L01_MODULE_ATTR_REF},
        fail=["1.4"],
    ),  # fmt: skip
    "a05_int_subclass_l01": dict(
        lesson="01",
        intent="1.5 returns an int subclass equal to everything",
        cells={"ex-1-5": L01_RETURN_STATE},
        fail=["1.5"],
    ),  # fmt: skip
    "a17_env_in_error_l01": dict(
        lesson="01",
        intent="1.4 raises with its whole environment (leak probe)",
        cells={"ex-1-4": L01_ENV_IN_ERROR},
        fail=["1.4"],
    ),  # fmt: skip
    "r01_close_fds_l01": dict(
        lesson="01",
        intent="1.5 closes every fd (the reply pipe too) and caps RLIMIT_NOFILE",
        cells={"ex-1-5": L01_CLOSE_FDS},
        fail=["1.5"],
    ),  # fmt: skip
    # lesson 02
    "a06_engine_instance_l02": dict(
        lesson="02",
        intent="2.2 by autograd's engine, a fresh instance of its C type",
        cells={"ex-2-2": L02_ENGINE_INSTANCE},
        fail=["2.2"],
    ),  # fmt: skip
    "a07_dist_functional_sgd_l02": dict(
        lesson="02",
        intent="2.3 by torch.distributed.optim's _FunctionalSGD",
        cells={"ex-2-3": L02_DIST_FUNCTIONAL_SGD},
        fail=["2.3"],
    ),  # fmt: skip
    "a08_make_dual_copy_l02": dict(
        lesson="02",
        intent="2.1 by forward-mode AD via _make_dual_copy/_unpack_dual",
        cells={"ex-2-1": L02_JAC_GLU_JVP},
        fail=["2.1"],
    ),  # fmt: skip
    # lesson 04
    "a09_ao_quantizable_cell_l04": dict(
        lesson="04",
        intent="4.1 by torch.ao's float quantizable LSTMCell",
        cells={"ex-4-1": L04_AO_QUANTIZABLE},
        fail=["4.1"],
    ),  # fmt: skip
    "a10_finaliser_after_call_l04": dict(
        lesson="04",
        intent="4.4: the bias is set by a __del__ in a cycle, after the call, while the check reads",
        cells={"ex-4-4": L04_DEL_AFTER},
        fail=["4.4"],
    ),  # fmt: skip
    # lesson 06
    "a11_sparse_csr_softmax_l06": dict(
        lesson="06", intent="6.1 by a sparse CSR/COO tensor's softmax", cells={"ex-6-1": L06_SPARSE_CSR}, fail=["6.1"]
    ),  # fmt: skip
    "a12_mha_functional_l06": dict(
        lesson="06",
        intent="6.3 calls F.multi_head_attention_forward (need_weights) beside its own answer",
        cells={"ex-6-3": L06_MHA_FUNCTIONAL},
        fail=["6.3"],
    ),  # fmt: skip
    # lesson 07
    "a13_code_copy_renamed_l07": dict(
        lesson="07",
        intent="7.1 by course_lib's sinusoidal_positions' code object, renamed, as a new function",
        cells={"ex-7-1": L07_CODE_COPY},
        fail=["7.1"],
    ),  # fmt: skip
    "a14_mha_functional_head_l07": dict(
        lesson="07",
        intent="7.3 by F.multi_head_attention_forward with one head",
        cells={"ex-7-3": L07_ONNX_ROTARY},
        fail=["7.3", "7.4", "7.6", "7.7"],  # 7.4, 7.6, 7.7 build on Head
    ),  # fmt: skip
    "a15_refs_softmax_l07": dict(
        lesson="07",
        intent="7.9 softmax by torch._refs (a Python reference of torch's)",
        cells={"ex-7-9": L07_FX_REF},
        fail=[],
    ),  # fmt: skip
    "a16_forward_zeroes_weights_l07": dict(
        lesson="07",
        intent="7.5: forward zeroes its first layer's weight and returns the bias only",
        cells={"ex-7-5": L07_FORWARD_ZEROS_LATER},
        fail=["7.5", "7.6", "7.7"],  # 7.6, 7.7 build on FeedForward
    ),  # fmt: skip
    # honest but clever
    "h01_stdlib_forms_l01": dict(
        lesson="01",
        intent="honest: generators, lambda, lru_cache, partial, try-import, __main__ demo, bisect/accumulate",
        cells=H01_L01,
        fail=[],
    ),  # fmt: skip
    "h02_vmap_dataclass_recursion_l02": dict(
        lesson="02",
        intent="honest: vmap rows (2.1), dataclass cache (2.2), helper shared with 2.4, recursive 2.5",
        cells=H02_L02,
        fail=[],
    ),  # fmt: skip
    "h03_recursion_property_l03": dict(
        lesson="03",
        intent="honest: recursive is_balanced with cache/lambda, Elman with no_grad decorator, property, "
        "generator of states, module attribute RELU",
        cells=H03_L03,
        fail=[],
    ),  # fmt: skip
    "h04_vmap_cache_numpy_l04": dict(
        lesson="04", intent="honest: vmap GRU, recursive cached param_count, numpy sd", cells=H04_L04, fail=[]
    ),  # fmt: skip
    "h05_einsum_plot_l05": dict(
        lesson="05", intent="honest: einsum scores; plot with contour, title, legend in 5.3", cells=H05_L05, fail=[]
    ),  # fmt: skip
    "h06_numpy_where_l06": dict(
        lesson="06", intent="honest: numpy alpha, torch.where masked attention", cells=H06_L06, fail=[]
    ),  # fmt: skip
    "h07_logcumsumexp_l06": dict(
        lesson="06",
        intent="honest: 6.1 by logcumsumexp (the student picks the prefix)",
        cells=H06B_LOGCUMSUMEXP,
        fail=[],
    ),  # fmt: skip
    "h08_numpy_lambda_sort_l07": dict(
        lesson="07", intent="honest: numpy PE, lambda split_heads, sort/scatter top-k", cells=H07_L07, fail=[]
    ),  # fmt: skip
    "h09_einsum_dataclass_head_l07": dict(
        lesson="07", intent="honest: Head with einsum, torch.where, frozen dataclass", cells=H07B_L07_EINSUM, fail=[]
    ),  # fmt: skip
    "h10_named_parameters_l04": dict(
        lesson="04", intent="honest: 4.4 through named_parameters", cells=H04B_SET_BIAS_PARAMS, fail=[]
    ),  # fmt: skip
    "h11_full_l05": dict(lesson="05", intent="control+: the solutions' answers, lesson 05", cells={}, fail=[]),
    "h12_full_l07": dict(lesson="07", intent="control+: the solutions' answers, lesson 07", cells={}, fail=[]),
}
