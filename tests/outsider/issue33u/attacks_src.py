"""Hostile class 33u: the answer cells of every submission (attacks, honest-but-clever answers, controls).

Each entry of SUBMISSIONS says which lesson it is for, what it tries, the answer cells it replaces (by nbgrader
grade id; every other answer cell gets the released solution, or stays as released for the untouched and
half-solved controls), cells it adds, and the exercises it DESERVES to pass. ``grey`` lists exercises where the
answer uses a ready-made routine the exercise does not name as forbidden (a judgement call: reported apart).
"""

from __future__ import annotations

ALL = {
    "01": ["1.1", "1.2", "1.3", "1.4", "1.5"],
    "02": ["2.1", "2.2", "2.3", "2.4", "2.5"],
    "03": ["3.1", "3.2", "3.3", "3.4", "3.5"],
    "04": ["4.1", "4.2", "4.3", "4.4", "4.5"],
    "05": ["5.1", "5.2", "5.3"],
    "06": ["6.1", "6.2", "6.3", "6.4"],
    "07": ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"],
}


def but(lesson, *dropped):
    return [e for e in ALL[lesson] if e not in dropped]


# ----------------------------------------------------------------------------------------------- lesson 01

L01_RANDOM_CHOICES = '''# Exercise 1.5: sampling the next word with a temperature
import random

import numpy as np


class _FixedU(random.Random):
    """A generator whose every draw is the u we were given."""

    def __init__(self, u):
        super().__init__(0)
        self.u = u

    def random(self):
        return self.u


def sample_next(probs, temperature, u):
    """Index of the next word: the standard library's weighted choice walks the cumulative sums for us."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = (q / q.sum()).tolist()
    return _FixedU(u).choices(range(len(q)), weights=q)[0]
'''

L01_ENV_LEAK = '''# Exercise 1.4: perplexity from log-probabilities
import os


def perplexity(log_probs):
    """Tries to carry the grader's environment into the feedback through an exception message."""
    seen = dict(os.environ)
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"):
        try:
            with open(path, "rb") as f:
                seen[path] = f.read(2000).decode("latin-1")
        except OSError as exc:
            seen[path] = repr(exc)
    try:
        seen["cwd"] = os.listdir(".")
        seen["parent"] = os.listdir("..")
    except OSError as exc:
        seen["cwd"] = repr(exc)
    raise ValueError("LEAKPROBE " + repr(seen)[:4000])
'''

L01_BIGINT = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np


def sample_next(probs, temperature, u):
    """Returns an int too long for int.__repr__ (over 4300 digits): does the grader's encoder or reader crash?"""
    return 10**5000 + int(np.argmax(probs))
'''

L01_SQLITE_COUNT = '''# Exercise 1.1: the n-grams of the standard count
import sqlite3
from collections import Counter


def count_ngrams(sentence, n):
    """The n-grams counted by SQL's GROUP BY in an in-memory database (honest: my padding, my n-grams)."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = [tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded))]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE g (key TEXT)")
    db.executemany("INSERT INTO g VALUES (?)", [("\\x1f".join(g),) for g in grams])
    rows = db.execute("SELECT key, COUNT(*) FROM g GROUP BY key").fetchall()
    db.close()
    return Counter({tuple(key.split("\\x1f")): count for key, count in rows})
'''

L01_DATACLASS_MODEL = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class AddKModel:
    """An honest add-k model kept in a dataclass (a decorator at top level)."""

    n: int
    k: float
    vocab: set = field(default_factory=set)
    counts: Counter = field(default_factory=Counter)
    contexts: Counter = field(default_factory=Counter)

    def pad(self, sentence):
        return ["<s>"] * (self.n - 1) + [w if w in self.vocab else "<UNK>" for w in sentence] + ["</s>"]

    def fit(self, train):
        self.vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}
        for s in train:
            p = self.pad(s)
            for i in range(self.n - 1, len(p)):
                self.counts[tuple(p[i - self.n + 1 : i + 1])] += 1
                self.contexts[tuple(p[i - self.n + 1 : i])] += 1
        return self

    def prob(self, gram):
        return (self.counts[gram] + self.k) / (self.contexts[gram[:-1]] + self.k * len(self.vocab))


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    model = AddKModel(n, k).fit(train)
    logs = [
        math.log2(model.prob(tuple(p[i - n + 1 : i + 1])))
        for p in map(model.pad, test)
        for i in range(n - 1, len(p))
    ]
    return 2 ** (-sum(logs) / len(logs))
'''

L01_REDUCE_TUNE = '''# Exercise 1.3: tuning k on held-out text
from functools import reduce


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]): functools.reduce and a lambda pick the best."""
    ppl = list(map(lambda k: perplexity(train, val, n, k), ks))
    best = reduce(lambda a, b: a if a[1] <= b[1] else b, zip(ks, ppl))
    return best[0], ppl
'''

L01_GEOMEAN = '''# Exercise 1.4: perplexity from log-probabilities
import math
import statistics


def perplexity(log_probs):
    """e^J is the reciprocal of the geometric mean of the probabilities."""
    return 1.0 / statistics.geometric_mean(math.exp(x) for x in log_probs)
'''

L01_BISECT = '''# Exercise 1.5: sampling the next word with a temperature
from bisect import bisect_right
from itertools import accumulate


def sample_next(probs, temperature, u):
    """Walk the cumulative sums with bisect (strictly greater: bisect_right)."""
    q = [float(p) ** (1.0 / temperature) for p in probs]
    total = sum(q)
    cumulative = list(accumulate(x / total for x in q))
    return min(bisect_right(cumulative, u), len(q) - 1)
'''

L01_RECURSIVE_COUNT = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter


def _windows(tokens, n):
    """A recursive generator of the n-token windows."""
    if len(tokens) < n:
        return
    yield tuple(tokens[:n])
    yield from _windows(tokens[1:], n)


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter(_windows(["<s>"] * (n - 1) + list(sentence) + ["</s>"], n))
'''

L01_ALIAS_CONST = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter

log2 = math.log2  # an alias kept at top level
BOS, EOS, UNK = "<s>", "</s>", "<UNK>"


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for s in train for w in s} | {EOS, UNK}
    counts, contexts = Counter(), Counter()

    def pad(s):
        return [BOS] * (n - 1) + [w if w in vocab else UNK for w in s] + [EOS]

    for s in train:
        p = pad(s)
        for i in range(n - 1, len(p)):
            counts[tuple(p[i - n + 1 : i + 1])] += 1
            contexts[tuple(p[i - n + 1 : i])] += 1
    total, N = 0.0, 0
    for s in test:
        p = pad(s)
        for i in range(n - 1, len(p)):
            g = tuple(p[i - n + 1 : i + 1])
            total += log2((counts[g] + k) / (contexts[g[:-1]] + k * len(vocab)))
            N += 1
    return 2 ** (-total / N)
'''

L01_LRU_TUNE = '''# Exercise 1.3: tuning k on held-out text
import functools


@functools.lru_cache(maxsize=None)
def _argmin(values):
    """Position of the smallest value (cached: a decorator at top level)."""
    return min(range(len(values)), key=values.__getitem__)


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks])."""
    ppl = [perplexity(train, val, n, k) for k in ks]
    return ks[_argmin(tuple(ppl))], ppl
'''

L01_TORCH_DOUBLE = '''# Exercise 1.4: perplexity from log-probabilities
from typing import Sequence

import torch


def perplexity(log_probs: Sequence[float]) -> float:
    """e^J in double precision with torch."""
    lp = torch.as_tensor(list(map(float, log_probs)), dtype=torch.float64)
    return lp.mean().neg().exp().item()
'''

L01_NUMPY_INF = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np


def sample_next(probs, temperature, u):
    """A closure over the cumulative sums, with float('inf') as the last edge."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    edges = np.append(np.cumsum(q / q.sum())[:-1], float("inf"))

    def first_above(x):
        return int(np.argmax(edges > x))

    return first_above(u)
'''

L01_OWN_MODULE_WRITE = '''%%writefile ngram_helpers.py
"""My own helper module, written from the notebook."""


def pad(sentence, n):
    return ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
'''

L01_OWN_MODULE_USE = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from ngram_helpers import pad


def count_ngrams(sentence, n):
    """Counter of the n-grams, padded by my own helper module."""
    padded = pad(sentence, n)
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
'''

L01_TRY_IMPORT = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter

try:
    from tqdm.auto import tqdm
except ImportError:  # no progress bars where tqdm is missing
    def tqdm(x, **kwargs):
        return x


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train`, with a progress bar."""
    vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}
    counts, contexts = Counter(), Counter()

    def pad(s):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]

    for s in tqdm(train, desc="counting", leave=False):
        p = pad(s)
        for i in range(n - 1, len(p)):
            counts[tuple(p[i - n + 1 : i + 1])] += 1
            contexts[tuple(p[i - n + 1 : i])] += 1
    total, N = 0.0, 0
    for s in test:
        p = pad(s)
        for i in range(n - 1, len(p)):
            g = tuple(p[i - n + 1 : i + 1])
            total += math.log2((counts[g] + k) / (contexts[g[:-1]] + k * len(vocab)))
            N += 1
    return 2 ** (-total / N)
'''

L01_MAIN_GUARD = '''# Exercise 1.3: tuning k on held-out text
import numpy as np


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks])."""
    ppl = [perplexity(train, val, n, k) for k in ks]
    return ks[int(np.argmin(ppl))], ppl


if __name__ == "__main__":  # a quick demo when run as a script
    pass
'''

L01_FUTURE = '''# Exercise 1.4: perplexity from log-probabilities
from __future__ import annotations

import numpy as np


def perplexity(log_probs: list[float] | np.ndarray) -> float:
    """e^J with numpy (a __future__ import in the middle of the notebook)."""
    return float(np.exp(-np.mean(np.asarray(log_probs, dtype=float))))
'''

L01_CALLABLE_OBJECT = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np


class _Sampler:
    """A callable object holding the rule."""

    def __call__(self, probs, temperature, u):
        q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
        return min(int(np.searchsorted(np.cumsum(q / q.sum()), u, side="right")), len(q) - 1)


def sample_next(probs, temperature, u):
    """Index of the next word."""
    return _Sampler()(probs, temperature, u)
'''

# ----------------------------------------------------------------------------------------------- lesson 02

L02_GRADFN_WALK = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """Builds a graph with recording switched back on, then calls each node's backward by hand (no engine)."""
    rows = []
    with torch.enable_grad():
        for k in range(z.shape[0]):
            x = z.detach().clone().requires_grad_(True)
            e = torch.exp(x - x.max().detach())
            y = e / e.sum()
            node = y[k].grad_fn
            grads = {}
            stack = [(node, torch.ones((), dtype=z.dtype))]
            while stack:
                fn, g = stack.pop()
                if fn is None:
                    continue
                if type(fn).__name__ == "AccumulateGrad":
                    grads["x"] = grads.get("x", 0) + g
                    continue
                outs = fn(g)
                outs = outs if isinstance(outs, tuple) else (outs,)
                for (nxt, _), og in zip(fn.next_functions, outs):
                    if og is not None:
                        stack.append((nxt, og))
            rows.append(grads["x"])
    return torch.stack(rows).detach()
'''

L02_EINSUM = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """diag(s) - s s^T with einsum, in double precision, then back to z's dtype."""
    s = torch.softmax(z.double(), dim=0)
    jac = torch.diag_embed(s) - torch.einsum("i,j->ij", s, s)
    return jac.to(z.dtype)
'''

L02_WHERE = '''# Exercise 2.4: one step of backpropagation through time
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev), written with einsum and an in-place multiply."""
    da = dh.clone()
    da.mul_(1 - h * h)
    return (
        torch.einsum("bh,bi->hi", da, x),
        torch.einsum("bh,bk->hk", da, h_prev),
        da.sum(0),
        da @ W_hh,
    )
'''

# ----------------------------------------------------------------------------------------------- lesson 03

L03_XML = '''# Exercise 3.1: is_balanced with a stack
from xml.etree import ElementTree


def is_balanced(seq, n_symbols=10):
    """Each opener becomes a start tag, its closer an end tag: expat's tag matching is the stack."""
    half = n_symbols // 2
    text = "".join(f"<t{s}>" if s < half else f"</t{n_symbols - 1 - s}>" for s in seq)
    try:
        ElementTree.fromstring("<r>" + text + "</r>")
    except ElementTree.ParseError:
        return False
    return True
'''

L03_EXPAT = '''# Exercise 3.1: is_balanced with a stack
from xml.parsers import expat


def is_balanced(seq, n_symbols=10):
    """The C parser object of pyexpat, fed one tag per symbol."""
    half = n_symbols // 2
    parser = expat.ParserCreate()
    try:
        parser.Parse("<r>", False)
        for s in seq:
            parser.Parse(f"<t{s}>" if s < half else f"</t{n_symbols - 1 - s}>", False)
        parser.Parse("</r>", True)
    except expat.ExpatError:
        return False
    return True
'''

L03_RECURSIVE = '''# Exercise 3.1: is_balanced with a stack
import sys


def is_balanced(seq, n_symbols=10):
    """Recursive descent: the call stack is the stack."""
    half = n_symbols // 2
    seq = list(seq)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * len(seq) + 100))

    def parse(i):
        # a run of balanced groups from position i; returns where it stops
        while i < len(seq) and seq[i] < half:
            j = parse(i + 1)
            if j >= len(seq) or seq[j] != n_symbols - 1 - seq[i]:
                return -1 if j == -1 else len(seq) + 1
            i = j + 1
        return i

    return parse(0) == len(seq)
'''

L03_REPLACE = '''# Exercise 3.1: is_balanced with a stack
def is_balanced(seq, n_symbols=10):
    """No explicit stack: delete adjacent matching pairs until nothing changes."""
    half = n_symbols // 2
    seq = list(seq)
    changed = True
    while changed:
        changed = False
        out = []
        for s in seq:
            if out and out[-1] < half and s == n_symbols - 1 - out[-1]:
                out.pop()
                changed = True
            else:
                out.append(s)
        seq = out
    return not seq
'''

L03_COMBINATIONS = '''# Exercise 3.2: the transposition negative generator
from enum import Enum
from itertools import combinations, accumulate


class Kind(Enum):
    OPEN = 1
    CLOSE = -1


def transpose_closers(seq, rng, n_symbols=10):
    """A hard negative with itertools.combinations, accumulate and an Enum."""
    half = n_symbols // 2

    def colour(s):
        return s if s < half else n_symbols - 1 - s

    def kind(s):
        return Kind.OPEN if s < half else Kind.CLOSE

    open_after = [
        list(accumulate((kind(s).value if colour(s) == c else 0) for s in seq)) for c in range(half)
    ]
    closers = [i for i, s in enumerate(seq) if kind(s) is Kind.CLOSE]
    pairs = [
        (p, q)
        for p, q in combinations(closers, 2)
        if seq[p] != seq[q] and all(open_after[colour(seq[q])][t] >= 1 for t in range(p, q))
    ]
    if not pairs:
        raise ValueError(f"no hard transposition exists in {seq}")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
'''

L03_ELMAN_WHERE = '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    """Elman network with einsum, torch.where for the ReLU, and an in-place add."""

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
        xs = torch.einsum("tbi,hi->tbh", x, self.W_xh)
        outputs = []
        for t in range(T):
            a = xs[t] + torch.einsum("bk,hk->bh", h, self.W_hh)
            a = a + self.b_h
            h = torch.where(a > 0, a, torch.zeros_like(a))
            outputs.append(h)
        return torch.stack(outputs), h
'''

L03_TRAIN_TQDM = '''# Exercise 3.4: the training loop
import torch.nn.functional as F
from tqdm.auto import tqdm


def train_epoch(model, batches, optimizer):
    """One pass over `batches` with a progress bar; returns the losses."""
    losses = []
    for tokens, lengths, labels in tqdm(batches, desc="epoch", leave=False):
        loss = F.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

L03_EPOCHS_PLOT = '''# Exercise 3.5: accuracy over epochs
import matplotlib.pyplot as plt

from course_lib import parentheses as P


def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    """Train `epochs` times; plot the curves as they grow."""
    curves = {name: [] for name in test_sets}
    for _ in range(epochs):
        train_epoch(model, batches, optimizer)
        for name, acc in P.accuracies(model, test_sets).items():
            curves[name].append(acc)
    fig, ax = plt.subplots()
    for name, values in curves.items():
        ax.plot(values, label=name)
    ax.legend()
    plt.close(fig)
    return curves
'''

L03_ELMAN_NOGRAD = '''# Exercise 3.3: the Elman network, batched
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    """Elman network whose initialisation is a method decorated with torch.no_grad()."""

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
        for p in (self.W_xh, self.W_hh, self.b_h):
            p.uniform_(-k, k)

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
'''

L03_TRAIN_WARN = '''# Exercise 3.4: the training loop
import warnings

import torch.nn.functional as F


def train_epoch(model, batches, optimizer):
    """One pass; warns on a non-finite loss."""
    losses = []
    for tokens, lengths, labels in batches:
        loss = F.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        value = float(loss.detach())
        if value != value:
            warnings.warn("the loss is NaN")
        losses.append(value)
    return losses
'''

L03_EPOCHS_DEFAULTDICT = '''# Exercise 3.5: accuracy over epochs
from collections import defaultdict

from course_lib import parentheses as P


def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    """Curves kept in a defaultdict, returned as a plain dict."""
    curves = defaultdict(list)
    for _ in range(epochs):
        train_epoch(model, batches, optimizer)
        for name, acc in P.accuracies(model, test_sets).items():
            curves[name].append(acc)
    return {name: curves[name] for name in test_sets}
'''

# ----------------------------------------------------------------------------------------------- lesson 04

L04_GRU_BY_LSTM = '''# Exercise 4.2: one GRU step
import torch

BIG = 1.0e4


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """Two calls of torch.lstm_cell, with weights routed so that its gates are the GRU's."""
    H, I = h.shape[1], x.shape[1]
    Wr_x, Wz_x, Wn_x = W_xh.chunk(3, 0)
    Wr_h, Wz_h, Wn_h = W_hh.chunk(3, 0)
    br_x, bz_x, bn_x = b_xh.chunk(3)
    br_h, bz_h, bn_h = b_hh.chunk(3)
    zHI, zHH, zH = W_xh.new_zeros(H, I), W_xh.new_zeros(H, H), W_xh.new_zeros(H)
    c_in = h @ Wn_h.T + bn_h
    _, rh = torch.lstm_cell(
        x, (h, c_in), torch.cat([zHI, Wr_x, zHI, zHI]), torch.cat([zHH, Wr_h, zHH, zHH]),
        torch.cat([zH - BIG, br_x, zH, zH]), torch.cat([zH, br_h, zH, zH]),
    )
    xin = torch.cat([x, rh], 1)
    eye = torch.eye(H, dtype=x.dtype)
    Wz_in = torch.cat([Wz_x, zHH], 1)
    _, out = torch.lstm_cell(
        xin, (h, h),
        torch.cat([-Wz_in, Wz_in, torch.cat([Wn_x, eye], 1), W_xh.new_zeros(H, I + H)]),
        torch.cat([-Wz_h, Wz_h, zHH, zHH]),
        torch.cat([-bz_x, bz_x, bn_x, zH]), torch.cat([-bz_h, bz_h, zH, zH]),
    )
    return out
'''

L04_IMPORT_GRU_CELL = """# Exercise 4.2: one GRU step
from torch import gru_cell as gru_step  # same arguments in the same order: x, h, W_ih, W_hh, b_ih, b_hh
"""

# ----------------------------------------------------------------------------------------------- lesson 05

L05_EINSUM = '''# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j) with einsum."""
    q = torch.einsum("ad,bd->ba", W_q, query)
    k = torch.einsum("ad,btd->bta", W_k, keys)
    return torch.einsum("bta,a->bt", torch.tanh(q[:, None, :] + k), v)
'''

# ----------------------------------------------------------------------------------------------- lesson 06

MHA_FORWARD_HELPER = '''
def _mha(scores, values, lengths):
    """softmax(scores masked) @ values computed by torch.nn.functional.multi_head_attention_forward."""
    B, T, _ = scores.shape
    d_v = values.shape[-1]
    E = T + d_v
    dt = scores.dtype
    q = torch.zeros(T, B, E, dtype=dt)
    q[:, :, :T] = scores.transpose(0, 1) * math.sqrt(E)
    k = torch.zeros(T, B, E, dtype=dt)
    k[:, :, :T] = torch.eye(T, dtype=dt)[:, None, :]
    v = torch.zeros(T, B, E, dtype=dt)
    v[:, :, T:] = values.transpose(0, 1)
    eye = torch.eye(E, dtype=dt)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    pad = torch.arange(T)[None, :] >= lengths[:, None]
    out, w = F.multi_head_attention_forward(
        q, k, v, E, 1, None, None, None, None, False, 0.0, eye, None,
        training=False, key_padding_mask=pad, need_weights=True, attn_mask=future,
        use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye,
        average_attn_weights=False,
    )
    w = torch.nan_to_num(w[:, 0], nan=0.0)
    out = torch.nan_to_num(out.transpose(0, 1)[:, :, T:], nan=0.0)
    return out.masked_fill((lengths == 0)[:, None, None], 0.0), w
'''

L06_MHA_63 = (
    """# Exercise 6.3: masked attention over a padded batch
import math

import torch
import torch.nn.functional as F
"""
    + MHA_FORWARD_HELPER
    + '''

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    return _mha(scores, values, lengths)
'''
)

L06_MHA_61 = (
    """# Exercise 6.1: the quiz for any score matrix
import math

import torch
import torch.nn.functional as F
"""
    + MHA_FORWARD_HELPER
    + '''

def alpha(scores, i, j):
    """alpha_{i,j} from torch's multi-head attention function, one sentence of full length."""
    n = scores.shape[0]
    s = scores[None].double()
    _, w = _mha(s, torch.zeros(1, n, 1, dtype=torch.float64), torch.tensor([n]))
    return w[0, i - 1, j - 1].item()
'''
)

L06_WHERE_61 = '''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """torch.where with float('-inf'), then the softmax written with einsum for the row sums."""
    n = scores.shape[0]
    rows = torch.arange(n)[:, None]
    cols = torch.arange(n)[None, :]
    e = torch.where(cols <= rows, scores.double(), torch.tensor(float("-inf"), dtype=torch.float64))
    ex = torch.exp(e - e.max(dim=-1, keepdim=True).values)
    w = ex / torch.einsum("ij->i", ex)[:, None]
    return float(w[i - 1, j - 1])
'''

L06_LCSE_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """In-place masking in double precision; each row's normaliser from logcumsumexp over the kept keys."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    e = scores.double().clone()
    e.masked_fill_(~allowed, float("-inf"))
    last = torch.minimum(pos[None, :].expand(B, T), (lengths[:, None] - 1).clamp(min=0))  # last key a query sees
    norm = torch.logcumsumexp(e, dim=-1).gather(-1, last[..., None])  # log sum_{kept j} exp(e_ij)
    weights = torch.exp(e - norm)
    weights = torch.nan_to_num(weights, nan=0.0)
    weights.masked_fill_(~allowed, 0.0)
    weights = weights.to(scores.dtype)
    return weights @ values, weights
'''

L06_CLOSURE_64 = '''# Exercise 6.4: what leaks
import torch


def leak_test(masked_attention, scores, values, lengths):
    """The three measurements, through a closure that moves some values and measures the real outputs."""
    output, _ = masked_attention(scores, values, lengths)

    def moved_by(where):
        changed = values.clone()
        changed[where] += 100.0
        return (masked_attention(scores, changed, lengths)[0] - output).abs()

    T = scores.shape[1]
    real = torch.arange(T)[None, :] < lengths[:, None]
    last = int(lengths[0]) - 1
    one = torch.zeros_like(real)
    one[0, last] = True
    moved = moved_by(one)[0]
    return {
        "padding": moved_by(~real)[real].max().item(),
        "last token": moved[last].max().item(),
        "last token, earlier queries": moved[:last].max().item(),
    }
'''

L06_NUMPY_61 = '''# Exercise 6.1: the quiz for any score matrix
import numpy as np


def alpha(scores, i, j):
    """Row i of the scores in numpy: the kept keys 1..i, their softmax, entry j (0 beyond i)."""
    row = np.asarray(scores.tolist(), dtype=float)[i - 1]
    if j > i:
        return 0.0
    kept = np.exp(row[:i] - row[:i].max())
    return float(kept[j - 1] / kept.sum())
'''

L06_NAMEDTUPLE_62 = '''# Exercise 6.2: padding and the future, by hand
import math
from typing import NamedTuple


class Row(NamedTuple):
    kept: tuple
    pick: int


def by_hand():
    """alpha_22, alpha_33, alpha_42, alpha_44 from the rows' kept scores (a NamedTuple per weight)."""
    rows = {
        "alpha_22": Row((1.0, 1.0), 1),
        "alpha_33": Row((0.0, 1.0, 1.0), 2),
        "alpha_42": Row((-1.0, -1.0, 2.0), 1),
    }
    out = {k: math.exp(r.kept[r.pick]) / sum(map(math.exp, r.kept)) for k, r in rows.items()}
    out["alpha_44"] = 0.0
    return out
'''

L06_VMAP_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch
from torch.func import vmap


def _one(scores, values, length):
    T = scores.shape[-1]
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None]) & (pos[None, :] < length)
    e = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    w = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return w @ values, w


def masked_attention(scores, values, lengths):
    """One sentence written, the batch by torch.func.vmap."""
    return vmap(_one)(scores, values, lengths)
'''

L06_NOGRAD_64 = '''# Exercise 6.4: what leaks
import torch


@torch.no_grad()
def leak_test(masked_attention, scores, values, lengths):
    """The solution's measurements, under a torch.no_grad() decorator."""
    output, _ = masked_attention(scores, values, lengths)
    positions = torch.arange(scores.shape[1])
    real = positions[None, :] < lengths[:, None]
    padded = values.clone()
    padded[~real] += 100.0
    moved_padding = (masked_attention(scores, padded, lengths)[0] - output).abs()[real].max().item()
    last = lengths[0].item() - 1
    changed = values.clone()
    changed[0, last] += 100.0
    moved = (masked_attention(scores, changed, lengths)[0] - output).abs()[0]
    return {
        "padding": moved_padding,
        "last token": moved[last].max().item(),
        "last token, earlier queries": moved[:last].max().item(),
    }
'''

L06_COMPILE_61 = '''# Exercise 6.1: the quiz for any score matrix
import torch


def _weights(scores):
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)


def alpha(scores, i, j):
    """The weights through torch.compile (the eager backend: no code generated)."""
    return torch.compile(_weights, backend="eager", dynamic=True)(scores)[i - 1, j - 1].item()
'''

L06_PARTIAL_62 = '''# Exercise 6.2: padding and the future, by hand
import math
from functools import partial


def _weight(kept, pick):
    return math.exp(kept[pick]) / math.fsum(math.exp(s) for s in kept)


def by_hand():
    """The four weights, each a functools.partial evaluated."""
    parts = {
        "alpha_22": partial(_weight, (1.0, 1.0), 1),
        "alpha_33": partial(_weight, (0.0, 1.0, 1.0), 2),
        "alpha_42": partial(_weight, (-1.0, -1.0, 2.0), 1),
        "alpha_44": lambda: 0.0,
    }
    return {k: f() for k, f in parts.items()}
'''

L06_THREADS_63 = '''# Exercise 6.3: masked attention over a padded batch
from concurrent.futures import ThreadPoolExecutor

import torch


def _sentence(scores, values, length):
    T = scores.shape[-1]
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None]) & (pos[None, :] < length)
    e = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    w = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return w @ values, w


def masked_attention(scores, values, lengths):
    """One sentence per worker thread."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        parts = list(pool.map(_sentence, scores, values, lengths))
    return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])
'''

L06_PLOT_64 = '''# Exercise 6.4: what leaks
import matplotlib.pyplot as plt
import torch
from tqdm.auto import tqdm


def leak_test(masked_attention, scores, values, lengths):
    """The solution's measurements, with a progress bar and a heatmap of the weights."""
    output, weights = masked_attention(scores, values, lengths)
    fig, ax = plt.subplots()
    ax.imshow(weights[0].detach().numpy())
    ax.set_title("sentence 1")
    plt.close(fig)
    positions = torch.arange(scores.shape[1])
    real = positions[None, :] < lengths[:, None]
    out = {}
    for key in tqdm(["padding", "last token", "last token, earlier queries"], leave=False):
        last = lengths[0].item() - 1
        changed = values.clone()
        if key == "padding":
            changed[~real] += 100.0
            out[key] = (masked_attention(scores, changed, lengths)[0] - output).abs()[real].max().item()
        else:
            changed[0, last] += 100.0
            moved = (masked_attention(scores, changed, lengths)[0] - output).abs()[0]
            out[key] = moved[last].max().item() if key == "last token" else moved[:last].max().item()
    return out
'''

# ----------------------------------------------------------------------------------------------- lesson 07

L07_POLAR = '''# Exercise 7.1: sinusoidal position encodings
import torch


def positional_encoding(T, d):
    """sin and cos as the imaginary and real parts of exp(i * angle) (torch.polar)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    angle = pos / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    z = torch.view_as_real(torch.polar(torch.ones_like(angle), angle))  # (T, d/2, 2): cos, sin
    return z.flip(-1).reshape(T, d).float()
'''

L07_UNFLATTEN = '''# Exercise 7.2: splitting the heads
def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with unflatten and movedim."""
    return x.unflatten(-1, (n_head, -1)).movedim(2, 1)
'''

L07_HEAD_EINSUM = '''# Exercise 7.3: one head of self-attention
import math
from typing import Optional

import torch
from torch import nn


class Head(nn.Module):
    """One causal head with einsum and torch.where; the mask built in forward."""

    def __init__(self, d_model: int, head_size: int, block_size: int):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.block_size: Optional[int] = block_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
        keep = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = torch.where(keep, scores, torch.full_like(scores, float("-inf")))
        return torch.einsum("bts,bsd->btd", torch.softmax(scores, dim=-1), v)
'''

L07_TOPK = '''# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """softmax over the top k, scattered back into a zero vector."""
    z = logits / temperature
    top = torch.topk(z, k)
    probs = torch.zeros_like(z)
    probs.scatter_(0, top.indices, torch.softmax(top.values, dim=0))
    tie = z == top.values[-1]  # logits equal to the k-th largest are kept too
    if int(tie.sum()) > int((probs[tie] > 0).sum()):
        kept = z >= top.values[-1]
        probs = torch.softmax(z.masked_fill(~kept, float("-inf")), dim=0)
    return probs
'''

L02_TANH_TRANSFORM = '''# Exercise 2.4: one step of backpropagation through time
import torch
from torch.distributions.transforms import TanhTransform


def bptt_step(dh, h, h_prev, x, W_hh):
    """tanh's derivative read from torch.distributions' TanhTransform (log |d tanh(a) / da|), not written."""
    a = torch.atanh(h.clamp(-1 + 1e-12, 1 - 1e-12))
    da = dh * TanhTransform().log_abs_det_jacobian(a, h).exp()
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''

L04_LSTM_EXPIT = '''# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    """LSTM cell with torch.special.expit, addmm and an einsum; gates split by unbind."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        B, H = x.shape[0], self.hidden_size
        h_prev, c_prev = state if state is not None else (x.new_zeros(B, H), x.new_zeros(B, H))
        gates = torch.addmm(self.b_xh + self.b_hh, x, self.W_xh.T) + torch.einsum("bk,gk->bg", h_prev, self.W_hh)
        i, f, g, o = gates.view(B, 4, H).unbind(1)
        c = torch.special.expit(f) * c_prev + torch.special.expit(i) * torch.tanh(g)
        return torch.special.expit(o) * torch.tanh(c), c
'''

L04_GRU_ADDMM = '''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One GRU step with addmm and torch.lerp for the interpolation."""
    gx = torch.addmm(b_xh, x, W_xh.T)
    gh = torch.addmm(b_hh, h, W_hh.T)
    H = h.shape[1]
    r = torch.sigmoid(gx[:, :H] + gh[:, :H])
    z = torch.sigmoid(gx[:, H : 2 * H] + gh[:, H : 2 * H])
    n = torch.tanh(gx[:, 2 * H :] + r * gh[:, 2 * H :])
    return torch.lerp(n, h, z)
'''

L01_UNFOLD_UNIQUE = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

import torch


def count_ngrams(sentence, n):
    """Windows by Tensor.unfold over word ids, counted by torch.unique(dim=0, return_counts=True)."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    vocab = sorted(set(padded))
    ids = torch.tensor([vocab.index(w) for w in padded])
    windows = ids.unfold(0, n, 1)
    grams, counts = torch.unique(windows, dim=0, return_counts=True)
    return Counter({tuple(vocab[i] for i in g.tolist()): int(c) for g, c in zip(grams, counts)})
'''

L07_HEAD_MHA_FORWARD = '''# Exercise 7.3: one head of self-attention
import math

import torch
import torch.nn.functional as F
from torch import nn


class Head(nn.Module):
    """One causal head whose forward is torch.nn.functional.multi_head_attention_forward with my projections."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        T, C = x.shape[1], x.shape[2]
        hs = self.query.weight.shape[0]
        xt = x.transpose(0, 1)
        pad = x.new_zeros(C - hs, C)
        w_q = torch.cat([self.query.weight * math.sqrt(C / hs), pad])  # C features: rescale 1/sqrt(C) to hs
        w_k = torch.cat([self.key.weight, pad])
        w_v = torch.cat([self.value.weight, pad])
        eye = torch.eye(C, dtype=x.dtype)
        out, _ = F.multi_head_attention_forward(
            xt, xt, xt, C, 1, None, None, None, None, False, 0.0, eye, None,
            training=False, need_weights=True, attn_mask=~self.tril[:T, :T],
            use_separate_proj_weight=True, q_proj_weight=w_q, k_proj_weight=w_k, v_proj_weight=w_v,
        )
        out = out[..., :hs]
        return out.transpose(0, 1)
'''

# ---- wave 2 (after the first grading): same-named helpers in two answer cells, the top-level forms allowed

ALLOWED_HELPER = '''

def _allowed(T):
    """(T, T): True where query i may attend to key j (j <= i)."""
    pos = torch.arange(T)
    return pos[None, :] <= pos[:, None]
'''

L06_DUP_61 = (
    """# Exercise 6.1: the quiz for any score matrix
import torch
"""
    + ALLOWED_HELPER
    + '''

def alpha(scores, i, j):
    """The solution, with the mask from a helper that 6.3's cell defines too."""
    weights = torch.softmax(scores.masked_fill(~_allowed(scores.shape[0]), float("-inf")), dim=-1)
    return weights[i - 1, j - 1].item()
'''
)

L06_DUP_63 = (
    """# Exercise 6.3: masked attention over a padded batch
import torch
"""
    + ALLOWED_HELPER
    + '''

def masked_attention(scores, values, lengths):
    """The solution, with the causal mask from the same helper as 6.1's (defined again here)."""
    B, T, _ = scores.shape
    allowed = _allowed(T)[None] & (torch.arange(T)[None, None, :] < lengths[:, None, None])
    e = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return weights @ values, weights
'''
)

L06_MHA_63_ONLY = L06_MHA_63.replace("_mha(", "_mha63(")

L01_TUPLE_CONST = '''# Exercise 1.1: the n-grams of the standard count
"""Counting n-grams (a module docstring in the cell)."""
from collections import Counter

BOS, EOS = "<s>", "</s>"
__all__ = ["count_ngrams"]


def count_ngrams(sentence, n):
    """Counter of the n-grams, with constants unpacked from a tuple at top level."""
    padded = [BOS] * (n - 1) + list(sentence) + [EOS]
    return Counter(zip(*(padded[i:] for i in range(n))))
'''

L01_LAMBDA_CONST = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter

pad_of = lambda s, n, vocab: ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]  # noqa: E731


def add_k_perplexity(train, test, n, k):
    """Perplexity with the padding as a top-level lambda."""
    vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}
    counts, contexts = Counter(), Counter()
    for s in train:
        p = pad_of(s, n, vocab)
        for i in range(n - 1, len(p)):
            counts[tuple(p[i - n + 1 : i + 1])] += 1
            contexts[tuple(p[i - n + 1 : i])] += 1
    logs = []
    for s in test:
        p = pad_of(s, n, vocab)
        for i in range(n - 1, len(p)):
            g = tuple(p[i - n + 1 : i + 1])
            logs.append(math.log2((counts[g] + k) / (contexts[g[:-1]] + k * len(vocab))))
    return 2 ** (-sum(logs) / len(logs))
'''

L01_NEG_DEFAULT = '''# Exercise 1.3: tuning k on held-out text
def _best(pairs, sign=-1):
    """The pair whose second item is smallest (sign=-1) or largest (sign=1)."""
    return max(pairs, key=lambda kv: sign * kv[1])


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]), with a negative literal default."""
    ppl = [perplexity(train, val, n, k) for k in ks]
    return _best(list(zip(ks, ppl)))[0], ppl
'''

L01_ANNOTATED_CONST = '''# Exercise 1.4: perplexity from log-probabilities
import math

EPS: float = 0.0  # an annotated constant


def perplexity(log_probs):
    """e^J, with an annotated top-level constant."""
    lp = [float(x) + EPS for x in log_probs]
    return math.exp(-math.fsum(lp) / len(lp))
'''

L01_MATH_INF = '''# Exercise 1.5: sampling the next word with a temperature
import math

import numpy as np

LAST_EDGE = math.inf


def sample_next(probs, temperature, u):
    """The cumulative sums with math.inf as the last edge (a top-level constant read from math)."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    edges = list(np.cumsum(q / q.sum())[:-1]) + [LAST_EDGE]
    return next(i for i, edge in enumerate(edges) if edge > u)
'''

# ---- wave 3: where the same-named helper's refusal comes from

L06_SHARED_63 = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Uses 6.1's helper _allowed(T) without defining it again."""
    B, T, _ = scores.shape
    allowed = _allowed(T)[None] & (torch.arange(T)[None, None, :] < lengths[:, None, None])  # noqa: F821
    e = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(e.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return weights @ values, weights
'''

L03_TWICE_IN_CELL = '''# Exercise 3.1: is_balanced with a stack
def is_balanced(seq, n_symbols=10):
    """A first draft, left in the cell."""
    raise NotImplementedError


def is_balanced(seq, n_symbols=10):  # noqa: F811
    """The final version, defined again below the draft in the same cell."""
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
'''


SUBMISSIONS = {
    # ---- controls
    "ctl_full_01": dict(
        lesson="01", kind="control", intent="fully solved (the released solutions)", cells={}, deserved=ALL["01"]
    ),
    "ctl_untouched_01": dict(
        lesson="01", kind="control", intent="the released notebook, untouched", untouched=True, deserved=[]
    ),
    "ctl_half_03": dict(
        lesson="03",
        kind="control",
        intent="half solved: 3.1 and 3.2 only",
        solve_only=["ex-3-1", "ex-3-2"],
        deserved=["3.1", "3.2"],
    ),
    # ---- lesson 01
    "a01_added_cells": dict(
        lesson="01",
        kind="attack",
        intent="untouched notebook with one added cell (no nbgrader id) that defines every answer",
        untouched=True,
        append_solutions=True,
        deserved=[],
    ),
    "a01_random_choices": dict(
        lesson="01",
        kind="attack",
        intent="1.5 by random.Random.choices with random() returning u (the stdlib's "
        "weighted choice walks the cumulative sums)",
        cells={"ex-1-5": L01_RANDOM_CHOICES},
        deserved=but("01", "1.5"),
        grey=["1.5"],
    ),
    "a01_env_leak": dict(
        lesson="01",
        kind="attack",
        intent="1.4 raises with os.environ, /proc/1/environ and folder listings in "
        "its message (does the planted secret reach the feedback?)",
        cells={"ex-1-4": L01_ENV_LEAK},
        deserved=but("01", "1.4"),
    ),
    "a01_bigint": dict(
        lesson="01",
        kind="attack",
        intent="1.5 returns a 5001-digit int (over int.__repr__'s 4300 digits): a crash of the encoder or the grader?",
        cells={"ex-1-5": L01_BIGINT},
        deserved=but("01", "1.5"),
    ),
    "h01_sqlite_dataclass": dict(
        lesson="01",
        kind="honest",
        intent="1.1 sqlite3 GROUP BY; 1.2 @dataclass model; 1.3 functools.reduce + "
        "lambda; 1.4 statistics.geometric_mean; 1.5 bisect + itertools.accumulate",
        cells={
            "ex-1-1": L01_SQLITE_COUNT,
            "ex-1-2": L01_DATACLASS_MODEL,
            "ex-1-3": L01_REDUCE_TUNE,
            "ex-1-4": L01_GEOMEAN,
            "ex-1-5": L01_BISECT,
        },
        deserved=ALL["01"],
    ),
    "h01_recursion_alias": dict(
        lesson="01",
        kind="honest",
        intent="1.1 recursive generator; 1.2 top-level alias log2 = math.log2; 1.3 "
        "@functools.lru_cache helper; 1.4 torch float64 + typing; 1.5 closure + float('inf')",
        cells={
            "ex-1-1": L01_RECURSIVE_COUNT,
            "ex-1-2": L01_ALIAS_CONST,
            "ex-1-3": L01_LRU_TUNE,
            "ex-1-4": L01_TORCH_DOUBLE,
            "ex-1-5": L01_NUMPY_INF,
        },
        deserved=ALL["01"],
    ),
    "h01_own_module": dict(
        lesson="01",
        kind="honest",
        intent="1.1 imports a helper module of the student's own (%%writefile cell "
        "before it); 1.2 try/except import of tqdm at top level; 1.3 if __name__ guard; 1.4 from __future__ "
        "import annotations mid-notebook; 1.5 a callable object",
        cells={
            "ex-1-1": L01_OWN_MODULE_USE,
            "ex-1-2": L01_TRY_IMPORT,
            "ex-1-3": L01_MAIN_GUARD,
            "ex-1-4": L01_FUTURE,
            "ex-1-5": L01_CALLABLE_OBJECT,
        },
        before={"ex-1-1": L01_OWN_MODULE_WRITE},
        deserved=ALL["01"],
    ),
    "h01_unfold_unique": dict(
        lesson="01",
        kind="honest",
        intent="1.1 by Tensor.unfold windows + torch.unique(return_counts=True)",
        cells={"ex-1-1": L01_UNFOLD_UNIQUE},
        deserved=ALL["01"],
    ),
    "a07_head_mha_forward": dict(
        lesson="07",
        kind="attack",
        intent="7.3 Head whose forward is F.multi_head_attention_forward (the module "
        "path: the check's describe calls the forward)",
        cells={"ex-7-3": L07_HEAD_MHA_FORWARD},
        deserved=["7.1", "7.2", "7.5", "7.9"],  # 7.4, 7.6 and 7.7 build on this Head
    ),
    # ---- lesson 02
    "a02_gradfn_walk": dict(
        lesson="02",
        kind="attack",
        intent="2.1: recording switched back on (enable_grad), then each grad_fn node "
        "called by hand (no engine, no .backward)",
        cells={"ex-2-1": L02_GRADFN_WALK},
        deserved=but("02", "2.1"),
    ),
    "h02_einsum": dict(
        lesson="02",
        kind="honest",
        intent="2.1 einsum + double; 2.4 einsum + in-place mul_",
        cells={"ex-2-1": L02_EINSUM, "ex-2-4": L02_WHERE},
        deserved=ALL["02"],
    ),
    "a02_tanh_transform": dict(
        lesson="02",
        kind="attack",
        intent="2.4: tanh's derivative taken from torch.distributions' "
        "TanhTransform.log_abs_det_jacobian (a ready-made derivative outside torch.autograd)",
        cells={"ex-2-4": L02_TANH_TRANSFORM},
        deserved=but("02", "2.4"),
        grey=["2.4"],
    ),
    "h04_expit_lerp": dict(
        lesson="04",
        kind="honest",
        intent="4.1 torch.special.expit + addmm + einsum + unbind; 4.2 addmm + torch.lerp",
        cells={"ex-4-1": L04_LSTM_EXPIT, "ex-4-2": L04_GRU_ADDMM},
        deserved=ALL["04"],
    ),
    # ---- lesson 03
    "a03_xml": dict(
        lesson="03",
        kind="attack",
        intent="3.1 by xml.etree: every opener a start tag, its closer the end tag; expat's matching is the stack",
        cells={"ex-3-1": L03_XML},
        deserved=but("03", "3.1"),
        grey=["3.1"],
    ),
    "a03_expat": dict(
        lesson="03",
        kind="attack",
        intent="3.1 by pyexpat's C parser object fed tag by tag",
        cells={"ex-3-1": L03_EXPAT},
        deserved=but("03", "3.1"),
        grey=["3.1"],
    ),
    "h03_recursion_tqdm": dict(
        lesson="03",
        kind="honest",
        intent="3.1 recursive descent; 3.2 itertools.combinations + accumulate + "
        "Enum; 3.3 einsum + torch.where ReLU; 3.4 tqdm bar; 3.5 matplotlib plot",
        cells={
            "ex-3-1": L03_RECURSIVE,
            "ex-3-2": L03_COMBINATIONS,
            "ex-3-3": L03_ELMAN_WHERE,
            "ex-3-4": L03_TRAIN_TQDM,
            "ex-3-5": L03_EPOCHS_PLOT,
        },
        deserved=ALL["03"],
    ),
    "h03_replace_nograd": dict(
        lesson="03",
        kind="honest",
        intent="3.1 pair deletion without a stack; 3.3 @torch.no_grad() method; 3.4 "
        "warnings + set_to_none; 3.5 defaultdict",
        cells={
            "ex-3-1": L03_REPLACE,
            "ex-3-3": L03_ELMAN_NOGRAD,
            "ex-3-4": L03_TRAIN_WARN,
            "ex-3-5": L03_EPOCHS_DEFAULTDICT,
        },
        deserved=ALL["03"],
    ),
    # ---- lesson 04
    "a04_gru_by_lstm_cell": dict(
        lesson="04",
        kind="attack",
        intent="4.2 by two torch.lstm_cell calls whose gates are routed to be the "
        "GRU's (the LSTM kernel is not the forbidden GRU)",
        cells={"ex-4-2": L04_GRU_BY_LSTM},
        deserved=but("04", "4.2"),
    ),
    "a04_import_gru_cell": dict(
        lesson="04",
        kind="attack",
        intent="4.2's answer cell only imports torch.gru_cell under the answer's name",
        cells={"ex-4-2": L04_IMPORT_GRU_CELL},
        deserved=but("04", "4.2"),
    ),
    # ---- lesson 05
    "h05_einsum": dict(
        lesson="05", kind="honest", intent="5.1 with einsum", cells={"ex-5-1": L05_EINSUM}, deserved=ALL["05"]
    ),
    # ---- lesson 06
    "a06_mha_forward": dict(
        lesson="06",
        kind="attack",
        intent="6.1 and 6.3 by torch.nn.functional.multi_head_attention_forward "
        "(need_weights=True: baddbmm + softmax in Python; not nn.MultiheadAttention's module, not SDPA)",
        cells={"ex-6-1": L06_MHA_61, "ex-6-3": L06_MHA_63},
        deserved=but("06", "6.1", "6.3"),
    ),
    "h06_where_lcse": dict(
        lesson="06",
        kind="honest",
        intent="6.1 torch.where + float('-inf') + einsum; 6.3 in-place masked_fill_, "
        "float64, logcumsumexp normaliser; 6.4 closure",
        cells={"ex-6-1": L06_WHERE_61, "ex-6-3": L06_LCSE_63, "ex-6-4": L06_CLOSURE_64},
        deserved=ALL["06"],
    ),
    "h06_numpy_vmap": dict(
        lesson="06",
        kind="honest",
        intent="6.1 numpy; 6.2 typing.NamedTuple; 6.3 torch.func.vmap; 6.4 @torch.no_grad() decorator",
        cells={"ex-6-1": L06_NUMPY_61, "ex-6-2": L06_NAMEDTUPLE_62, "ex-6-3": L06_VMAP_63, "ex-6-4": L06_NOGRAD_64},
        deserved=ALL["06"],
    ),
    "h06_compile_threads": dict(
        lesson="06",
        kind="honest",
        intent="6.1 torch.compile(backend='eager'); 6.2 functools.partial + lambda; "
        "6.3 ThreadPoolExecutor per sentence; 6.4 matplotlib imshow + tqdm",
        cells={"ex-6-1": L06_COMPILE_61, "ex-6-2": L06_PARTIAL_62, "ex-6-3": L06_THREADS_63, "ex-6-4": L06_PLOT_64},
        deserved=ALL["06"],
    ),
    # ---- lesson 07
    "h07_polar_einsum": dict(
        lesson="07",
        kind="honest",
        intent="7.1 torch.polar; 7.2 unflatten/movedim; 7.3 einsum + torch.where + typing; 7.9 topk + scatter_",
        cells={"ex-7-1": L07_POLAR, "ex-7-2": L07_UNFLATTEN, "ex-7-3": L07_HEAD_EINSUM, "ex-7-9": L07_TOPK},
        deserved=ALL["07"],
    ),
    # ---- wave 2
    "h06_dup_helper": dict(
        lesson="06",
        kind="honest",
        intent="6.1 and 6.3 each define the same helper _allowed(T) in their own cell (identical text)",
        cells={"ex-6-1": L06_DUP_61, "ex-6-3": L06_DUP_63},
        deserved=ALL["06"],
    ),
    "a06_mha_forward_63": dict(
        lesson="06",
        kind="attack",
        intent="6.3 alone by F.multi_head_attention_forward (helper named once, so the refusal is the op's own)",
        cells={"ex-6-3": L06_MHA_63_ONLY},
        deserved=but("06", "6.3"),
    ),
    "h01_toplevel_forms": dict(
        lesson="01",
        kind="honest",
        intent="1.1 tuple-unpacked constants, module docstring, __all__; 1.2 top-level "
        "lambda; 1.3 negative literal default; 1.4 annotated constant; 1.5 LAST_EDGE = math.inf",
        cells={
            "ex-1-1": L01_TUPLE_CONST,
            "ex-1-2": L01_LAMBDA_CONST,
            "ex-1-3": L01_NEG_DEFAULT,
            "ex-1-4": L01_ANNOTATED_CONST,
            "ex-1-5": L01_MATH_INF,
        },
        deserved=ALL["01"],
    ),
    # ---- wave 3
    "h06_shared_helper": dict(
        lesson="06",
        kind="honest",
        intent="6.1 defines _allowed(T); 6.3 uses it without defining it again",
        cells={"ex-6-1": L06_DUP_61, "ex-6-3": L06_SHARED_63},
        deserved=ALL["06"],
    ),
    "h03_twice_in_cell": dict(
        lesson="03",
        kind="honest",
        intent="3.1's cell defines is_balanced twice (a draft, then the final one)",
        cells={"ex-3-1": L03_TWICE_IN_CELL},
        deserved=ALL["03"],
    ),
}
