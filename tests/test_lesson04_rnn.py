"""What lesson 04 relies on in course_lib.rnn, beyond tests/test_rnn.py: gradients of the initial
states, long sequences, batches of one and of many with several layers, the GRU conventions and
the parameter-count formulas, with torch.nn and torch.autograd as the oracles."""

import pytest
import torch
from torch import nn

from course_lib import memory, rnn

TOL = dict(rtol=1e-5, atol=1e-5)
PAIRS = [(rnn.LSTM, nn.LSTM), (rnn.GRU, nn.GRU)]


def _state(cls, L, B, H, gen):
    h0 = torch.randn(L, B, H, generator=gen).requires_grad_()
    if cls is rnn.LSTM:
        return h0, torch.randn(L, B, H, generator=gen).requires_grad_()
    return h0


def _leaves(state):
    return list(state) if isinstance(state, tuple) else [state]


def _clone(state):
    return (
        tuple(s.detach().clone().requires_grad_() for s in state)
        if isinstance(state, tuple)
        else state.detach().clone().requires_grad_()
    )


@pytest.mark.parametrize("ours_cls,torch_cls", PAIRS, ids=["LSTM", "GRU"])
@pytest.mark.parametrize("T,B,L", [(1, 1, 3), (1, 16, 2), (60, 8, 2), (25, 1, 1)])
def test_outputs_states_and_every_gradient_equal_torch(ours_cls, torch_cls, T, B, L):
    """Including dL/dh_0 (and dL/dc_0), which the loss reaches only through every step."""
    gen = torch.Generator().manual_seed(T * 100 + B * 10 + L)
    torch.manual_seed(T + B + L)
    theirs = torch_cls(5, 7, num_layers=L)
    ours = ours_cls.from_torch(theirs)
    x = torch.randn(T, B, 5, generator=gen)
    s_ours = _state(ours_cls, L, B, 7, gen)
    s_theirs = _clone(s_ours)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_ours, fin_ours = ours(x_ours, s_ours)
    out_theirs, fin_theirs = theirs(x_theirs, s_theirs)
    torch.testing.assert_close(out_ours, out_theirs, **TOL)
    for a, b in zip(_leaves(fin_ours), _leaves(fin_theirs)):
        torch.testing.assert_close(a, b, **TOL)
    w = torch.randn(out_ours.shape, generator=gen)
    loss_ours = (out_ours * w).sum() + sum(s.sum() for s in _leaves(fin_ours))
    loss_theirs = (out_theirs * w).sum() + sum(s.sum() for s in _leaves(fin_theirs))
    loss_ours.backward()
    loss_theirs.backward()
    torch.testing.assert_close(x_ours.grad, x_theirs.grad, **TOL)
    for a, b in zip(_leaves(s_ours), _leaves(s_theirs)):
        torch.testing.assert_close(a.grad, b.grad, **TOL)
    for layer, cell in enumerate(ours.cells):
        for mine, name in [
            (cell.W_xh, "weight_ih"),
            (cell.W_hh, "weight_hh"),
            (cell.b_xh, "bias_ih"),
            (cell.b_hh, "bias_hh"),
        ]:
            torch.testing.assert_close(mine.grad, getattr(theirs, f"{name}_l{layer}").grad, **TOL)


@pytest.mark.parametrize("cls", [rnn.LSTM, rnn.GRU])
def test_gradients_pass_autograds_numerical_check(cls):
    """torch.autograd.gradcheck (finite differences in float64) on input and initial state."""
    torch.manual_seed(0)
    net = cls(3, 4, num_layers=2, dtype=torch.float64)
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2, 2, 4, dtype=torch.float64, requires_grad=True)
    if cls is rnn.LSTM:
        c0 = torch.randn(2, 2, 4, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda x, h, c: net(x, (h, c))[0], (x, h0, c0))
    else:
        assert torch.autograd.gradcheck(lambda x, h: net(x, h)[0], (x, h0))


def _colah_gru_step(x, h, W_z, U_z, b_z, W_r, U_r, b_r, W_n, U_n, b_xn, b_hn):
    """colah's (and the lecture slide's second) convention: h_t = (1 - z) h_{t-1} + z h~_t."""
    z = torch.sigmoid(x @ W_z.T + h @ U_z.T + b_z)
    r = torch.sigmoid(x @ W_r.T + h @ U_r.T + b_r)
    h_tilde = torch.tanh(x @ W_n.T + b_xn + r * (h @ U_n.T + b_hn))
    return (1 - z) * h + z * h_tilde


def test_the_two_gru_conventions_map_by_negating_the_update_gate():
    """sigm(-a) = 1 - sigm(a): torch's GRU with z-block weights and biases negated is colah's form."""
    torch.manual_seed(1)
    cell = nn.GRUCell(3, 4)
    x, h = torch.randn(5, 3), torch.randn(5, 4)
    W_r, W_z, W_n = cell.weight_ih.chunk(3)
    U_r, U_z, U_n = cell.weight_hh.chunk(3)
    bx_r, bx_z, bx_n = cell.bias_ih.chunk(3)
    bh_r, bh_z, bh_n = cell.bias_hh.chunk(3)
    colah = _colah_gru_step(x, h, -W_z, -U_z, -(bx_z + bh_z), W_r, U_r, bx_r + bh_r, W_n, U_n, bx_n, bh_n)
    torch.testing.assert_close(colah, cell(x, h), **TOL)
    torch.testing.assert_close(colah, rnn.GRUCell.from_torch(cell)(x, h), **TOL)
    # without the mapping, the two conventions are different cells
    unmapped = _colah_gru_step(x, h, W_z, U_z, bx_z + bh_z, W_r, U_r, bx_r + bh_r, W_n, U_n, bx_n, bh_n)
    assert not torch.allclose(unmapped, cell(x, h), atol=1e-3)


@pytest.mark.parametrize("I,H,L", [(10, 16, 1), (3, 7, 2), (20, 5, 3)])
def test_parameter_count_formulas(I, H, L):
    """LSTM: 4 (H (I + H) + 2H) for the first layer, 4 (H (H + H) + 2H) above; GRU: 3 instead of 4."""
    for cls, torch_cls, blocks in [(rnn.LSTM, nn.LSTM, 4), (rnn.GRU, nn.GRU, 3)]:
        formula = blocks * (H * (I + H) + 2 * H) + (L - 1) * blocks * (H * (H + H) + 2 * H)
        assert sum(p.numel() for p in cls(I, H, num_layers=L).parameters()) == formula
        assert sum(p.numel() for p in torch_cls(I, H, num_layers=L).parameters()) == formula


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_gate_trace_of_an_unfused_copy_reads_the_fused_modules_own_states(kind):
    """Lesson 04 trains torch's nn.GRU/nn.LSTM (fused=True) and draws the gates of its unfused() copy: the copy's
    traced h_t (and the LSTM's last c_t) are torch's own, forget-gate bias set on the fused module included."""
    torch.manual_seed(2)
    fused = rnn.SequenceClassifier(kind, n_symbols=8, hidden_size=6, n_classes=4, fused=True)
    if kind == "lstm":
        memory.set_forget_bias(fused.rnn, 2.0)
    tokens, _ = memory.first_symbol_task(5, 15, seed=0)
    x = nn.functional.one_hot(tokens.T, 8).float()
    with torch.no_grad():
        output, state = fused.rnn(x)  # the oracle: torch's module
    trace = memory.gate_trace(fused.unfused().rnn, x)
    torch.testing.assert_close(trace["h"], output, **TOL)
    if kind == "lstm":
        torch.testing.assert_close(trace["c"][-1], state[1][0], **TOL)
        assert trace["f"][0].mean() > 0.8  # sigma(2 + ...) at the first step: the bias reached the copy
