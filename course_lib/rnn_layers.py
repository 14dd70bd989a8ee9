"""Recurrent layers over whole sequences: cells unrolled in time, with the interface of torch.nn.RNN/GRU/LSTM.

:func:`unroll` is the whole recipe of one layer: the input projection for every step at once,
then a Python loop that applies only what is truly sequential. :class:`ElmanRNN`,
:class:`GatedRNN`, :class:`GRU` and :class:`LSTM` stack ``num_layers`` of them, each layer's
h_t being the next layer's input (a stacked RNN). They are drop-ins for ``torch.nn.RNN`` /
``GRU`` / ``LSTM`` (same arguments and defaults, ``(output, h_n)`` or ``(output, (h_n, c_n))``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from course_lib._validate import number, positive_int
from course_lib.rnn_cells import ElmanCell, GatedCell, GRUCell, LSTMCell, _Cell, _describe

__all__ = ["unroll", "ElmanRNN", "GatedRNN", "GRU", "LSTM", "RNN_TYPES"]


def unroll(cell: _Cell, x: torch.Tensor, state) -> tuple[torch.Tensor, object]:
    """Run ``cell`` over a sequence ``x`` (T, B, I) from ``state``: (h_t for every t (T, B, H), last state).

    ``W_xh x_t + b`` does not depend on the past, so it is one matrix product for all steps;
    only ``cell.step`` (the product with ``W_hh`` and the nonlinearities) stays in the loop.
    """
    xw = cell.input_projection(x)  # (T, B, n_blocks * H): every step's input term at once
    outputs = []
    for xw_t in xw.unbind(0):  # only the recurrence stays in the loop
        state = cell.step(xw_t, state)
        outputs.append(cell.output(state))
    return torch.stack(outputs), state


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
        positive_int("num_layers", num_layers)
        if bidirectional:
            raise ValueError(
                f"bidirectional=True is not supported by course_lib.rnn.{type(self).__name__}; "
                "use torch.nn's module for that"
            )
        if proj_size:
            raise ValueError(f"proj_size is not supported by course_lib.rnn.{type(self).__name__}")
        number("dropout", dropout, 0.0, 1.0)
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
            x, state = unroll(cell, x, states[layer])  # (T, B, H): this layer's h_t, the next layer's input
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
