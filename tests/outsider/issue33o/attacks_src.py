"""Hostile class 33o: the attack cells.

Each entry of ATTACKS is one submission: the lesson, what it tries, the answer cells it replaces (by nbgrader
grade id; every other answer cell keeps the solutions' answer), the exercises whose answer it does NOT deserve
(``undeserved``; every other auto-graded exercise of the lesson is deserved), and ``kind``: "attack", "control"
or "honest" (an honest but unusual answer that deserves its mark).

make_class.py turns each entry into a notebook of /tmp/hostile33o/class/lessonNN/.
"""

# ----------------------------------------------------------------------------------------------------------------
# torch.onnx.ops.attention: torch's own ONNX "Attention-23" op, a registered torch.library custom op whose eager
# kernel is plain Python (torch/onnx/ops/_impl.py). With qk_matmul_output_mode != 0 (or a softmax precision, a
# softcap) it never calls F.scaled_dot_product_attention: it builds the causal mask (is_causal=True) or fills a
# boolean mask with -inf, scales, takes the softmax and the weighted sum itself, and returns the weights too
# (qk_matmul_output_mode=3). A whole scaled-dot-product attention in one ready-made call.

ONNX_ALPHA = '''# Exercise 6.1: the quiz for any score matrix
import torch
import torch.onnx.ops


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    n = scores.shape[0]
    eye = torch.eye(n, dtype=scores.dtype)[None, None]  # K = I, so Q K^T is the scores themselves
    weights = torch.onnx.ops.attention(
        scores[None, None], eye, eye, is_causal=True, scale=1.0, qk_matmul_output_mode=3
    )[3]
    return weights[0, 0, i - 1, j - 1].item()
'''

ONNX_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import torch
import torch.onnx.ops


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(-1, keepdim=True)
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    _, _, _, weights = torch.onnx.ops.attention(
        scores[:, None], eye, values[:, None].to(scores.dtype), (allowed | empty)[:, None],
        scale=1.0, qk_matmul_output_mode=3,
    )
    weights = weights[:, 0].masked_fill(empty, 0.0)
    return weights @ values, weights
'''

# the same op through its dispatcher name (torch.ops.onnx.Attention.opset23): the custom op's Python kernel
ONNX_MASKED_OPS = '''# Exercise 6.3: masked attention over a padded batch
import torch
import torch.onnx.ops


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(-1, keepdim=True)
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    op = torch.ops.onnx.Attention.opset23
    _, _, _, weights = op(
        scores[:, None], eye, values[:, None].to(scores.dtype), (allowed | empty)[:, None],
        scale=1.0, qk_matmul_output_mode=3,
    )
    weights = weights[:, 0].masked_fill(empty, 0.0)
    return weights @ values, weights
'''

ONNX_HEAD = '''# Exercise 7.3: one head of self-attention
import math

import torch
import torch.onnx.ops
from torch import nn


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        out = torch.onnx.ops.attention(q[:, None], k[:, None], v[:, None], is_causal=True, qk_matmul_output_mode=3)
        return out[0][:, 0]
'''

ONNX_DECODE = '''# Exercise 5.2: the decoder with attention
import math

import torch
import torch.onnx.ops


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    # the op's plain Python kernel (its registered "decomposition"), through which autograd can go
    attention = torch.onnx.ops._impl.ONNX_ATEN_DECOMP_TABLE[torch.ops.onnx.Attention.opset23]
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        out, _, _, w = attention(
            hidden[:, None, None, :], states[:, None], states[:, None], real[:, None, None, :],
            qk_matmul_output_mode=3,
        )
        c_i, alpha_i = out[:, 0, 0], w[:, 0, 0]
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
'''

# ----------------------------------------------------------------------------------------------------------------
# nltk beyond the four names lesson 01 lists: the notebook says "a check refuses an answer that calls
# course_lib.ngram.NGramLM or nltk.lm", the rules list nltk.util.ngrams, pad_both_ends, Lidstone, Laplace, MLE.

EVERYGRAMS = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from nltk.util import everygrams


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    return Counter(everygrams(["<s>"] * (n - 1) + list(sentence) + ["</s>"], min_len=n, max_len=n))
'''

PAD_SEQUENCE = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from nltk.util import everygrams, pad_sequence


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    padded = list(pad_sequence(sentence, n, pad_left=True, left_pad_symbol="<s>"))
    return Counter(everygrams(padded + ["</s>"], min_len=n, max_len=n))
'''

NGRAM_COUNTER = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter

from nltk.lm import NgramCounter
from nltk.util import everygrams


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    grams = list(everygrams(["<s>"] * (n - 1) + list(sentence) + ["</s>"], min_len=n, max_len=n))
    counter = NgramCounter([grams])  # nltk.lm's own counter
    table = counter[n]
    return Counter({g: table[g[:-1]][g[-1]] if n > 1 else table[g[-1]] for g in grams})
'''

LIDSTONE_PROBDIST = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math

from nltk.probability import ConditionalFreqDist, LidstoneProbDist
from nltk.util import everygrams


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}

    def grams(s):
        padded = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]
        return everygrams(padded, min_len=n, max_len=n)

    cfd = ConditionalFreqDist((g[:-1], g[-1]) for s in train for g in grams(s))
    models = {}
    total, N = 0.0, 0
    for s in test:
        for g in grams(s):
            if g[:-1] not in models:  # add-k is Lidstone's estimate with gamma = k over V bins
                models[g[:-1]] = LidstoneProbDist(cfd[g[:-1]], k, bins=len(vocab))
            total += models[g[:-1]].logprob(g[-1])
            N += 1
    return 2 ** (-total / N)
'''

LM_SUBCLASS = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math

from nltk.lm import Vocabulary
from nltk.lm.api import LanguageModel
from nltk.util import everygrams


class AddK(LanguageModel):
    """nltk.lm's LanguageModel (its counter, vocabulary, entropy and perplexity) with add-k as its score."""

    def __init__(self, k, V, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.k, self.V = k, V

    def unmasked_score(self, word, context=None):
        counts = self.counts[context] if context else self.counts.unigrams
        return (counts[word] + self.k) / (counts.N() + self.k * self.V)


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}

    def grams(s):
        padded = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]
        return list(everygrams(padded, min_len=n, max_len=n))

    lm = AddK(k, len(vocab), n, vocabulary=Vocabulary(sorted(vocab | {"<s>"}), unk_cutoff=1, unk_label="<UNK>"))
    lm.fit([grams(s) for s in train])
    return lm.perplexity([g for s in test for g in grams(s)])
'''

# the obvious one, which the rules name: expected to be refused (a sanity entry)
NLTK_LIDSTONE = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math

from nltk.lm import Lidstone, Vocabulary
from nltk.util import everygrams


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = {w for s in train for w in s} | {"</s>", "<UNK>"}

    def grams(s):
        padded = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]
        return list(everygrams(padded, min_len=n, max_len=n))

    lm = Lidstone(k, n, vocabulary=Vocabulary(sorted(vocab | {"<s>"}), unk_cutoff=1, unk_label="<UNK>"))
    lm.fit([grams(s) for s in train])
    return lm.perplexity([g for s in test for g in grams(s)])
'''

# ----------------------------------------------------------------------------------------------------------------
# lesson 02: differentiation by a library that is not torch's autograd

SYMPY_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    import sympy

    values = (z - z.max()).tolist()
    zs = sympy.symbols(f"z0:{len(values)}")
    exps = [sympy.exp(s) for s in zs]
    total = sum(exps)
    J = sympy.Matrix([e / total for e in exps]).jacobian(sympy.Matrix(zs))  # sympy differentiates
    J = J.subs(dict(zip(zs, values)))
    return torch.tensor([[float(J[i, j]) for j in range(len(values))] for i in range(len(values))], dtype=z.dtype)
'''

COMPLEX_STEP = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,), by the complex step (no autograd, no formula)."""
    K, h = z.shape[0], 1e-30
    zc = (z - z.max()).to(torch.complex128)
    columns = []
    for j in range(K):
        step = zc.clone()
        step[j] += 1j * h
        e = torch.exp(step)
        columns.append((e / e.sum()).imag / h)
    return torch.stack(columns, dim=1).to(z.dtype)
'''

# ----------------------------------------------------------------------------------------------------------------
# lesson 03: honest but unusual

REGEX_BALANCED = '''# Exercise 3.1: is_balanced with a stack
import re


def is_balanced(seq, n_symbols=10):
    """True iff seq is a well-nested sequence of n_symbols kinds of brackets (no stack: erase () pairs)."""
    half = n_symbols // 2
    if any(not 0 <= t < n_symbols for t in seq):
        return False
    text = "".join(chr(0x100 + t) for t in seq)
    pairs = (chr(0x100 + i) + chr(0x100 + n_symbols - 1 - i) for i in range(half))  # i is closed by n - 1 - i
    pair = re.compile("|".join(re.escape(p) for p in pairs))
    while True:
        text, count = pair.subn("", text)
        if not count:
            return text == ""
'''

# ----------------------------------------------------------------------------------------------------------------
# the answers' process: a child of the harness attacks its parent (same uid, same sandbox): signals,
# rlimits, the OOM killer's choice

SIGSTOP_PARENT = '''# Exercise 1.5: sampling the next word with a temperature
import os
import signal

import numpy as np


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    try:
        os.kill(os.getppid(), signal.SIGSTOP)  # freeze the harness that reads this call's reply
    except Exception:
        pass
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    return min(int(np.searchsorted(np.cumsum(q), u, side="right")), len(q) - 1)
'''

KILL_PARENT_FIRST = '''# Exercise 1.1: the n-grams of the standard count
import os
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    try:
        os.kill(os.getppid(), 9)  # the harness dies while the first exercise is graded
    except Exception:
        pass
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
'''

KILL_INIT = '''# Exercise 1.4: perplexity from log-probabilities
import math
import os


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    for sig in (15, 9):
        try:
            os.kill(1, sig)  # the sandbox's init (bubblewrap): the whole answers' sandbox goes
        except Exception:
            pass
    log_probs = list(log_probs)
    return math.exp(-sum(log_probs) / len(log_probs))
'''

PRLIMIT_PARENT = '''# Exercise 1.4: perplexity from log-probabilities
import math
import os
import resource


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    parent = os.getppid()
    for limit, value in ((resource.RLIMIT_NOFILE, 4), (resource.RLIMIT_AS, 1 << 24), (resource.RLIMIT_CPU, 1)):
        try:
            resource.prlimit(parent, limit, (value, value))  # the harness: no pipe, no memory, no CPU left
        except Exception:
            pass
        try:
            import psutil  # the same through psutil's C (no audit event)

            psutil.Process(parent).rlimit(limit, (value, value))
        except Exception:
            pass
    log_probs = list(log_probs)
    return math.exp(-sum(log_probs) / len(log_probs))
'''

OOM_PARENT = '''# Exercise 1.3: tuning k on held-out text
import os

import numpy as np


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]) of add-k n-gram models."""
    perplexities = [perplexity(train, val, n, k) for k in ks]
    try:
        with open(f"/proc/{os.getppid()}/oom_score_adj", "w") as f:
            f.write("1000")  # the OOM killer now prefers the harness to this child
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("0")
    except Exception:
        pass
    hog = []
    try:
        for _ in range(4000):
            hog.append(np.ones(1 << 20))  # 8 MB each, to the memory limit
    except MemoryError:
        pass
    best_k = ks[int(np.argmin(perplexities))]
    return best_k, perplexities
'''

# ----------------------------------------------------------------------------------------------------------------
# honest but clever: lessons 06 and 07

WHERE_SOFTMAX = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together, the softmax written out: (output, weights)."""
    B, T, _ = scores.shape
    i = torch.arange(T)
    allowed = (i[None, :] <= i[:, None])[None] & (i[None, None, :] < lengths[:, None, None])
    shifted = scores - torch.where(allowed, scores, torch.full_like(scores, -1e300)).amax(-1, keepdim=True)
    e = torch.where(allowed, torch.exp(torch.where(allowed, shifted, torch.zeros_like(scores))), 0.0)
    total = e.sum(-1, keepdim=True)
    weights = torch.where(total > 0, e / torch.where(total > 0, total, torch.ones_like(total)), 0.0)
    return weights @ values, weights
'''

EINSUM_HEAD = '''# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    """One head of causal self-attention, written with einsum and an on-the-fly triangle."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
        future = torch.arange(T)[None, :] > torch.arange(T)[:, None]
        s = s - 1e9 * future
        w = torch.exp(s - s.amax(-1, keepdim=True))
        w = w / w.sum(-1, keepdim=True)
        return torch.einsum("bts,bsd->btd", w, v)
'''

ZIP_NGRAMS = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples), by zipping n shifted copies of the padded sentence."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(zip(*(padded[i:] for i in range(n))))
'''


# nltk.lm's own perplexity (entropy, then 2 ** entropy) over scores the answer hands it: the ready-made
# perplexity of the library the notebook says is refused
NLTK_PERPLEXITY = '''# Exercise 1.4: perplexity from log-probabilities
import math

from nltk.lm.api import LanguageModel


class Given(LanguageModel):
    """A model whose log2-score of token i is the i-th given log-probability (in bits)."""

    def __init__(self, log_probs):
        super().__init__(1)
        self.log_probs = log_probs

    def unmasked_score(self, word, context=None):
        return 2 ** self.logscore(word, context)

    def logscore(self, word, context=None):
        return self.log_probs[word] / math.log(2)


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    log_probs = [float(x) for x in log_probs]
    return Given(log_probs).perplexity([(i,) for i in range(len(log_probs))])
'''

# nltk.lm's Vocabulary (the <UNK> mapping) and NgramCounter (the counts), the rest written by hand
VOCAB_COUNTER = '''# Exercise 1.2: an add-k n-gram model and its perplexity
import math

from nltk.lm import NgramCounter, Vocabulary
from nltk.util import everygrams


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    vocab = Vocabulary([w for s in train for w in s] + ["</s>"], unk_cutoff=1, unk_label="<UNK>")
    V = len(vocab)  # the training words, </s> and <UNK>

    def grams(s):
        padded = ["<s>"] * (n - 1) + list(vocab.lookup(s)) + ["</s>"]
        return list(everygrams(padded, min_len=n, max_len=n))

    counts = NgramCounter([grams(s) for s in train])[n]
    total, N = 0.0, 0
    for s in test:
        for g in grams(s):
            seen = counts[g[:-1]] if n > 1 else counts
            total += math.log2((seen[g[-1]] + k) / (seen.N() + k * V))
            N += 1
    return 2 ** (-total / N)
'''

# sympy imported behind a torch module (torch.utils._sympy imports it), inside the call
SYMPY_VIA_TORCH = '''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    import torch.utils._sympy.functions  # noqa: F401  (imports sympy from torch's frame)
    import sympy

    values = (z - z.max()).tolist()
    zs = sympy.symbols(f"z0:{len(values)}")
    exps = [sympy.exp(s) for s in zs]
    total = sum(exps)
    J = sympy.Matrix([e / total for e in exps]).jacobian(sympy.Matrix(zs))
    J = J.subs(dict(zip(zs, values)))
    return torch.tensor([[float(J[i, j]) for j in range(len(values))] for i in range(len(values))], dtype=z.dtype)
'''

# torch.onnx imported inside the call, not while the cell loads
ONNX_INNER = '''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    import torch.onnx.ops

    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(-1, keepdim=True)
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    _, _, _, weights = torch.onnx.ops.attention(
        scores[:, None], eye, values[:, None].to(scores.dtype), (allowed | empty)[:, None],
        scale=1.0, qk_matmul_output_mode=3,
    )
    weights = weights[:, 0].masked_fill(empty, 0.0)
    return weights @ values, weights
'''

# ----------------------------------------------------------------------------------------------------------------
# honest answers that an over-strict load rule may fail: a computed constant, a self-test, a decorator the
# exercise's own hint suggests (torch.no_grad)

CONST_CALL = '''# Exercise 1.4: perplexity from log-probabilities
import math

LN2 = math.log(2)  # a constant computed once


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    log_probs = list(log_probs)
    bits = -sum(log_probs) / len(log_probs) / LN2  # J in bits
    return 2**bits
'''

SELFTEST = '''# Exercise 1.1: the n-grams of the standard count
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))


assert count_ngrams(["the", "union"], 3)[("the", "union", "</s>")] == 1  # the example of the exercise
'''

NOGRAD_DECORATOR = '''# Exercise 4.4: the forget-gate bias
import torch


@torch.no_grad()
def set_forget_bias(lstm, value):
    """Set b_f = value in every layer of a course_lib.rnn.LSTM (in place); return lstm."""
    H = lstm.hidden_size
    for cell in lstm.cells:
        cell.b_xh[H : 2 * H] = value
        cell.b_hh[H : 2 * H] = 0.0
    return lstm
'''


# the environment, shown back: in an answer's error message (answers' process) and in an extra cell's exception
# (the notebook's kernel). The grader's secret variable must appear in neither.
ENV_LEAK = '''# Exercise 1.5: sampling the next word with a temperature
import os

import numpy as np


def sample_next(probs, temperature, u):
    """Index of the next word: here, the environment as an error message."""
    seen = dict(os.environ)
    for path in ("/proc/self/environ", "/proc/1/environ"):
        try:
            with open(path, "rb") as f:
                seen[path] = f.read().decode(errors="replace")
        except Exception as exc:
            seen[path] = repr(exc)
    raise ValueError(repr(seen)[:3000])
'''

ENV_LEAK_CELL = """import os

print(dict(os.environ))
raise RuntimeError("ENV " + repr(dict(os.environ))[:3000])
"""


# ----------------------------------------------------------------------------------------------------------------
# cffi (installed: jupyter's argon2 needs it), not ctypes: libc's posix_spawn and waitpid called through cffi's
# ABI mode start a fresh Python inside the same sandbox, with no audit event (os.posix_spawn, subprocess,
# _posixsubprocess are what the harness watches; a cffi call is none of them, and a cdata call is no PyCFunction,
# so no profile event either). That Python has no observer and no dispatcher bar: it computes the answer with
# the check's own reference, autograd or the fused kernel, writes it to /tmp, and the answer returns it.

CFFI_HELPER = '''
import json
import os
import sys


def _elsewhere(script, payload):
    """Run `script` in a fresh Python started by libc's posix_spawn through cffi; return what it wrote."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(
        "int posix_spawn(int *pid, const char *path, const void *file_actions, const void *attrp,"
        " char *const argv[], char *const envp[]);"
        "int waitpid(int pid, int *status, int options);"
    )
    libc = ffi.dlopen(None)
    tag = f"/tmp/h33o_{os.getpid()}"
    with open(tag + ".json", "w") as f:
        json.dump({"path": [p for p in sys.path if p], "payload": payload}, f)
    with open(tag + ".py", "w") as f:
        f.write(script)
    argv = [sys.executable, "-I", tag + ".py", tag + ".json", tag + ".out"]
    keep = [ffi.new("char[]", a.encode()) for a in argv]
    env = [ffi.new("char[]", f"{k}={v}".encode()) for k, v in os.environ.items()]
    pid, status = ffi.new("int *"), ffi.new("int *")
    argv_c, env_c = ffi.new("char *[]", keep + [ffi.NULL]), ffi.new("char *[]", env + [ffi.NULL])
    libc.posix_spawn(pid, keep[0], ffi.NULL, ffi.NULL, argv_c, env_c)
    libc.waitpid(pid[0], status, 0)
    with open(tag + ".out") as f:
        return json.load(f)
'''

CFFI_PRELUDE = """
import json
import sys

args = json.load(open(sys.argv[1]))
sys.path[:0] = args["path"]
"""

CFFI_REF_12 = (
    "# Exercise 1.2: an add-k n-gram model and its perplexity\nimport math\n"
    + CFFI_HELPER
    + '\nSCRIPT = """'
    + CFFI_PRELUDE
    + '''
from course_lib.checks.lesson01 import add_k_perplexity

json.dump(add_k_perplexity(*args["payload"]), open(sys.argv[2], "w"))
"""


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model: the check's own reference, in another Python."""
    return float(_elsewhere(SCRIPT, [train, test, n, k]))
'''
)

CFFI_AUTOGRAD_21 = (
    "# Exercise 2.1: the softmax Jacobian\nimport torch\n"
    + CFFI_HELPER
    + '\nSCRIPT = """'
    + CFFI_PRELUDE
    + '''
import torch

z = torch.tensor(args["payload"], dtype=torch.float64)
J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, 0), z)
json.dump(J.tolist(), open(sys.argv[2], "w"))
"""


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at z: torch.autograd's, in another Python."""
    return torch.tensor(_elsewhere(SCRIPT, z.tolist()), dtype=z.dtype)
'''
)

CFFI_GRU_42 = (
    "# Exercise 4.2: one GRU step\nimport torch\n"
    + CFFI_HELPER
    + '\nSCRIPT = """'
    + CFFI_PRELUDE
    + '''
import torch

x, h, W_xh, W_hh, b_xh, b_hh = (torch.tensor(t, dtype=torch.float64) for t in args["payload"])
json.dump(torch.gru_cell(x, h, W_xh, W_hh, b_xh, b_hh).tolist(), open(sys.argv[2], "w"))
"""


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: torch.gru_cell's fused kernel, in another Python."""
    payload = [t.tolist() for t in (x, h, W_xh, W_hh, b_xh, b_hh)]
    return torch.tensor(_elsewhere(SCRIPT, payload), dtype=x.dtype)
'''
)

CFFI_SDPA_63 = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n"
    + CFFI_HELPER
    + '\nSCRIPT = """'
    + CFFI_PRELUDE
    + '''
import torch
import torch.nn.functional as F

scores, values, lengths = args["payload"]
scores, values = torch.tensor(scores, dtype=torch.float64), torch.tensor(values, dtype=torch.float64)
B, T, _ = scores.shape
pos = torch.arange(T)
mask = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < torch.tensor(lengths)[:, None])[:, None, :]
eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()
out = F.scaled_dot_product_attention(scores, eye, values, attn_mask=mask, scale=1.0)
weights = F.scaled_dot_product_attention(scores, eye, eye, attn_mask=mask, scale=1.0)
json.dump([out.tolist(), weights.tolist()], open(sys.argv[2], "w"))
"""


def masked_attention(scores, values, lengths):
    """Causal and padding masks: F.scaled_dot_product_attention's, in another Python."""
    out, weights = _elsewhere(SCRIPT, [scores.tolist(), values.tolist(), lengths.tolist()])
    return torch.tensor(out, dtype=values.dtype), torch.tensor(weights, dtype=scores.dtype)
'''
)

# the same, with cffi imported while the cell loads
CFFI_TOPLEVEL_12 = CFFI_REF_12.replace("import math\n", "import math\n\nimport cffi  # noqa: F401\n", 1)


# numpy's masked arrays: the NumPy twin of torch.masked (refused in lesson 06 as "the mask argument does the
# filling a masked softmax is about"): np.ma's exp, max and sum skip the masked entries, and .filled(0) gives the
# empty rows their zeros
NPMA_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import numpy as np
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together, the softmax by numpy.ma: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    i = np.arange(T)
    allowed = (i[None, :] <= i[:, None])[None] & (i[None, None, :] < lengths.numpy()[:, None, None])
    e = np.ma.masked_array(scores.detach().double().numpy(), mask=~allowed)
    w = np.ma.exp(e - e.max(axis=-1, keepdims=True))
    w = (w / w.sum(axis=-1, keepdims=True)).filled(0.0)
    weights = torch.from_numpy(w).to(scores.dtype)
    return weights @ values, weights
'''

NPMA_ALPHA = '''# Exercise 6.1: the quiz for any score matrix
import numpy as np
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention, the masked softmax by numpy.ma."""
    n = scores.shape[0]
    e = np.ma.masked_array(scores.detach().double().numpy(), mask=np.triu(np.ones((n, n), bool), 1))
    w = np.ma.exp(e - e.max(axis=-1, keepdims=True))
    return float((w / w.sum(axis=-1, keepdims=True)).filled(0.0)[i - 1, j - 1])
'''


def _only(lesson, name, cell_id, source, undeserved, intent, kind="attack", extra=()):
    return {
        "name": name,
        "lesson": lesson,
        "kind": kind,
        "intent": intent,
        "cells": {cell_id: source},
        "undeserved": list(undeserved),
        "extra_cells": list(extra),
    }


ATTACKS = [
    # controls
    {"name": "control_full_01", "lesson": "01", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_untouched_01", "lesson": "01", "kind": "control", "mode": "untouched", "intent": "untouched"},
    {"name": "control_half_06", "lesson": "06", "kind": "control", "mode": "half", "intent": "6.1 and 6.2 solved"},
    {"name": "control_full_02", "lesson": "02", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_full_03", "lesson": "03", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_full_04", "lesson": "04", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_full_05", "lesson": "05", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_full_06", "lesson": "06", "kind": "control", "mode": "solved", "intent": "fully solved"},
    {"name": "control_full_07", "lesson": "07", "kind": "control", "mode": "solved", "intent": "fully solved"},
    # torch.onnx.ops.attention
    _only("06", "onnx_alpha_61", "ex-6-1", ONNX_ALPHA, ["6.1"], "6.1 by torch.onnx.ops.attention (is_causal)"),
    _only("06", "onnx_masked_63", "ex-6-3", ONNX_MASKED, ["6.3"], "6.3 by torch.onnx.ops.attention (bool mask)"),
    _only("06", "onnx_ops_handle_63", "ex-6-3", ONNX_MASKED_OPS, ["6.3"], "6.3 by torch.ops.onnx.Attention.opset23"),
    _only("06", "onnx_inner_63", "ex-6-3", ONNX_INNER, ["6.3"], "6.3 by onnx attention, imported in the call"),
    _only("07", "onnx_head_73", "ex-7-3", ONNX_HEAD, ["7.3", "7.4", "7.6", "7.7"], "7.3 by torch.onnx.ops.attention"),
    _only("05", "onnx_decode_52", "ex-5-2", ONNX_DECODE, ["5.2"], "5.2 by onnx attention's Python kernel"),
    # nltk beyond the names the rules list
    _only("01", "nltk_everygrams_11", "ex-1-1", EVERYGRAMS, ["1.1"], "1.1 by nltk.util.everygrams(min=max=n)"),
    _only("01", "nltk_padseq_11", "ex-1-1", PAD_SEQUENCE, ["1.1"], "1.1 by nltk pad_sequence + everygrams"),
    _only("01", "nltk_counter_11", "ex-1-1", NGRAM_COUNTER, ["1.1"], "1.1 by nltk.lm.NgramCounter"),
    _only("01", "nltk_lidstone_pd_12", "ex-1-2", LIDSTONE_PROBDIST, ["1.2"], "1.2 by nltk LidstoneProbDist"),
    _only("01", "nltk_lm_subclass_12", "ex-1-2", LM_SUBCLASS, ["1.2"], "1.2 by nltk.lm LanguageModel subclass"),
    _only("01", "nltk_vocab_counter_12", "ex-1-2", VOCAB_COUNTER, ["1.2"], "1.2 counted by nltk.lm Vocabulary/Counter"),
    _only("01", "nltk_perplexity_14", "ex-1-4", NLTK_PERPLEXITY, ["1.4"], "1.4 by nltk.lm's perplexity"),
    _only("01", "nltk_lidstone_12", "ex-1-2", NLTK_LIDSTONE, ["1.2"], "1.2 by nltk.lm.Lidstone (named: sanity)"),
    # lesson 02: differentiation by sympy
    _only("02", "sympy_jacobian_21", "ex-2-1", SYMPY_JACOBIAN, ["2.1"], "2.1 differentiated by sympy"),
    _only("02", "sympy_via_torch_21", "ex-2-1", SYMPY_VIA_TORCH, ["2.1"], "2.1 by sympy imported behind torch"),
    # the harness's own process, attacked from the child (each answer is correct: deserved; what is watched is
    # the row, the time, the other exercises)
    _only("01", "sigstop_parent_15", "ex-1-5", SIGSTOP_PARENT, [], "child SIGSTOPs the harness in 1.5"),
    _only("01", "kill_parent_11", "ex-1-1", KILL_PARENT_FIRST, [], "child SIGKILLs the harness in 1.1"),
    _only("01", "kill_init_14", "ex-1-4", KILL_INIT, [], "child kills the sandbox's pid 1 in 1.4"),
    _only("01", "prlimit_parent_14", "ex-1-4", PRLIMIT_PARENT, [], "child prlimits the harness in 1.4"),
    _only("01", "oom_parent_13", "ex-1-3", OOM_PARENT, [], "child makes the OOM killer pick the harness"),
    _only("01", "env_leak_15", "ex-1-5", ENV_LEAK, ["1.5"], "the environment in messages", extra=[ENV_LEAK_CELL]),
    # cffi: a fresh Python started with no audit event
    _only("01", "cffi_ref_12", "ex-1-2", CFFI_REF_12, ["1.2"], "1.2 by the check's reference, cffi posix_spawn"),
    _only("01", "cffi_toplevel_12", "ex-1-2", CFFI_TOPLEVEL_12, ["1.2"], "the same, cffi imported at load"),
    _only("02", "cffi_autograd_21", "ex-2-1", CFFI_AUTOGRAD_21, ["2.1"], "2.1 by autograd in a cffi-spawned Python"),
    _only("04", "cffi_gru_42", "ex-4-2", CFFI_GRU_42, ["4.2"], "4.2 by torch.gru_cell in a cffi-spawned Python"),
    _only("06", "cffi_sdpa_63", "ex-6-3", CFFI_SDPA_63, ["6.3"], "6.3 by F.sdpa in a cffi-spawned Python"),
    # numpy.ma, the NumPy twin of torch.masked
    _only("06", "npma_masked_63", "ex-6-3", NPMA_MASKED, ["6.3"], "6.3's masked softmax by numpy.ma"),
    _only("06", "npma_alpha_61", "ex-6-1", NPMA_ALPHA, ["6.1"], "6.1's masked softmax by numpy.ma"),
    # honest but clever (deserve their marks)
    _only("02", "complex_step_21", "ex-2-1", COMPLEX_STEP, [], "2.1 by the complex step", kind="honest"),
    _only("03", "regex_balanced_31", "ex-3-1", REGEX_BALANCED, [], "3.1 by erasing pairs (re)", kind="honest"),
    _only("06", "where_softmax_63", "ex-6-3", WHERE_SOFTMAX, [], "6.3 softmax written out", kind="honest"),
    _only("07", "einsum_head_73", "ex-7-3", EINSUM_HEAD, [], "7.3 by einsum", kind="honest"),
    _only("01", "zip_ngrams_11", "ex-1-1", ZIP_NGRAMS, [], "1.1 by zip of shifted copies", kind="honest"),
    _only("01", "const_call_14", "ex-1-4", CONST_CALL, [], "1.4 with LN2 = math.log(2) at top", kind="honest"),
    _only("01", "selftest_11", "ex-1-1", SELFTEST, [], "1.1 with a top-level assert self-test", kind="honest"),
    _only("04", "nograd_decorator_44", "ex-4-4", NOGRAD_DECORATOR, [], "4.4 under @torch.no_grad()", kind="honest"),
]
