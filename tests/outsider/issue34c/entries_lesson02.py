"""Lesson 02 entries: right answers, mistakes, borrowed answers (written from the exercise texts)."""

LESSON = "02"

FFLM_RIGHT = """
import torch


def fflm_loss_and_grads(params, contexts, targets):
    E, W, b, U, c = (params[k] for k in "EWbUc")
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    a = e @ W.T + b
    h = torch.tanh(a)
    z = h @ U.T + c
    zs = z - z.max(dim=1, keepdim=True).values
    logp = zs - torch.log(torch.exp(zs).sum(dim=1, keepdim=True))
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
    de = (da @ W).reshape(B, n, d)
    dE = torch.zeros_like(E)
    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))
    return loss, {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
"""

BPTT_STEP_RIGHT = """
def bptt_step(dh, h, h_prev, x, W_hh):
    da = dh * (1 - h**2)
    return da.T @ x, da.T @ h_prev, da.sum(0), da @ W_hh
"""

BPTT_LOOP_RIGHT = """
import torch


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    T = dhs.shape[0]
    dW_xh = torch.zeros(hs.shape[2], xs.shape[2], dtype=hs.dtype)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros(hs.shape[2], dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(hs[0])
    for t in range(T - 1, -1, -1):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        da = dh * (1 - hs[t] ** 2)
        dW_xh += da.T @ xs[t]
        dW_hh += da.T @ h_prev
        db_h += da.sum(0)
        carry = da @ W_hh
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
"""

SGD_RIGHT = """
def train_sgd(params, batches, lr, loss_and_grads):
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        losses.append(float(loss))
        for k in params:
            params[k] = params[k] - lr * grads[k]
    return losses, params
"""

JAC_RIGHT = """
import torch


def softmax_jacobian(z):
    y = torch.softmax(z, dim=0)
    return torch.diag(y) - torch.outer(y, y)
"""

RIGHT = {"2.1": JAC_RIGHT, "2.2": FFLM_RIGHT, "2.3": SGD_RIGHT, "2.4": BPTT_STEP_RIGHT, "2.5": BPTT_LOOP_RIGHT}
PREREQ = {}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="02-2.1-right", ex="2.1", kind="right", desc="diag(y) - y y^T", code=JAC_RIGHT),
    dict(
        id="02-2.1-m-unstable",
        ex="2.1",
        kind="mistake",
        desc="softmax by exp/sum without subtracting the max (NaN at 1000)",
        code=sub(JAC_RIGHT, "y = torch.softmax(z, dim=0)", "y = torch.exp(z) / torch.exp(z).sum()"),
    ),
    dict(
        id="02-2.1-m-transposed-sign",
        ex="2.1",
        kind="mistake",
        desc="y y^T - diag(y) (sign flipped)",
        code=sub(JAC_RIGHT, "torch.diag(y) - torch.outer(y, y)", "torch.outer(y, y) - torch.diag(y)"),
    ),
    dict(id="02-2.2-right", ex="2.2", kind="right", desc="full manual backward", code=FFLM_RIGHT),
    dict(
        id="02-2.2-m-sum-not-mean",
        ex="2.2",
        kind="mistake",
        desc="loss is a sum over the batch and dz not divided by B",
        code=sub(sub(FFLM_RIGHT, "].mean()", "].sum()"), "dz = dz / B", "dz = dz"),
    ),
    dict(
        id="02-2.2-m-grad-mean-loss-sum",
        ex="2.2",
        kind="mistake",
        desc="loss right (mean) but dz forgets / B",
        code=sub(FFLM_RIGHT, "dz = dz / B", "dz = dz"),
    ),
    dict(
        id="02-2.2-m-de-overwrite",
        ex="2.2",
        kind="mistake",
        desc="dE[contexts] = de (repeated words overwrite instead of summing)",
        code=sub(
            FFLM_RIGHT,
            "dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))",
            "dE[contexts.reshape(-1)] = de.reshape(B * n, d)",
        ),
    ),
    dict(
        id="02-2.2-m-tanh-deriv",
        ex="2.2",
        kind="mistake",
        desc="tanh derivative written as 1 - a**2 (pre-activation)",
        code=sub(FFLM_RIGHT, "da = dh * (1 - h**2)", "da = dh * (1 - a**2)"),
    ),
    dict(
        id="02-2.2-m-dW-transposed-square",
        ex="2.2",
        kind="mistake",
        desc="dU = h.T @ dz then .T: fine; instead dW = e.T @ da (transposed, shape (nd,H))",
        code=sub(FFLM_RIGHT, "dW = da.T @ e", "dW = (e.T @ da).reshape(W.shape)"),
    ),
    dict(
        id="02-2.2-m-float32",
        ex="2.2",
        kind="mistake",
        desc="dE made with torch.zeros(E.shape) (float32, ignores dtype)",
        code=sub(FFLM_RIGHT, "dE = torch.zeros_like(E)", "dE = torch.zeros(E.shape)"),
    ),
    dict(
        id="02-2.2-m-split-order",
        ex="2.2",
        kind="mistake",
        desc="de split as (n, B, d) instead of (B, n, d)",
        code=sub(
            sub(FFLM_RIGHT, "de = (da @ W).reshape(B, n, d)", "de = (da @ W).reshape(n, B, d)"),
            "contexts.reshape(-1)",
            "contexts.T.reshape(-1)",
        ).replace("de.reshape(B * n, d)", "de.reshape(B * n, d)"),
    ),
    dict(
        id="02-2.2-m-zero-inplace",
        ex="2.2",
        kind="mistake",
        desc="dE = E.zero_() (zero_ for zeros_like: wipes the caller's E)",
        code=sub(FFLM_RIGHT, "dE = torch.zeros_like(E)", "dE = E.zero_()"),
    ),
    dict(
        id="02-2.2-b-autograd",
        ex="2.2",
        kind="borrowed",
        desc="torch.autograd.grad on leaves",
        code="""
import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    h = torch.tanh(leaves["E"][contexts].reshape(B, -1) @ leaves["W"].T + leaves["b"])
    loss = F.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
    gs = torch.autograd.grad(loss, [leaves[k] for k in "EWbUc"])
    return loss.detach(), dict(zip("EWbUc", gs))
""",
    ),
    dict(
        id="02-2.2-b-func-jacfwd",
        ex="2.2",
        kind="borrowed",
        desc="torch.func.jacfwd (forward-mode autodiff) per parameter",
        code="""
import torch
import torch.nn.functional as F
from torch.func import jacfwd


def fflm_loss_and_grads(params, contexts, targets):
    B = contexts.shape[0]

    def loss_of(E, W, b, U, c):
        h = torch.tanh(E[contexts].reshape(B, -1) @ W.T + b)
        return F.cross_entropy(h @ U.T + c, targets)

    args = [params[k] for k in "EWbUc"]
    gs = jacfwd(loss_of, argnums=(0, 1, 2, 3, 4))(*args)
    return loss_of(*args), dict(zip("EWbUc", gs))
""",
    ),
    dict(
        id="02-2.2-b-vjp-via-getattr",
        ex="2.2",
        kind="borrowed",
        desc="torch.func.vjp reached with getattr(importlib.import_module('torch.' + 'func'), 'v'+'jp')",
        code="""
import importlib
import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    B = contexts.shape[0]
    vjp = getattr(importlib.import_module("torch." + "func"), "v" + "jp")

    def loss_of(E, W, b, U, c):
        h = torch.tanh(E[contexts].reshape(B, -1) @ W.T + b)
        return F.cross_entropy(h @ U.T + c, targets)

    args = [params[k] for k in "EWbUc"]
    loss, pull = vjp(loss_of, *args)
    gs = pull(torch.ones_like(loss))
    return loss, dict(zip("EWbUc", gs))
""",
    ),
    dict(
        id="02-2.2-b-courselib-backward",
        ex="2.2",
        kind="borrowed",
        desc="course_lib.backprop's cross_entropy_backward/linear_backward/embedding_backward via __import__",
        code="""
import inspect
import torch

bp = __import__("course_lib.backprop", fromlist=["x"])


def fflm_loss_and_grads(params, contexts, targets):
    # let course_lib's own autograd helper do everything
    f = getattr(bp, "autograd_gradients")
    E, W, b, U, c = (params[k] for k in "EWbUc")
    B = contexts.shape[0]

    def loss_fn(E, W, b, U, c):
        h = torch.tanh(E[contexts].reshape(B, -1) @ W.T + b)
        return torch.nn.functional.cross_entropy(h @ U.T + c, targets)

    try:
        grads = f(loss_fn, params)
    except TypeError:
        grads = f(loss_fn, [E, W, b, U, c])
    if not isinstance(grads, dict):
        grads = dict(zip("EWbUc", grads))
    return loss_fn(E, W, b, U, c), grads
""",
    ),
    dict(
        id="02-2.2-b-checks-ref",
        ex="2.2",
        kind="borrowed",
        desc="any function of the checks module whose name mentions fflm/reference, found via dir(checks)",
        code="""
def fflm_loss_and_grads(params, contexts, targets):
    import __main__
    ck = __main__.checks
    for name in dir(ck):
        low = name.lower()
        if ("ref" in low or "fflm" in low or "expected" in low) and not low.startswith("check") and callable(getattr(ck, name)):
            try:
                out = getattr(ck, name)(params, contexts, targets)
                if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
                    return out
            except Exception:
                pass
    raise RuntimeError("no reference found in checks")
""",
    ),
    dict(id="02-2.3-right", ex="2.3", kind="right", desc="copy then loop", code=SGD_RIGHT),
    dict(
        id="02-2.3-m-no-copy",
        ex="2.3",
        kind="mistake",
        desc="updates the caller's params in place (no copy)",
        code=sub(
            sub(SGD_RIGHT, "params = {k: v.clone() for k, v in params.items()}", "pass"),
            "params[k] = params[k] - lr * grads[k]",
            "params[k] -= lr * grads[k]",
        ),
    ),
    dict(
        id="02-2.3-m-shallow-copy",
        ex="2.3",
        kind="mistake",
        desc="dict(params) shallow copy then in-place -=",
        code=sub(
            sub(SGD_RIGHT, "{k: v.clone() for k, v in params.items()}", "dict(params)"),
            "params[k] = params[k] - lr * grads[k]",
            "params[k] -= lr * grads[k]",
        ),
    ),
    dict(
        id="02-2.3-m-plus",
        ex="2.3",
        kind="mistake",
        desc="gradient ascent (+ lr * grad)",
        code=sub(SGD_RIGHT, "params[k] - lr * grads[k]", "params[k] + lr * grads[k]"),
    ),
    dict(
        id="02-2.3-m-loss-after",
        ex="2.3",
        kind="mistake",
        desc="records the loss of the previous batch (off by one: appends before computing, starts with nan)",
        code=sub(SGD_RIGHT, "    losses = []\n", "    losses = []\n    prev = float('nan')\n").replace(
            "losses.append(float(loss))", "losses.append(prev)\n        prev = float(loss)"
        ),
    ),
    dict(id="02-2.4-right", ex="2.4", kind="right", desc="da = dh (1-h^2)", code=BPTT_STEP_RIGHT),
    dict(
        id="02-2.4-m-hprev-deriv",
        ex="2.4",
        kind="mistake",
        desc="tanh derivative at h_prev instead of h",
        code=sub(BPTT_STEP_RIGHT, "(1 - h**2)", "(1 - h_prev**2)"),
    ),
    dict(
        id="02-2.4-m-WT",
        ex="2.4",
        kind="mistake",
        desc="dh_prev = da @ W_hh.T (transpose)",
        code=sub(BPTT_STEP_RIGHT, "da @ W_hh", "da @ W_hh.T"),
    ),
    dict(
        id="02-2.4-m-dW-swap",
        ex="2.4",
        kind="mistake",
        desc="dW_xh and dW_hh returned in swapped order",
        code=sub(BPTT_STEP_RIGHT, "return da.T @ x, da.T @ h_prev,", "return da.T @ h_prev, da.T @ x,"),
    ),
    dict(
        id="02-2.4-b-courselib",
        ex="2.4",
        kind="borrowed",
        desc="course_lib.bptt.bptt_step via importlib",
        code="""
import importlib


def bptt_step(dh, h, h_prev, x, W_hh):
    return importlib.import_module("course_lib.bptt").bptt_step(dh, h, h_prev, x, W_hh)
""",
    ),
    dict(id="02-2.5-right", ex="2.5", kind="right", desc="loop with truncation", code=BPTT_LOOP_RIGHT),
    dict(
        id="02-2.5-m-trunc-off-by-one",
        ex="2.5",
        kind="mistake",
        desc="cuts the carry at (t+1) % k == 0 (chunk boundary off by one)",
        code=sub(BPTT_LOOP_RIGHT, "t > 0 and t % truncate == 0", "t > 0 and (t + 1) % truncate == 0"),
    ),
    dict(
        id="02-2.5-m-hprev-h0-wrong",
        ex="2.5",
        kind="mistake",
        desc="h_prev = hs[t-1] also at t=0 (wraps to hs[-1] instead of h0)",
        code=sub(BPTT_LOOP_RIGHT, "hs[t - 1] if t > 0 else h0", "hs[t - 1]"),
    ),
    dict(
        id="02-2.5-m-total-before-carry",
        ex="2.5",
        kind="mistake",
        desc="dh_total[t] records dhs[t] only (without the carry)",
        code=sub(BPTT_LOOP_RIGHT, "dh_total[t] = dh", "dh_total[t] = dhs[t]"),
    ),
    dict(
        id="02-2.5-m-inplace-dhs",
        ex="2.5",
        kind="mistake",
        desc="accumulates the carry into dhs in place (edits input)",
        code=sub(BPTT_LOOP_RIGHT, "dh = dhs[t] + carry", "dhs[t] += carry\n        dh = dhs[t]"),
    ),
    dict(
        id="02-2.5-m-float32",
        ex="2.5",
        kind="mistake",
        desc="dW_xh/db_h made as float32 torch.zeros without dtype",
        code=BPTT_LOOP_RIGHT.replace(", dtype=hs.dtype)", ")"),
    ),
    dict(
        id="02-2.5-b-courselib-rnn-backward",
        ex="2.5",
        kind="borrowed",
        desc="course_lib.bptt.bptt_step called in the loop (text allows the student's own 2.4 only)",
        code=sub(
            sub(BPTT_LOOP_RIGHT, "import torch\n", "import torch\nfrom course_lib.bptt import bptt_step as lib_step\n"),
            "        da = dh * (1 - hs[t] ** 2)\n        dW_xh += da.T @ xs[t]\n        dW_hh += da.T @ h_prev\n        db_h += da.sum(0)\n        carry = da @ W_hh\n",
            "        a, b_, c_, carry = lib_step(dh, hs[t], h_prev, xs[t], W_hh)\n        dW_xh += a\n        dW_hh += b_\n        db_h += c_\n",
        ),
    ),
]
