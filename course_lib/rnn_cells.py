"""Recurrent cells: one time step of each network of lessons 03 and 04, from the lecture's equations.

Each cell splits its step in two, the recipe that makes an eager loop fast (see :mod:`course_lib.rnn`):
``input_projection(x)`` is ``W_xh x_t + b`` for every step at once, and ``step(xw_t, state)`` is
what truly depends on the past (one product with ``W_hh`` and a few elementwise ops). The gated
cells also have ``gates(xw_t, state)``: the same step with every gate kept (lesson 04's heatmaps).

- :class:`ElmanCell`  h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)                      (Elman, 1990)
- :class:`GatedCell`  the lecture's gated RNN: h_t = z_t * h_{t-1} + (1 - z_t) * ReLU(...)
- :class:`GRUCell`    torch.nn.GRUCell's equations (gates r, z, n)
- :class:`LSTMCell`   torch.nn.LSTMCell's equations (gates i, f, g, o; state (h, c))

Weights are stored as torch stores them, gates stacked in torch's order (LSTM: i, f, g, o;
GRU: r, z, n) so one product serves all gates. Cells are drop-ins for torch's cells
(``forward(input, hx)``) and copy a torch cell's weights with ``from_torch``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib._validate import positive_int

__all__ = ["ElmanCell", "GatedCell", "GRUCell", "LSTMCell"]

_ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


def _uniform_(params, hidden_size: int) -> None:
    """torch.nn's initialisation for recurrent weights: U(-1/sqrt(H), 1/sqrt(H)) for every parameter."""
    bound = 1.0 / math.sqrt(hidden_size)
    with torch.no_grad():
        for p in params:
            p.uniform_(-bound, bound)


class _Cell(nn.Module):
    """One recurrent step. Subclasses define ``input_projection`` and ``step``.

    ``n_blocks`` is how many H-sized blocks the input projection has (1 for Elman, 4 for LSTM).
    """

    n_blocks = 1
    state_is_pair = False  # LSTM carries (h, c)
    torch_class: type | None = None  # the torch.nn cell this one mirrors (None: no twin)

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size = positive_int("input_size", input_size)
        self.hidden_size = positive_int("hidden_size", hidden_size)
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

    def gates(self, xw_t: torch.Tensor, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """One step with every gate kept: {"r", "z", "n", "h"}, each (B, H); "h" is the new state."""
        x_r, x_z, x_n = xw_t.chunk(3, dim=-1)
        h_r, h_z, h_n = F.linear(h, self.W_hh, self.b_hh).chunk(3, dim=-1)
        r = torch.sigmoid(x_r + h_r)
        z = torch.sigmoid(x_z + h_z)
        n = torch.tanh(x_n + r * h_n)  # b_hn is inside r * (...): it is not interchangeable with b_xn
        return {"r": r, "z": z, "n": n, "h": z * h + (1 - z) * n}

    def step(self, xw_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.gates(xw_t, h)["h"]  # the equations are in gates()


class LSTMCell(_Cell):
    """Long short-term memory, in ``torch.nn.LSTMCell``'s form (gates stacked i, f, g, o):

        i_t = sigm(W_xi x_t + W_hi h_{t-1} + b_i)     input gate
        f_t = sigm(W_xf x_t + W_hf h_{t-1} + b_f)     forget gate
        g_t = tanh(W_xg x_t + W_hg h_{t-1} + b_g)     candidate C~_t
        o_t = sigm(W_xo x_t + W_ho h_{t-1} + b_o)     output gate
        c_t = f_t * c_{t-1} + i_t * g_t               cell state
        h_t = o_t * tanh(c_t)

    As torch, there are two bias vectors b_xh and b_hh; here every gate adds them, so only their sum
    matters (in the GRU's candidate it does not: b_hn is multiplied by r_t). The state is the pair (h, c).
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

    def gates(self, xw_t: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One step with every gate kept: {"i", "f", "g", "o", "c", "h"}, each (B, H); (h, c) is the new state."""
        h, c = state
        pre = xw_t + F.linear(h, self.W_hh, self.b_hh)  # (B, 4H): all four gates in one product
        i, f, g, o = pre.chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return {"i": i, "f": f, "g": g, "o": o, "c": c, "h": h}

    def step(self, xw_t: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        new = self.gates(xw_t, state)  # the equations are in gates()
        return new["h"], new["c"]


def _describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    return type(x).__name__
