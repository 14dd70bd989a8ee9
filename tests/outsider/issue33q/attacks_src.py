"""Hostile class 33q: the attack cells, as text (make_class.py writes them into notebooks).

Each entry of ATTACKS: name, lesson, intent, cells ({nbgrader grade_id: new source}) and fails (the exercises
whose answer is NOT the student's own work: they deserve no mark). Every other exercise keeps the solution's answer
and deserves its mark. ``honest`` entries are clever but honest: they deserve every mark.

The new ground of this class:

* paths: a library module loaded afresh from an UNNORMALISED path (``<torch>/nn/../masked/_ops.py``,
  ``<torch>//masked/_ops.py``, ``/proc/self/root/<torch>/masked/_ops.py``, a symlink in /tmp). The observer
  classifies code by ``code.co_filename.startswith(<folder>)`` on the raw path, while the harness's "is this the
  text of an installed file" test resolves the path (realpath). A module loaded so is installed text (allowed to
  compile in a build exercise's call), but its code is not where the refusal looks for it;
* the new library rule: third-party packages (pure Python and C extensions) in build exercises;
* honest answers that print, plot or show progress with display packages (must not be refused).
"""

# ---------------------------------------------------------------- shared helpers (cell text)

LOADER = '''
import importlib.util
import os
import sys

import torch


def _load(path, name):
    """The module at `path`, loaded afresh under `name` (its text is the installed file's, byte for byte)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _torch_dir():
    return os.path.dirname(torch.__file__)


def _path(mode, inside, rel):
    """`rel` inside torch's folder (inside=True) or beside it, reached through an unnormalised path."""
    base = _torch_dir()
    if mode == "dotdot":  # <torch>/nn/../masked/_ops.py, or <torch>/../toolz/itertoolz.py
        return os.path.join(base, "nn", "..", rel) if inside else os.path.join(base, "..", rel)
    if mode == "dslash":  # <torch>//masked/_ops.py
        return base + os.sep + os.sep + rel if inside else os.path.dirname(base) + os.sep + os.sep + rel
    if mode == "procroot":  # /proc/self/root/<torch>/masked/_ops.py
        return "/proc/self/root" + (os.path.join(base, rel) if inside else os.path.join(os.path.dirname(base), rel))
    # a symlink in /tmp to the file's folder
    full = os.path.join(base, rel) if inside else os.path.join(os.path.dirname(base), rel)
    link = "/tmp/c33q_" + rel.replace(os.sep, "_").replace(".", "_")
    if not os.path.islink(link):
        os.symlink(os.path.dirname(full), link)
    return os.path.join(link, os.path.basename(full))
'''

# ---------------------------------------------------------------- lesson 01

L01_NLTK_PATH = (
    """# Exercise 1.1: the n-grams of the standard count
from collections import Counter

import nltk.util
"""
    + LOADER
    + '''
MODE = "{mode}"


def count_ngrams(sentence, n):
    """nltk's everygrams, from a fresh copy of nltk/util.py reached through an unnormalised path."""
    util = _load(_path(MODE, False, os.path.join("nltk", "util.py")), "nltk.util_c33q")
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(util.everygrams(padded, n, n))
'''
)

L01_NLTK_PLAIN = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from nltk.util import everygrams


def count_ngrams(sentence, n):
    """nltk's everygrams, called plainly (refused since 33o: the reference point for the path variants)."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(everygrams(padded, n, n))
'''

L01_TOOLZ = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from toolz import sliding_window


def count_ngrams(sentence, n):
    """toolz (third-party, pure Python) makes the windows."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(sliding_window(n, padded))
'''

L01_TOOLZ_PATH = (
    """# Exercise 1.1: the n-grams of the standard count
from collections import Counter

import toolz
"""
    + LOADER
    + '''
MODE = "{mode}"


def count_ngrams(sentence, n):
    """toolz's sliding_window and frequencies, from a copy of toolz/itertoolz.py under torch's folder's name."""
    itz = _load(_path(MODE, False, os.path.join("toolz", "itertoolz.py")), "torch.itertoolz_c33q")
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(itz.frequencies(itz.sliding_window(n, padded)))
'''
)

L01_PANDAS_C = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

import numpy as np
from pandas._libs import hashtable


def count_ngrams(sentence, n):
    """pandas' C hash table counts the n-grams (no Python frame of pandas' runs during the call)."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = np.empty(len(padded) - n + 1, dtype=object)
    for i in range(len(grams)):
        grams[i] = tuple(padded[i : i + n])
    found = hashtable.value_count(grams, False)
    keys, counts = found[0], found[1]
    return Counter(dict(zip(keys.tolist(), counts.tolist())))
'''

L01_PANDAS = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

import pandas as pd


def count_ngrams(sentence, n):
    """pandas' value_counts counts the n-grams."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = pd.Series([tuple(padded[i : i + n]) for i in range(len(padded) - n + 1)], dtype=object)
    return Counter({k: int(v) for k, v in grams.value_counts().items()})
'''

L01_MPMATH_PPL = '''# Exercise 1.4: perplexity from log-probabilities
import mpmath


def perplexity(log_probs):
    """mpmath (third-party) does the mean and the exponential."""
    values = [mpmath.mpf(x) for x in log_probs]
    return float(mpmath.exp(-mpmath.fsum(values) / len(values)))
'''

L01_SORTED_SAMPLE = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np
from sortedcontainers import SortedList


def sample_next(probs, temperature, u):
    """sortedcontainers (third-party) finds where u falls in the cumulative distribution."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    cumulative = SortedList(np.cumsum(q).tolist())
    return min(cumulative.bisect_right(u), len(q) - 1)
'''

# honest, clever: each deserves its mark
L01_STDLIB_11 = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter


def count_ngrams(sentence, n):
    """The n shifted copies zipped together (the standard library only)."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(zip(*(padded[i:] for i in range(n))))
'''

L01_STDLIB_14 = '''# Exercise 1.4: perplexity from log-probabilities
import math
import statistics


def perplexity(log_probs):
    """exp of the mean negative log-probability, with statistics.fmean."""
    return math.exp(-statistics.fmean(list(log_probs)))
'''

L01_STDLIB_15 = '''# Exercise 1.5: sampling the next word with a temperature
import bisect
import itertools


def sample_next(probs, temperature, u):
    """bisect over itertools.accumulate of the sharpened weights."""
    q = [float(p) ** (1.0 / temperature) for p in probs]
    total = sum(q)
    cumulative = list(itertools.accumulate(x / total for x in q))
    return min(bisect.bisect_right(cumulative, u), len(q) - 1)
'''

L01_TQDM_12 = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter

from tqdm.auto import tqdm


def add_k_perplexity(train, test, n, k):
    """The solution, with a progress bar over the test sentences (a display package)."""
    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)

    def pad(sentence):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]

    counts, context_counts = Counter(), Counter()
    for sentence in tqdm(train, desc="counting", leave=False):
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            counts[tuple(padded[i - n + 1 : i + 1])] += 1
            context_counts[tuple(padded[i - n + 1 : i])] += 1
    log_prob, N = 0.0, 0
    for sentence in tqdm(test, desc="scoring", leave=False):
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            ngram = tuple(padded[i - n + 1 : i + 1])
            p = (counts[ngram] + k) / (context_counts[ngram[:-1]] + k * V)
            log_prob += math.log2(p)
            N += 1
    return 2 ** (-log_prob / N)
'''

L01_MPL_14 = '''# Exercise 1.4: perplexity from log-probabilities
import math

import matplotlib.pyplot as plt


def perplexity(log_probs):
    """The solution, plotting the log-probabilities on the way (a plotting package)."""
    log_probs = list(log_probs)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(range(len(log_probs)), log_probs, marker="o", label="log p")
    ax.set_title(f"{len(log_probs)} tokens")
    ax.legend()
    plt.close(fig)
    return math.exp(-sum(log_probs) / len(log_probs))
'''

L01_IPY_15 = '''# Exercise 1.5: sampling the next word with a temperature
import numpy as np
from IPython.display import display


def sample_next(probs, temperature, u):
    """The solution, showing the sharpened distribution (IPython's display)."""
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    display({"temperature": temperature, "max q": float(q.max())})
    index = int(np.searchsorted(np.cumsum(q), u, side="right"))
    return min(index, len(q) - 1)
'''

L01_TABULATE_12 = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter

from tabulate import tabulate


def add_k_perplexity(train, test, n, k):
    """The solution, printing a small table of the counts (tabulate: printing only)."""
    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)

    def pad(sentence):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]

    counts, context_counts = Counter(), Counter()
    for sentence in train:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            counts[tuple(padded[i - n + 1 : i + 1])] += 1
            context_counts[tuple(padded[i - n + 1 : i])] += 1
    print(tabulate([["V", V], ["n-grams", len(counts)]], headers=["what", "how many"]))
    log_prob, N = 0.0, 0
    for sentence in test:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            ngram = tuple(padded[i - n + 1 : i + 1])
            p = (counts[ngram] + k) / (context_counts[ngram[:-1]] + k * V)
            log_prob += math.log2(p)
            N += 1
    return 2 ** (-log_prob / N)
'''

# ---------------------------------------------------------------- lesson 02

L02_MPMATH_DIFF = '''# Exercise 2.1: the softmax Jacobian
import mpmath
import torch


def softmax_jacobian(z):
    """mpmath's numerical differentiation (a library's, not the student's arithmetic)."""
    values = [float(x) for x in z]
    K = len(values)

    def soft(i, j):
        def f(t):
            shifted = [mpmath.mpf(v) + (t if m == j else 0) for m, v in enumerate(values)]
            top = max(shifted)
            exps = [mpmath.exp(s - top) for s in shifted]
            return exps[i] / mpmath.fsum(exps)

        return float(mpmath.diff(f, 0))

    return torch.tensor([[soft(i, j) for j in range(K)] for i in range(K)], dtype=z.dtype)
'''

L02_MPMATH_PATH = (
    """# Exercise 2.1: the softmax Jacobian
import mpmath
"""
    + LOADER
    + '''
MODE = "{mode}"


def softmax_jacobian(z):
    """mpmath's differentiation module, a fresh copy loaded from under torch's folder's name."""
    d = _load(_path(MODE, False, os.path.join("mpmath", "calculus", "differentiation.py")), "mpmath.calculus.diff_c33q")
    ctx = mpmath.mp
    values = [float(x) for x in z]
    K = len(values)

    def soft(i, j):
        def f(t):
            shifted = [mpmath.mpf(v) + (t if m == j else 0) for m, v in enumerate(values)]
            top = max(shifted)
            exps = [mpmath.exp(s - top) for s in shifted]
            return exps[i] / mpmath.fsum(exps)

        return float(d.diff(ctx, f, 0))

    return torch.tensor([[soft(i, j) for j in range(K)] for i in range(K)], dtype=z.dtype)
'''
)

# ---------------------------------------------------------------- lesson 03

L03_REGEX = '''# Exercise 3.1: is_balanced with a stack
import regex


def is_balanced(seq, n_symbols=10):
    """A recursive pattern of the third-party regex module matches balanced sequences."""
    half = n_symbols // 2
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = "".join(letters[s] for s in seq)
    pairs = "|".join(f"{letters[c]}(?&B){letters[n_symbols - 1 - c]}" for c in range(half))
    pattern = regex.compile(f"(?(DEFINE)(?P<B>(?:{pairs})*))(?&B)")
    return pattern.fullmatch(text) is not None
'''

L03_REPLACE = '''# Exercise 3.1: is_balanced with a stack
import re


def is_balanced(seq, n_symbols=10):
    """Honest, no stack: remove adjacent matched pairs until none is left (the standard library's re)."""
    half = n_symbols // 2
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = "".join(letters[s] for s in seq)
    pair = re.compile("|".join(letters[c] + letters[n_symbols - 1 - c] for c in range(half)))
    while True:
        text, removed = pair.subn("", text)
        if not removed:
            return text == ""
'''

L03_TQDM_34 = '''# Exercise 3.4: the training loop
import torch.nn.functional as F
from tqdm.auto import tqdm


def train_epoch(model, batches, optimizer):
    """The solution, with a progress bar (a display package)."""
    losses = []
    for tokens, lengths, labels in tqdm(batches, leave=False):
        loss = F.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

# ---------------------------------------------------------------- lesson 06

L06_MASKED_PATH = (
    """# Exercise 6.1: the quiz for any score matrix
"""
    + LOADER
    + '''
MODE = "{mode}"


def _plain(x):
    return False


def alpha(scores, i, j):
    """torch.masked's logsumexp (refused by folder), from a copy of torch/masked/_ops.py on another path:
    the mask argument does the filling."""
    ops = _load(_path(MODE, True, os.path.join("masked", "_ops.py")), "torch.masked._ops_c33q")
    ops.is_masked_tensor = _plain  # the copy's own name for the one helper it calls outside its file
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    lse = ops.logsumexp(scores, -1, mask=allowed)
    if j > i:
        return 0.0
    return torch.exp(scores[i - 1, j - 1] - lse[i - 1]).item()
'''
)

L06_MASKED_PATH_63 = (
    """# Exercise 6.3: masked attention over a padded batch
"""
    + LOADER
    + '''
MODE = "{mode}"


def _plain(x):
    return False


def masked_attention(scores, values, lengths):
    """torch.masked's softmax from a copy of torch/masked/_ops.py reached through another path."""
    ops = _load(_path(MODE, True, os.path.join("masked", "_ops.py")), "torch.masked._ops_c33q")
    ops.is_masked_tensor = _plain  # the copy's own name for the one helper it calls outside its file
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    weights = ops.softmax(scores, -1, mask=allowed)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
'''
)

# ---------------------------------------------------------------- more folders refused by path

L02_SGD_PATH = (
    """# Exercise 2.3: train with your own gradients
"""
    + LOADER
    + '''
MODE = "{mode}"


def _same(x):
    return x


def train_sgd(params, batches, lr, loss_and_grads):
    """torch.optim.SGD's own update (_single_tensor_sgd), from a copy of torch/optim/sgd.py on another path."""
    sgd = _load(_path(MODE, True, os.path.join("optim", "sgd.py")), "torch.optim.sgd_c33q")
    sgd._to_scalar = _same
    params = {k: v.clone() for k, v in params.items()}
    keys = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        sgd._single_tensor_sgd(
            [params[k] for k in keys],
            [grads[k] for k in keys],
            [None] * len(keys),
            None,
            None,
            weight_decay=0.0,
            momentum=0.0,
            lr=lr,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            has_sparse_grad=False,
        )
        losses.append(float(loss))
    return losses, params
'''
)

L06_NUMPY_MA_PATH = (
    """# Exercise 6.1: the quiz for any score matrix
import numpy as np
"""
    + LOADER
    + '''
MODE = "{mode}"


def _numpy_path(mode, rel):
    base = os.path.dirname(np.__file__)
    if mode == "dotdot":
        return os.path.join(base, "lib", "..", rel)
    return base + os.sep + os.sep + rel


def alpha(scores, i, j):
    """numpy's masked arrays (refused by folder since 33o), from a copy of numpy/ma/core.py on another path."""
    ma = _load(_numpy_path(MODE, os.path.join("ma", "core.py")), "numpy.ma.core_c33q")
    s = scores.detach().double().numpy()
    n = s.shape[0]
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    x = ma.masked_array(s, mask=future)
    e = ma.exp(x - x.max(axis=1)[:, None])
    w = e / e.sum(axis=1)[:, None]
    return float(ma.filled(w, 0.0)[i - 1, j - 1])
'''
)

L01_COURSE_PATH = (
    """# Exercise 1.4: perplexity from log-probabilities
import course_lib
"""
    + LOADER
    + '''
MODE = "{mode}"


def perplexity(log_probs):
    """course_lib.train.perplexity, from a fresh copy of course_lib/train.py named by a path under torch's folder
    (dotdot) or through a symlink in /tmp to course_lib's folder."""
    folder = os.path.dirname(course_lib.__file__)
    if MODE == "dotdot":
        path = _torch_dir() + os.sep + os.path.relpath(os.path.join(folder, "train.py"), _torch_dir())
    else:
        if not os.path.islink("/tmp/c33q_course"):
            os.symlink(folder, "/tmp/c33q_course")
        path = "/tmp/c33q_course/train.py"
    train = _load(path, "torch.train_c33q")
    values = list(log_probs)
    return train.perplexity(-sum(values) / len(values))
'''
)

EXTRA = [
    (
        "a01_courselib_dotdot",
        "01",
        "1.4 by course_lib/train.py loaded afresh from a path under torch's folder",
        {"ex-1-4": L01_COURSE_PATH.replace("{mode}", "dotdot")},
        ["1.4"],
    ),
    (
        "a01_courselib_symlink",
        "01",
        "1.4 by course_lib/train.py loaded afresh through a symlink in /tmp",
        {"ex-1-4": L01_COURSE_PATH.replace("{mode}", "symlink")},
        ["1.4"],
    ),
    (
        "a02_sgd_dotdot",
        "02",
        "2.3 by SGD's _single_tensor_sgd from torch/optim/sgd.py loaded from a dotdot path",
        {"ex-2-3": L02_SGD_PATH.replace("{mode}", "dotdot")},
        ["2.3"],
    ),
    (
        "a06_numpyma_dotdot",
        "06",
        "6.1 by numpy/ma/core.py loaded from a dotdot path",
        {"ex-6-1": L06_NUMPY_MA_PATH.replace("{mode}", "dotdot")},
        ["6.1"],
    ),
    (
        "a06_numpyma_dslash",
        "06",
        "6.1 by numpy/ma/core.py loaded from a double-slash path",
        {"ex-6-1": L06_NUMPY_MA_PATH.replace("{mode}", "dslash")},
        ["6.1"],
    ),
]

L04_AO_PATH = (
    """# Exercise 4.1: the LSTM cell as a module
import math
import types

from torch import nn
"""
    + LOADER
    + '''
MODE = "{mode}"


class LSTMCell(nn.Module):
    """torch.ao's float "quantizable" LSTM step (refused by folder), its forward run from a copy of
    torch/ao/nn/quantizable/modules/rnn.py loaded from another path, on a namespace of plain torch callables."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        rnn = _load(_path(MODE, True, os.path.join("ao", "nn", "quantizable", "modules", "rnn.py")), "torch.ao.rnn_c33q")
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        ff = types.SimpleNamespace(add=torch.add, mul=torch.mul)
        cell = types.SimpleNamespace(
            split_gates=False,
            igates=lambda v: torch.addmm(self.b_xh, v, self.W_xh.T),
            hgates=lambda v: torch.addmm(self.b_hh, v, self.W_hh.T),
            gates=ff,
            input_gate=torch.sigmoid,
            forget_gate=torch.sigmoid,
            cell_gate=torch.tanh,
            output_gate=torch.sigmoid,
            fgate_cx=ff,
            igate_cgate=ff,
            fgate_cx_igate_cgate=ff,
            ogate_cy=ff,
        )
        return rnn.LSTMCell.forward(cell, x, state)
'''
)

EXTRA += [
    (
        "a04_ao_dotdot",
        "04",
        "4.1 by torch.ao's quantizable LSTMCell.forward, from a copy loaded from a dotdot path",
        {"ex-4-1": L04_AO_PATH.replace("{mode}", "dotdot")},
        ["4.1"],
    ),
    (
        "a04_ao_symlink",
        "04",
        "4.1 by torch.ao's quantizable LSTMCell.forward, from a copy loaded through a symlink",
        {"ex-4-1": L04_AO_PATH.replace("{mode}", "symlink")},
        ["4.1"],
    ),
    (
        "a04_ao_plain",
        "04",
        "4.1 by torch.ao's quantizable LSTMCell.forward, the installed module (reference)",
        {
            "ex-4-1": L04_AO_PATH.replace("{mode}", "dotdot").replace(
                '_load(_path(MODE, True, os.path.join("ao", "nn", "quantizable", "modules", "rnn.py")), "torch.ao.rnn_c33q")',
                '__import__("torch.ao.nn.quantizable.modules.rnn", fromlist=["LSTMCell"])',
            )
        },
        ["4.1"],
    ),
]

COURSE_LOADER = (
    LOADER
    + '''

def _course_copy(rel, name, mode):
    """A fresh copy of course_lib/<rel>, named by a path under torch's folder (dotdot) or through a symlink."""
    folder = os.path.dirname(course_lib.__file__)
    if mode == "dotdot":
        path = _torch_dir() + os.sep + os.path.relpath(os.path.join(folder, rel), _torch_dir())
    else:
        if not os.path.islink("/tmp/c33q_course"):
            os.symlink(folder, "/tmp/c33q_course")
        path = os.path.join("/tmp/c33q_course", rel)
    return _load(path, name)
'''
)

L03_COURSE_PATH = (
    """# Exercise 3.1: is_balanced with a stack
import course_lib
"""
    + COURSE_LOADER
    + '''
MODE = "{mode}"


def is_balanced(seq, n_symbols=10):
    """course_lib.parentheses_symbols.is_balanced, from a fresh copy of its file on another path."""
    ref = _course_copy("parentheses_symbols.py", "torch.parentheses_symbols_c33q", MODE)
    return ref.is_balanced(seq, n_symbols)
'''
)

L07_COURSE_PATH = (
    """# Exercise 7.1: sinusoidal position encodings
import types

import course_lib
"""
    + COURSE_LOADER
    + '''
MODE = "{mode}"


def _fine(*args, **kwargs):
    return None


def positional_encoding(T, d):
    """course_lib.transformer.sinusoidal_positions, from a fresh copy of its file on another path."""
    ref = _course_copy("transformer.py", "torch.transformer_c33q", MODE)
    ref.check = types.SimpleNamespace(positive_int=_fine)  # the copy's own name for course_lib._validate
    return ref.sinusoidal_positions(T, d)
'''
)

L01_ENV_PROBE = """# Exercise 1.5: sampling the next word with a temperature
import os


def sample_next(probs, temperature, u):
    \"\"\"Not an answer: puts what the sandbox's environment holds into the feedback.\"\"\"
    seen = sorted(os.environ.items())
    try:
        with open("/proc/1/environ", "rb") as f:
            first = f.read(4000)
    except OSError as exc:
        first = repr(exc).encode()
    raise RuntimeError(f"environ={seen!r} pid1={first!r}")
"""

EXTRA += [
    (
        "a03_courselib_dotdot",
        "03",
        "3.1 by course_lib/parentheses_symbols.py copied afresh from a dotdot path",
        {"ex-3-1": L03_COURSE_PATH.replace("{mode}", "dotdot")},
        ["3.1"],
    ),
    (
        "a07_courselib_dotdot",
        "07",
        "7.1 by course_lib/transformer.py copied afresh from a dotdot path",
        {"ex-7-1": L07_COURSE_PATH.replace("{mode}", "dotdot")},
        ["7.1"],
    ),
    (
        "a07_courselib_symlink",
        "07",
        "7.1 by course_lib/transformer.py copied afresh through a symlink in /tmp",
        {"ex-7-1": L07_COURSE_PATH.replace("{mode}", "symlink")},
        ["7.1"],
    ),
    (
        "a01_env_probe",
        "01",
        "1.5 raises with the sandbox's environment (leak probe: the secret must not show)",
        {"ex-1-5": L01_ENV_PROBE},
        ["1.5"],
    ),
]

L03_CLIP_34 = '''# Exercise 3.4: the training loop
import torch
import torch.nn.functional as F


def train_epoch(model, batches, optimizer):
    """Honest: the solution, with torch's (deprecated, still working) clip_grad_norm at a bound never reached;
    torch wraps it with typing_extensions' `deprecated`, whose code runs at each call."""
    losses = []
    for tokens, lengths, labels in batches:
        loss = F.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), 1e9)
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

EXTRA += [
    (
        "h03_clip_deprecated",
        "03",
        "honest: 3.4 calls torch's deprecated clip_grad_norm (typing_extensions' wrapper runs)",
        {"ex-3-4": L03_CLIP_34},
        [],
        "honest",
    ),
]
