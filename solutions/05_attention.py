# %% [markdown]
# # Lesson 05 exercises: attention
#
# Four small functions, the pieces of every attention layer, each followed by a check. A check
# calls your function on fresh random tensors and says **passed**, **not implemented yet**, or
# **failed** with a hint about the likely mistake. Replace each `raise NotImplementedError(...)`
# with your code and run the cell below it. The lesson notebook `notebooks/05_attention.ipynb`
# explains everything used here; `course_lib/attention.py` and `course_lib/seq2seq.py` hold
# the library's versions (peek only after trying).
#
# Shapes follow PyTorch: `...` stands for any batch dimensions, `T_q` queries, `T_k` keys, `d` features.

# %%
import course_lib
from course_lib.checks import lesson05 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 5.1: attention scores
#
# How relevant is key $j$ to query $i$? The scaled dot product of the transformer:
#
# $$e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} \qquad\text{or, for all pairs at once,}\qquad E = \frac{Q K^\top}{\sqrt{d}}$$
#
# with $Q$ of shape `(..., T_q, d)` and $K$ of shape `(..., T_k, d)`: row $i$ of $E$ holds query
# $i$'s scores against every key, shape `(..., T_q, T_k)`. (Dividing by $\sqrt{d}$ keeps the
# scores of random vectors at about unit size whatever $d$ is.)

# %%
# Exercise 5.1: scaled dot-product attention scores
import math

import torch


def attention_scores(Q, K):
    """Scores Q K^T / sqrt(d): Q (..., T_q, d), K (..., T_k, d) -> (..., T_q, T_k)."""
    ### BEGIN SOLUTION
    d = Q.shape[-1]
    return Q @ K.transpose(-2, -1) / math.sqrt(d)
    ### END SOLUTION


# %%
result = checks.check_attention_scores(attention_scores)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5.2: attention weights
#
# The weights are a softmax of each query's scores over the keys, so each row sums to 1:
#
# $$\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{j'} \exp(e_{ij'})}$$
#
# Some keys must not be seen: padding after a short sentence, or (lesson 06) the future. `mask`
# is a boolean tensor that broadcasts against the scores, **True where query $i$ may attend to
# key $j$** (the convention of `torch.nn.functional.scaled_dot_product_attention`), or `None`.
# Give a masked key the score $-\infty$: then $\exp(-\infty) = 0$ and the other weights still sum to 1.
# (Every query in the check may attend to at least one key.)

# %%
# Exercise 5.2: attention weights, a masked softmax
import torch


def attention_weights(scores, mask=None):
    """softmax over the keys (the last axis) after masking: mask True = may attend."""
    ### BEGIN SOLUTION
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # exp(-inf) = 0: no weight for masked keys
    return torch.softmax(scores, dim=-1)
    ### END SOLUTION


# %%
result = checks.check_attention_weights(attention_weights)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5.3: the context vector
#
# In the encoder-decoder of the lesson, decoding step $i$ attends to the encoder states
# $h_1^e, \dots, h_n^e$ (the values) with weights $\alpha_{i1}, \dots, \alpha_{in}$, and reads
# their weighted average:
#
# $$c_i = \sum_{j=1}^{n} \alpha_{ij}\, h_j^e$$
#
# For a batch: `weights` has shape `(B, T)` (each row sums to 1), `values` has shape `(B, T, d)`;
# return the `(B, d)` context vectors.

# %%
# Exercise 5.3: the context vector
import torch


def context_vector(weights, values):
    """c = sum_j alpha_j h_j for each sequence: weights (B, T), values (B, T, d) -> (B, d)."""
    ### BEGIN SOLUTION
    return (weights.unsqueeze(-1) * values).sum(dim=1)  # (B, T, 1) * (B, T, d), summed over T
    ### END SOLUTION


# %%
result = checks.check_context_vector(context_vector)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5.4: additive attention
#
# Bahdanau et al. (2015) scored with a small neural network instead of a dot product. With the
# decoder state $s$ (the query, shape `(B, d_q)`) and the encoder states $h_j$ (the keys,
# shape `(B, T, d_k)`):
#
# $$e_j = v^\top \tanh(W_q\, s + W_k\, h_j)$$
#
# where $W_q$ has shape `(a, d_q)`, $W_k$ shape `(a, d_k)` and $v$ shape `(a,)`. Return the
# `(B, T)` scores (the softmax comes after, as in exercise 5.2). Broadcasting computes every $j$
# at once: $W_q s$ is `(B, a)`, $W_k h_j$ for all $j$ is `(B, T, a)`.

# %%
# Exercise 5.4: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    ### BEGIN SOLUTION
    projected_query = query @ W_q.T  # (B, a)
    projected_keys = keys @ W_k.T  # (B, T, a)
    return torch.tanh(projected_query.unsqueeze(1) + projected_keys) @ v  # (B, T, a) @ (a,) -> (B, T)
    ### END SOLUTION


# %%
result = checks.check_additive_scores(additive_scores)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="05"))
