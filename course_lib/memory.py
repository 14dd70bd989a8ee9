"""Long-range memory, and tools to look inside gated cells (lesson 04: LSTM vs GRU).

- :func:`first_symbol_task`: remember the first symbol across T distractors. The answer is
  only at step 1 and the read-out is at step T + 1, so the task measures how far back a
  network can carry information, and T is a knob.
- :func:`input_gradients` / :func:`gradient_norms`: how much gradient of the loss reaches
  each input step (vanishing gradients, measured).
- :func:`gate_trace`: every gate of a :class:`~course_lib.rnn.LSTM` or
  :class:`~course_lib.rnn.GRU` at every step, for the lesson's heatmaps.
- :func:`set_forget_bias`: the forget-gate bias initialisation of Gers et al. (2000) and
  Jozefowicz et al. (2015), for our LSTM and for ``torch.nn.LSTM``.
- :func:`run_sliced`: the same layer as ``LSTM``/``GRU`` but with the input projection
  sliced per step, the slow way the lesson warns about (same numbers; slower forward plus
  backward when the input needs its gradient: benchmarks/RESULTS.md says by how much).

torch and numpy only: no plotting here (the notebook draws).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import rnn
from course_lib._validate import positive_int, token_ids

__all__ = [
    "first_symbol_task",
    "input_gradients",
    "gradient_norms",
    "gate_trace",
    "set_forget_bias",
    "run_sliced",
    "GATES",
]

# What gate_trace returns for each kind of cell, in this order.
GATES = {"lstm": ("i", "f", "g", "o", "c", "h"), "gru": ("r", "z", "n", "h")}


def first_symbol_task(
    n: int, T: int, n_signals: int = 4, n_distractors: int = 4, seed: int | None = None, device=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of length T + 1: a signal symbol, then T distractors; the label is the signal.

    Symbols ``0 .. n_signals - 1`` are signals, ``n_signals .. n_signals + n_distractors - 1``
    distractors, so a :class:`~course_lib.rnn.SequenceClassifier` with
    ``n_symbols=n_signals + n_distractors, n_classes=n_signals`` reads them. Chance is
    ``1 / n_signals``. Returns ``tokens`` (n, T + 1) and ``labels`` (n,), both ``torch.long``.
    """
    positive_int("n", n)
    positive_int("T", T)
    positive_int("n_signals", n_signals)
    positive_int("n_distractors", n_distractors)
    g = torch.Generator(device="cpu")  # cpu: one random stream whatever the device, so a seed means one data set
    g.manual_seed(int(torch.randint(0, 2**62, (1,), device="cpu").item()) if seed is None else seed)
    labels = torch.randint(0, n_signals, (n,), generator=g, device="cpu")
    distractors = torch.randint(n_signals, n_signals + n_distractors, (n, T), generator=g, device="cpu")
    tokens = torch.cat([labels[:, None], distractors], dim=1)
    return tokens.to(device), labels.to(device)


def input_gradients(model: rnn.SequenceClassifier, tokens: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """dL/dx_t for every step: (T, B, n_symbols), where L is each sequence's own cross-entropy.

    The loss is summed over the batch, so row b holds the gradient of sequence b's loss alone
    (a mean would divide every gradient by B). The model's parameters get no gradient.
    """
    if not isinstance(model, rnn.SequenceClassifier):
        raise TypeError(f"model must be a course_lib.rnn.SequenceClassifier, got {type(model).__name__}")
    token_ids("tokens", tokens, model.n_symbols)
    if not isinstance(labels, torch.Tensor) or labels.shape != tokens.shape[:1]:
        raise ValueError(
            f"labels must be a tensor of shape ({tokens.shape[0]},), got "
            f"{tuple(labels.shape) if isinstance(labels, torch.Tensor) else type(labels).__name__}"
        )
    x = F.one_hot(tokens.T, model.n_symbols).to(model.W_hy.weight.dtype).requires_grad_()  # (T, B, n_symbols)
    output, _ = model.rnn(x)
    loss = F.cross_entropy(model.W_hy(output[-1]), labels, reduction="sum")
    (grad,) = torch.autograd.grad(loss, x)
    return grad


def gradient_norms(model: rnn.SequenceClassifier, tokens: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """||dL/dx_t|| for every step t, averaged over the batch: (T,). Entry 0 is what reaches step 1."""
    return input_gradients(model, tokens, labels).norm(dim=-1).mean(dim=1)


def _kind(cell) -> str:
    if isinstance(cell, rnn.LSTMCell):
        return "lstm"
    if isinstance(cell, rnn.GRUCell):
        return "gru"
    raise TypeError(f"gate_trace needs an LSTM or GRU (course_lib.rnn), got a layer of {type(cell).__name__}")


def gate_trace(net: nn.Module, x: torch.Tensor, layer: int = 0) -> dict[str, torch.Tensor]:
    """The gates of one layer of ``net`` at every step, each (T, B, H), for input ``x`` (T, B, I).

    ``net`` is a :class:`~course_lib.rnn.LSTM` or :class:`~course_lib.rnn.GRU` (use
    ``LSTM.from_torch`` for a torch module), ``batch_first=False``. Keys are :data:`GATES`:
    LSTM ``i, f, g, o`` and the states ``c, h``; GRU ``r, z, n`` and ``h``. Each step is the
    cell's own ``gates`` (what ``step`` runs), so the equations live in one place; ``h``
    equals the layer's output (tested).
    """
    if not isinstance(net, (rnn.LSTM, rnn.GRU)):
        raise TypeError(f"net must be a course_lib.rnn.LSTM or GRU, got {type(net).__name__}")
    if net.batch_first:
        raise ValueError("gate_trace expects a net with batch_first=False")
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != net.input_size:
        raise ValueError(
            f"x must be a (seq_len, batch, {net.input_size}) tensor, got "
            f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}"
        )
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < net.num_layers:
        raise ValueError(f"layer must be an integer in [0, {net.num_layers}), got {layer!r}")
    with torch.no_grad():
        for cell in net.cells[: layer + 1]:
            kind = _kind(cell)
            trace = {k: [] for k in GATES[kind]}
            state = cell.zero_state((x.shape[1],), x)
            for xw_t in cell.input_projection(x).unbind(0):
                gates = cell.gates(xw_t, state)  # the cell's own step, with its gates kept
                state = (gates["h"], gates["c"]) if cell.state_is_pair else gates["h"]
                for k, v in gates.items():
                    trace[k].append(v)
            x = torch.stack(trace["h"])  # this layer's output is the next layer's input
    return {k: torch.stack(v) for k, v in trace.items()}


def set_forget_bias(lstm: nn.Module, value: float = 1.0) -> nn.Module:
    """Make every layer's forget-gate bias b_f equal ``value``; return ``lstm``.

    Works on :class:`~course_lib.rnn.LSTM` and ``torch.nn.LSTM`` (and their cells). Both store
    two bias vectors whose sum is the bias, gates stacked i, f, g, o: the forget slice
    ``[H:2H]`` of the input-side bias becomes ``value`` and that of the hidden-side bias 0.
    With b_f = 1, f_t starts near sigm(1) = 0.73 instead of 0.5, so the cell state is kept
    longer before the network has learned anything (Gers et al. 2000; Jozefowicz et al. 2015).
    """
    if isinstance(lstm, (rnn.LSTM, nn.LSTM)):
        pairs = (
            [(f"bias_ih_l{k}", f"bias_hh_l{k}") for k in range(lstm.num_layers)]
            if isinstance(lstm, nn.LSTM)
            else [(f"cells.{k}.b_xh", f"cells.{k}.b_hh") for k in range(lstm.num_layers)]
        )
    elif isinstance(lstm, rnn.LSTMCell):
        pairs = [("b_xh", "b_hh")]
    elif isinstance(lstm, nn.LSTMCell):
        pairs = [("bias_ih", "bias_hh")]
    else:
        raise TypeError(f"lstm must be an LSTM or LSTMCell (course_lib.rnn or torch.nn), got {type(lstm).__name__}")
    if not lstm.bias:
        raise ValueError("this LSTM has bias=False: there is no forget-gate bias to set")
    H = lstm.hidden_size
    params = dict(lstm.named_parameters())
    with torch.no_grad():
        for b_x, b_h in pairs:
            params[b_x][H : 2 * H] = float(value)
            params[b_h][H : 2 * H] = 0.0
    return lstm


def run_sliced(net: nn.Module, x: torch.Tensor):
    """``net(x)`` for a one-layer :class:`~course_lib.rnn.LSTM`/:class:`~course_lib.rnn.GRU`, the slow way.

    Same numbers, but the input projection ``W_xh x_t + b`` is computed inside the loop, one
    slice ``x[t]`` at a time, instead of once for all steps. Forward, that is T small products
    instead of one large one; backward, each slice's gradient is scattered into a full-size
    zero tensor, so the cost grows like T^2. Lesson 04 and benchmarks/bench_rnn.py time it.
    """
    if not isinstance(net, (rnn.LSTM, rnn.GRU)) or net.num_layers != 1 or net.batch_first:
        raise ValueError("net must be a one-layer course_lib.rnn.LSTM or GRU with batch_first=False")
    cell = net.cells[0]
    state = cell.zero_state((x.shape[1],), x)
    outputs = []
    for t in range(x.shape[0]):
        state = cell.step(cell.input_projection(x[t]), state)  # the trap: a product per step
        outputs.append(cell.output(state))
    return torch.stack(outputs), state
