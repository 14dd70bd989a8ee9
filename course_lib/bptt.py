"""An Elman RNN and backpropagation through time, full and truncated, by hand (lesson 02b).

``rnn_forward`` runs h_t = sigma(W_xh x_t + W_hh h_{t-1} + b_h), ``bptt_step`` is one step
back, ``rnn_backward`` walks t = T, ..., 1 (optionally cutting the path every k steps), and
``scaled_orthogonal`` makes a W_hh of known spectral radius for the vanishing and exploding
gradients experiment.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course_lib import _validate
from course_lib.backprop import _check_activation, _same_shape, _tensor, activation_backward, activation_forward

__all__ = ["RNNCache", "rnn_forward", "bptt_step", "rnn_backward", "scaled_orthogonal"]


# --------------------------------------------------------------------------------------
# Elman RNN and backpropagation through time.
# --------------------------------------------------------------------------------------
@dataclass
class RNNCache:
    xs: torch.Tensor  # (T, B, D) inputs
    h0: torch.Tensor  # (B, H) initial state
    a: torch.Tensor  # (T, B, H) pre-activations
    hs: torch.Tensor  # (T, B, H) states h_1..h_T
    W_xh: torch.Tensor
    W_hh: torch.Tensor
    activation: str


def rnn_forward(
    xs: torch.Tensor,
    h0: torch.Tensor,
    W_xh: torch.Tensor,
    W_hh: torch.Tensor,
    b_h: torch.Tensor,
    activation: str = "tanh",
):
    """h_t = sigma(W_xh x_t + W_hh h_{t-1} + b_h) for t = 1..T, rows as in torch.nn.RNN.

    xs (T, B, D), h0 (B, H), W_xh (H, D), W_hh (H, H), b_h (H,). Returns hs (T, B, H) and the
    cache for ``rnn_backward``. (The Penn CIS 7000 notes call W_hh "U" and W_xh "W".)
    """
    _check_activation(activation)
    xs, h0 = _tensor(xs, "xs", 3), _tensor(h0, "h0", 2)
    W_xh, W_hh, b_h = _tensor(W_xh, "W_xh", 2), _tensor(W_hh, "W_hh", 2), _tensor(b_h, "b_h", 1)
    T, B, D = xs.shape
    H = W_hh.shape[0]
    _same_shape(W_hh, "W_hh", (H, H), "square: hidden to hidden")
    _same_shape(W_xh, "W_xh", (H, D), "(hidden size, input size xs.shape[2])")
    _same_shape(b_h, "b_h", (H,), "one bias per hidden unit")
    _same_shape(h0, "h0", (B, H), "(batch size xs.shape[1], hidden size)")
    a, hs, h = [], [], h0
    for t in range(T):
        a_t = xs[t] @ W_xh.T + h @ W_hh.T + b_h
        h = activation_forward(a_t, activation)
        a.append(a_t)
        hs.append(h)
    hs_t = torch.stack(hs)
    return hs_t, RNNCache(xs, h0, torch.stack(a), hs_t, W_xh, W_hh, activation)


def bptt_step(
    dh: torch.Tensor,
    a: torch.Tensor,
    h: torch.Tensor,
    h_prev: torch.Tensor,
    x: torch.Tensor,
    W_xh: torch.Tensor,
    W_hh: torch.Tensor,
    activation: str = "tanh",
):
    """One step back through h = sigma(x W_xh^T + h_prev W_hh^T + b_h).

    dh (B, H) is the *total* gradient arriving at h (from this step's loss and from step t+1).
    Returns (dx, dW_xh, dW_hh, db_h, dh_prev): this step's share of the weight gradients (BPTT
    adds the shares of all steps, because the weights are shared across time) and the gradient
    sent on to h_{t-1}.
    """
    da = activation_backward(dh, a, h, activation)  # (B, H)
    return da @ W_xh, da.T @ x, da.T @ h_prev, da.sum(0), da @ W_hh


def rnn_backward(dhs: torch.Tensor, cache: RNNCache, truncate: int | None = None) -> dict[str, torch.Tensor]:
    """Backpropagation through time: t = T, ..., 1, summing every step's gradient.

    ``dhs`` (T, B, H) is dL/dh_t from the loss at each step only (e.g. from y_t = W_hy h_t).
    Returns dW_xh, dW_hh, db_h, dxs, dh0 and ``dh_total`` (T, B, H), the full dL/dh_t (own
    loss plus everything flowing back from later steps): its norm is what vanishes or explodes.

    ``truncate=k`` is truncated BPTT as done in practice: the sequence is cut into chunks of k
    steps, and no gradient flows from one chunk into the previous one (like calling
    ``h = h.detach()`` every k steps with autograd). Losses still see their own chunk.
    """
    dhs = _tensor(dhs, "dhs", 3)
    _same_shape(dhs, "dhs", cache.hs.shape, "the shape of hs, (T, B, H)")
    if truncate is not None:
        _validate.positive_int("truncate", truncate)  # None: no truncation
    T = dhs.shape[0]
    dW_xh, dW_hh = torch.zeros_like(cache.W_xh), torch.zeros_like(cache.W_hh)
    db_h = torch.zeros(cache.W_hh.shape[0], dtype=dhs.dtype, device=dhs.device)
    dxs, dh_total = torch.zeros_like(cache.xs), torch.zeros_like(dhs)
    dh_next = torch.zeros_like(cache.h0)  # gradient arriving at h_t from step t+1
    for t in reversed(range(T)):
        dh = dhs[t] + dh_next
        dh_total[t] = dh
        h_prev = cache.hs[t - 1] if t > 0 else cache.h0
        dx, dWx, dWh, db, dh_next = bptt_step(
            dh, cache.a[t], cache.hs[t], h_prev, cache.xs[t], cache.W_xh, cache.W_hh, cache.activation
        )
        dxs[t] = dx
        dW_xh += dWx
        dW_hh += dWh
        db_h += db
        if truncate is not None and t > 0 and t % truncate == 0:
            dh_next = torch.zeros_like(dh_next)  # the chunk starts here: cut the path to earlier steps
    return dict(W_xh=dW_xh, W_hh=dW_hh, b_h=db_h, xs=dxs, h0=dh_next, dh_total=dh_total)


def scaled_orthogonal(n: int, radius: float, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """radius * Q with Q a random orthogonal (n, n) matrix: every eigenvalue has |lambda| = radius,
    so the spectral radius is exactly ``radius`` (and so is every singular value)."""
    _validate.positive_int("n", n)
    radius = _validate.number("radius", radius, 0)
    g = torch.Generator().manual_seed(seed)
    Q, R = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=dtype))  # cpu: the seeded generator lives there
    return radius * Q * torch.sign(torch.diagonal(R))  # the sign fix makes Q uniformly distributed
