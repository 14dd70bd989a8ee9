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
# # Lesson 01 exercises: n-grams and perplexity
#
# Five small functions, each followed by a check. A check calls your function on fresh
# inputs and says **passed**, **not implemented yet**, or **failed** with a hint about
# the likely mistake. Replace each `raise NotImplementedError(...)` with your code and
# run the cell below it. The lesson notebook `notebooks/01_ngrams.ipynb` explains
# everything used here.

# %%
import course_lib
from course_lib.checks import lesson01 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 1.1: counting padded n-grams
#
# An n-gram model predicts each word from the $n-1$ words before it. So that the first
# word has a context and the end of the sentence is predicted too, pad the sentence with
# $n-1$ start symbols `<s>` on the left and $n-1$ end symbols `</s>` on the right (the
# convention of `nltk.lm`), then count every run of $n$ consecutive tokens.
#
# Leave `sentence` unchanged (pad a copy). `count_ngrams(["the", "union"], 2)` gives
# `Counter({("<s>", "the"): 1, ("the", "union"): 1, ("union", "</s>"): 1})`.

# %%
# Exercise 1.1: counting padded n-grams
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-gram tuples of `sentence` (a list of tokens) after padding."""
    ### BEGIN SOLUTION
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"] * (n - 1)
    return Counter(tuple(padded[i:i + n]) for i in range(len(padded) - n + 1))
    ### END SOLUTION


# %%
result = checks.check_count_ngrams(count_ngrams)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.2: the maximum-likelihood estimate
#
# From counts of n-grams, the MLE of the next word is
#
# $$P_{MLE}(w_i \mid w_{i-n+1:i-1}) = \frac{c(w_{i-n+1:i-1}\, w_i)}{\sum_{w} c(w_{i-n+1:i-1}\, w)}$$
#
# `counts` maps n-gram tuples to counts, `context` is a tuple of the $n-1$ previous
# words. If the context never occurs there is nothing to divide by: return `0.0`
# (this is what `nltk.lm.MLE` does too). The context may be of any length $n-1 \ge 1$.

# %%
# Exercise 1.2: maximum-likelihood probability from counts
def mle_prob(counts, context, word):
    """P(word | context) by maximum likelihood from a Counter of n-grams."""
    ### BEGIN SOLUTION
    context = tuple(context)
    context_count = sum(c for ngram, c in counts.items() if ngram[:-1] == context)
    if context_count == 0:
        return 0.0
    return counts.get(context + (word,), 0) / context_count
    ### END SOLUTION


# %%
result = checks.check_mle_prob(mle_prob)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.3: add-k smoothing
#
# MLE gives probability zero to every n-gram it has not seen, so one unseen n-gram in the
# test set makes the perplexity infinite. Add-$k$ smoothing pretends every word of the
# vocabulary (size $V$) was seen $k$ more times after every context:
#
# $$P_{add\text{-}k}(w \mid h) = \frac{c(h\, w) + k}{c(h) + k V}$$
#
# Laplace smoothing is $k = 1$; $k = 0$ is MLE again. Any $k \ge 0$ may be passed, and
# $c(h)$ may be 0 (a context never seen: with $k > 0$ every word then gets $1/V$).

# %%
# Exercise 1.3: add-k (Laplace) smoothing
def laplace_prob(count, context_count, vocab_size, k=1.0):
    """Add-k estimate from c(h w) = count, c(h) = context_count and V = vocab_size."""
    ### BEGIN SOLUTION
    return (count + k) / (context_count + k * vocab_size)
    ### END SOLUTION


# %%
result = checks.check_laplace_prob(laplace_prob)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.4: perplexity from log-probabilities
#
# The lecture defines perplexity as $2^J$ with $J = -\frac{1}{n}\sum_i \log_2 P(w_i \mid h_i)$
# in bits. PyTorch and NumPy give **natural** logarithms (nats). Given the natural log of
# the probability of each predicted token, return the perplexity.

# %%
# Exercise 1.4: perplexity from log-probabilities
import math


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    ### BEGIN SOLUTION
    log_probs = list(log_probs)
    J = -sum(log_probs) / len(log_probs)  # cross-entropy in nats
    return math.exp(J)
    ### END SOLUTION


# %%
result = checks.check_perplexity(perplexity)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.5: sampling the next word
#
# To generate text, draw the next word from $P(w \mid h)$. A temperature $T$ reshapes the
# distribution: $q_w \propto p_w^{1/T}$ (below 1 sharper, above 1 flatter). Sample by the
# inverse of the cumulative distribution: given a uniform number $u \in [0, 1)$, return the
# first index $i$ with $q_0 + \dots + q_i > u$ (strictly greater: when $u$ equals a cumulative
# sum exactly, the answer is the next index). `probs` may be a list or a NumPy array; leave it
# unchanged.

# %%
# Exercise 1.5: sampling the next word with a temperature
import numpy as np


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    ### BEGIN SOLUTION
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    index = int(np.searchsorted(np.cumsum(q), u, side="right"))
    return min(index, len(q) - 1)  # guards against rounding when u is within 1e-16 of 1
    ### END SOLUTION


# %%
result = checks.check_sample_next(sample_next)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="01"))
