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
# # Lesson 07 exercises: the transformer
#
# Five pieces of a transformer, each followed by a check. A check calls your function on
# fresh inputs and says **passed**, **not implemented yet**, or **failed** with a hint about
# the likely mistake. Replace each `raise NotImplementedError(...)` with your code and run
# the cell below it. The lesson notebook `notebooks/07_transformer.ipynb` explains
# everything used here; `course_lib/transformer.py` has the library's versions.

# %%
import course_lib
from course_lib.checks import lesson07 as checks

course_lib.setup(seed=0, threads=1)

# %% [markdown]
# ## Exercise 7.1: sinusoidal position encodings
#
# Self-attention ignores the order of its inputs, so we add to each token embedding a vector
# that depends on its position. The course uses Vaswani et al.'s (2017) convention, as lesson 07
# does (Galerne's slide writes each pair cosine first; lesson 07 shows both), for position $pos$ and
# channel pair $i = 0, \dots, d/2 - 1$:
#
# $$PE_{pos, 2i} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right), \qquad
#   PE_{pos, 2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)$$
#
# Return a float tensor of shape `(T, d)` for positions $0, \dots, T-1$ ($d$ is even).

# %%
# Exercise 7.1: sinusoidal position encodings
import torch


def positional_encoding(T, d):
    """(T, d) tensor: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    ### BEGIN SOLUTION
    pos = torch.arange(T, dtype=torch.float32)[:, None]  # (T, 1)
    two_i = torch.arange(0, d, 2, dtype=torch.float32)  # (d/2,)
    angle = pos / 10000 ** (two_i / d)  # (T, d/2)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
    ### END SOLUTION


# %%
result = checks.check_positional_encoding(positional_encoding)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.2: the causal mask
#
# In a decoder, position $i$ may attend to positions $j \le i$ only: the future is masked
# (its score set to $-\infty$ before the softmax). Return a boolean `(T, T)` tensor that is
# **True where query $i$ may attend to key $j$**, the convention of
# `torch.nn.functional.scaled_dot_product_attention`.

# %%
# Exercise 7.2: the causal mask
import torch


def causal_mask(T):
    """(T, T) bool tensor, True where query i may attend to key j (j <= i)."""
    ### BEGIN SOLUTION
    return torch.tril(torch.ones(T, T, dtype=torch.bool))
    ### END SOLUTION


# %%
result = checks.check_causal_mask(causal_mask)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.3: splitting the heads
#
# Multi-head attention runs $H$ attentions side by side on slices of the $C$ features: head
# $h$ gets features $hD, \dots, (h+1)D - 1$ of every token, with $D = C / H$ (the same
# slices of $W^Q$, $W^K$, $W^V$ as torch's `nn.MultiheadAttention`). Reshape the projected
# queries `x` of shape `(B, T, C)` to `(B, H, T, D)` for any number of heads $H$ = `n_head`
# that divides $C$, so that each head's `(T, D)` matrix can go through one batched
# `q @ k.transpose(-2, -1)`.

# %%
# Exercise 7.3: splitting the heads
def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // n_head; head h holds features h*D .. (h+1)*D - 1."""
    ### BEGIN SOLUTION
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, T, H, D) -> (B, H, T, D)
    ### END SOLUTION


# %%
result = checks.check_split_heads(split_heads)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.4: one transformer block
#
# A pre-norm block (GPT-2 and later) applies layer norm *before* each sub-layer and adds the
# sub-layer's output to its input (the residual connection):
#
# $$x \leftarrow x + \mathrm{SA}(\mathrm{LN}_1(x)), \qquad x \leftarrow x + \mathrm{FFN}(\mathrm{LN}_2(x))$$
#
# with layer norm over the $C$ features of each token,
# $\mathrm{LN}(h) = \gamma \odot \dfrac{h - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta$, where $\mu$ and
# $\sigma^2$ are the mean and the (biased) variance of that token's features and $\epsilon = 10^{-5}$.
# `self_attention` and `feed_forward` are given (functions from `(B, T, C)` to `(B, T, C)`);
# `ln1` and `ln2` are `(gamma, beta)` pairs of shape `(C,)`. Return a new tensor: the caller's `x`
# stays as it was (write `x = x + ...`, not `x += ...`).

# %%
# Exercise 7.4: one transformer block
import torch


def transformer_block(x, self_attention, feed_forward, ln1, ln2, eps=1e-5):
    """Pre-norm block: x + SA(LN_1(x)), then + FFN(LN_2(x)). x: (B, T, C); ln1, ln2: (gamma, beta)."""
    ### BEGIN SOLUTION
    def layer_norm(h, gamma, beta):
        mu = h.mean(dim=-1, keepdim=True)  # (B, T, 1): over the features of each token
        var = h.var(dim=-1, keepdim=True, unbiased=False)
        return gamma * (h - mu) / torch.sqrt(var + eps) + beta

    x = x + self_attention(layer_norm(x, *ln1))
    x = x + feed_forward(layer_norm(x, *ln2))
    return x
    ### END SOLUTION


# %%
result = checks.check_transformer_block(transformer_block)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.5: top-k sampling
#
# To generate text we sample the next token from $p = \mathrm{softmax}(\text{logits} / T)$
# (temperature $T$). Top-$k$ sampling first removes every token but the $k$ most likely, so
# the long tail of unlikely tokens can never be drawn. Return the distribution to sample from:
# a tensor of shape `(V,)` that is zero outside the $k$ largest logits and sums to 1. A logit
# equal to the $k$-th largest is kept too (keep every logit $\ge$ the $k$-th largest, as
# nanoGPT does), so ties can leave more than $k$ tokens. Leave `logits` unchanged.
# (`torch.multinomial(probs, 1)` would then draw from it.)

# %%
# Exercise 7.5: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities: softmax(logits / temperature) restricted to the k largest logits."""
    ### BEGIN SOLUTION
    z = logits / temperature
    kth = torch.topk(z, k).values[-1]  # the k-th largest
    z = z.masked_fill(z < kth, float("-inf"))  # exp(-inf) = 0 outside the top k
    return torch.softmax(z, dim=-1)
    ### END SOLUTION


# %%
result = checks.check_top_k_probs(top_k_probs)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="07"))
