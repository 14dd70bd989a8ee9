"""Recurrent networks written from the lecture's equations, batched, with torch.nn as the oracle.

Lesson 03 (balanced colored parentheses) trains all four on one task; lesson 04 compares
LSTM and GRU. Every layer follows the same recipe, the one that makes an eager loop fast:

1. the input projection ``W_xh x_t + b`` does not depend on the past, so it is computed
   for **all time steps at once** with one matrix product (``cell.input_projection``);
2. a Python loop over ``xw.unbind(0)`` then applies only what is truly sequential,
   ``cell.step(xw_t, state)``: one product with ``W_hh`` and a few elementwise ops.

(Slicing ``x[t] @ W_xh.T`` inside the loop instead is several times slower: see lesson 04.)

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

:class:`SequenceClassifier` puts a read-out ``y_T = W_hy h_T + b_y`` on top of any of them;
:class:`RNNLanguageModel` reads out ``y_t = W_hy h_t + b_y`` at every step to predict the next token
(lesson 07 compares it with the GPT on characters).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

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
    "SequenceClassifier",
    "RNNLanguageModel",
    "RNN_TYPES",
]

_ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


def _uniform_(params, hidden_size: int) -> None:
    """torch.nn's initialisation for recurrent weights: U(-1/sqrt(H), 1/sqrt(H)) for every parameter."""
    bound = 1.0 / math.sqrt(hidden_size)
    with torch.no_grad():
        for p in params:
            p.uniform_(-bound, bound)


def _check_size(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class _Cell(nn.Module):
    """One recurrent step. Subclasses define ``input_projection`` and ``step``.

    ``n_blocks`` is how many H-sized blocks the input projection has (1 for Elman, 4 for LSTM).
    """

    n_blocks = 1
    state_is_pair = False  # LSTM carries (h, c)
    torch_class: type | None = None  # the torch.nn cell this one mirrors (None: no twin)

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size = _check_size("input_size", input_size)
        self.hidden_size = _check_size("hidden_size", hidden_size)
        self.bias = bool(bias)
        self._device, self._dtype = device, dtype

    def _weight(self, rows: int, cols: int) -> nn.Parameter:
        return nn.Parameter(torch.empty(rows, cols, device=self._device, dtype=self._dtype))

    def _vector(self, size: int) -> nn.Parameter | None:
        return nn.Parameter(torch.empty(size, device=self._device, dtype=self._dtype)) if self.bias else None

    def reset_parameters(self) -> None:
        _uniform_(self.parameters(), self.hidden_size)

    def zero_state(self, batch_shape: tuple, like: torch.Tensor):
        h = like.new_zeros(*batch_shape, self.hidden_size)
        return (h, h.clone()) if self.state_is_pair else h

    def output(self, state) -> torch.Tensor:
        """The hidden state h_t that the next layer (and the read-out) sees."""
        return state[0] if self.state_is_pair else state

    def forward(self, input: torch.Tensor, hx=None):
        """One step, as ``torch.nn.RNNCell``/``GRUCell``/``LSTMCell``: input (B, I) or (I,)."""
        if not isinstance(input, torch.Tensor) or input.dim() not in (1, 2):
            raise ValueError(
                f"input must be a tensor of shape (batch, {self.input_size}) or ({self.input_size},), "
                f"got {_describe(input)}"
            )
        if input.shape[-1] != self.input_size:
            raise ValueError(f"input has {input.shape[-1]} features but input_size is {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            state = self.zero_state((x.shape[0],), x)
        else:
            parts = hx if self.state_is_pair else (hx,)
            if self.state_is_pair and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
                raise ValueError("hx must be a pair (h_0, c_0) for an LSTM cell")
            expected = (self.hidden_size,) if unbatched else (x.shape[0], self.hidden_size)
            for name, p in zip(("h_0", "c_0"), parts):
                if not isinstance(p, torch.Tensor) or tuple(p.shape) != expected:
                    raise ValueError(f"{name} must have shape {expected}, got {_describe(p)}")
            parts = tuple(p.unsqueeze(0) for p in parts) if unbatched else tuple(parts)
            state = parts if self.state_is_pair else parts[0]
        new = self.step(self.input_projection(x), state)
        if unbatched:
            new = tuple(s.squeeze(0) for s in new) if self.state_is_pair else new.squeeze(0)
        return new

    @classmethod
    def from_torch(cls, module: nn.Module):
        """A cell with the weights of ``module``, an instance of ``cls.torch_class``."""
        if cls.torch_class is None:
            raise TypeError(f"torch has no twin of {cls.__name__}: it has no from_torch")
        if not isinstance(module, cls.torch_class):
            raise TypeError(
                f"{cls.__name__}.from_torch expects a torch.nn.{cls.torch_class.__name__}, got {type(module).__name__}"
            )
        w = module.weight_ih
        cell = cls(
            module.input_size,
            module.hidden_size,
            bias=module.bias,
            device=w.device,
            dtype=w.dtype,
            **cls._options_from(module),
        )
        cell._copy_from(module, "")
        return cell

    @staticmethod
    def _options_from(module: nn.Module) -> dict:
        """Constructor options to read from the torch module (besides sizes and bias)."""
        return {}

    def _copy_from(self, module: nn.Module, suffix: str) -> None:
        """Copy torch's weight_ih/weight_hh/bias_ih/bias_hh (+ suffix, e.g. '_l1') into W_xh/W_hh/b_xh/b_hh."""
        with torch.no_grad():
            self.W_xh.copy_(getattr(module, "weight_ih" + suffix))
            self.W_hh.copy_(getattr(module, "weight_hh" + suffix))
            if self.bias:
                self.b_xh.copy_(getattr(module, "bias_ih" + suffix))
                self.b_hh.copy_(getattr(module, "bias_hh" + suffix))

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class ElmanCell(_Cell):
    """Elman (1990), the lecture's first RNN: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h).

    As in the lecture's ``RecNet``, there is one bias b_h (``fc_h2h`` has none). ``nonlinearity``
    may be ``"relu"`` (the lecture's Elman network) or ``"tanh"`` (the "usual implementation").
    """

    torch_class = nn.RNNCell

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "relu", device=None, dtype=None
    ):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        if nonlinearity not in _ACTIVATIONS:
            raise ValueError(f"nonlinearity must be one of {sorted(_ACTIVATIONS)}, got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        self.W_xh = self._weight(hidden_size, input_size)
        self.W_hh = self._weight(hidden_size, hidden_size)
        self.b_h = self._vector(hidden_size)
        self.reset_parameters()

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.W_xh, self.b_h)  # W_xh x_t + b_h, for every t at once

    def step(self, xw_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return _ACTIVATIONS[self.nonlinearity](xw_t + F.linear(h, self.W_hh))  # (B, H)

    @staticmethod
    def _options_from(module: nn.Module) -> dict:
        return {"nonlinearity": module.nonlinearity}

    def _copy_from(self, module, suffix):
        with torch.no_grad():
            self.W_xh.copy_(getattr(module, "weight_ih" + suffix))
            self.W_hh.copy_(getattr(module, "weight_hh" + suffix))
            if self.bias:  # torch has two biases that are only ever added: b_h = b_ih + b_hh
                self.b_h.copy_(getattr(module, "bias_ih" + suffix) + getattr(module, "bias_hh" + suffix))

    def extra_repr(self) -> str:
        return super().extra_repr() + f", nonlinearity={self.nonlinearity!r}"


class GatedCell(_Cell):
    """The lecture's gated RNN (``RecNetGating``): a forget gate z_t mixes the old state and a candidate.

        z_t     = sigm(W_xz x_t + W_hz h_{t-1} + b_z)
        h_bar_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)
        h_t     = z_t * h_{t-1} + (1 - z_t) * h_bar_t

    z_t close to 1 keeps the old state: the gate lets the network hold information unchanged.
    """

    n_blocks = 2

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.W_xh = self._weight(hidden_size, input_size)
        self.W_hh = self._weight(hidden_size, hidden_size)
        self.b_h = self._vector(hidden_size)
        self.W_xz = self._weight(hidden_size, input_size)
        self.W_hz = self._weight(hidden_size, hidden_size)
        self.b_z = self._vector(hidden_size)
        self.reset_parameters()

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        # [W_xh x_t + b_h, W_xz x_t + b_z] for every t, in one product: (..., 2H)
        bias = torch.cat([self.b_h, self.b_z]) if self.bias else None
        return F.linear(x, torch.cat([self.W_xh, self.W_xz]), bias)

    def step(self, xw_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        xh_t, xz_t = xw_t.chunk(2, dim=-1)
        z = torch.sigmoid(xz_t + F.linear(h, self.W_hz))
        h_bar = torch.relu(xh_t + F.linear(h, self.W_hh))
        return z * h + (1 - z) * h_bar


class GRUCell(_Cell):
    """Gated recurrent unit, in ``torch.nn.GRUCell``'s form (gates stacked r, z, n):

        r_t = sigm(W_xr x_t + b_xr + W_hr h_{t-1} + b_hr)          reset gate
        z_t = sigm(W_xz x_t + b_xz + W_hz h_{t-1} + b_hz)          update ("forget") gate
        n_t = tanh(W_xn x_t + b_xn + r_t * (W_hn h_{t-1} + b_hn))  candidate h_bar_t
        h_t = z_t * h_{t-1} + (1 - z_t) * n_t

    The lecture writes the candidate as tanh(W_xh x_t + W_hh (r_t * h_{t-1}) + b_h) (Cho et al.
    2014): the reset gate acts before the product, not after it as in torch (and cuDNN). Its
    h_t = z_t h_{t-1} + (1 - z_t) h_bar_t is torch's; colah's (1 - z_t) h_{t-1} + z_t h_tilde_t
    is the same cell with z_t renamed 1 - z_t.
    """

    n_blocks = 3
    torch_class = nn.GRUCell

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.W_xh = self._weight(3 * hidden_size, input_size)  # [W_xr; W_xz; W_xn]
        self.W_hh = self._weight(3 * hidden_size, hidden_size)  # [W_hr; W_hz; W_hn]
        self.b_xh = self._vector(3 * hidden_size)
        self.b_hh = self._vector(3 * hidden_size)
        self.reset_parameters()

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.W_xh, self.b_xh)  # (..., 3H)

    def step(self, xw_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        x_r, x_z, x_n = xw_t.chunk(3, dim=-1)
        h_r, h_z, h_n = F.linear(h, self.W_hh, self.b_hh).chunk(3, dim=-1)
        r = torch.sigmoid(x_r + h_r)
        z = torch.sigmoid(x_z + h_z)
        n = torch.tanh(x_n + r * h_n)
        return z * h + (1 - z) * n


class LSTMCell(_Cell):
    """Long short-term memory, in ``torch.nn.LSTMCell``'s form (gates stacked i, f, g, o):

        i_t = sigm(W_xi x_t + W_hi h_{t-1} + b_i)     input gate
        f_t = sigm(W_xf x_t + W_hf h_{t-1} + b_f)     forget gate
        g_t = tanh(W_xg x_t + W_hg h_{t-1} + b_g)     candidate C~_t
        o_t = sigm(W_xo x_t + W_ho h_{t-1} + b_o)     output gate
        c_t = f_t * c_{t-1} + i_t * g_t               cell state
        h_t = o_t * tanh(c_t)

    As torch, there are two bias vectors b_xh and b_hh; only their sum matters.
    The state is the pair (h, c).
    """

    n_blocks = 4
    state_is_pair = True
    torch_class = nn.LSTMCell

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.W_xh = self._weight(4 * hidden_size, input_size)  # [W_xi; W_xf; W_xg; W_xo]
        self.W_hh = self._weight(4 * hidden_size, hidden_size)  # [W_hi; W_hf; W_hg; W_ho]
        self.b_xh = self._vector(4 * hidden_size)
        self.b_hh = self._vector(4 * hidden_size)
        self.reset_parameters()

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.W_xh, self.b_xh)  # (..., 4H)

    def step(self, xw_t: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        h, c = state
        gates = xw_t + F.linear(h, self.W_hh, self.b_hh)  # (B, 4H)
        i, f, g, o = gates.chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


def _describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    return type(x).__name__


class _RecurrentLayers(nn.Module):
    """Layers of cells run over whole sequences, with the interface of ``torch.nn.RNN``/``GRU``/``LSTM``."""

    cell_class: type = _Cell
    torch_class: type | None = None

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
        **cell_kwargs,
    ):
        super().__init__()
        _check_size("num_layers", num_layers)
        if bidirectional:
            raise ValueError(
                f"bidirectional=True is not supported by course_lib.rnn.{type(self).__name__}; "
                "use torch.nn's module for that"
            )
        if proj_size:
            raise ValueError(f"proj_size is not supported by course_lib.rnn.{type(self).__name__}")
        if not (isinstance(dropout, (int, float)) and 0.0 <= dropout <= 1.0) or isinstance(dropout, bool):
            raise ValueError(f"dropout must be a number in [0, 1], got {dropout!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bool(bias), bool(batch_first), float(dropout)
        self.cells = nn.ModuleList(
            self.cell_class(
                input_size if layer == 0 else hidden_size,
                hidden_size,
                bias=bias,
                device=device,
                dtype=dtype,
                **cell_kwargs,
            )
            for layer in range(num_layers)
        )

    def forward(self, input: torch.Tensor, hx=None):
        """``input``: (T, B, I), or (B, T, I) with ``batch_first``, or unbatched (T, I).

        ``hx``: initial state(s), (num_layers, B, H) each (unbatched: (num_layers, H)); zeros if None.
        Returns ``(output, h_n)``, or ``(output, (h_n, c_n))`` for an LSTM, as torch.nn does:
        ``output`` holds the last layer's h_t for every t, ``h_n`` every layer's last state.
        """
        if isinstance(input, nn.utils.rnn.PackedSequence):
            raise TypeError(
                f"{type(self).__name__} does not take a PackedSequence: pad the batch and read "
                "each sequence's output at its own last step (see SequenceClassifier)"
            )
        if not isinstance(input, torch.Tensor) or input.dim() not in (2, 3):
            shape = "(batch, seq_len, input_size)" if self.batch_first else "(seq_len, batch, input_size)"
            raise ValueError(f"input must be a 3-D tensor {shape} or 2-D (seq_len, input_size), got {_describe(input)}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"input has {input.shape[-1]} features but input_size is {self.input_size}")
        unbatched = input.dim() == 2
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
        if x.shape[0] == 0:
            raise ValueError("input has 0 time steps: a sequence needs at least one")
        states = self._initial_states(hx, x, unbatched)

        finals = []
        for layer, cell in enumerate(self.cells):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, training=True)
            xw = cell.input_projection(x)  # (T, B, n_blocks * H): every step's input term at once
            state = states[layer]
            outputs = []
            for xw_t in xw.unbind(0):  # only the recurrence stays in the loop
                state = cell.step(xw_t, state)
                outputs.append(cell.output(state))
            x = torch.stack(outputs)  # (T, B, H): this layer's h_t, the next layer's input
            finals.append(state)

        output = x.squeeze(1) if unbatched else (x.transpose(0, 1) if self.batch_first else x)
        if self.cell_class.state_is_pair:
            h_n = torch.stack([s[0] for s in finals])
            c_n = torch.stack([s[1] for s in finals])
            if unbatched:
                h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
            return output, (h_n, c_n)
        h_n = torch.stack(finals)
        return output, h_n.squeeze(1) if unbatched else h_n

    def _initial_states(self, hx, x: torch.Tensor, unbatched: bool) -> list:
        batch = x.shape[1]
        if hx is None:
            return [cell.zero_state((batch,), x) for cell in self.cells]
        pair = self.cell_class.state_is_pair
        if pair and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise ValueError(f"hx must be a pair (h_0, c_0) for {type(self).__name__}, got {_describe(hx)}")
        parts = tuple(hx) if pair else (hx,)
        expected = (self.num_layers, self.hidden_size) if unbatched else (self.num_layers, batch, self.hidden_size)
        for name, p in zip(("h_0", "c_0"), parts):
            if not isinstance(p, torch.Tensor) or tuple(p.shape) != expected:
                raise ValueError(
                    f"{name} must have shape {expected} (num_layers, "
                    f"{'' if unbatched else 'batch, '}hidden_size), got {_describe(p)}"
                )
        if unbatched:
            parts = tuple(p.unsqueeze(1) for p in parts)
        if pair:
            return list(zip(parts[0].unbind(0), parts[1].unbind(0)))
        return list(parts[0].unbind(0))

    @classmethod
    def from_torch(cls, module: nn.Module):
        """The same network as ``module`` (a torch.nn.LSTM, GRU or, for ElmanRNN, RNN), weights copied."""
        if cls.torch_class is None or not isinstance(module, cls.torch_class):
            expected = cls.torch_class.__name__ if cls.torch_class else "(none: this network has no torch twin)"
            raise TypeError(f"{cls.__name__}.from_torch expects a torch.nn.{expected}, got {type(module).__name__}")
        if module.bidirectional or getattr(module, "proj_size", 0):
            raise ValueError(f"{cls.__name__}.from_torch: bidirectional and proj_size are not supported")
        w = module.weight_ih_l0
        net = cls(
            module.input_size,
            module.hidden_size,
            num_layers=module.num_layers,
            bias=module.bias,
            batch_first=module.batch_first,
            dropout=module.dropout,
            device=w.device,
            dtype=w.dtype,
            **cls.cell_class._options_from(module),
        )
        for layer, cell in enumerate(net.cells):
            cell._copy_from(module, f"_l{layer}")
        net.train(module.training)
        return net

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        return s


class ElmanRNN(_RecurrentLayers):
    """The lecture's Elman network over whole sequences (batched): h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h).

    A drop-in for ``torch.nn.RNN(..., nonlinearity="relu")`` (``nonlinearity="tanh"`` also works);
    ``from_torch`` sums torch's two biases into b_h.
    """

    cell_class = ElmanCell
    torch_class = nn.RNN

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "relu",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device=None,
        dtype=None,
    ):
        super().__init__(
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
            nonlinearity=nonlinearity,
        )
        self.nonlinearity = nonlinearity


class GatedRNN(_RecurrentLayers):
    """The lecture's gated RNN over whole sequences (batched); see :class:`GatedCell`. No torch twin."""

    cell_class = GatedCell


class GRU(_RecurrentLayers):
    """From-scratch ``torch.nn.GRU``: layers of :class:`GRUCell`. Returns ``(output, h_n)``."""

    cell_class = GRUCell
    torch_class = nn.GRU


class LSTM(_RecurrentLayers):
    """From-scratch ``torch.nn.LSTM``: layers of :class:`LSTMCell`. Returns ``(output, (h_n, c_n))``."""

    cell_class = LSTMCell
    torch_class = nn.LSTM


RNN_TYPES = {"elman": ElmanRNN, "gated": GatedRNN, "gru": GRU, "lstm": LSTM}


class SequenceClassifier(nn.Module):
    """Classify symbol sequences: one-hot x_t, a recurrent network, then y_T = W_hy h_T + b_y.

    ``rnn`` is a name from :data:`RNN_TYPES` ("elman", "gated", "gru", "lstm") or a module with the
    torch.nn.RNN interface (ours or torch's, ``batch_first=False``). Sequences of different
    lengths are padded into one batch: since step t only sees steps 1..t, each sequence's
    prediction is read at its own last step ``lengths - 1`` and the padding after it never
    matters (padding + masking).
    """

    def __init__(
        self, rnn: str | nn.Module, n_symbols: int, hidden_size: int | None = None, n_classes: int = 2, **rnn_kwargs
    ):
        super().__init__()
        self.n_symbols = _check_size("n_symbols", n_symbols)
        self.config = None  # what save() needs to rebuild the model: set when the rnn is given by name
        if isinstance(rnn, str):
            if rnn not in RNN_TYPES:
                raise ValueError(f"rnn must be one of {sorted(RNN_TYPES)} or a module, got {rnn!r}")
            if hidden_size is None:
                raise ValueError("hidden_size is needed to build the recurrent network by name")
            self.config = {
                "rnn": rnn,
                "n_symbols": n_symbols,
                "hidden_size": hidden_size,
                "n_classes": n_classes,
                **rnn_kwargs,
            }
            rnn = RNN_TYPES[rnn](n_symbols, hidden_size, **rnn_kwargs)
        elif rnn_kwargs or hidden_size is not None:
            raise ValueError("give hidden_size and rnn options only when rnn is a name")
        if getattr(rnn, "batch_first", False):
            raise ValueError("SequenceClassifier expects its rnn with batch_first=False")
        if rnn.input_size != n_symbols:
            raise ValueError(f"the rnn's input_size ({rnn.input_size}) must equal n_symbols ({n_symbols})")
        self.rnn = rnn
        self.W_hy = nn.Linear(rnn.hidden_size, _check_size("n_classes", n_classes))

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

    def save(self, path, **metadata) -> None:
        """Write the weights, the configuration and ``metadata`` (plain Python values and tensors only,
        so :meth:`load` can read it with ``torch.load(..., weights_only=True)``: no pickled objects)."""
        if self.config is None:
            raise ValueError("only a SequenceClassifier built from a name (e.g. 'lstm') can be saved")
        state = {k: v.detach().cpu() for k, v in self.state_dict().items()}
        torch.save({"format": CHECKPOINT_FORMAT, "config": dict(self.config), "state_dict": state, **metadata}, path)

    @classmethod
    def load(cls, path, map_location="cpu") -> tuple[SequenceClassifier, dict]:
        """(model in eval mode, the checkpoint's other entries) from a file written by :meth:`save`."""
        checkpoint = torch.load(path, map_location=map_location, weights_only=True)
        if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{path} is not a {CHECKPOINT_FORMAT} checkpoint")
        config = dict(checkpoint.pop("config"))
        model = cls(config.pop("rnn"), **config)
        model.load_state_dict(checkpoint.pop("state_dict"))
        checkpoint.pop("format")
        return model.to(map_location).eval(), checkpoint


CHECKPOINT_FORMAT = "course_lib.rnn.SequenceClassifier/1"


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
        self.vocab_size = _check_size("vocab_size", vocab_size)
        self.embedding = nn.Embedding(vocab_size, _check_size("embedding_dim", embedding_dim))
        self.rnn = RNN_TYPES[rnn](embedding_dim, _check_size("hidden_size", hidden_size), num_layers, batch_first=True)
        self.W_hy = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        check_token_ids(idx, "idx")
        h, _ = self.rnn(self.embedding(idx))  # (B, T, H)
        logits = self.W_hy(h)  # (B, T, vocab_size)
        return logits, None if targets is None else next_token_loss(logits, idx, targets)
