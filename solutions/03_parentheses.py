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
# # Lesson 03 exercises: balanced colored parentheses and recurrent steps
#
# Four small functions, each followed by a check. A check calls your function on fresh
# inputs and says **passed**, **not implemented yet**, or **failed** with a hint about the
# likely mistake. Replace each `raise NotImplementedError(...)` with your code and run the
# cell below it. The lesson notebook `notebooks/03_parentheses.ipynb` explains everything
# used here.
#
# The task: with 10 symbols, `i` in 0..4 opens a parenthesis of colour `i`, and `9 - i`
# closes it (`n_symbols - 1 - i` in general). `[2, 0, 9, 7, 0, 9]` is balanced:
# 2( 0( 0) 2) 0( 0).

# %%
import numpy as np
import torch

import course_lib
from course_lib import parentheses as P
from course_lib.checks import lesson03 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 3.1: `is_balanced` with a stack
#
# Return `True` when every closer closes the most recent parenthesis still open, of its own
# colour, and nothing stays open at the end. Symbol `s` opens when `s < n_symbols // 2`;
# the closer of opener `i` is `n_symbols - 1 - i`. A list works as a stack: `append` to
# push, `pop` to take the top. (`n_symbols=2` is the binary task: 0 opens, 1 closes.)

# %%
# Exercise 3.1: is_balanced with a stack
def is_balanced(seq, n_symbols=10):
    """True when `seq` (a list of ints in 0..n_symbols-1) is a balanced colored parenthesis sequence."""
    ### BEGIN SOLUTION
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
    ### END SOLUTION


# %%
result = checks.check_is_balanced(is_balanced)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3.2: the transposition negative generator
#
# The hardest negatives keep the bracket structure and the number of each colour, and
# exchange the colours of two closers. Take a balanced `seq` and choose a pair of closer
# positions `p < q` such that
#
# * the closers have **different colours** (`seq[p] != seq[q]`), and
# * the opener matched by the closer at `q` comes **before** `p`: that colour is open, under
#   the top of the stack, when `p` arrives.
#
# The second condition makes the negative hard: after the exchange, the closer now at `p` has
# an open parenthesis of its colour to count against, so a counter per colour sees nothing
# wrong; only a stack notices that the top at `p` had another colour. Draw the pair
# uniformly among all such pairs with `rng` (a `numpy.random.Generator`: `rng.integers(k)`
# is uniform in 0..k-1), return a **new** list, and raise `ValueError` when there is no pair.
#
# Example: from `[0, 1, 2, 7, 8, 9]` (0( 1( 2( 2) 1) 0)) you may return
# `[0, 1, 2, 8, 7, 9]`, `[0, 1, 2, 9, 8, 7]` or `[0, 1, 2, 7, 9, 8]`.

# %%
# Exercise 3.2: the transposition negative generator
def transpose_closers(seq, rng, n_symbols=10):
    """A hard negative: `seq` (balanced) with the colours of two closers exchanged."""
    ### BEGIN SOLUTION
    opener_of = {}  # position of a closer -> position of the opener it closes
    stack = []
    for i, s in enumerate(seq):
        if s < n_symbols // 2:
            stack.append(i)
        else:
            opener_of[i] = stack.pop()
    pairs = [(p, q) for p in opener_of for q in opener_of
             if p < q and seq[p] != seq[q] and opener_of[q] < p]
    if not pairs:
        raise ValueError(f"no hard transposition exists in {seq}")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
    ### END SOLUTION


# %%
result = checks.check_transpose_closers(transpose_closers)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# Your negatives fool the per-colour counting rule every time, and never fool a stack:

# %%
rng = np.random.default_rng(0)
positives = [P.random_positive(12, rng) for _ in range(300)]
try:
    yours = [transpose_closers(s, rng) for s in positives if P.transposition_pairs(s)]
    print(f"{len(yours)} transpositions: the per-colour rule accepts {np.mean([P.per_colour_rule(s) for s in yours]):.0%}, "
          f"your is_balanced accepts {np.mean([is_balanced(s) for s in yours]):.0%}")
except NotImplementedError:
    print("(finish exercises 3.1 and 3.2 to see this)")

# %% [markdown]
# ## Exercise 3.3: the Elman step
#
# The lecture's Elman network updates its state with
#
# $$h_t = \mathrm{ReLU}(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$$
#
# for a column vector $x_t$. In code a batch has **one example per row**: `x_t` is
# `(batch, I)`, `h_prev` is `(batch, H)`, `W_xh` is `(H, I)`, `W_hh` is `(H, H)` and `b_h`
# is `(H,)`. So $W_{xh} x_t$ becomes `x_t @ W_xh.T`. Return $h_t$, shape `(batch, H)`.

# %%
# Exercise 3.3: the Elman step
import torch


def elman_step(x_t, h_prev, W_xh, W_hh, b_h):
    """One step of the Elman network for a batch: (batch, I), (batch, H) -> (batch, H)."""
    ### BEGIN SOLUTION
    return torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)
    ### END SOLUTION


# %%
result = checks.check_elman_step(elman_step)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3.4: the gated update
#
# The lecture's gated RNN adds a gate $z_t \in (0, 1)$ that decides, unit by unit, how much
# of the old state to keep:
#
# $$\begin{aligned}
# z_t &= \mathrm{sigm}(W_{xz} x_t + W_{hz} h_{t-1} + b_z) \\
# \bar h_t &= \mathrm{ReLU}(W_{xh} x_t + W_{hh} h_{t-1} + b_h) \\
# h_t &= z_t \odot h_{t-1} + (1 - z_t) \odot \bar h_t
# \end{aligned}$$
#
# Same conventions as above (rows are examples). Return a new tensor: `h_prev` and the weights
# stay as they were (the caller still needs them, and autograd would refuse an in-place change).

# %%
# Exercise 3.4: the gated update
import torch


def gated_step(x_t, h_prev, W_xh, W_hh, b_h, W_xz, W_hz, b_z):
    """One step of the lecture's gated RNN for a batch: returns h_t, shape (batch, H)."""
    ### BEGIN SOLUTION
    z_t = torch.sigmoid(x_t @ W_xz.T + h_prev @ W_hz.T + b_z)
    h_bar = torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)
    return z_t * h_prev + (1 - z_t) * h_bar
    ### END SOLUTION


# %%
result = checks.check_gated_step(gated_step)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your steps are the library's networks
#
# `course_lib.rnn.ElmanRNN` and `GatedRNN` run exactly these steps over a whole sequence
# (computing the input terms for all steps first). Loop your steps over the time steps of a
# batch and compare:

# %%
from course_lib.rnn import ElmanRNN, GatedRNN

torch.manual_seed(0)
x = torch.randn(7, 3, 10)  # (T, batch, I)
elman, gated = ElmanRNN(10, 16), GatedRNN(10, 16)
try:
    for net, step in ((elman, elman_step), (gated, gated_step)):
        cell = net.cells[0]
        weights = {name: p.detach() for name, p in cell.named_parameters()}
        h = torch.zeros(3, 16)
        for x_t in x.unbind(0):
            h = step(x_t, h, **weights)
        output, h_n = net(x)
        print(f"{type(net).__name__}: largest difference with your loop {(h - h_n[0]).abs().max().item():.2e}")
        assert torch.allclose(h, h_n[0], atol=1e-5)
except NotImplementedError:
    print("(finish exercises 3.3 and 3.4 to see this)")

# %%
from course_lib.checks import summary

print(summary(lesson="03"))
