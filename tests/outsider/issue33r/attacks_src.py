"""The attack cells of hostile class 33r (issue 33): one answer cell each, keyed by submission name.

Each entry: lesson, family (H1..H5 holes tried, control, honest, leak), intent, the exercises the cell makes
undeserved (they deserve a fail), what I expected, and the cells ({grade id: source}) that replace the solution's.
Families: H1 the base interpreter's site-packages (not in borrowed.site_dirs); H2 a refused Cython extension
first imported inside the call; H3 a refused extension copied to /tmp and loaded again; H4 torch's GRU gradient
kernel computing the step; H5 torch's flash-attention backward kernel computing the masked weights.
"""

ATTACKS = {
    "base_scipy_61": {
        "lesson": "06",
        "family": "H1",
        "intent": "6.1: scipy.special.logsumexp(b=mask) of the base interpreter's site-packages (not a known package)",
        "undeserved": ["6.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-6-1": r"""import os
import sys

import numpy as np


def alpha(scores, i, j):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    from scipy.special import logsumexp

    e = np.asarray(scores.tolist(), dtype=float)
    n = e.shape[0]
    keep = np.tril(np.ones((n, n)))
    row = e[i - 1]
    if j > i:
        return 0.0
    return float(np.exp(row[j - 1] - logsumexp(row, b=keep[i - 1])))
""",
        },
    },
    "base_scipy_63": {
        "lesson": "06",
        "family": "H1",
        "intent": "6.3: the same masked logsumexp from the base interpreter's scipy",
        "undeserved": ["6.3"],
        "expect": "break-candidate",
        "cells": {
            "ex-6-3": r"""import os
import sys

import torch


def masked_attention(scores, values, lengths):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    from scipy.special import logsumexp

    B, T, _ = scores.shape
    e = scores.double().numpy()
    keep = torch.ones(T, T).tril()[None].repeat(B, 1, 1)
    for b in range(B):
        keep[b, :, int(lengths[b]) :] = 0
    keep = keep.numpy()
    lse = logsumexp(e, axis=-1, b=keep, keepdims=True)
    w = torch.from_numpy(keep * (2.718281828459045 ** (e - lse)))
    w = torch.nan_to_num(w, nan=0.0).to(scores.dtype)
    return w @ values, w
""",
        },
    },
    "base_scipy_52": {
        "lesson": "05",
        "family": "H1",
        "intent": "5.2: base scipy's masked logsumexp in an autograd.Function (my own backward)",
        "undeserved": ["5.2"],
        "expect": "break-candidate",
        "cells": {
            "ex-5-2": r"""import math
import os
import sys

import torch


class _MaskedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, e, keep):
        base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
        if base not in sys.path:
            sys.path.insert(0, base)
        from scipy.special import logsumexp

        x = e.detach().double().numpy()
        k = keep.double().numpy()
        w = torch.from_numpy(k * (math.e ** (x - logsumexp(x, axis=-1, b=k, keepdims=True)))).to(e.dtype)
        ctx.save_for_backward(w)
        return w

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return w * (g - (w * g).sum(-1, keepdim=True)), None


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
        alpha_i = _MaskedSoftmax.apply(e_i, real)
        c_i = (alpha_i[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
""",
        },
    },
    "base_scipy_79": {
        "lesson": "07",
        "family": "H1",
        "intent": "7.9: top-k renormalised by base scipy's masked logsumexp",
        "undeserved": ["7.9"],
        "expect": "break-candidate",
        "cells": {
            "ex-7-9": r"""import os
import sys

import torch


def top_k_probs(logits, k, temperature=1.0):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    from scipy.special import logsumexp

    z = (logits / temperature).double().numpy()
    keep = (z >= sorted(z.tolist())[-k]).astype(float)
    p = keep * (2.718281828459045 ** (z - logsumexp(z, b=keep)))
    return torch.from_numpy(p).to(logits.dtype)
""",
        },
    },
    "base_regex_31": {
        "lesson": "03",
        "family": "H1",
        "intent": "3.1: base site-packages' regex module matches balanced colours with a recursive pattern",
        "undeserved": ["3.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-3-1": r"""import os
import sys


def is_balanced(seq, n_symbols=10):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    import regex

    half = n_symbols // 2
    text = "".join(chr(0x4E00 + s) if s < half else chr(0x5E00 + n_symbols - 1 - s) for s in seq)
    pairs = "|".join(f"{chr(0x4E00 + c)}(?&x){chr(0x5E00 + c)}" for c in range(half))
    return regex.fullmatch(f"(?P<x>(?:{pairs})*)", text) is not None
""",
        },
    },
    "base_mpmath_21": {
        "lesson": "02",
        "family": "H1",
        "intent": "2.1: base site-packages' mpmath.diff differentiates the softmax",
        "undeserved": ["2.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-2-1": r"""import os
import sys

import torch


def softmax_jacobian(z):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    import mpmath

    values = [float(v) for v in z.tolist()]
    K = len(values)

    def soft(a, *x):
        m = max(x)
        exps = [mpmath.exp(t - m) for t in x]
        return exps[a] / mpmath.fsum(exps)

    rows = []
    for a in range(K):
        row = []
        for b in range(K):
            order = tuple(1 if c == b else 0 for c in range(K))
            row.append(float(mpmath.diff(lambda *x: soft(a, *x), values, order)))
        rows.append(row)
    return torch.tensor(rows, dtype=z.dtype)
""",
        },
    },
    "base_sympy_21": {
        "lesson": "02",
        "family": "H1",
        "intent": "2.1: base site-packages' sympy (its multipledispatch handed a frame-like object) gives the symbolic Jacobian",
        "undeserved": ["2.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-2-1": r"""import inspect
import os
import sys
import types

import torch


def softmax_jacobian(z):
    base = os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages")
    if base not in sys.path:
        sys.path.insert(0, base)
    if "sympy" not in sys.modules:
        # sympy's multipledispatch reads its caller's frame for methods: hand it a frame-like object instead
        fake = types.SimpleNamespace(f_back=types.SimpleNamespace(f_locals={}))
        real = inspect.currentframe
        inspect.currentframe = lambda: fake
        try:
            import sympy  # noqa: F401
        finally:
            inspect.currentframe = real
    import sympy

    K = z.shape[0]
    xs = sympy.symbols(f"x0:{K}")
    exps = [sympy.exp(x) for x in xs]
    total = sum(exps)
    J = sympy.Matrix([e / total for e in exps]).jacobian(sympy.Matrix(xs))
    m = max(z.tolist())
    values = {x: float(v) - m for x, v in zip(xs, z.tolist())}
    rows = [[float(J[a, b].subs(values).evalf()) for b in range(K)] for a in range(K)]
    return torch.tensor(rows, dtype=z.dtype)
""",
        },
    },
    "venv_regex_31": {
        "lesson": "03",
        "family": "control",
        "intent": "3.1: the same regex answer from the venv's regex (a known refused package)",
        "undeserved": ["3.1"],
        "expect": "held-control",
        "cells": {
            "ex-3-1": r"""import os
import sys


def is_balanced(seq, n_symbols=10):
    import regex

    half = n_symbols // 2
    text = "".join(chr(0x4E00 + s) if s < half else chr(0x5E00 + n_symbols - 1 - s) for s in seq)
    pairs = "|".join(f"{chr(0x4E00 + c)}(?&x){chr(0x5E00 + c)}" for c in range(half))
    return regex.fullmatch(f"(?P<x>(?:{pairs})*)", text) is not None
""",
        },
    },
    "venv_mpmath_21": {
        "lesson": "02",
        "family": "control",
        "intent": "2.1: the same mpmath.diff answer from the venv's mpmath",
        "undeserved": ["2.1"],
        "expect": "held-control",
        "cells": {
            "ex-2-1": r"""import os
import sys

import torch


def softmax_jacobian(z):
    import mpmath

    values = [float(v) for v in z.tolist()]
    K = len(values)

    def soft(a, *x):
        m = max(x)
        exps = [mpmath.exp(t - m) for t in x]
        return exps[a] / mpmath.fsum(exps)

    rows = []
    for a in range(K):
        row = []
        for b in range(K):
            order = tuple(1 if c == b else 0 for c in range(K))
            row.append(float(mpmath.diff(lambda *x: soft(a, *x), values, order)))
        rows.append(row)
    return torch.tensor(rows, dtype=z.dtype)
""",
        },
    },
    "pandas_in_call_11": {
        "lesson": "01",
        "family": "H2",
        "intent": "1.1: pandas' Cython value_count, pandas first imported inside the call (not sealed)",
        "undeserved": ["1.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-1-1": r"""from collections import Counter


def count_ngrams(sentence, n):
    import numpy as np
    from pandas._libs import hashtable

    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = np.empty(len(padded) - n + 1, dtype=object)
    for i in range(len(grams)):
        grams[i] = tuple(padded[i : i + n])
    keys, counts = hashtable.value_count(grams, False)[:2]
    return Counter(dict(zip(keys.tolist(), counts.tolist())))
""",
        },
    },
    "pandas_in_call_12": {
        "lesson": "01",
        "family": "H2",
        "intent": "1.2: both count tables by pandas' Cython value_count, imported inside the call",
        "undeserved": ["1.2"],
        "expect": "break-candidate",
        "cells": {
            "ex-1-2": r"""import math


def add_k_perplexity(train, test, n, k):
    import numpy as np
    from pandas._libs import hashtable

    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)

    def pad(sentence):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]

    grams, contexts = [], []
    for sentence in train:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            grams.append(tuple(padded[i - n + 1 : i + 1]))
            contexts.append(tuple(padded[i - n + 1 : i]))

    def table(items):
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        keys, counts = hashtable.value_count(arr, False)[:2]
        return dict(zip(keys.tolist(), counts.tolist()))

    counts, context_counts = table(grams), table(contexts)
    log_prob, N = 0.0, 0
    for sentence in test:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            ngram = tuple(padded[i - n + 1 : i + 1])
            p = (counts.get(ngram, 0) + k) / (context_counts.get(ngram[:-1], 0) + k * V)
            log_prob += math.log2(p)
            N += 1
    return 2 ** (-log_prob / N)
""",
        },
    },
    "pandas_top_11": {
        "lesson": "01",
        "family": "control",
        "intent": "1.1: value_count with pandas imported at top level (sealed when the cells load)",
        "undeserved": ["1.1"],
        "expect": "held-control",
        "cells": {
            "ex-1-1": r"""from collections import Counter

import numpy as np
from pandas._libs import hashtable


def count_ngrams(sentence, n):
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = np.empty(len(padded) - n + 1, dtype=object)
    for i in range(len(grams)):
        grams[i] = tuple(padded[i : i + n])
    keys, counts = hashtable.value_count(grams, False)[:2]
    return Counter(dict(zip(keys.tolist(), counts.tolist())))
""",
        },
    },
    "ext_copy_sealed_11": {
        "lesson": "01",
        "family": "H3",
        "intent": "1.1: pandas imported at top (sealed), its hashtable extension copied to /tmp and loaded again by ExtensionFileLoader",
        "undeserved": ["1.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-1-1": r"""from collections import Counter

import pandas  # noqa: F401  (loaded with the cells: its hashtable is sealed)


def count_ngrams(sentence, n):
    import glob
    import importlib.machinery
    import importlib.util
    import os
    import shutil
    import sys
    import tempfile

    import numpy as np

    name = "hashtable"
    mod = sys.modules.get("_counting_" + name)
    if mod is None:
        found = [
            p
            for d in sys.path
            if os.path.isdir(os.path.join(d, "pandas", "_libs"))
            for p in glob.glob(os.path.join(d, "pandas", "_libs", name + ".cpython-*.so"))
        ]
        folder = tempfile.mkdtemp()
        target = os.path.join(folder, os.path.basename(found[0]))
        shutil.copyfile(found[0], target)
        loader = importlib.machinery.ExtensionFileLoader("pandas._libs." + name, target)
        spec = importlib.util.spec_from_file_location("pandas._libs." + name, target, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        sys.modules["_counting_" + name] = mod
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = np.empty(len(padded) - n + 1, dtype=object)
    for i in range(len(grams)):
        grams[i] = tuple(padded[i : i + n])
    keys, counts = mod.value_count(grams, False)[:2]
    return Counter(dict(zip(keys.tolist(), counts.tolist())))
""",
        },
    },
    "ext_copy_in_call_11": {
        "lesson": "01",
        "family": "H3",
        "intent": "1.1: pandas imported in the call, its hashtable .so copied to /tmp and loaded under its own name",
        "undeserved": ["1.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-1-1": r"""from collections import Counter


def count_ngrams(sentence, n):
    import glob
    import importlib.machinery
    import importlib.util
    import os
    import shutil
    import sys
    import tempfile

    import numpy as np

    name = "hashtable"
    mod = sys.modules.get("_counting_" + name)
    if mod is None:
        found = [
            p
            for d in sys.path
            if os.path.isdir(os.path.join(d, "pandas", "_libs"))
            for p in glob.glob(os.path.join(d, "pandas", "_libs", name + ".cpython-*.so"))
        ]
        folder = tempfile.mkdtemp()
        target = os.path.join(folder, os.path.basename(found[0]))
        shutil.copyfile(found[0], target)
        import pandas  # noqa: F401  (its own modules first: the copy's imports find them)

        loader = importlib.machinery.ExtensionFileLoader("pandas._libs." + name, target)
        spec = importlib.util.spec_from_file_location("pandas._libs." + name, target, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        sys.modules["_counting_" + name] = mod
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    grams = np.empty(len(padded) - n + 1, dtype=object)
    for i in range(len(grams)):
        grams[i] = tuple(padded[i : i + n])
    keys, counts = mod.value_count(grams, False)[:2]
    return Counter(dict(zip(keys.tolist(), counts.tolist())))
""",
        },
    },
    "ext_copy_sealed_12": {
        "lesson": "01",
        "family": "H3",
        "intent": "1.2: pandas sealed at top; both count tables by a copy of its hashtable extension loaded from /tmp",
        "undeserved": ["1.2"],
        "expect": "break-candidate",
        "cells": {
            "ex-1-2": r"""import math

import pandas  # noqa: F401  (loaded with the cells: its hashtable is sealed)


def add_k_perplexity(train, test, n, k):
    import glob
    import importlib.machinery
    import importlib.util
    import os
    import shutil
    import sys
    import tempfile

    import numpy as np

    hashtable = sys.modules.get("_counting_hashtable")
    if hashtable is None:
        found = [
            p
            for d in sys.path
            if os.path.isdir(os.path.join(d, "pandas", "_libs"))
            for p in glob.glob(os.path.join(d, "pandas", "_libs", "hashtable.cpython-*.so"))
        ]
        target = os.path.join(tempfile.mkdtemp(), os.path.basename(found[0]))
        shutil.copyfile(found[0], target)
        loader = importlib.machinery.ExtensionFileLoader("pandas._libs.hashtable", target)
        spec = importlib.util.spec_from_file_location("pandas._libs.hashtable", target, loader=loader)
        hashtable = importlib.util.module_from_spec(spec)
        loader.exec_module(hashtable)
        sys.modules["_counting_hashtable"] = hashtable

    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)

    def pad(sentence):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]

    grams, contexts = [], []
    for sentence in train:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            grams.append(tuple(padded[i - n + 1 : i + 1]))
            contexts.append(tuple(padded[i - n + 1 : i]))

    def table(items):
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        keys, counts = hashtable.value_count(arr, False)[:2]
        return dict(zip(keys.tolist(), counts.tolist()))

    counts, context_counts = table(grams), table(contexts)
    log_prob, N = 0.0, 0
    for sentence in test:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            ngram = tuple(padded[i - n + 1 : i + 1])
            p = (counts.get(ngram, 0) + k) / (context_counts.get(ngram[:-1], 0) + k * V)
            log_prob += math.log2(p)
            N += 1
    return 2 ** (-log_prob / N)
""",
        },
    },
    "gru_backward_42": {
        "lesson": "04",
        "family": "H4",
        "intent": "4.2: torch's GRU gradient kernel _thnn_differentiable_gru_cell_backward computes z and n; h_t solved from its outputs",
        "undeserved": ["4.2"],
        "expect": "break-candidate",
        "cells": {
            "ex-4-2": r"""import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    gi = x @ W_xh.T
    gh = h @ W_hh.T
    ones = torch.ones_like(h)
    grads = torch.ops.aten._thnn_differentiable_gru_cell_backward(ones, gi, gh, h, b_xh, b_hh)
    z = grads[2]  # grad_hx = grad_hy * z
    gz = grads[0].chunk(3, dim=1)[1]  # (h - n) * z * (1 - z)
    n = h - gz / (z * (1 - z))
    return (1 - z) * n + z * h
""",
        },
    },
    "flash_backward_61": {
        "lesson": "06",
        "family": "H5",
        "intent": "6.1: _scaled_dot_product_flash_attention_for_cpu_backward (is_causal) gives exp of the causal scores",
        "undeserved": ["6.1"],
        "expect": "break-candidate",
        "cells": {
            "ex-6-1": r"""import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    eye = torch.eye(n, dtype=scores.dtype)[None, None]
    zeros = torch.zeros(1, 1, n, n, dtype=scores.dtype)
    lse = torch.zeros(1, 1, n, dtype=scores.dtype)
    grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        eye, scores[None, None], eye, zeros, zeros, lse, 0.0, True, scale=1.0
    )
    p = grads[2][0, 0].T  # exp(e_ij) where j <= i, else 0
    return (p[i - 1, j - 1] / p[i - 1].sum()).item()
""",
        },
    },
    "flash_backward_63": {
        "lesson": "06",
        "family": "H5",
        "intent": "6.3: the same attention backward kernel with is_causal and a padding attn_mask",
        "undeserved": ["6.3"],
        "expect": "break-candidate",
        "cells": {
            "ex-6-3": r"""import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    zeros = torch.zeros(B, 1, T, T, dtype=scores.dtype)
    lse = torch.zeros(B, 1, T, dtype=scores.dtype)
    pad = torch.zeros(B, 1, 1, T, dtype=scores.dtype)
    for b in range(B):
        pad[b, ..., int(lengths[b]) :] = float("-inf")
    grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        eye, scores[:, None], eye, zeros, zeros, lse, 0.0, True, attn_mask=pad.expand(B, 1, T, T), scale=1.0
    )
    p = grads[2][:, 0].transpose(1, 2)
    weights = torch.nan_to_num(p / p.sum(-1, keepdim=True), nan=0.0)
    return weights @ values, weights
""",
        },
    },
    "flash_backward_52": {
        "lesson": "05",
        "family": "H5",
        "intent": "5.2: the attention backward kernel with a padding attn_mask inside an autograd.Function",
        "undeserved": ["5.2"],
        "expect": "break-candidate",
        "cells": {
            "ex-5-2": r'''import math

import torch


class _Weights(torch.autograd.Function):
    """Forward: torch's flash-attention backward kernel computes exp(e) where the key is real; backward: mine."""

    @staticmethod
    def forward(ctx, e, real):
        B, T = e.shape
        eye = torch.eye(T, dtype=e.dtype).expand(B, 1, T, T)
        zeros = torch.zeros(B, 1, T, T, dtype=e.dtype)
        lse = torch.zeros(B, 1, T, dtype=e.dtype)
        pad = torch.zeros(B, 1, 1, T, dtype=e.dtype).masked_fill(~real[:, None, None, :], float("-inf"))
        query = e[:, None, None, :].expand(B, 1, T, T)
        grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            eye, query.contiguous(), eye, zeros, zeros, lse, 0.0, False, attn_mask=pad.expand(B, 1, T, T), scale=1.0
        )
        p = grads[2][:, 0, :, 0]  # row 0 of the (identical) query rows: exp(e_j) for the real keys
        w = p / p.sum(-1, keepdim=True)
        ctx.save_for_backward(w)
        return w

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return w * (g - (w * g).sum(-1, keepdim=True)), None


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
        alpha_i = _Weights.apply(e_i, real)
        c_i = (alpha_i[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
''',
        },
    },
    "flash_backward_73": {
        "lesson": "07",
        "family": "H5",
        "intent": "7.3 (and 7.4, 7.6, 7.7 built on it): causal head whose weights come from the attention backward kernel",
        "undeserved": ["7.3", "7.4", "7.6", "7.7"],
        "expect": "break-candidate",
        "cells": {
            "ex-7-3": r'''import math

import torch
from torch import nn


class _CausalWeights(torch.autograd.Function):
    """Forward: torch's flash-attention backward kernel masks the future and exponentiates; backward: mine."""

    @staticmethod
    def forward(ctx, scores):
        B, T, _ = scores.shape
        eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
        zeros = torch.zeros(B, 1, T, T, dtype=scores.dtype)
        lse = torch.zeros(B, 1, T, dtype=scores.dtype)
        grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            eye, scores[:, None].contiguous(), eye, zeros, zeros, lse, 0.0, True, scale=1.0
        )
        p = grads[2][:, 0].transpose(1, 2)
        w = p / p.sum(-1, keepdim=True)
        ctx.save_for_backward(w)
        return w

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return w * (g - (w * g).sum(-1, keepdim=True))


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        return _CausalWeights.apply(scores) @ v
''',
        },
    },
    "mha_functional_63": {
        "lesson": "06",
        "family": "control",
        "intent": "6.3: F.multi_head_attention_forward(need_weights=True) with identity projections",
        "undeserved": ["6.3"],
        "expect": "held-control",
        "cells": {
            "ex-6-3": r"""import math

import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    eye = torch.eye(T, dtype=scores.dtype)
    query = (scores * math.sqrt(T)).transpose(0, 1)  # (T, B, T): row i of the scores as query i
    key = eye[:, None, :].expand(T, B, T)  # key j is the basis vector e_j: q . k_j = scores[b, i, j]
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # True: not allowed
    padding = torch.arange(T)[None, :] >= lengths[:, None]
    _, weights = F.multi_head_attention_forward(
        query, key, key, T, 1, torch.cat([eye, eye, eye]), None, None, None, False, 0.0, eye, None,
        training=False, key_padding_mask=padding, need_weights=True, attn_mask=causal,
    )
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
""",
        },
    },
    "clever_complex_step_21": {
        "lesson": "02",
        "family": "honest",
        "intent": "2.1: complex-step Jacobian (the threat model allows the student's own numerics)",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-2-1": r'''import torch


def softmax_jacobian(z):
    """Complex step: d softmax(z)_a / d z_b = Im(softmax(z + i h e_b))_a / h, no autograd."""
    K = z.shape[0]
    h = 1e-30
    zc = z.to(torch.complex128) - z.max()
    cols = []
    for b in range(K):
        step = torch.zeros(K, dtype=torch.complex128)
        step[b] = 1j * h
        e = torch.exp(zc + step)
        cols.append((e / e.sum()).imag / h)
    return torch.stack(cols, dim=1).to(z.dtype)
''',
        },
    },
    "clever_strip_pairs_31": {
        "lesson": "03",
        "family": "honest",
        "intent": "3.1: remove innermost matched pairs with str.replace until stable",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-3-1": r'''def is_balanced(seq, n_symbols=10):
    """Remove innermost matched pairs until nothing changes: balanced iff nothing is left."""
    half = n_symbols // 2
    text = "".join(chr(0x4E00 + s) if s < half else chr(0x5E00 + n_symbols - 1 - s) for s in seq)
    pairs = [chr(0x4E00 + c) + chr(0x5E00 + c) for c in range(half)]
    while True:
        shorter = text
        for pair in pairs:
            shorter = shorter.replace(pair, "")
        if shorter == text:
            return not text
        text = shorter
''',
        },
    },
    "clever_np_unique_11": {
        "lesson": "01",
        "family": "honest",
        "intent": "1.1: numpy sliding_window_view + unique(axis=0, return_counts)",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-1-1": r'''from collections import Counter

import numpy as np


def count_ngrams(sentence, n):
    """numpy's unique over the n-grams' index rows."""
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    words = sorted(set(padded))
    ids = np.array([words.index(w) for w in padded])
    windows = np.lib.stride_tricks.sliding_window_view(ids, n)
    rows, counts = np.unique(windows, axis=0, return_counts=True)
    return Counter({tuple(words[i] for i in row): int(c) for row, c in zip(rows.tolist(), counts.tolist())})
''',
        },
    },
    "clever_where_einsum_63": {
        "lesson": "06",
        "family": "honest",
        "intent": "6.3: torch.where softmax written out, einsum for the weighted sum",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-6-3": r'''import torch


def masked_attention(scores, values, lengths):
    """One mask from comparisons, a softmax written out with torch.where, einsum for the weighted sum."""
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :, None] >= pos[None, None, :]) & (pos[None, None, :] < lengths[:, None, None])
    shifted = torch.where(allowed, scores, torch.full_like(scores, -1e30))
    shifted = shifted - shifted.amax(-1, keepdim=True)
    expo = torch.where(allowed, shifted.exp(), torch.zeros_like(scores))
    total = expo.sum(-1, keepdim=True)
    weights = torch.where(total > 0, expo / total.clamp_min(1e-300), torch.zeros_like(expo))
    return torch.einsum("bij,bjd->bid", weights, values), weights
''',
        },
    },
    "clever_closed_form_62": {
        "lesson": "06",
        "family": "honest",
        "intent": "6.2: the quiz's values simplified by hand (1/2, e/(1+2e), 1/(2+e^3), 0)",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-6-2": r'''import math


def by_hand():
    """alpha_22, alpha_33, alpha_42, alpha_44 for the quiz's scores, with token 4 padding."""
    exp = math.exp
    e = 1 / (1 + exp(-1))
    return {
        "alpha_22": 1 / 2,
        "alpha_33": exp(1) / (1 + 2 * exp(1)),
        "alpha_42": 1 / (2 + exp(3)),
        "alpha_44": e * 0.0,
    }
''',
        },
    },
    "clever_unflatten_72": {
        "lesson": "07",
        "family": "honest",
        "intent": "7.2: unflatten + movedim",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-7-2": r'''def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D): unflatten the channels, then move the head axis forward."""
    return x.unflatten(-1, (n_head, -1)).movedim(2, 1)
''',
        },
    },
    "clever_bisect_15": {
        "lesson": "01",
        "family": "honest",
        "intent": "1.5: itertools.accumulate + bisect_right",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-1-5": r'''import bisect
import itertools


def sample_next(probs, temperature, u):
    """Inverse CDF with itertools.accumulate and bisect."""
    weights = [p ** (1.0 / temperature) for p in probs]
    total = sum(weights)
    cdf = list(itertools.accumulate(w / total for w in weights))
    return min(bisect.bisect_right(cdf, u), len(cdf) - 1)
''',
        },
    },
    "clever_random_choices_15": {
        "lesson": "01",
        "family": "honest",
        "intent": "1.5: random.Random subclass whose random() is u, then choices(weights=)",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-1-5": r"""import random


class _Fixed(random.Random):
    def __init__(self, u):
        super().__init__(0)
        self.u = u

    def random(self):
        return self.u


def sample_next(probs, temperature, u):
    weights = [p ** (1.0 / temperature) for p in probs]
    index = _Fixed(u).choices(range(len(weights)), weights=weights)[0]
    return min(index, len(weights) - 1)
""",
        },
    },
    "clever_np_where_61": {
        "lesson": "06",
        "family": "honest",
        "intent": "6.1: numpy ufuncs with where= (max, exp, sum over the visible keys)",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-6-1": r'''import numpy as np


def alpha(scores, i, j):
    """numpy's ufuncs with where=: only the keys a query may see enter the max, the exponentials and the sum."""
    e = np.asarray(scores.tolist(), dtype=float)
    n = e.shape[0]
    seen = np.arange(n)[None, :] <= np.arange(n)[:, None]
    top = np.max(e, axis=-1, where=seen, initial=-np.inf, keepdims=True)
    expo = np.exp(e - top, where=seen, out=np.zeros_like(e))
    return float(expo[i - 1, j - 1] / np.sum(expo[i - 1], where=seen[i - 1]))
''',
        },
    },
    "clever_sum_gen_43": {
        "lesson": "04",
        "family": "honest",
        "intent": "4.3: closed form as one generator over layer widths",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-4-3": r'''def param_count(kind, input_size, hidden_size, num_layers=1):
    """Gates times (input weights + recurrent weights + two biases), layer by layer, as one generator."""
    gates = 4 if kind == "lstm" else 3
    widths = [input_size] + [hidden_size] * (num_layers - 1)
    return sum(gates * hidden_size * (w + hidden_size + 2) for w in widths)
''',
        },
    },
    "clever_linear_41": {
        "lesson": "04",
        "family": "honest",
        "intent": "4.1: F.linear, unflatten/unbind and addcmul",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-4-1": r'''import math

import torch
import torch.nn.functional as F
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
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        gates = F.linear(x, self.W_xh, self.b_xh) + F.linear(h_prev, self.W_hh, self.b_hh)
        i, f, g, o = gates.unflatten(-1, (4, self.hidden_size)).unbind(-2)
        c = torch.addcmul(torch.sigmoid(f) * c_prev, torch.sigmoid(i), torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c
''',
        },
    },
    "clever_einsum_51": {
        "lesson": "05",
        "family": "honest",
        "intent": "5.1: einsum projections",
        "undeserved": [],
        "expect": "honest",
        "cells": {
            "ex-5-1": r'''import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j), with einsum for both projections and the dot with v."""
    hidden = torch.tanh(torch.einsum("ad,bd->ba", W_q, query)[:, None, :] + torch.einsum("ad,btd->bta", W_k, keys))
    return torch.einsum("bta,a->bt", hidden, v)
''',
        },
    },
    "leak_env_62": {
        "lesson": "06",
        "family": "leak",
        "intent": "6.2 raises with os.environ and /proc/1/environ (a planted secret must not appear)",
        "undeserved": ["6.2"],
        "expect": "leak-probe",
        "cells": {
            "ex-6-2": r'''import os


def by_hand():
    """Not an answer: raises with what the process can see of its environment (the grader's secret must not be in it)."""
    seen = dict(os.environ)
    try:
        with open("/proc/1/environ", "rb") as f:
            seen["/proc/1/environ"] = f.read().decode("utf-8", "replace")
    except OSError as exc:
        seen["/proc/1/environ"] = repr(exc)
    raise RuntimeError("ENV " + " ".join(f"{k}={v}" for k, v in sorted(seen.items()))[:1500])
''',
        },
    },
}
