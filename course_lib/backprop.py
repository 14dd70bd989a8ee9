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
* the feedforward language model of Bengio et al. (2003), ``FeedForwardLM``, trained with
  its own hand-written gradients and ``Adam``; ``ngram_windows`` builds its data exactly
  as ``NGramLM`` pads its test sentences, so perplexities are comparable;
* an Elman RNN and backpropagation through time, full and truncated (``rnn_forward``,
  ``rnn_backward``, ``bptt_step``), and ``scaled_orthogonal`` for the vanishing and
  exploding gradients experiment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    "FeedForwardLM",
    "Adam",
    "ngram_windows",
    "rnn_forward",
    "rnn_backward",
    "bptt_step",
    "RNNCache",
    "scaled_orthogonal",
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
    return targets


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
    return dE.index_add_(0, ids.reshape(-1), de.reshape(-1, d))


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


# --------------------------------------------------------------------------------------
# Data for the feedforward LM: the same n-grams NGramLM scores.
# --------------------------------------------------------------------------------------
def ngram_windows(
    sentences: Iterable[Sequence[str]],
    word_to_id: Mapping[str, int],
    order: int = 4,
    bos: str = "<s>",
    eos: str = "</s>",
    unk: str = "<UNK>",
) -> torch.Tensor:
    """All order-n windows of the padded sentences, as ids (M, order): context columns, then the target.

    Padding is NGramLM's (nltk.lm's): order-1 ``<s>`` on the left and order-1 ``</s>`` on the
    right, unknown words -> ``<UNK>``, so row i is ``NGramLM(order).ngrams(sentences)[i]``.
    """
    if isinstance(order, bool) or not isinstance(order, int) or order < 2:
        raise ValueError(f"order must be an integer >= 2 (at least one word of context), got {order!r}")
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of sentences (lists of tokens), got a str")
    for special in (bos, eos, unk):
        if special not in word_to_id:
            raise ValueError(f"word_to_id must contain {special!r}")
    p = order - 1
    unk_id, bos_id, eos_id = word_to_id[unk], word_to_id[bos], word_to_id[eos]
    rows = []
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(f"sentences[{i}] must be a list of tokens, got the str {sentence[:30]!r}")
        padded = np.array([bos_id] * p + [word_to_id.get(w, unk_id) for w in sentence] + [eos_id] * p, dtype=np.int64)
        rows.append(np.lib.stride_tricks.sliding_window_view(padded, order))
    if not rows:
        raise ValueError("sentences is empty")
    return torch.from_numpy(np.concatenate(rows))


# --------------------------------------------------------------------------------------
# The feedforward neural LM (Bengio et al. 2003), as the lecture writes it.
# --------------------------------------------------------------------------------------
class FeedForwardLM:
    """e = [E x_{t-3}; E x_{t-2}; E x_{t-1}],  h = sigma(W e + b),  z = U h + c,  y_hat = softmax(z).

    The lecture's model with two biases added (b, c; Bengio et al. have them too). Parameters
    are plain tensors in ``self.params`` (no nn.Module, no autograd): ``loss_and_grads``
    runs the forward pass and the hand-written backward pass.

    Shapes: E (V, d), W (H, n d), b (H,), U (V, H), c (V,), with n = ``context`` words.
    """

    PARAMS = ("E", "W", "b", "U", "c")

    def __init__(
        self,
        vocab_size: int,
        context: int = 3,
        d: int = 32,
        hidden: int = 64,
        activation: str = "tanh",
        seed: int = 0,
        dtype=torch.float32,
        device=None,
    ):
        for name, value in (("vocab_size", vocab_size), ("context", context), ("d", d), ("hidden", hidden)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        _check_activation(activation)
        self.vocab_size, self.context, self.d, self.hidden, self.activation = vocab_size, context, d, hidden, activation
        g = torch.Generator().manual_seed(seed)

        def init(*shape, fan_in):  # N(0, 1 / fan_in): every layer starts with outputs of size ~1
            w = torch.randn(*shape, generator=g, dtype=dtype)  # cpu: the seeded generator lives there
            return (w / math.sqrt(fan_in)).to(device)

        self.params = {
            "E": init(vocab_size, d, fan_in=1),  # as torch.nn.Embedding
            "W": init(hidden, context * d, fan_in=context * d),
            "b": torch.zeros(hidden, dtype=dtype, device=device),
            "U": init(vocab_size, hidden, fan_in=hidden),
            "c": torch.zeros(vocab_size, dtype=dtype, device=device),
        }

    def __repr__(self) -> str:
        n = sum(p.numel() for p in self.params.values())
        return (
            f"FeedForwardLM(V={self.vocab_size}, context={self.context}, d={self.d}, hidden={self.hidden}, "
            f"activation={self.activation!r}) [{n:,} parameters]"
        )

    def _contexts(self, contexts) -> torch.Tensor:
        contexts = _ids(contexts, "contexts", self.vocab_size)
        if contexts.dim() != 2 or contexts.shape[1] != self.context:
            raise ValueError(f"contexts must be (B, {self.context}) word ids, got shape {tuple(contexts.shape)}")
        return contexts.to(self.params["E"].device)

    def forward(self, contexts: torch.Tensor):
        """Logits z (B, V) for contexts (B, n) of word ids, and the cache the backward pass needs."""
        P = self.params
        contexts = self._contexts(contexts)
        B = contexts.shape[0]
        e = embedding_forward(P["E"], contexts).reshape(B, -1)  # (B, n d): [E x_{t-3}; E x_{t-2}; E x_{t-1}]
        a = linear_forward(e, P["W"], P["b"])  # (B, H)
        h = activation_forward(a, self.activation)  # (B, H)
        z = linear_forward(h, P["U"], P["c"])  # (B, V)
        return z, dict(contexts=contexts, e=e, a=a, h=h)

    def loss_and_grads(self, contexts: torch.Tensor, targets: torch.Tensor):
        """Mean cross-entropy of the batch (nats) and its gradient for every parameter, by hand."""
        P = self.params
        z, cache = self.forward(contexts)
        targets = _check_targets(z, targets, "contexts").to(z.device)
        B, rows = z.shape[0], torch.arange(z.shape[0], device=z.device)
        # cross_entropy and cross_entropy_backward, sharing one softmax; torch's log_softmax
        # computes our log_softmax formula in a single pass (the softmax over V words is most
        # of the cost of a step, so this makes training several times faster).
        log_probs = torch.log_softmax(z, dim=1)  # (B, V)
        loss = -log_probs[rows, targets].mean()
        dz = log_probs.exp_()  # y_hat, in place of log_probs
        dz[rows, targets] -= 1  # y_hat - y
        dz /= B  # the loss is a mean over the batch
        dh, dU, dc = linear_backward(dz, cache["h"], P["U"])
        da = activation_backward(dh, cache["a"], cache["h"], self.activation)
        de, dW, db = linear_backward(da, cache["e"], P["W"])
        # e is the n looked-up rows side by side: split it back and send each piece to its row of E.
        dE = embedding_backward(de.reshape(-1, self.context, self.d), cache["contexts"], self.vocab_size)
        return float(loss), {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}

    def loss(self, E, W, b, U, c, contexts, targets) -> torch.Tensor:
        """The same loss written with torch ops on explicit parameters, for autograd to check against."""
        B = contexts.shape[0]
        e = E[contexts].reshape(B, -1)
        h = activation_forward(e @ W.T + b, self.activation)
        return torch.nn.functional.cross_entropy(h @ U.T + c, targets)

    @torch.no_grad()
    def total_nll(self, windows: torch.Tensor, batch_size: int = 256, progress: Callable | None = None) -> float:
        """Sum of -ln P(target | context) over the rows of ``windows`` (M, n + 1), in nats.

        Small batches on purpose: a (batch, V) matrix of logits above ~32 MB is allocated afresh by
        the operating system each time (slow), below that the memory is reused."""
        windows = _ids(windows, "windows", self.vocab_size)
        if windows.dim() != 2 or windows.shape[1] != self.context + 1:
            raise ValueError(
                f"windows must be (M, {self.context + 1}): {self.context} context ids then the target, "
                f"got shape {tuple(windows.shape)}"
            )
        total = 0.0
        starts = range(0, windows.shape[0], batch_size)
        for s in progress(starts) if progress else starts:
            batch = windows[s : s + batch_size].to(self.params["E"].device)
            z, _ = self.forward(batch[:, :-1])
            total -= float(torch.log_softmax(z, dim=1).gather(1, batch[:, -1:]).sum())  # = our log_softmax, faster
        return total

    def perplexity(self, windows: torch.Tensor, batch_size: int = 256, progress: Callable | None = None) -> float:
        """exp(mean -ln P) over the windows: the same as 2 ** J with J in bits."""
        return math.exp(self.total_nll(windows, batch_size, progress) / windows.shape[0])

    def state_dict(self, dtype=None) -> dict:
        """Parameters and sizes, as tensors only (so ``torch.load(..., weights_only=True)`` reads it)."""
        sizes = torch.tensor(
            [
                self.vocab_size,
                self.context,
                self.d,
                self.hidden,  # cpu: saved with the checkpoint
                ACTIVATIONS.index(self.activation),
            ]
        )
        return {"sizes": sizes, **{k: (v if dtype is None else v.to(dtype)).clone() for k, v in self.params.items()}}

    @classmethod
    def from_state_dict(cls, state: Mapping[str, torch.Tensor], dtype=torch.float32, device=None) -> FeedForwardLM:
        missing = {"sizes", *cls.PARAMS} - set(state)
        if missing:
            raise ValueError(f"state is missing {sorted(missing)}; expected the keys of FeedForwardLM.state_dict()")
        V, n, d, H, act = (int(x) for x in state["sizes"])
        model = cls(V, n, d, H, ACTIVATIONS[act], dtype=dtype, device=device)
        for k in cls.PARAMS:
            _same_shape(state[k], f"state[{k!r}]", model.params[k].shape, "as the sizes say")
            model.params[k] = state[k].to(device=model.params[k].device, dtype=dtype).clone()
        return model


class Adam:
    """Adam (Kingma and Ba, 2015) on a dict of tensors: SGD's theta -= lr * grad, with the step
    divided by a running root-mean-square of the gradient, so that rarely-updated embedding rows
    and the large output layer learn at similar speeds."""

    def __init__(self, params: Mapping[str, torch.Tensor], lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        self.params, self.lr, self.betas, self.eps, self.t = params, lr, betas, eps, 0
        self.m = {k: torch.zeros_like(v) for k, v in params.items()}
        self.v = {k: torch.zeros_like(v) for k, v in params.items()}

    def step(self, grads: Mapping[str, torch.Tensor]) -> None:
        if set(grads) != set(self.params):
            raise ValueError(f"grads must have the keys {sorted(self.params)}, got {sorted(grads)}")
        self.t += 1
        b1, b2 = self.betas
        for k, p in self.params.items():
            g = grads[k]
            self.m[k].mul_(b1).add_(g, alpha=1 - b1)
            self.v[k].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = self.m[k] / (1 - b1**self.t)
            v_hat = self.v[k] / (1 - b2**self.t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))


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
    cache for ``rnn_backward``. (Seed 002 calls W_hh "U" and W_xh "W".)
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
    if truncate is not None and (isinstance(truncate, bool) or not isinstance(truncate, int) or truncate < 1):
        raise ValueError(f"truncate must be None or an integer >= 1, got {truncate!r}")
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
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not radius >= 0:
        raise ValueError(f"radius must be >= 0, got {radius!r}")
    g = torch.Generator().manual_seed(seed)
    Q, R = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=dtype))  # cpu: the seeded generator lives there
    return radius * Q * torch.sign(torch.diagonal(R))  # the sign fix makes Q uniformly distributed
