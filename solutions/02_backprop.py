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
# Five backward passes, each followed by a check. A check calls your function on fresh
# inputs, compares with `torch.autograd`, and says **passed**, **not implemented yet**, or
# **failed** with a hint about the likely mistake. Replace each `raise NotImplementedError(...)`
# with your code (torch tensor operations, no autograd) and run the cell below it. The lesson
# notebook `notebooks/02_backprop.ipynb` explains everything used here. Every function returns
# torch tensors and leaves its inputs unchanged (the caller still needs them); sizes change from
# call to call, so nothing may be hard-coded.
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
# ## Exercise 2.2: the cross-entropy gradient with respect to the logits
#
# For a batch of logits `z` (B, K) and the true classes `targets` (B,), the loss is the mean
# cross-entropy $L = \frac{1}{B} \sum_b -\log \hat{y}_{b, t_b}$ with $\hat{y}_b = \mathrm{softmax}(z_b)$.
# The lecture's result for one example is $\partial L / \partial z = \hat{y} - y$ with $y$ the
# one-hot target. Return $\partial L / \partial z$ for the batch, shape (B, K). A batch need not
# contain every class.

# %%
# Exercise 2.2: the cross-entropy gradient with respect to the logits
import torch


def cross_entropy_grad(z, targets):
    """dL/dz (B, K) of the mean cross-entropy of logits z (B, K) with integer targets (B,)."""
    ### BEGIN SOLUTION
    y_hat = torch.softmax(z, dim=1)  # each row is a distribution over the K classes
    y = torch.nn.functional.one_hot(targets, z.shape[1]).to(z.dtype)
    return (y_hat - y) / z.shape[0]  # the loss is a mean over the B examples
    ### END SOLUTION


# %%
result = checks.check_cross_entropy_grad(cross_entropy_grad)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.3: a linear layer's backward pass
#
# The forward pass is `z = x @ W.T + b` with `x` (B, n_in), `W` (n_out, n_in), `b` (n_out,).
# Given `dz` $= \partial L / \partial z$ (B, n_out), return `(dx, dW, db)`. Each gradient has the
# shape of its tensor. For one example, `dW` is the lecture's $(\hat{y} - y)\,x^T$; for a batch,
# the examples' contributions add up.

# %%
# Exercise 2.3: a linear layer's backward pass
def linear_backward(dz, x, W):
    """(dx, dW, db) for z = x @ W.T + b, given dz = dL/dz."""
    ### BEGIN SOLUTION
    dx = dz @ W
    dW = dz.T @ x
    db = dz.sum(dim=0)
    return dx, dW, db
    ### END SOLUTION


# %%
result = checks.check_linear_backward(linear_backward)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.4: the embedding backward pass
#
# An embedding lookup `e = E[ids]` takes rows of the matrix `E` (V, d); `ids` can have any
# shape, and `e` has shape `ids.shape + (d,)`. It is the same as multiplying one-hot vectors
# by `E`, so the gradient flows back only into the rows that were used. Given `de`
# $= \partial L / \partial e$, return `dE` (V, d). A word that appears twice was used twice:
# its row gets both gradients. `dE` has a row for every word of the vocabulary (`vocab_size`),
# zero for words the batch did not use.

# %%
# Exercise 2.4: the embedding backward pass
import torch


def embedding_backward(de, ids, vocab_size):
    """dE (vocab_size, d) for e = E[ids], given de = dL/de of shape ids.shape + (d,)."""
    ### BEGIN SOLUTION
    d = de.shape[-1]
    dE = torch.zeros(vocab_size, d, dtype=de.dtype)
    for i, row in zip(ids.reshape(-1).tolist(), de.reshape(-1, d)):
        dE[i] += row  # += : a repeated word accumulates the gradient of every use
    return dE
    ### END SOLUTION


# %%
result = checks.check_embedding_backward(embedding_backward)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2.5: one step of backpropagation through time
#
# An Elman RNN step is $h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$; with rows,
# `h = torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)` for a batch `x` (B, D), `h_prev` (B, H).
# Given `dh` (B, H), the total gradient arriving at $h_t$ (from this step's loss and from step
# $t+1$), return this step's `(dW_xh, dW_hh, db_h, dh_prev)`. BPTT calls this for
# $t = T, \dots, 1$, adds up the weight gradients of all steps, and passes `dh_prev` on.

# %%
# Exercise 2.5: one step of backpropagation through time
def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    ### BEGIN SOLUTION
    da = dh * (1 - h ** 2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2
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
