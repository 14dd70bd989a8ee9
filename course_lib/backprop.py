"""Backpropagation by hand (lesson 02): every forward has a hand-written backward.

The lecture writes column vectors, ``z = W x``. Here, as in ``torch.nn.Linear``, a batch
of B inputs is a matrix with one input per *row*, so the same layer reads
``z = x W^T + b`` with ``x`` (B, n_in), ``W`` (n_out, n_in) and ``z`` (B, n_out).
Each backward takes the gradient of the loss with respect to the output (``dz`` means
dL/dz, the same shape as z) and returns the gradients with respect to the inputs and
parameters, without autograd. Lesson 02 checks every one of them against
``torch.autograd`` (and the tests do it with ``torch.autograd.gradcheck`` in float64).

Contents, in the order of the lesson:

* the lecture's worked example (``seed_example``): z = W x, softmax, cross-entropy,
  with the three Jacobians written out;
* building blocks: ``linear_*``, ``softmax*``, ``cross_entropy*`` (fused and unfused),
  ``activation_*`` (tanh, sigmoid, relu), ``embedding_*``;
* gradient checking: ``numerical_gradient``, ``autograd_gradients``, ``compare_gradients``;
* the feedforward language model of Bengio et al. (2003) in ``course_lib.fflm``
  (``FeedForwardLM``, ``Adam``, ``ngram_windows``, mixing with an n-gram model);
* an Elman RNN and backpropagation through time in ``course_lib.bptt`` (``rnn_forward``,
  ``rnn_backward``, ``bptt_step``, ``scaled_orthogonal``).

The names of those two modules stay importable from here (``backprop.FeedForwardLM``, ...).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "seed_example",
    "linear_forward",
    "linear_backward",
    "softmax",
    "log_softmax",
    "softmax_jacobian",
    "softmax_backward",
    "one_hot",
    "cross_entropy",
    "cross_entropy_backward",
    "cross_entropy_from_probs",
    "cross_entropy_from_probs_backward",
    "ACTIVATIONS",
    "activation_forward",
    "activation_backward",
    "embedding_forward",
    "embedding_backward",
    "numerical_gradient",
    "autograd_gradients",
    "compare_gradients",
    "GradientReport",
]

ACTIVATIONS = ("tanh", "sigmoid", "relu", "linear")


# --------------------------------------------------------------------------------------
# Input checks: a wrong shape is an error that says which argument and what was expected.
# --------------------------------------------------------------------------------------
def _tensor(x, name: str, ndim: int | Sequence[int] | None = None, floating: bool = True) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and x.dim() not in dims:
        want = " or ".join(f"{d}-D" for d in dims)
        raise ValueError(f"{name} must be {want}, got shape {tuple(x.shape)}")
    if floating and not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    return x


def _ids(ids, name: str, upper: int | None = None) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of integer ids, got {type(ids).__name__}")
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise ValueError(f"{name} must hold integer ids (e.g. torch.long), got dtype {ids.dtype}")
    if (
        ids.numel()
        and upper is not None
        and ids.device.type != "meta"
        and (int(ids.min()) < 0 or int(ids.max()) >= upper)
    ):
        raise ValueError(f"{name} must be ids in [0, {upper}), got values in [{int(ids.min())}, {int(ids.max())}]")
    return ids.long()


def _same_shape(a: torch.Tensor, a_name: str, shape: Sequence[int], what: str) -> None:
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{a_name} must have shape {tuple(shape)} ({what}), got {tuple(a.shape)}")


# --------------------------------------------------------------------------------------
# The lecture's worked example: z = W x, y_hat = softmax(z), L = -sum_i y_i log y_hat_i.
# --------------------------------------------------------------------------------------
def seed_example(W: torch.Tensor, x: torch.Tensor, target: int) -> dict[str, torch.Tensor]:
    """Every quantity of the lecture's back-propagation primer, as the slides write them.

    ``W`` is (3, 2) in the lecture (any (K, n) works), ``x`` is (n,), ``target`` is the index
    of the true class (y is its one-hot vector). Returns z, y_hat, y, L, the three Jacobians

    * ``dL_dyhat`` (1, K): [-y_1/y_hat_1, ..., -y_K/y_hat_K],
    * ``dyhat_dz`` (K, K): y_hat_i (1 - y_hat_i) on the diagonal, -y_hat_i y_hat_j off it,
    * ``dz_dW`` (K, K*n): row j holds x in the columns of W's row j (W flattened row by row),

    their product ``dL_dW`` (1, K*n), and the short form ``(y_hat - y) x^T`` (K, n).
    """
    W = _tensor(W, "W", 2)
    x = _tensor(x, "x", 1)
    K, n = W.shape
    if x.shape[0] != n:
        raise ValueError(f"x must have {n} entries (W has {n} columns), got {x.shape[0]}")
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or not 0 <= target < K:
        raise ValueError(f"target must be a class index in [0, {K}), got {target!r}")
    z = W @ x
    y_hat = softmax(z)
    y = one_hot(torch.tensor([target], device=W.device), K, dtype=W.dtype)[0]
    L = -(y * torch.log(y_hat)).sum()
    dL_dyhat = (-y / y_hat).unsqueeze(0)  # (1, K): a row vector, as on the slide
    dyhat_dz = softmax_jacobian(z)  # (K, K)
    dz_dW = torch.zeros(K, K * n, dtype=W.dtype, device=W.device)
    for j in range(K):  # dz_j / dW_mn = x_n if j == m else 0
        dz_dW[j, j * n : (j + 1) * n] = x
    dL_dW = dL_dyhat @ dyhat_dz @ dz_dW  # (1, K*n): the chain rule as a product of Jacobians
    return dict(
        z=z,
        y_hat=y_hat,
        y=y,
        L=L,
        dL_dyhat=dL_dyhat,
        dyhat_dz=dyhat_dz,
        dz_dW=dz_dW,
        dL_dW=dL_dW,
        formula=torch.outer(y_hat - y, x),
    )


# --------------------------------------------------------------------------------------
# Linear layer: z = x W^T + b.
# --------------------------------------------------------------------------------------
def linear_forward(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """z = x W^T + b for a batch of rows x (B, n_in), W (n_out, n_in), b (n_out,) -> (B, n_out)."""
    x, W = _tensor(x, "x", 2), _tensor(W, "W", 2)
    if x.shape[1] != W.shape[1]:
        raise ValueError(
            f"x must have W.shape[1] = {W.shape[1]} columns (one input per row), got shape {tuple(x.shape)}"
        )
    z = x @ W.T
    if b is not None:
        _same_shape(_tensor(b, "b", 1), "b", (W.shape[0],), "one bias per output, W.shape[0]")
        z = z + b
    return z


def linear_backward(dz: torch.Tensor, x: torch.Tensor, W: torch.Tensor):
    """Gradients of z = x W^T + b: returns (dx, dW, db).

    dx = dz W (B, n_in); dW = dz^T x (n_out, n_in), the batch version of the lecture's
    (y_hat - y) x^T; db = dz summed over the batch (the bias is used by every row).
    """
    dz, x, W = _tensor(dz, "dz", 2), _tensor(x, "x", 2), _tensor(W, "W", 2)
    _same_shape(dz, "dz", (x.shape[0], W.shape[0]), "batch size of x, outputs of W")
    if x.shape[1] != W.shape[1]:
        raise ValueError(f"x must have W.shape[1] = {W.shape[1]} columns, got shape {tuple(x.shape)}")
    return dz @ W, dz.T @ x, dz.sum(0)


# --------------------------------------------------------------------------------------
# Softmax and cross-entropy.
# --------------------------------------------------------------------------------------
def softmax(z: torch.Tensor) -> torch.Tensor:
    """softmax over the last axis; subtracting the max first changes nothing but avoids overflow."""
    z = _tensor(z, "z")
    e = torch.exp(z - z.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def log_softmax(z: torch.Tensor) -> torch.Tensor:
    """log softmax(z) = z - logsumexp(z), computed without ever forming exp(z) of a large z."""
    z = _tensor(z, "z")
    m = z.max(dim=-1, keepdim=True).values
    return z - m - torch.log(torch.exp(z - m).sum(dim=-1, keepdim=True))


def softmax_jacobian(z: torch.Tensor) -> torch.Tensor:
    """d softmax(z)_i / d z_j = y_i (delta_ij - y_j): (K, K) for z (K,), (B, K, K) for z (B, K)."""
    y = softmax(_tensor(z, "z", (1, 2)))
    return torch.diag_embed(y) - y.unsqueeze(-1) * y.unsqueeze(-2)


def softmax_backward(dy_hat: torch.Tensor, y_hat: torch.Tensor) -> torch.Tensor:
    """dL/dz from dL/dy_hat: the vector-Jacobian product dy_hat J, without building J.

    (dy_hat J)_j = sum_i dy_hat_i y_i (delta_ij - y_j) = y_j (dy_hat_j - sum_i dy_hat_i y_i).
    """
    dy_hat, y_hat = _tensor(dy_hat, "dy_hat"), _tensor(y_hat, "y_hat")
    _same_shape(dy_hat, "dy_hat", y_hat.shape, "the shape of y_hat")
    return y_hat * (dy_hat - (dy_hat * y_hat).sum(dim=-1, keepdim=True))


def one_hot(targets: torch.Tensor, num_classes: int, dtype=torch.float32) -> torch.Tensor:
    """Rows of the identity: one_hot([2], 3) = [[0, 0, 1]]."""
    targets = _ids(targets, "targets", num_classes)
    out = torch.zeros(*targets.shape, num_classes, dtype=dtype, device=targets.device)
    return out.scatter_(-1, targets.unsqueeze(-1), 1.0)


def _check_targets(z: torch.Tensor, targets, z_name: str) -> torch.Tensor:
    targets = _ids(targets, "targets", z.shape[-1])
    if targets.dim() != 1 or targets.shape[0] != z.shape[0]:
        raise ValueError(
            f"targets must be 1-D with one class index per row of {z_name} ({z.shape[0]}), "
            f"got shape {tuple(targets.shape)}"
        )
    return targets.to(z.device)  # ids made on the CPU may score logits on the GPU


def cross_entropy(z: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Fused softmax + cross-entropy from logits z (B, K): mean_b [logsumexp(z_b) - z_b[target_b]].

    Equals torch.nn.functional.cross_entropy(z, targets). It never computes log(y_hat) of a
    y_hat that rounded to 0, so it stays finite when one logit dominates.
    """
    z = _tensor(z, "z", 2)
    targets = _check_targets(z, targets, "z")
    return -log_softmax(z).gather(1, targets[:, None]).mean()


def cross_entropy_backward(z: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """dL/dz of the fused (mean) cross-entropy: (softmax(z) - y) / B, the lecture's y_hat - y."""
    z = _tensor(z, "z", 2)
    targets = _check_targets(z, targets, "z")
    return (softmax(z) - one_hot(targets, z.shape[1], z.dtype)) / z.shape[0]


def cross_entropy_from_probs(y_hat: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Unfused: mean_b -log y_hat_b[target_b] from probabilities; log(0) = -inf if y_hat underflowed."""
    y_hat = _tensor(y_hat, "y_hat", 2)
    targets = _check_targets(y_hat, targets, "y_hat")
    return -torch.log(y_hat.gather(1, targets[:, None])).mean()


def cross_entropy_from_probs_backward(y_hat: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """dL/dy_hat of the unfused loss: -y / y_hat / B (the lecture's -y_i / y_hat_i); inf where y_hat is 0."""
    y_hat = _tensor(y_hat, "y_hat", 2)
    targets = _check_targets(y_hat, targets, "y_hat")
    return -one_hot(targets, y_hat.shape[1], y_hat.dtype) / y_hat / y_hat.shape[0]


# --------------------------------------------------------------------------------------
# Element-wise activations h = sigma(a).
# --------------------------------------------------------------------------------------
def _check_activation(kind: str) -> None:
    if kind not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {kind!r}")


def activation_forward(a: torch.Tensor, kind: str = "tanh") -> torch.Tensor:
    """h = sigma(a) for sigma in tanh, sigmoid, relu, linear (identity)."""
    _check_activation(kind)
    a = _tensor(a, "a")
    if kind == "tanh":
        return torch.tanh(a)
    if kind == "sigmoid":
        return torch.sigmoid(a)
    if kind == "relu":
        return torch.clamp(a, min=0)
    return a


def activation_backward(dh: torch.Tensor, a: torch.Tensor, h: torch.Tensor, kind: str = "tanh") -> torch.Tensor:
    """da = dh * sigma'(a), with sigma' written with the output h where that is cheaper:

    tanh' = 1 - h^2, sigmoid' = h (1 - h), relu' = [a > 0] (0 at a = 0, as torch), linear' = 1.
    """
    _check_activation(kind)
    dh, a, h = _tensor(dh, "dh"), _tensor(a, "a"), _tensor(h, "h")
    _same_shape(dh, "dh", h.shape, "the shape of h")
    _same_shape(a, "a", h.shape, "the shape of h")
    if kind == "tanh":
        return dh * (1 - h * h)
    if kind == "sigmoid":
        return dh * h * (1 - h)
    if kind == "relu":
        return dh * (a > 0).to(dh.dtype)
    return dh


# --------------------------------------------------------------------------------------
# Embedding lookup: e = E[ids] (the same as one_hot(ids) @ E).
# --------------------------------------------------------------------------------------
def embedding_forward(E: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Rows of E (V, d) for ids of any shape -> ids.shape + (d,)."""
    E = _tensor(E, "E", 2)
    return E[_ids(ids, "ids", E.shape[0])]


def embedding_backward(de: torch.Tensor, ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """dE (V, d): the gradient of each looked-up row is added to the row it came from.

    A word used twice in a batch gets the sum of both gradients, so ``index_add_`` (not
    ``dE[ids] = de`` or ``dE[ids] += de``, which keep only one of the repeated rows).
    Rows that were not used get zero.
    """
    ids = _ids(ids, "ids", vocab_size)
    de = _tensor(de, "de")
    if de.dim() != ids.dim() + 1 or tuple(de.shape[:-1]) != tuple(ids.shape):
        raise ValueError(f"de must have shape ids.shape + (d,) = {tuple(ids.shape)} + (d,), got {tuple(de.shape)}")
    d = de.shape[-1]
    dE = torch.zeros(vocab_size, d, dtype=de.dtype, device=de.device)
    return dE.index_add_(0, ids.reshape(-1).to(de.device), de.reshape(-1, d))  # the ids may come from the CPU


# --------------------------------------------------------------------------------------
# Gradient checking.
# --------------------------------------------------------------------------------------
def numerical_gradient(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Central finite differences (f(x + eps e_i) - f(x - eps e_i)) / (2 eps) for a scalar f.

    Use float64: in float32 the rounding error of f (about 1e-7 |f|) divided by eps swamps
    the answer.
    """
    x = _tensor(x, "x")
    grad = torch.zeros_like(x)
    flat, g = x.detach().clone().reshape(-1), grad.reshape(-1)
    for i in range(flat.numel()):
        old = flat[i].item()
        flat[i] = old + eps
        plus = float(f(flat.reshape(x.shape)))
        flat[i] = old - eps
        minus = float(f(flat.reshape(x.shape)))
        flat[i] = old
        g[i] = (plus - minus) / (2 * eps)
    return grad


def autograd_gradients(
    loss_fn: Callable[..., torch.Tensor], inputs: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The reference: gradients of loss_fn(**inputs) by torch.autograd, for every floating input."""
    leaves = {k: (v.detach().clone().requires_grad_(True) if v.is_floating_point() else v) for k, v in inputs.items()}
    loss = loss_fn(**leaves)
    wrt = [k for k, v in leaves.items() if v.is_floating_point()]
    grads = torch.autograd.grad(loss, [leaves[k] for k in wrt], allow_unused=True)
    return {k: (torch.zeros_like(leaves[k]) if g is None else g) for k, g in zip(wrt, grads)}


@dataclass(frozen=True)
class GradientRow:
    name: str
    shape: tuple
    max_abs_diff: float
    max_rel_diff: float
    status: str  # "exact", "close" or "WRONG"


class GradientReport:
    """Per tensor: exact (bit for bit), close (within rtol/atol), or WRONG, with the largest differences.

    ``report.ok`` is True when nothing is WRONG; ``print(report)`` shows a table.
    """

    def __init__(self, rows: list[GradientRow]):
        self.rows = rows

    @property
    def ok(self) -> bool:
        return not any(r.status.startswith("WRONG") for r in self.rows)

    def __getitem__(self, name: str) -> GradientRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def __str__(self) -> str:
        header = f"{'tensor':<10} {'shape':<14} {'max |diff|':>11} {'max rel diff':>13}  status"
        lines = [header, "-" * len(header)]
        for r in self.rows:
            lines.append(f"{r.name:<10} {str(r.shape):<14} {r.max_abs_diff:>11.2e} {r.max_rel_diff:>13.2e}  {r.status}")
        return "\n".join(lines)

    __repr__ = __str__


def compare_gradients(
    mine: Mapping[str, torch.Tensor], reference: Mapping[str, torch.Tensor], rtol: float = 1e-5, atol: float = 1e-8
) -> GradientReport:
    """Compare hand-written gradients with a reference (autograd or finite differences), tensor by tensor.

    The relative difference is |mine - ref| / max(|ref|, atol), so a tiny gradient far from
    zero in relative terms still shows. A missing tensor or a wrong shape is WRONG.
    """
    rows = []
    for name, ref in reference.items():
        ref = ref.detach()
        got = mine.get(name)
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(ref.shape):
            why = "missing" if got is None else f"shape {tuple(getattr(got, 'shape', ()))}"
            rows.append(GradientRow(name, tuple(ref.shape), math.inf, math.inf, f"WRONG ({why})"))
            continue
        got = got.detach().to(ref.dtype)
        diff = (got - ref).abs()
        max_abs = float(diff.max()) if diff.numel() else 0.0
        max_rel = float((diff / ref.abs().clamp_min(atol)).max()) if diff.numel() else 0.0
        if torch.equal(got, ref):
            status = "exact"
        elif torch.allclose(got, ref, rtol=rtol, atol=atol):
            status = "close"
        else:
            status = "WRONG"
        rows.append(GradientRow(name, tuple(ref.shape), max_abs, max_rel, status))
    return GradientReport(rows)


# The lesson's later sections live in their own modules; their names stay importable from here.
_MOVED = {name: "course_lib.fflm" for name in ("FeedForwardLM", "Adam", "ngram_windows")}
_MOVED.update({name: "course_lib.bptt" for name in ("rnn_forward", "rnn_backward", "bptt_step", "RNNCache")})
_MOVED["scaled_orthogonal"] = "course_lib.bptt"


def __getattr__(name: str):
    if name in _MOVED:  # imported on first use: fflm and bptt import this module's blocks
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
