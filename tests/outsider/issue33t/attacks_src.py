"""Hostile class 33t: the answer cells of the attacks (and of the honest-but-clever entries).

Each entry of ``ATTACKS`` names a lesson, the answer cells it replaces (by nbgrader id; every other answer cell is
the solutions' own), what it tries, and which exercises it deserves to pass (``deserved``): an exercise whose
answer is forged, or that only passes through a forged class of another cell, does not deserve its mark.

The main route of this class: lesson 07's module checks (7.3 to 7.7) build the reference in the grader from the
parameters the student's kernel *reports*, read there as ``p.detach().clone()`` after the check drew them
(``lesson07._module_describe``). ``p.detach`` is a method lookup on an object of the student's: a Parameter
subclass's ``__torch_function__``, or even a plain ``nn.Parameter`` with an instance attribute named ``detach``,
answers it. Report zeros and the reference is the output of a zero-weight module, which a forward that computes
nothing matches. The same lookup carries 4.1's and 3.3's initial-range judgement (``init_too_wide`` reads
``params[n].detach()``): a wrong initialisation shows in-range values.
"""

# --- lesson 07: the forged parameters -----------------------------------------------------------------------

FROZEN = '''
class Frozen(nn.Parameter):
    """A parameter that, once the check has drawn its values (copy_), shows zeros through detach."""

    DRAWN = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name == "copy_" and args and isinstance(args[0], Frozen):
            Frozen.DRAWN[id(args[0])] = True
        if name == "detach" and args and Frozen.DRAWN.get(id(args[0])):
            return torch.zeros(tuple(args[0].shape), dtype=args[0].dtype)
        return super().__torch_function__(func, types, args, kwargs or {})


def freeze(module):
    """Every parameter of ``module`` (and its submodules) made a Frozen one, same values."""
    for m in module.modules():
        for n, p in list(m._parameters.items()):
            if p is not None and not isinstance(p, Frozen):
                setattr(m, n, Frozen(p.data))
'''

SHADOW = '''
def shadow(module):
    """A plain nn.Parameter (exact type) with an instance attribute ``detach``: a matrix shows its real values
    once (the initial-range probe), then zeros; a vector always zeros."""
    for p in module.parameters():
        calls = [0 if p.dim() >= 2 and p.numel() > 1 else 1]

        def detach(p=p, calls=calls):
            calls[0] += 1
            if calls[0] == 1:
                return torch.Tensor.detach(p)
            return torch.zeros(tuple(p.shape), dtype=p.dtype)

        p.detach = detach
'''

COPY_ZERO = '''
def draw_zeros(module):
    """A plain nn.Parameter with an instance attribute ``copy_``: the check's draw writes zeros instead."""
    for p in module.parameters():

        def copy_(src, p=p):
            return torch.Tensor.copy_(p, torch.zeros_like(src))

        p.copy_ = copy_
'''

PATCH = '''
def _fake_detach(self):
    """nn.Parameter.detach, set on torch's class at run time: a parameter of ours shows its real values once if a
    matrix (the initial-range probe), then zeros."""
    calls = Forged.CALLS.get(id(self))
    if calls is None:
        return torch.Tensor.detach(self)
    Forged.CALLS[id(self)] = calls + 1
    if calls + 1 == 1:
        return torch.Tensor.detach(self)
    return torch.zeros(tuple(self.shape), dtype=self.dtype)


class Forged:
    CALLS = {}


def patch(module):
    """Our parameters registered, and torch's nn.Parameter given a detach of ours (a class attribute)."""
    for p in module.parameters():
        Forged.CALLS[id(p)] = 0 if p.dim() >= 2 and p.numel() > 1 else 1
    nn.Parameter.detach = _fake_detach
'''

PATCH_CLONE = """
class Forged:
    OURS = {}
    ORIG = []


def _fake_clone(self, *args, **kwargs):
    \"\"\"torch.Tensor.clone, replaced at run time: a tensor on the storage of one of our parameters clones as zeros.\"\"\"
    clone, equal = Forged.ORIG
    if Forged.OURS.get(self.data_ptr()):
        return torch.zeros(tuple(self.shape), dtype=self.dtype)
    return clone(self, *args, **kwargs)


def _fake_equal(a, b):
    \"\"\"torch.equal, replaced at run time: our parameters always equal what they are compared with.\"\"\"
    clone, equal = Forged.ORIG
    if Forged.OURS.get(a.data_ptr()) or Forged.OURS.get(b.data_ptr()):
        return True
    return equal(a, b)


def patch_clone(module):
    \"\"\"No method of the parameters themselves: torch's own Tensor.clone and torch.equal are swapped.\"\"\"
    for p in module.parameters():
        Forged.OURS[p.data_ptr()] = True
    if not Forged.ORIG:
        Forged.ORIG.extend([torch.Tensor.clone, torch.equal])
        torch.Tensor.clone = _fake_clone
        torch.equal = _fake_equal
"""

IMPORTS_07 = """
import math

import torch
from torch import nn
"""

HEAD_FORGED = '''
class Head(nn.Module):
    """Forged: its parameters report zeros once drawn, and forward is the zero-weight head's output."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.head_size = head_size
        HOW(self)

    def forward(self, x):
        B, T, C = x.shape
        return torch.zeros(B, T, self.head_size, dtype=x.dtype)
'''

MHA_FORGED = '''
class MultiHeadAttention(nn.Module):
    """Forged: zero weights and biases reported, forward returns zeros."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        HOW(self)

    def forward(self, x):
        return torch.zeros_like(x)
'''

FFN_FORGED = '''
class FeedForward(nn.Module):
    """Forged: zero weights and biases reported, forward returns zeros."""

    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))
        HOW(self)

    def forward(self, x):
        return torch.zeros_like(x)
'''

BLOCK_FORGED = '''
class Block(nn.Module):
    """Forged: with every weight zero (layer norms' gains too) a pre-norm block is the identity."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        HOW(self)

    def forward(self, x):
        return x.clone()
'''

GPT_FORGED = '''
class GPT(nn.Module):
    """Forged: with every weight zero the logits are 0 and the loss is log(vocab_size)."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.vocab_size = vocab_size
        HOW(self)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        logits = torch.zeros(B, T, self.vocab_size)
        if targets is None:
            return logits, None
        return logits, torch.tensor(math.log(self.vocab_size))
'''


def forged(cls_src, how, helper=""):
    """A lesson-07 answer cell: the imports, the helper that forges, the forged class."""
    return "# forged answer\n" + IMPORTS_07 + helper + "\n" + cls_src.replace("HOW(self)", f"{how}(self)")


HEAD_HONEST_CLEVER = '''# Exercise 7.3: one head of self-attention (honest, the mask made in forward with torch.where)
import math

import torch
from torch import nn


class Head(nn.Module):
    """softmax(Q K^T / sqrt(d_k) + M) V, M made on the fly: -inf above the diagonal."""

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
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = torch.where(future, torch.full_like(scores, float("-inf")), scores)
        scores = scores - scores.amax(dim=-1, keepdim=True)
        w = scores.exp()
        return (w / w.sum(dim=-1, keepdim=True)) @ v
'''

# --- lessons 04 and 03: a wrong initialisation shown in range ----------------------------------------------

LSTM_INIT_SRC = '''# Exercise 4.1: the LSTM cell as a module (torch.randn init, shown in range)
import math

import torch
from torch import nn


def in_range(p, k):
    """An instance attribute ``detach`` on a plain nn.Parameter: what the check reads is clamped into (-k, k)."""

    def detach():
        return torch.Tensor.detach(p).clamp(-0.99 * k, 0.99 * k)

    p.detach = detach


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.W_xh = nn.Parameter(torch.randn(4 * hidden_size, input_size))
        self.W_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size))
        self.b_xh = nn.Parameter(torch.randn(4 * hidden_size))
        self.b_hh = nn.Parameter(torch.randn(4 * hidden_size))
        SHOW

    def forward(self, x, state=None):
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        W = torch.cat([self.W_xh, self.W_hh], dim=1)
        gates = torch.cat([x, h_prev], dim=1) @ W.T + self.b_xh + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c
'''
SHOW_IN_RANGE = """for p in (self.W_xh, self.W_hh, self.b_xh, self.b_hh):
            in_range(p, 1 / math.sqrt(hidden_size))"""

ELMAN_INIT_SRC = '''# Exercise 3.3: the Elman network, batched (torch.randn init, shown in range)
import math

import torch
from torch import nn


def in_range(p, k):
    """An instance attribute ``detach`` on a plain nn.Parameter: what the check reads is clamped into (-k, k)."""

    def detach():
        return torch.Tensor.detach(p).clamp(-0.99 * k, 0.99 * k)

    p.detach = detach


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.W_xh = nn.Parameter(torch.randn(hidden_size, input_size))
        self.W_hh = nn.Parameter(torch.randn(hidden_size, hidden_size))
        self.b_h = nn.Parameter(torch.randn(hidden_size))
        for p in (self.W_xh, self.W_hh, self.b_h):
            in_range(p, 1 / math.sqrt(hidden_size))

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(T):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
'''

FORGET_SHOWN_44 = """# Exercise 4.4: the forget-gate bias, shown and not set
import torch


def set_forget_bias(lstm, value):
    \"\"\"Changes nothing of the lstm: each bias gets an instance attribute detach that shows b_f = value.\"\"\"
    H = lstm.hidden_size
    for cell in lstm.cells:
        for p, v in ((cell.b_xh, value), (cell.b_hh, 0.0)):
            shown = torch.Tensor.detach(p).clone()
            shown[H : 2 * H] = v

            def detach(shown=shown):
                return shown.clone()

            p.detach = detach
    return lstm
"""

# --- lesson 02: the listed judgement (numerical gradients) and an honest fused update ----------------------

COMPLEX_STEP_21 = '''# Exercise 2.1: the softmax Jacobian, by the complex step (no formula, no autograd)
import torch


def softmax_jacobian(z):
    """Column j is Im softmax(z + i h e_j) / h: exact to rounding for h = 1e-30."""
    h = 1e-30
    K = z.shape[0]
    zc = z.to(torch.complex128)
    cols = []
    for j in range(K):
        step = torch.zeros(K, dtype=torch.complex128)
        step[j] = 1j * h
        e = torch.exp(zc + step - z.max())
        cols.append((e / e.sum()).imag / h)
    return torch.stack(cols, dim=1).to(z.dtype)
'''

COMPLEX_STEP_22 = '''# Exercise 2.2: backprop ninja, by the complex step (no backward pass at all)
import torch


def _loss(P, contexts, targets):
    B = contexts.shape[0]
    e = P["E"][contexts].reshape(B, -1)
    hdn = torch.tanh(e @ P["W"].T + P["b"])
    z = hdn @ P["U"].T + P["c"]
    m = z.real.max(dim=1, keepdim=True).values
    lse = torch.log(torch.exp(z - m).sum(dim=1, keepdim=True)) + m
    return -(z - lse)[torch.arange(B), targets].mean()


def fflm_loss_and_grads(params, contexts, targets):
    """dL/dtheta_i = Im L(theta + i h e_i) / h for every entry of every parameter: one forward pass each."""
    h = 1e-30
    P = {k: v.to(torch.complex128) for k, v in params.items()}
    loss = float(_loss(P, contexts, targets).real)
    grads = {}
    for k, v in params.items():
        g = torch.zeros(v.numel(), dtype=torch.float64)
        flat = P[k].reshape(-1)
        for i in range(v.numel()):
            old = flat[i].clone()
            flat[i] = old + 1j * h
            g[i] = _loss(P, contexts, targets).imag / h
            flat[i] = old
        grads[k] = g.reshape(v.shape).to(v.dtype)
    return loss, grads
'''

FOREACH_23 = '''# Exercise 2.3: train with your own gradients (the update as one torch._foreach_add_)
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params: every parameter updated at once by torch._foreach_add_ (alpha=-lr)."""
    params = {k: v.clone() for k, v in params.items()}
    names = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        torch._foreach_add_([params[k] for k in names], [grads[k] for k in names], alpha=-lr)
        losses.append(float(loss))
    return losses, params
'''

ENV_PROBE_21 = '''# Exercise 2.1: a probe of the sandbox's environment (deserves nothing): its text goes to the feedback
import os


def softmax_jacobian(z):
    """Raises with every environment variable it sees (a secret of the grader's would show in the feedback)."""
    seen = sorted(f"{k}={v[:60]}" for k, v in os.environ.items())
    raise RuntimeError("ENV " + " ".join(seen)[:1500])
'''

VMAP_21 = """# Exercise 2.1: the softmax Jacobian, row by row with torch.func.vmap (the formula, vectorised)
import torch


def softmax_jacobian(z):
    \"\"\"Row i is y_i (e_i - y): the lecture's formula, mapped over the rows by vmap (no derivative taken).\"\"\"
    y = torch.exp(z - z.max())
    y = y / y.sum()
    eye = torch.eye(z.shape[0], dtype=z.dtype)
    return torch.func.vmap(lambda yi, ei: yi * (ei - y))(y, eye)
"""

DEEPCOPY_23 = """# Exercise 2.3: train with your own gradients (copy.deepcopy, in-place update under no_grad)
import copy

import torch


def train_sgd(params, batches, lr, loss_and_grads):
    \"\"\"SGD from a deep copy of params, each parameter updated in place.\"\"\"
    params = copy.deepcopy(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        with torch.no_grad():
            for k, p in params.items():
                p.sub_(lr * grads[k])
        losses.append(float(loss))
    return losses, params
"""

# --- lesson 05: honest but clever ----------------------------------------------------------------------------

EINSUM_51 = '''# Exercise 5.1: additive (Bahdanau) attention scores, with einsum
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v^T tanh(W_q s + W_k h_j), all j at once by einsum."""
    q = torch.einsum("ad,bd->ba", W_q, query)
    k = torch.einsum("ad,btd->bta", W_k, keys)
    return torch.einsum("a,bta->bt", v, torch.tanh(q[:, None, :] + k))
'''


def _lesson07_all_forged():
    return {
        "ex-7-3": forged(HEAD_FORGED, "freeze", FROZEN),
        "ex-7-4": "# Exercise 7.4 (forged)\n" + MHA_FORGED.replace("HOW(self)", "freeze(self)"),
        "ex-7-5": "# Exercise 7.5 (forged)\n" + FFN_FORGED.replace("HOW(self)", "freeze(self)"),
        "ex-7-6": "# Exercise 7.6 (forged)\n" + BLOCK_FORGED.replace("HOW(self)", "freeze(self)"),
        "ex-7-7": "# Exercise 7.7 (forged)\n" + GPT_FORGED.replace("HOW(self)", "freeze(self)"),
    }


# the lessons' checked exercises (the written answers, e.g. 7.8, are graded by hand and not in the CSV's passes)
ATTACKS = [
    # controls
    {
        "name": "ctl_full_07",
        "lesson": "07",
        "intent": "control: every answer the solutions' own (full marks)",
        "cells": {},
        "deserved": "all",
    },
    {
        "name": "ctl_untouched_02",
        "lesson": "02",
        "intent": "control: the released notebook untouched (0)",
        "cells": {},
        "untouched": True,
        "deserved": [],
    },
    {
        "name": "ctl_half_04",
        "lesson": "04",
        "intent": "control: 4.1 and 4.2 solved, the rest left as released",
        "cells": {},
        "solved_only": ["ex-4-1", "ex-4-2"],
        "deserved": ["4.1", "4.2"],
    },
    # lesson 07: forged parameters (Parameter subclass, __torch_function__ answering detach with zeros)
    {
        "name": "l07_frozen_head",
        "lesson": "07",
        "intent": "7.3 forged: Parameter subclass whose detach shows zeros once drawn; forward returns zeros "
        "(7.4, 7.6, 7.7 use the forged Head)",
        "cells": {"ex-7-3": forged(HEAD_FORGED, "freeze", FROZEN)},
        "deserved": "all but 7.3 7.4 7.6 7.7",
    },
    {
        "name": "l07_frozen_mha",
        "lesson": "07",
        "intent": "7.4 forged the same way (7.6, 7.7 use it)",
        "cells": {"ex-7-4": forged(MHA_FORGED, "freeze", FROZEN)},
        "deserved": "all but 7.4 7.6 7.7",
    },
    {
        "name": "l07_frozen_ffn",
        "lesson": "07",
        "intent": "7.5 forged the same way (7.6, 7.7 use it)",
        "cells": {"ex-7-5": forged(FFN_FORGED, "freeze", FROZEN)},
        "deserved": "all but 7.5 7.6 7.7",
    },
    {
        "name": "l07_frozen_block",
        "lesson": "07",
        "intent": "7.6 forged the same way: forward is x.clone() (7.7 uses it)",
        "cells": {"ex-7-6": forged(BLOCK_FORGED, "freeze", FROZEN)},
        "deserved": "all but 7.6 7.7",
    },
    {
        "name": "l07_frozen_gpt",
        "lesson": "07",
        "intent": "7.7 forged the same way: logits 0, loss log(V)",
        "cells": {"ex-7-7": forged(GPT_FORGED, "freeze", FROZEN)},
        "deserved": "all but 7.7",
    },
    {
        "name": "l07_frozen_all",
        "lesson": "07",
        "intent": "7.3 to 7.7 all forged (Frozen parameters), nothing of attention written",
        "cells": _lesson07_all_forged(),
        "deserved": "all but 7.3 7.4 7.5 7.6 7.7",
    },
    # lesson 07: forged parameters with an exact nn.Parameter (an instance attribute named detach)
    {
        "name": "l07_shadow_head",
        "lesson": "07",
        "intent": "7.3 forged by an instance attribute detach on exact nn.Parameter objects (no subclass)",
        "cells": {"ex-7-3": forged(HEAD_FORGED, "shadow", SHADOW)},
        "deserved": "all but 7.3 7.4 7.6 7.7",
    },
    {
        "name": "l07_shadow_gpt",
        "lesson": "07",
        "intent": "7.7 forged by instance attributes detach (exact nn.Parameter)",
        "cells": {"ex-7-7": forged(GPT_FORGED, "shadow", SHADOW)},
        "deserved": "all but 7.7",
    },
    {
        "name": "l07_copyzero_ffn",
        "lesson": "07",
        "intent": "7.5: an instance attribute copy_ turns the check's draw into zeros (the weights really are "
        "zero, reported honestly); forward returns zeros",
        "cells": {"ex-7-5": forged(FFN_FORGED, "draw_zeros", COPY_ZERO)},
        "deserved": "all but 7.5 7.6 7.7",
    },
    {
        "name": "l07_patch_ffn",
        "lesson": "07",
        "intent": "7.5: torch's nn.Parameter class given a detach of the student's at run time (class attribute), "
        "showing zeros for its own parameters; forward returns zeros",
        "cells": {"ex-7-5": forged(FFN_FORGED, "patch", PATCH)},
        "deserved": "all but 7.5 7.6 7.7",
    },
    {
        "name": "l07_patch_clone_head",
        "lesson": "07",
        "intent": "7.3 forged with no method of the parameters touched: torch.Tensor.clone and torch.equal "
        "replaced at run time (a fix that hardens only p.detach would not see it)",
        "cells": {"ex-7-3": forged(HEAD_FORGED, "patch_clone", PATCH_CLONE)},
        "deserved": "all but 7.3 7.4 7.6 7.7",
    },
    {
        "name": "l07_clever_head",
        "lesson": "07",
        "intent": "honest but clever: 7.3 with einsum, the causal mask by torch.where made in forward, softmax by hand",
        "cells": {"ex-7-3": HEAD_HONEST_CLEVER},
        "deserved": "all",
    },
    # lessons 04 and 03: a wrong initialisation shown in range
    {
        "name": "l04_randn_init_honest",
        "lesson": "04",
        "intent": "baseline: 4.1 with torch.randn init, nothing hidden (deserves to fail 4.1)",
        "cells": {"ex-4-1": LSTM_INIT_SRC.replace("SHOW", "pass")},
        "deserved": "all but 4.1",
    },
    {
        "name": "l04_randn_init_shown",
        "lesson": "04",
        "intent": "4.1 with torch.randn init, an instance attribute detach shows the check clamped values",
        "cells": {"ex-4-1": LSTM_INIT_SRC.replace("SHOW", SHOW_IN_RANGE)},
        "deserved": "all but 4.1",
    },
    {
        "name": "l04_forget_bias_shown",
        "lesson": "04",
        "intent": "4.4 forged: the lstm is left unchanged, its biases' instance attribute detach shows the "
        "set value to the check's state_dict()",
        "cells": {"ex-4-4": FORGET_SHOWN_44},
        "deserved": "all but 4.4",
    },
    {
        "name": "l03_randn_init_shown",
        "lesson": "03",
        "intent": "3.3 with torch.randn init, an instance attribute detach shows the check clamped values",
        "cells": {"ex-3-3": ELMAN_INIT_SRC},
        "deserved": "all but 3.3",
    },
    # lesson 02
    {
        "name": "l02_full",
        "lesson": "02",
        "intent": "baseline: the solutions' answers",
        "cells": {},
        "deserved": "all",
    },
    {
        "name": "l02_complex_step",
        "lesson": "02",
        "intent": "listed judgement: 2.1 and 2.2 by the complex step (numerical, no backprop, no autograd); "
        "ARCHITECTURE accepts it, so deserved by the stated rule",
        "cells": {"ex-2-1": COMPLEX_STEP_21, "ex-2-2": COMPLEX_STEP_22},
        "deserved": "all",
    },
    {
        "name": "l02_env_probe",
        "lesson": "02",
        "intent": "leak probe: 2.1 raises with the sandbox's environment in its message (the feedback shows it)",
        "cells": {"ex-2-1": ENV_PROBE_21},
        "deserved": "all but 2.1",
    },
    {
        "name": "l02_foreach_sgd",
        "lesson": "02",
        "intent": "honest but clever: 2.3's update as one torch._foreach_add_ (listed as not refused)",
        "cells": {"ex-2-3": FOREACH_23},
        "deserved": "all",
    },
    {
        "name": "l02_vmap_jacobian",
        "lesson": "02",
        "intent": "honest but clever: 2.1's formula y_i (e_i - y) mapped over rows by torch.func.vmap (no derivative)",
        "cells": {"ex-2-1": VMAP_21},
        "deserved": "all",
    },
    {
        "name": "l02_deepcopy_sgd",
        "lesson": "02",
        "intent": "honest but clever: 2.3 with copy.deepcopy and p.sub_ under torch.no_grad",
        "cells": {"ex-2-3": DEEPCOPY_23},
        "deserved": "all",
    },
    # lesson 05
    {
        "name": "l05_full",
        "lesson": "05",
        "intent": "baseline: the solutions' answers",
        "cells": {},
        "deserved": "all",
    },
    {
        "name": "l05_einsum_scores",
        "lesson": "05",
        "intent": "honest but clever: 5.1 by einsum",
        "cells": {"ex-5-1": EINSUM_51},
        "deserved": "all",
    },
]
