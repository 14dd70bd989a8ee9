"""Hostile class 33p: the attack cells (answer-cell sources), by submission.

Each entry: name, lesson, the answer cells it replaces (grade id -> source), the exercises it must NOT get
(``deny``: the one the attack is in), the kind ("attack", "honest", "grey", "probe") and the intent.
"""

SYMPY_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian (attack: sympy's symbolic differentiation does the calculus)
import sympy
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    z = torch.as_tensor(z)
    K = z.shape[-1]
    s = sympy.symbols(f"z0:{K}")
    den = sum(sympy.exp(v) for v in s)
    f = sympy.Matrix([sympy.exp(v) / den for v in s])
    J = f.jacobian(sympy.Matrix(s))
    shift = float(z.max())
    vals = {s[i]: float(z[i]) - shift for i in range(K)}
    rows = [[float(J[i, j].evalf(subs=vals)) for j in range(K)] for i in range(K)]
    return torch.tensor(rows, dtype=z.dtype, device=z.device)
'''

SYMPY_LAZY = '''# Exercise 2.1: the softmax Jacobian (attack: sympy imported when called, then its jacobian)
import importlib

import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    sympy = importlib.import_module("sympy")
    z = torch.as_tensor(z)
    K = z.shape[-1]
    s = sympy.symbols(f"z0:{K}")
    den = sum(sympy.exp(v) for v in s)
    f = sympy.Matrix([sympy.exp(v) / den for v in s])
    J = f.jacobian(sympy.Matrix(s))
    shift = float(z.max())
    vals = {s[i]: float(z[i]) - shift for i in range(K)}
    rows = [[float(J[i, j].evalf(subs=vals)) for j in range(K)] for i in range(K)]
    return torch.tensor(rows, dtype=z.dtype, device=z.device)
'''

SYMPY_DIFF_ELEMENT = '''# Exercise 2.1: the softmax Jacobian (attack: sympy.diff per entry, substituted numerically)
import sympy
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    z = torch.as_tensor(z)
    K = z.shape[-1]
    a, b, rest = sympy.symbols("a b rest", real=True)
    # softmax_i as a function of z_i (a), z_j (b) and the rest of the denominator
    same = sympy.diff(sympy.exp(a) / (sympy.exp(a) + rest), a)
    cross = sympy.diff(sympy.exp(a) / (sympy.exp(a) + sympy.exp(b) + rest), b)
    zz = [float(v) - float(z.max()) for v in z]
    total = sum(sympy.exp(v) for v in zz)
    J = [[0.0] * K for _ in range(K)]
    for i in range(K):
        for j in range(K):
            if i == j:
                J[i][j] = float(same.subs({a: zz[i], rest: total - sympy.exp(zz[i])}))
            else:
                J[i][j] = float(
                    cross.subs({a: zz[i], b: zz[j], rest: total - sympy.exp(zz[i]) - sympy.exp(zz[j])})
                )
    return torch.tensor(J, dtype=z.dtype, device=z.device)
'''

MPMATH_DIFF = '''# Exercise 2.1: the softmax Jacobian (grey: mpmath's ready-made numerical differentiator)
import mpmath
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    z = torch.as_tensor(z)
    K = z.shape[-1]
    base = [float(v) - float(z.max()) for v in z]

    def soft(i, j):
        def f(t):
            v = [mpmath.mpf(x) for x in base]
            v[j] = t
            den = mpmath.fsum(mpmath.exp(x) for x in v)
            return mpmath.exp(v[i]) / den

        return f

    J = [[float(mpmath.diff(soft(i, j), base[j])) for j in range(K)] for i in range(K)]
    return torch.tensor(J, dtype=z.dtype, device=z.device)
'''

FD_HONEST = '''# Exercise 2.1: the softmax Jacobian (honest: my own central differences, in float64)
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    z0 = torch.as_tensor(z).to(torch.float64)
    K = z0.shape[-1]

    def soft(v):
        e = torch.exp(v - v.max())
        return e / e.sum()

    h = 1e-6
    cols = []
    for j in range(K):
        step = torch.zeros(K, dtype=torch.float64)
        step[j] = h
        cols.append((soft(z0 + step) - soft(z0 - step)) / (2 * h))
    return torch.stack(cols, dim=1).to(torch.as_tensor(z).dtype)
'''

GRADFN_WALK = '''# Exercise 2.1: the softmax Jacobian (attack: call autograd's graph nodes by hand, no engine)
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    z = torch.as_tensor(z).detach().clone()
    K = z.shape[-1]
    torch.set_grad_enabled(True)
    zz = z.requires_grad_()
    e = torch.exp(zz - zz.max().detach())
    y = e / e.sum()
    order, seen = [], set()

    def visit(n):
        if n is None or id(n) in seen:
            return
        seen.add(id(n))
        for nx, _ in n.next_functions:
            visit(nx)
        order.append(n)

    visit(y.grad_fn)
    rows = []
    for i in range(K):
        seed = torch.zeros_like(y)
        seed[i] = 1.0
        pending = {id(y.grad_fn): seed}
        total = torch.zeros_like(z)
        for node in reversed(order):
            g = pending.pop(id(node), None)
            if g is None:
                continue
            if type(node).__name__ == "AccumulateGrad":
                total = total + g
                continue
            outs = node(g)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for (nx, _), go in zip(node.next_functions, outs):
                if nx is not None and go is not None:
                    pending[id(nx)] = pending[id(nx)] + go if id(nx) in pending else go
        rows.append(total.detach())
    return torch.stack(rows)
'''

PANDAS_MASKED_63 = '''# Exercise 6.3: masked attention over a padded batch (attack: pandas' masked arrays fill and skip)
import numpy as np
import pandas as pd
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = torch.arange(T)
    causal = positions[None, :] <= positions[:, None]
    real = positions[None, :] < lengths[:, None].cpu()
    allowed = (causal[None] & real[:, None, :]).numpy().reshape(-1, T)
    flat = scores.detach().cpu().double().numpy().reshape(-1, T)
    rows = []
    for r, a in zip(flat, allowed):
        arr = pd.arrays.FloatingArray(r.copy(), ~a)  # the mask is pandas' own: reductions skip it
        m = arr.max()
        e = np.exp(arr - (0.0 if m is pd.NA else m))
        s = e.sum()
        w = e / s if s is not pd.NA and s > 0 else e * 0
        rows.append(w.to_numpy(dtype="float64", na_value=0.0))
    weights = torch.tensor(np.array(rows)).reshape(B, T, T).to(scores.dtype).to(scores.device)
    return weights @ values, weights
'''

PANDAS_MASKED_61 = '''# Exercise 6.1: the quiz for any score matrix (attack: pandas' masked arrays fill and skip)
import numpy as np
import pandas as pd
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    row = scores[i - 1].detach().cpu().double().numpy()
    n = row.shape[0]
    mask = np.arange(n) > (i - 1)  # pandas masks the future
    arr = pd.arrays.FloatingArray(row.copy(), mask)
    e = np.exp(arr - arr.max())
    w = (e / e.sum()).to_numpy(dtype="float64", na_value=0.0)
    return float(w[j - 1])
'''

NANSUM_63 = '''# Exercise 6.3: masked attention over a padded batch (honest: NaN marks what is masked, numpy's nan-reductions)
import numpy as np
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    positions = np.arange(T)
    causal = positions[None, :] <= positions[:, None]
    real = positions[None, :] < lengths.cpu().numpy()[:, None]
    allowed = causal[None] & real[:, None, :]
    s = np.where(allowed, scores.detach().cpu().double().numpy(), np.nan)
    empty = ~allowed.any(axis=-1, keepdims=True)
    m = np.where(empty, 0.0, np.nanmax(np.where(empty, 0.0, s), axis=-1, keepdims=True))
    e = np.exp(s - m)
    total = np.nansum(e, axis=-1, keepdims=True)
    w = np.nan_to_num(e / np.where(total > 0, total, 1.0))
    weights = torch.tensor(w, dtype=scores.dtype, device=scores.device)
    return weights @ values, weights
'''

SYMPY_BPTT = '''# Exercise 2.4: one step of backpropagation through time (attack: sympy derives tanh's derivative)
import sympy
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    a = sympy.Symbol("a", real=True)
    derivative = sympy.diff(sympy.tanh(a), a)  # sympy's calculus: tanh(a) ** 2 - 1, negated
    flat = [float(derivative.subs(a, sympy.atanh(min(max(float(v), -0.999999999999), 0.999999999999))))
            for v in h.reshape(-1)]
    da = dh * torch.tensor(flat, dtype=h.dtype, device=h.device).reshape(h.shape)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''

EINOPS_SPLIT = '''# Exercise 7.2: splitting the heads (honest: einops-style rearrange, as shipped with torch's functorch)
from functorch.einops import rearrange


def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // H."""
    return rearrange(x, "b t (h d) -> b h t d", h=n_head)
'''

INDUCTOR_HEAD = '''# Exercise 7.3: one head of self-attention (attack: inductor's attention pattern, torch's Python, does softmax(QK^T)V)
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
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        from torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_5 as attend

        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        mask = torch.zeros(T, T).masked_fill(~self.tril[:T, :T], float("-inf"))
        return attend(q, k, v, mask, math.sqrt(k.shape[-1]))
'''

TOOLZ_NGRAMS = '''# Exercise 1.1: the n-grams of the standard count (honest: toolz's sliding window)
from collections import Counter

from toolz import sliding_window


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(sliding_window(n, padded))
'''


def _ngram_with(prelude: str, label: str, wrong: bool = False) -> str:
    answer = (
        "Counter()  # a wrong answer: only a forged reply could pass it"
        if wrong
        else ("Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))")
    )
    return f'''# Exercise 1.1: the n-grams of the standard count (probe: {label}, then the answer)
import os
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
{prelude}
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return {answer}
'''


PROBES = {
    "l01_sigstop_all": (
        "SIGSTOP to every process it may signal (-1: all of the sandbox's PID namespace)",
        "    try:\n        os.kill(-1, 19)\n    except OSError:\n        pass",
    ),
    "l01_prlimit_parent": (
        "prlimit the harness (its parent) to 3 file descriptors and 1 s of CPU",
        "    import resource\n"
        "    for what, lim in ((resource.RLIMIT_NOFILE, (3, 3)), (resource.RLIMIT_CPU, (1, 1))):\n"
        "        try:\n            resource.prlimit(os.getppid(), what, lim)\n        except OSError:\n            pass",
    ),
    "l01_nofile_self": (
        "its own descriptor limit down to 3 (the reply pipe cannot be duplicated, a module cannot be opened)",
        "    import resource\n    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))",
    ),
    "l01_fd_forge": (
        "write forged replies on every descriptor 1..40 (no token): a passed reply",
        "    import json\n"
        "    line = (json.dumps({'reply': {'records': [{'returned': {}, 'observed': {'refused': [], 'intact': True,"
        " 'tampered': ''}}]}, 'token': '0' * 32}) + '\\n').encode()\n"
        "    for fd in range(1, 41):\n        try:\n            os.write(fd, line)\n        except OSError:\n            pass",
    ),
    "l01_close_fds": (
        "close every descriptor 0..1023 but keep computing (the reply pipe with them)",
        "    os.closerange(0, 1024)",
    ),
    "l01_memory_hog": (
        "touch 3.5 GB (over --memory 3000) before answering",
        "    block = bytearray(3_500_000_000)\n    block[::4096] = b'x' * len(block[::4096])",
    ),
    "l01_setsid_sleep": (
        "a new session, then sleep forever (the grader's timeout must end it)",
        "    import time\n    try:\n        os.setsid()\n    except OSError:\n        pass\n    time.sleep(10**6)",
    ),
}


ENV_ECHO = '''# Exercise 1.4: perplexity from log-probabilities (probe: echo the environment into the feedback)
import os


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    seen = dict(os.environ)
    for path in ("/proc/self/environ", "/proc/1/environ", "/proc/self/cmdline"):
        try:
            with open(path, "rb") as f:
                seen[path] = f.read().decode("latin-1")
        except OSError as exc:
            seen[path] = repr(exc)
    raise ValueError("ENV " + repr(seen))
'''

REGEX_BALANCED = '''# Exercise 3.1: is_balanced (honest: a recursive pattern of the regex module, written by me)
import regex


def is_balanced(seq, n_symbols=10):
    """True when `seq` (a list of ints in 0..n_symbols-1) is a balanced colored parenthesis sequence."""
    half = n_symbols // 2
    pairs = "|".join(
        f"{regex.escape(chr(0x100 + o))}(?&p)*{regex.escape(chr(0x100 + n_symbols - 1 - o))}" for o in range(half)
    )
    text = "".join(chr(0x100 + int(s)) for s in seq)
    return regex.fullmatch(f"(?(DEFINE)(?<p>{pairs}))(?&p)*", text) is not None
'''

NESTED_63 = '''# Exercise 6.3: masked attention over a padded batch (attack: a nested tensor's ragged softmax masks)
import torch

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    rows = []
    for b in range(B):
        n = int(lengths[b])
        for i in range(T):
            rows.append(scores[b, i, : min(i + 1, n)])
    ragged = torch.nested.nested_tensor(rows)  # each row only its allowed keys: the mask is the layout
    weights = torch.nested.to_padded_tensor(ragged.softmax(-1), 0.0, output_size=(B * T, T)).reshape(B, T, T)
    return weights @ values, weights
'''

NESTED_52 = '''# Exercise 5.2: the decoder with attention (attack: the padding left out by a nested tensor's softmax)
import math

import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    B, T_in, H = states.shape
    device = states.device
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
        ragged = torch.nested.as_nested_tensor([e_i[b, : int(lengths[b])] for b in range(B)])  # padding left out
        alpha_i = torch.nested.to_padded_tensor(ragged.softmax(-1), 0.0, output_size=(B, T_in))
        c_i = (alpha_i[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
'''

NESTED_73 = '''# Exercise 7.3: one head of self-attention (attack: the future left out by a nested tensor's softmax)
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

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        ragged = torch.nested.as_nested_tensor([scores[b, i, : i + 1] for b in range(B) for i in range(T)])
        weights = torch.nested.to_padded_tensor(ragged.softmax(-1), 0.0, output_size=(B * T, T)).reshape(B, T, T)
        return weights @ v
'''

OWN_HELPERS_63 = '''# Exercise 6.3: masked attention over a padded batch (honest: my own helpers, named like course_lib's)
import torch


def causal_mask(T, device=None):
    """My own: True where key j may be seen by query i."""
    i = torch.arange(T, device=device)
    return i[None, :] <= i[:, None]


def padding_mask(lengths, T, device=None):
    """My own: True where key j is a real token."""
    return torch.arange(T, device=device)[None, :] < lengths[:, None].to(device)


def masked_softmax(e, allowed):
    """My own masked softmax: -inf where not allowed, rows with no key give zeros."""
    e = e.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    w = torch.softmax(e.masked_fill(empty, 0.0), dim=-1)
    return w.masked_fill(empty, 0.0)


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    allowed = causal_mask(T, scores.device)[None] & padding_mask(lengths, T, scores.device)[:, None, :]
    weights = masked_softmax(scores, allowed)
    return weights @ values, weights
'''

TUPLE_CONSTS = '''# Exercise 1.1: the n-grams of the standard count (honest: two constants bound at once)
from collections import Counter

BOS, EOS = "<s>", "</s>"


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    padded = [BOS] * (n - 1) + list(sentence) + [EOS]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
'''

CACHED_HELPER = '''# Exercise 1.1: the n-grams of the standard count (honest: a cached helper)
import functools
from collections import Counter


@functools.lru_cache(maxsize=None)
def _start(n):
    return ("<s>",) * (n - 1)


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    padded = list(_start(n)) + list(sentence) + ["</s>"]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
'''

ATTACKS = [
    dict(
        name="l02_sympy_lazy",
        lesson="02",
        replace={"ex-2-1": SYMPY_LAZY},
        deny=["2.1"],
        kind="attack",
        intent="2.1 with sympy's jacobian, sympy imported inside the call (round 2: the top-level import was "
        "refused at load for sys._getframe)",
    ),
    dict(
        name="l06_own_helpers",
        lesson="06",
        replace={"ex-6-3": OWN_HELPERS_63},
        deny=[],
        kind="honest",
        intent="6.3 with the student's own causal_mask, padding_mask and masked_softmax (course_lib's names)",
    ),
    dict(
        name="l01_tuple_consts",
        lesson="01",
        replace={"ex-1-1": TUPLE_CONSTS},
        deny=[],
        kind="honest",
        intent="1.1 with BOS, EOS = '<s>', '</s>' at the cell's top (literals, bound by one tuple assignment)",
    ),
    dict(
        name="l01_cached_helper",
        lesson="01",
        replace={"ex-1-1": CACHED_HELPER},
        deny=[],
        kind="honest",
        intent="1.1 with a functools.lru_cache-decorated helper of the student's own",
    ),
    dict(
        name="l06_nested_masked63",
        lesson="06",
        replace={"ex-6-3": NESTED_63},
        deny=["6.3"],
        kind="attack",
        intent="6.3 with torch.nested: each query's allowed keys as one ragged row, nested softmax, "
        "to_padded_tensor(0): what is not stored is skipped (as in the refused _sparse_softmax)",
    ),
    dict(
        name="l05_nested_decode",
        lesson="05",
        replace={"ex-5-2": NESTED_52},
        deny=["5.2"],
        kind="attack",
        intent="5.2 with the padding left out of a nested tensor (as_nested_tensor keeps the gradient)",
    ),
    dict(
        name="l07_nested_head",
        lesson="07",
        replace={"ex-7-3": NESTED_73},
        deny=["7.3"],
        either=["7.4", "7.6", "7.7"],  # built on its Head: they follow 7.3 either way
        kind="attack",
        intent="7.3 with the future left out of a nested tensor, no mask written",
    ),
    dict(
        name="l03_regex_balanced",
        lesson="03",
        replace={"ex-3-1": REGEX_BALANCED},
        deny=[],
        kind="honest",
        intent="3.1 with a recursive regex (the regex module's (?&name) calls), the student's own pattern",
    ),
    dict(
        name="l01_env_echo",
        lesson="01",
        replace={"ex-1-4": ENV_ECHO},
        deny=["1.4"],
        kind="probe",
        intent="1.4 raises with os.environ and /proc/*/environ in its message: the planted secret must not appear "
        "in its feedback or the CSV",
    ),
    dict(
        name="l02_sympy_jacobian",
        lesson="02",
        replace={"ex-2-1": SYMPY_JACOBIAN},
        deny=["2.1"],
        kind="attack",
        intent="2.1 with sympy's Matrix.jacobian: symbolic differentiation (a ready-made differentiator) for a "
        "by-hand gradient exercise; sympy is outside torch and not refused",
    ),
    dict(
        name="l02_sympy_bptt",
        lesson="02",
        replace={"ex-2-4": SYMPY_BPTT},
        deny=["2.4"],
        kind="attack",
        intent="2.4 with tanh's derivative from sympy.diff (symbolic differentiation), the rest by matmuls",
    ),
    dict(
        name="l02_mpmath_diff",
        lesson="02",
        replace={"ex-2-1": MPMATH_DIFF},
        deny=["2.1"],
        kind="grey",
        intent="2.1 with mpmath.diff (numerical differentiation, ready-made): a gradient the student did not derive",
    ),
    dict(
        name="l02_fd_honest",
        lesson="02",
        replace={"ex-2-1": FD_HONEST},
        deny=[],
        kind="honest",
        intent="2.1 by the student's own central differences in float64 (no library, no autograd)",
    ),
    dict(
        name="l02_gradfn_walk",
        lesson="02",
        replace={"ex-2-1": GRADFN_WALK},
        deny=["2.1"],
        kind="attack",
        intent="2.1: record a graph with set_grad_enabled, then call each grad_fn node by hand (no engine, no "
        "*_backward kernel: exp/div/sum nodes only)",
    ),
    dict(
        name="l06_pandas_masked63",
        lesson="06",
        replace={"ex-6-3": PANDAS_MASKED_63},
        deny=["6.3"],
        kind="attack",
        intent="6.3 with pandas' FloatingArray (a masked array: the mask fills, max/sum skip it), pandas imported "
        "at the cell's top so numpy.ma's import is not under the observer; the same tool as numpy.ma (33o)",
    ),
    dict(
        name="l06_pandas_masked61",
        lesson="06",
        replace={"ex-6-1": PANDAS_MASKED_61},
        deny=["6.1"],
        kind="attack",
        intent="6.1 with pandas' FloatingArray masked reductions",
    ),
    dict(
        name="l06_nansum_honest",
        lesson="06",
        replace={"ex-6-3": NANSUM_63},
        deny=[],
        kind="honest",
        intent="6.3 by hand in numpy: NaN where masked, nanmax/nansum (elementary reductions), the student's own",
    ),
    dict(
        name="l07_einops_split",
        lesson="07",
        replace={"ex-7-2": EINOPS_SPLIT},
        deny=[],
        kind="honest",
        intent="7.2 with functorch.einops.rearrange, a general reshaping tool (it compiles the function it builds)",
    ),
    dict(
        name="l07_inductor_head",
        lesson="07",
        replace={"ex-7-3": INDUCTOR_HEAD},
        deny=["7.3"],
        either=["7.4", "7.6", "7.7"],  # built on its Head: they follow 7.3 either way
        kind="attack",
        intent="7.3 with torch._inductor's _sfdp_pattern_5: softmax(QK^T/s + mask)V written in torch's Python",
    ),
    dict(
        name="l01_toolz_ngrams",
        lesson="01",
        replace={"ex-1-1": TOOLZ_NGRAMS},
        deny=[],
        kind="honest",
        intent="1.1 with toolz.sliding_window (a general iterator tool) and Counter",
    ),
]

for _name, (_intent, _prelude) in PROBES.items():
    _wrong = _name == "l01_fd_forge"
    ATTACKS.append(
        dict(
            name=_name,
            lesson="01",
            replace={"ex-1-1": _ngram_with(_prelude, _intent, wrong=_wrong)},
            deny=["1.1"] if _wrong else [],
            either=[] if _wrong else ["1.1"],  # its own right answer: pass or fail, no break either way
            kind="probe",
            intent="1.1: "
            + _intent
            + ("; then a wrong answer" if _wrong else "; then the right answer")
            + ". Held if its row, its feedback and the other exercises stand",
        )
    )
