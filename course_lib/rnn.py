"""Recurrent networks written from the lecture's equations, batched, with torch.nn as the oracle.

Lesson 03 (balanced colored parentheses) trains all four on one task; lesson 04 compares
LSTM and GRU. Every layer follows the same recipe, the one that makes an eager loop fast:

1. the input projection ``W_xh x_t + b`` does not depend on the past, so it is computed
   for **all time steps at once** with one matrix product (``cell.input_projection``);
2. a Python loop over ``xw.unbind(0)`` then applies only what is truly sequential,
   ``cell.step(xw_t, state)``: one product with ``W_hh`` and a few elementwise ops
   (:func:`unroll` is those five lines).

(Slicing ``x[t] @ W_xh.T`` inside the loop instead is slower, most of all when the input needs its
gradient: see lesson 04 and benchmarks/RESULTS.md.)

The cells live in :mod:`course_lib.rnn_cells`, the layers in :mod:`course_lib.rnn_layers`; this
module re-exports both and adds the two models built on them.

Cells, one step (the lecture's names; ``x`` is a row per example, so ``W x`` is ``x @ W.T``):

- :class:`ElmanCell`  h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)                      (Elman, 1990)
- :class:`GatedCell`  z_t = sigm(W_xz x_t + W_hz h_{t-1} + b_z)
                      h_bar_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)
                      h_t = z_t * h_{t-1} + (1 - z_t) * h_bar_t                  (the lecture's gated RNN)
- :class:`GRUCell`    r_t, z_t = sigm(...), n_t = tanh(W_xn x_t + b_xn + r_t * (W_hn h_{t-1} + b_hn))
                      h_t = z_t * h_{t-1} + (1 - z_t) * n_t                      (torch.nn.GRUCell's form)
- :class:`LSTMCell`   i_t, f_t, o_t = sigm(...), g_t = tanh(...)
                      c_t = f_t * c_{t-1} + i_t * g_t,  h_t = o_t * tanh(c_t)        (torch.nn.LSTMCell)

Layers over a whole sequence: :class:`ElmanRNN`, :class:`GatedRNN`, :class:`GRU`, :class:`LSTM`.
They are drop-ins for ``torch.nn.RNN`` / ``GRU`` / ``LSTM``: same constructor arguments and
defaults (``num_layers=1, bias=True, batch_first=False, dropout=0.0``), input ``(T, B, I)``
(or ``(B, T, I)`` with ``batch_first``, or unbatched ``(T, I)``), optional initial state, and
they return ``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``). ``from_torch(module)`` copies a
torch module's weights; tests check outputs, final states and gradients agree within 1e-5.

Weights are stored as torch stores them, gates stacked in torch's order (LSTM: i, f, g, o;
GRU: r, z, n) so one product serves all gates; ``step`` names every gate.

:class:`SequenceClassifier` puts a read-out ``y_T = W_hy h_T + b_y`` on top of any of them
(``fused=True``: on torch's own ``nn.RNN``/``GRU``/``LSTM`` instead, the same equations in compiled kernels,
for trainings where only the result matters; ``unfused()`` copies such a network into our layers);
:class:`RNNLanguageModel` reads out ``y_t = W_hy h_t + b_y`` at every step to predict the next token
(lesson 07 compares it with the GPT on characters).
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import checkpoint
from course_lib._validate import positive_int
from course_lib.rnn_cells import ElmanCell, GatedCell, GRUCell, LSTMCell, _describe
from course_lib.rnn_layers import GRU, LSTM, RNN_TYPES, ElmanRNN, GatedRNN, unroll
from course_lib.train import check_token_ids, next_token_loss

__all__ = [
    "ElmanCell",
    "GatedCell",
    "GRUCell",
    "LSTMCell",
    "ElmanRNN",
    "GatedRNN",
    "GRU",
    "LSTM",
    "unroll",
    "SequenceClassifier",
    "RNNLanguageModel",
    "RNN_TYPES",
    "FUSED_TYPES",
    "save_classifier",
    "load_classifier",
    "CHECKPOINT_KIND",
]


# torch's own modules for the same networks: the same equations and weights as ours (its tests and
# from_torch check it), computed in torch's C++ with no Python loop over the steps (on a CPU only the LSTM has a
# fused kernel and trains several times faster; the GRU and RNN gain little: benchmarks/RESULTS.md).
FUSED_TYPES = {"elman": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
_FUSED_OPTIONS = {"elman": {"nonlinearity": "relu"}}  # our Elman network's ReLU (torch's default is tanh)
_OURS = {nn.RNN: ElmanRNN, nn.GRU: GRU, nn.LSTM: LSTM}  # each fused module's twin among our layers


class SequenceClassifier(nn.Module):
    """Classify symbol sequences: one-hot x_t, a recurrent network, then y_T = W_hy h_T + b_y.

    ``rnn`` is a name from :data:`RNN_TYPES` ("elman", "gated", "gru", "lstm") or a module with the
    torch.nn.RNN interface (ours or torch's, ``batch_first=False``). Sequences of different
    lengths are padded into one batch: since step t only sees steps 1..t, each sequence's
    prediction is read at its own last step ``lengths - 1`` and the padding after it never
    matters (padding + masking).

    ``fused=True`` (with a name from :data:`FUSED_TYPES`) builds torch's ``nn.RNN`` (ReLU), ``nn.GRU`` or
    ``nn.LSTM`` instead of ours: the same network, trained faster (several times for the LSTM on a CPU);
    :meth:`unfused` copies it into our layers afterwards, e.g. to read its gates with
    :func:`course_lib.memory.gate_trace`.
    """

    def __init__(
        self,
        rnn: str | nn.Module,
        n_symbols: int,
        hidden_size: int | None = None,
        n_classes: int = 2,
        fused: bool = False,
        **rnn_kwargs,
    ):
        super().__init__()
        self.n_symbols = positive_int("n_symbols", n_symbols)
        self.config = None  # what a checkpoint needs to rebuild the model: set when the rnn is given by name
        if isinstance(rnn, str):
            types = FUSED_TYPES if fused else RNN_TYPES
            if rnn not in types:
                raise ValueError(
                    f"rnn must be one of {sorted(types)}{' with fused=True' if fused else ' or a module'}, got {rnn!r}"
                )
            if hidden_size is None:
                raise ValueError("hidden_size is needed to build the recurrent network by name")
            self.config = {
                "rnn": rnn,
                "n_symbols": n_symbols,
                "hidden_size": hidden_size,
                "n_classes": n_classes,
                **({"fused": True} if fused else {}),
                **rnn_kwargs,
            }
            if fused:
                rnn_kwargs = {**_FUSED_OPTIONS.get(rnn, {}), **rnn_kwargs}
            rnn = types[rnn](n_symbols, hidden_size, **rnn_kwargs)
        elif rnn_kwargs or hidden_size is not None or fused:
            raise ValueError("give hidden_size, fused and rnn options only when rnn is a name")
        if getattr(rnn, "batch_first", False):
            raise ValueError("SequenceClassifier expects its rnn with batch_first=False")
        if rnn.input_size != n_symbols:
            raise ValueError(f"the rnn's input_size ({rnn.input_size}) must equal n_symbols ({n_symbols})")
        self.rnn = rnn
        self.W_hy = nn.Linear(rnn.hidden_size, positive_int("n_classes", n_classes))

    def hidden_states(self, tokens: torch.Tensor) -> torch.Tensor:
        """The last layer's h_t for every step: tokens (B, T) -> (T, B, H)."""
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be a (batch, seq_len) tensor of symbol ids (torch.long), got "
                f"{_describe(tokens)}" + (f" of dtype {tokens.dtype}" if isinstance(tokens, torch.Tensor) else "")
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.n_symbols):
            raise ValueError(
                f"tokens must be symbol ids in [0, {self.n_symbols}), got values "
                f"{tokens.min().item()}..{tokens.max().item()}"
            )
        x = F.one_hot(tokens.T, self.n_symbols).to(self.W_hy.weight.dtype)  # (T, B, n_symbols)
        output, _ = self.rnn(x)
        return output

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (B, n_classes) from each sequence's last real step; ``lengths`` (B,) defaults to T."""
        h = self.hidden_states(tokens)  # (T, B, H)
        T, B = tokens.shape[1], tokens.shape[0]
        if lengths is None:
            return self.W_hy(h[-1])
        if lengths.shape != (B,) or lengths.min() < 1 or lengths.max() > T:
            raise ValueError(f"lengths must be a ({B},) tensor of values in 1..{T}, got {_describe(lengths)}")
        h_T = h[lengths.to(h.device) - 1, torch.arange(B, device=h.device)]  # (B, H): each sequence's last step
        return self.W_hy(h_T)

    def step_logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits after every prefix: (B, T, n_classes); [:, t] is the prediction for tokens[:, :t+1]."""
        return self.W_hy(self.hidden_states(tokens)).transpose(0, 1)

    def unfused(self) -> SequenceClassifier:
        """A copy of this model whose torch ``nn.RNN``/``GRU``/``LSTM`` is replaced by our layer with its weights.

        The same function (tests/test_rnn.py checks the outputs against torch's), but every gate can now be
        read: :func:`course_lib.memory.gate_trace` needs our cells. An Elman network's two torch biases become
        our one, their sum (only the sum ever counts).
        """
        if type(self.rnn) not in _OURS:
            raise TypeError(f"unfused() needs a torch.nn RNN, GRU or LSTM, this model has a {type(self.rnn).__name__}")
        ours = copy.deepcopy(self)
        ours.rnn = _OURS[type(self.rnn)].from_torch(self.rnn)
        if ours.config is not None:
            ours.config.pop("fused", None)
        return ours


CHECKPOINT_KIND = "sequence_classifier"


def save_classifier(path, model: SequenceClassifier, info: dict | None = None):
    """Write ``model`` as a :mod:`course_lib.checkpoint` file: weights, its config, and ``info`` (JSON values)."""
    if not isinstance(model, SequenceClassifier) or model.config is None:
        raise ValueError("only a SequenceClassifier built from a name (e.g. 'lstm') can be saved")
    return checkpoint.save(path, model, kind=CHECKPOINT_KIND, config=model.config, info=info)


def load_classifier(path, device="cpu") -> tuple[SequenceClassifier, dict]:
    """(model in eval mode on ``device``, the checkpoint's info) from a file written by :func:`save_classifier`."""

    def build(config: dict) -> SequenceClassifier:
        return SequenceClassifier(config.pop("rnn"), **config)

    model, ckpt = checkpoint.load(path, build, kind=CHECKPOINT_KIND, device=device)
    return model, ckpt.info


class RNNLanguageModel(nn.Module):
    """A recurrent language model: x_t = E[token_t], h_t from the recurrent network, and
    y_t = W_hy h_t + b_y the logits of token t+1, so step t predicts the next token from tokens 1..t.

    forward(idx (B, T) token ids, targets (B, T) or None) -> (logits (B, T, vocab_size), loss or None),
    the interface of :class:`course_lib.transformer.GPT`: the same batches, training loop and
    ``evaluate_lm`` serve both. ``rnn`` is a name from :data:`RNN_TYPES`; every window starts from
    the zero state.
    """

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_size: int, rnn: str = "lstm", num_layers: int = 1):
        super().__init__()
        if rnn not in RNN_TYPES:
            raise ValueError(f"rnn must be one of {sorted(RNN_TYPES)}, got {rnn!r}")
        self.vocab_size = positive_int("vocab_size", vocab_size)
        self.embedding = nn.Embedding(vocab_size, positive_int("embedding_dim", embedding_dim))
        self.rnn = RNN_TYPES[rnn](embedding_dim, positive_int("hidden_size", hidden_size), num_layers, batch_first=True)
        self.W_hy = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        check_token_ids(idx, "idx", self.vocab_size)
        h, _ = self.rnn(self.embedding(idx))  # (B, T, H)
        logits = self.W_hy(h)  # (B, T, vocab_size)
        return logits, None if targets is None else next_token_loss(logits, idx, targets)
