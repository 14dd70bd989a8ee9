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
# # Lesson 06 exercises: masked self-attention
#
# Three small functions, each followed by a check. A check calls your function on fresh
# inputs and says **passed**, **not implemented yet**, or **failed** with a hint about
# the likely mistake. Replace each `raise NotImplementedError(...)` with your code and
# run the cell below it. The lesson notebook `notebooks/06_masked_attention.ipynb`
# explains everything used here.
#
# As in the lecture, positions count from 1: query $i$ and key $j$ run over $1, \dots, n$,
# and masked self-attention lets query $i$ see the keys $j \le i$:
#
# $$e_{i,j} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{d_k}} \text{ for } j \le i, \qquad
#   e_{i,j} = -\infty \text{ for } j > i, \qquad \alpha_i = \operatorname{softmax}(\mathbf{e}_i)$$

# %%
import course_lib
from course_lib.checks import lesson06 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 6.1: the causal mask
#
# Return a boolean tensor of shape `(T, T)` that is `True` where query $i$ may attend to
# key $j$ (that is, $j \le i$) and `False` for the future. This is the convention of
# `torch.nn.functional.scaled_dot_product_attention`'s boolean `attn_mask`. For `T = 3`:
#
# ```
# [[ True, False, False],
#  [ True,  True, False],
#  [ True,  True,  True]]
# ```

# %%
# Exercise 6.1: the causal mask
import torch


def causal_mask(T):
    """(T, T) boolean tensor, True where query i may attend to key j, i.e. j <= i."""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool).tril()
    ### END SOLUTION


# %%
result = checks.check_causal_mask(causal_mask)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 6.2: one row of masked attention weights
#
# Given the scores $\mathbf{e}_i = (e_{i,1}, \dots, e_{i,n})$ of query $i$ (a 1-D tensor)
# and $i$ itself (counting from 1), return $\alpha_i$ as a tensor of the same length $n$: the
# softmax of the row after the future scores $e_{i,j}$, $j > i$, were set to $-\infty$. The
# weights of the future are then exactly 0 and the others sum to 1. Leave `e_i` as it was
# given (the caller may still need it): mask a copy, not the tensor itself.

# %%
# Exercise 6.2: one row of masked attention weights
import torch


def masked_row(e_i, i):
    """alpha_i from the scores e_i (length n) of query i, with i counted from 1 as in the lecture."""
    ### BEGIN SOLUTION
    n = e_i.shape[0]
    j = torch.arange(1, n + 1, device=e_i.device)  # the keys, counted from 1
    e_i = e_i.masked_fill(j > i, float("-inf"))  # the future gets -inf, so exp(-inf) = 0
    return torch.softmax(e_i, dim=0)
    ### END SOLUTION


# %%
result = checks.check_masked_row(masked_row)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 6.3: the quiz, for any score matrix
#
# The lecture's quiz gives the $n \times n$ matrix of scores $e_{i,j}$ and asks for one
# weight $\alpha_{i,j}$ of masked attention. Write the function that answers every variant
# of it: `alpha(scores, i, j)` with $i$ and $j$ counted from 1, returning a Python float. Mask
# the whole matrix at once (without changing `scores`), take the softmax of each row, then pick
# the entry.

# %%
# Exercise 6.3: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    ### BEGIN SOLUTION
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool, device=scores.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # each row sums to 1
    return weights[i - 1, j - 1].item()
    ### END SOLUTION


# %%
result = checks.check_alpha(alpha)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="06"))
