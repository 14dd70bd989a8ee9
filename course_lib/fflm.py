"""The feedforward neural language model of Bengio et al. (2003), trained by hand (lesson 02).

``FeedForwardLM`` runs its forward pass with the blocks of ``course_lib.backprop`` and its
backward pass by hand (no autograd), ``Adam`` updates its plain tensors, and ``ngram_windows``
builds its data exactly as ``NGramLM`` pads its test sentences, so perplexities are comparable.
``mixture`` and ``tune_mixture_weight`` mix it with an n-gram model, as Bengio et al. mixed theirs
with an interpolated trigram (they fixed the weight at 0.5; here it is tuned on validation data).
The shipped checkpoint (``course_lib/weights/fflm_sotu.safetensors``) is written by
``scripts/train_fflm.py`` with ``course_lib.checkpoint.save`` and read with ``checkpoint.load``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

from course_lib import _validate
from course_lib.backprop import (
    _check_activation,
    _check_targets,
    _ids,
    _same_shape,
    activation_backward,
    activation_forward,
    embedding_backward,
    embedding_forward,
    linear_backward,
    linear_forward,
)

__all__ = ["FeedForwardLM", "Adam", "ngram_windows", "mixture", "mixture_perplexity", "tune_mixture_weight"]


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

    Padding is NGramLM's (the standard count): order-1 ``<s>`` on the left and one ``</s>`` on
    the right, unknown words -> ``<UNK>``, so there is one row per word and one per sentence
    end, and row i is ``NGramLM(order).ngrams(sentences)[i]``.
    """
    if _validate.positive_int("order", order) < 2:
        raise ValueError(f"order must be an integer >= 2 (at least one word of context), got {order!r}")
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of sentences (lists of tokens), got a str")
    for special in (bos, eos, unk):
        if special not in word_to_id:
            raise ValueError(f"word_to_id must contain {special!r}")
    p = order - 1
    unk_id, bos_id, eos_id = word_to_id[unk], word_to_id[bos], word_to_id[eos]
    ids, n_windows = [], []  # every padded sentence end to end; each sentence's number of windows
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(f"sentences[{i}] must be a list of tokens, got the str {sentence[:30]!r}")
        ids += [bos_id] * p + [word_to_id.get(w, unk_id) for w in sentence] + [eos_id]
        n_windows.append(len(sentence) + 1)  # one per word and one for </s>
    if not n_windows:
        raise ValueError("sentences is empty")
    # All windows of the whole stream at once, then only those inside one sentence: sentence s's windows
    # start at its first padded position and at the n_windows[s] - 1 positions after it.
    n_windows = np.array(n_windows)
    first = np.cumsum(n_windows + p) - (n_windows + p)  # where each padded sentence starts in the stream
    within = np.arange(n_windows.sum()) - np.repeat(
        np.cumsum(n_windows) - n_windows, n_windows
    )  # 0, 1, ... per sentence
    starts = np.repeat(first, n_windows) + within
    return torch.from_numpy(np.lib.stride_tricks.sliding_window_view(np.array(ids, dtype=np.int64), order)[starts])


# --------------------------------------------------------------------------------------
# The feedforward neural LM (Bengio et al. 2003), as the lecture writes it.
# --------------------------------------------------------------------------------------
class FeedForwardLM:
    """e = [E x_{t-3}; E x_{t-2}; E x_{t-1}],  h = sigma(W e + b),  z = U h + c,  y_hat = softmax(z).

    The lecture's model with two biases added (b, c; Bengio et al. have them too). Parameters
    are plain tensors in ``self.params`` (no nn.Module, no autograd): ``loss_and_grads``
    runs the forward pass and the hand-written backward pass. ``config``, ``state_dict``,
    ``load_state_dict`` and ``eval`` are what ``course_lib.checkpoint`` needs to save and load it:

        checkpoint.load(path, build=lambda config: FeedForwardLM(**config), kind="fflm")

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
            _validate.positive_int(name, value)
        _check_activation(activation)
        self.vocab_size, self.context, self.d, self.hidden, self.activation = vocab_size, context, d, hidden, activation
        g = torch.Generator().manual_seed(seed)
        device = torch.get_default_device() if device is None else torch.device(device)

        def init(*shape, fan_in):  # N(0, 1 / fan_in): every layer starts with outputs of size ~1
            if device.type == "meta":  # checkpoint.load checks shapes on the meta device: no memory
                return torch.empty(*shape, dtype=dtype, device=device)
            w = torch.randn(*shape, generator=g, dtype=dtype, device="cpu")  # the seeded generator lives there
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
    def log_probs(self, windows: torch.Tensor, batch_size: int = 256, progress: Callable | None = None) -> torch.Tensor:
        """ln P(target | context) for each row of ``windows`` (M, n + 1): n context ids, then the target.

        ln P(w | h) = z_w - ln sum_v exp(z_v): the normaliser (the softmax over all V words, most of the
        cost) depends on the context only, so each distinct context is scored once, however many windows
        share it (every sentence starts with the same <s> contexts; about 3 windows in 10 of the test set
        repeat a context). Small batches on purpose: a (batch, V) matrix of logits above ~32 MB is
        allocated afresh by the operating system each time (slow), below that the memory is reused."""
        windows = _ids(windows, "windows", self.vocab_size)
        if windows.dim() != 2 or windows.shape[1] != self.context + 1:
            raise ValueError(
                f"windows must be (M, {self.context + 1}): {self.context} context ids then the target, "
                f"got shape {tuple(windows.shape)}"
            )
        windows = windows.to(self.params["E"].device)
        contexts, which = torch.unique(windows[:, :-1], dim=0, return_inverse=True)  # contexts[which] = windows[:, :-1]
        hidden, log_norm = [], []
        starts = range(0, contexts.shape[0], batch_size)
        for s in progress(starts) if progress else starts:
            z, cache = self.forward(contexts[s : s + batch_size])
            hidden.append(cache["h"])
            log_norm.append(torch.logsumexp(z, dim=1))  # ln sum_v exp(z_v), one per distinct context
        h, targets = torch.cat(hidden)[which], windows[:, -1]  # (M, H): each window's h, from its context
        z_target = (h * self.params["U"][targets]).sum(1) + self.params["c"][targets]  # z_w = U_w . h + c_w
        return z_target - torch.cat(log_norm)[which]

    def total_nll(self, windows: torch.Tensor, batch_size: int = 256, progress: Callable | None = None) -> float:
        """Sum of -ln P(target | context) over the rows of ``windows`` (M, n + 1), in nats."""
        total = 0.0
        for chunk in self.log_probs(windows, batch_size, progress).split(batch_size):
            total -= float(chunk.sum())  # summed batch by batch, in the order the batches came
        return total

    def perplexity(self, windows: torch.Tensor, batch_size: int = 256, progress: Callable | None = None) -> float:
        """exp(mean -ln P) over the windows: the same as 2 ** J with J in bits."""
        return math.exp(self.total_nll(windows, batch_size, progress) / windows.shape[0])

    @property
    def config(self) -> dict:
        """The arguments that rebuild this model: ``FeedForwardLM(**model.config)``."""
        return dict(
            vocab_size=self.vocab_size, context=self.context, d=self.d, hidden=self.hidden, activation=self.activation
        )

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The parameters E, W, b, U, c by name (the tensors themselves, as torch.nn.Module does)."""
        return dict(self.params)

    def load_state_dict(self, state: Mapping[str, torch.Tensor]) -> None:
        """Copy ``state``'s tensors (names and shapes as ``state_dict()``) into the parameters."""
        if set(state) != set(self.PARAMS):
            raise ValueError(f"state must have the keys {list(self.PARAMS)}, got {sorted(state)}")
        for k in self.PARAMS:
            _same_shape(state[k], f"state[{k!r}]", self.params[k].shape, "as the model's config says")
            self.params[k] = state[k].to(device=self.params[k].device, dtype=self.params[k].dtype).clone()

    def eval(self) -> FeedForwardLM:
        """Nothing to switch (no dropout); here so that the model loads like a torch module."""
        return self


class Adam:
    """Adam (Kingma and Ba, 2015, Algorithm 1) on a dict of tensors, updated in place.

    For each parameter, at step t: m = b1 m + (1 - b1) g (running mean of the gradient, the first
    moment), v = b2 v + (1 - b2) g^2 (running mean of its square, the second moment), both
    bias-corrected for starting at zero (m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)), then
    theta -= lr * m_hat / (sqrt(v_hat) + eps). Its steps match ``torch.optim.Adam`` (tested).
    """

    def __init__(self, params: Mapping[str, torch.Tensor], lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        lr = _validate.number("lr", lr, 0, open_low=True)
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
# Mixing the neural model with an n-gram model (Bengio et al. 2003, section 4).
# --------------------------------------------------------------------------------------
def _probabilities(p, name: str) -> np.ndarray:
    p = np.asarray(p.detach().cpu().double() if isinstance(p, torch.Tensor) else p, dtype=np.float64)
    if p.ndim != 1 or not len(p) or not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"{name} must be a non-empty 1-D array of probabilities in [0, 1], got shape {p.shape}")
    return p


def mixture(p_neural, p_ngram, weight: float) -> np.ndarray:
    """P_mix(w | h) = weight * P_neural(w | h) + (1 - weight) * P_ngram(w | h), term by term.

    ``p_neural`` and ``p_ngram`` are the two models' probabilities of the same test words
    (e.g. ``exp(FeedForwardLM.log_probs(windows))`` and ``NGramLM.probs(sentences)``)."""
    a, b = _probabilities(p_neural, "p_neural"), _probabilities(p_ngram, "p_ngram")
    if a.shape != b.shape:
        raise ValueError(f"p_neural and p_ngram must score the same words, got {len(a)} and {len(b)} probabilities")
    weight = _validate.number("weight", weight, 0, 1)
    return weight * a + (1 - weight) * b


def mixture_perplexity(p_neural, p_ngram, weight: float) -> float:
    """exp(-1/N sum_i ln P_mix(w_i | h_i)): the perplexity of the mixture on the N scored words."""
    return math.exp(-np.mean(np.log(mixture(p_neural, p_ngram, weight))))


def tune_mixture_weight(p_neural, p_ngram, grid: Iterable[float] = np.linspace(0.05, 0.95, 19)) -> float:
    """The weight in ``grid`` whose mixture has the lowest perplexity: pass validation probabilities, never test."""
    return min((float(w) for w in grid), key=lambda w: mixture_perplexity(p_neural, p_ngram, w))
