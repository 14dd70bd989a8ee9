"""course_lib.memory (lesson 04): the memory task, input gradients, gate traces, forget bias, the slow loop."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import memory, rnn

TOL = dict(rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 20),
    T=st.integers(1, 30),
    n_signals=st.integers(1, 5),
    n_distractors=st.integers(1, 5),
    seed=st.integers(0, 1000),
)
def test_first_symbol_task_labels_are_the_first_symbol(n, T, n_signals, n_distractors, seed):
    tokens, labels = memory.first_symbol_task(n, T, n_signals, n_distractors, seed=seed)
    assert tokens.shape == (n, T + 1) and labels.shape == (n,)
    assert tokens.dtype == labels.dtype == torch.long
    assert torch.equal(tokens[:, 0], labels)
    assert labels.min() >= 0 and labels.max() < n_signals
    assert tokens[:, 1:].min() >= n_signals and tokens[:, 1:].max() < n_signals + n_distractors
    again, _ = memory.first_symbol_task(n, T, n_signals, n_distractors, seed=seed)
    assert torch.equal(tokens, again)


def test_first_symbol_task_uses_every_symbol_and_checks_arguments():
    tokens, labels = memory.first_symbol_task(2000, 5, seed=0)
    assert set(labels.tolist()) == {0, 1, 2, 3} and set(tokens[:, 1:].flatten().tolist()) == {4, 5, 6, 7}
    for kwargs, name in [
        ({"n": 0, "T": 3}, "n"),
        ({"n": 3, "T": 0}, "T"),
        ({"n": 3, "T": 2, "n_signals": 1.5}, "n_signals"),
    ]:
        with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
            memory.first_symbol_task(**kwargs)


def _classifier(kind, torch_twin=False, n_symbols=6, hidden=5, layers=2):
    torch.manual_seed(0)
    model = rnn.SequenceClassifier(kind, n_symbols, hidden, n_classes=3, num_layers=layers).double()
    if torch_twin:  # the same weights in torch.nn's module
        theirs = (nn.LSTM if kind == "lstm" else nn.GRU)(n_symbols, hidden, num_layers=layers).double()
        for layer, cell in enumerate(model.rnn.cells):
            with torch.no_grad():
                getattr(theirs, f"weight_ih_l{layer}").copy_(cell.W_xh)
                getattr(theirs, f"weight_hh_l{layer}").copy_(cell.W_hh)
                getattr(theirs, f"bias_ih_l{layer}").copy_(cell.b_xh)
                getattr(theirs, f"bias_hh_l{layer}").copy_(cell.b_hh)
        twin = rnn.SequenceClassifier(theirs, n_symbols, n_classes=3).double()
        twin.W_hy.load_state_dict(model.W_hy.state_dict())
        return model, twin
    return model


@pytest.mark.parametrize("kind", ["lstm", "gru", "elman"])
def test_input_gradients_match_finite_differences(kind):
    model = _classifier(kind)
    tokens = torch.randint(0, 6, (3, 7), generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0, 2, 1])
    grad = memory.input_gradients(model, tokens, labels)
    assert grad.shape == (7, 3, 6)
    x = F.one_hot(tokens.T, 6).double()

    def loss(x):  # the summed per-sequence loss, as a function of the one-hot input
        return F.cross_entropy(model.W_hy(model.rnn(x)[0][-1]), labels, reduction="sum")

    eps = 1e-6
    for t, b, s in [(0, 0, 1), (0, 2, 4), (3, 1, 0), (6, 2, 5)]:
        bump = torch.zeros_like(x)
        bump[t, b, s] = eps
        numeric = (loss(x + bump) - loss(x - bump)) / (2 * eps)
        assert abs(numeric.item() - grad[t, b, s].item()) < 1e-6
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_gradient_norms_equal_torch_modules(kind):
    ours, theirs = _classifier(kind, torch_twin=True)
    tokens = torch.randint(0, 6, (4, 9), generator=torch.Generator().manual_seed(2))
    labels = torch.tensor([0, 1, 2, 0])
    norms = memory.gradient_norms(ours, tokens, labels)
    assert norms.shape == (9,)
    torch.testing.assert_close(norms, memory.gradient_norms(theirs, tokens, labels), **TOL)
    expected = memory.input_gradients(theirs, tokens, labels)[0].norm(dim=-1).mean()
    torch.testing.assert_close(norms[0], expected, **TOL)


def test_input_gradients_check_arguments():
    model = _classifier("gru")
    with pytest.raises(TypeError, match="SequenceClassifier"):
        memory.input_gradients(nn.GRU(6, 5), torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="tokens must be"):
        memory.input_gradients(model, torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"labels must be a tensor of shape \(2,\)"):
        memory.input_gradients(model, torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, dtype=torch.long))


@pytest.mark.parametrize("torch_cls,ours_cls", [(nn.LSTM, rnn.LSTM), (nn.GRU, rnn.GRU)])
def test_gate_trace_reproduces_torch(torch_cls, ours_cls):
    torch.manual_seed(3)
    theirs = torch_cls(4, 6, num_layers=2)
    net = ours_cls.from_torch(theirs)
    x = torch.randn(8, 3, 4)
    output, state = theirs(x)
    h_n = state[0] if isinstance(state, tuple) else state
    first, top = memory.gate_trace(net, x, layer=0), memory.gate_trace(net, x, layer=1)
    kind = "lstm" if ours_cls is rnn.LSTM else "gru"
    assert tuple(top) == memory.GATES[kind]
    assert all(v.shape == (8, 3, 6) for v in top.values())
    torch.testing.assert_close(top["h"], output, **TOL)
    torch.testing.assert_close(first["h"][-1], h_n[0], **TOL)
    if kind == "lstm":
        torch.testing.assert_close(top["c"][-1], state[1][1], **TOL)
    gates = [g for g in memory.GATES[kind] if g not in ("c", "h", "g", "n")]
    assert all(0 < top[g].min() and top[g].max() < 1 for g in gates)  # sigmoid gates


def test_gate_trace_agrees_with_a_torch_cell_step_by_step():
    """The forget gate, recomputed from torch.nn.LSTMCell's pieces: f_t = sigm(rows H..2H of the pre-activation)."""
    torch.manual_seed(4)
    cell = nn.LSTMCell(3, 5)
    theirs = nn.LSTM(3, 5)
    with torch.no_grad():
        for a, b in [
            ("weight_ih", "weight_ih_l0"),
            ("weight_hh", "weight_hh_l0"),
            ("bias_ih", "bias_ih_l0"),
            ("bias_hh", "bias_hh_l0"),
        ]:
            getattr(theirs, b).copy_(getattr(cell, a))
    x = torch.randn(4, 2, 3)
    trace = memory.gate_trace(rnn.LSTM.from_torch(theirs), x)
    h = c = torch.zeros(2, 5)
    for t in range(4):
        pre = x[t] @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh
        torch.testing.assert_close(trace["f"][t], torch.sigmoid(pre[:, 5:10]), **TOL)
        h, c = cell(x[t], (h, c))


def test_gate_trace_checks_arguments():
    with pytest.raises(TypeError, match="LSTM or GRU"):
        memory.gate_trace(rnn.ElmanRNN(3, 4), torch.zeros(2, 1, 3))
    with pytest.raises(ValueError, match=r"x must be a \(seq_len, batch, 3\)"):
        memory.gate_trace(rnn.LSTM(3, 4), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="layer must be"):
        memory.gate_trace(rnn.GRU(3, 4), torch.zeros(2, 1, 3), layer=1)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.LSTM(3, 4, num_layers=2),
        lambda: rnn.LSTM(3, 4, num_layers=2),
        lambda: nn.LSTMCell(3, 4),
        lambda: rnn.LSTMCell(3, 4),
    ],
    ids=["nn.LSTM", "rnn.LSTM", "nn.LSTMCell", "rnn.LSTMCell"],
)
def test_set_forget_bias_gives_sigmoid_of_the_value_as_forget_gate(make):
    """Oracle: torch's own LSTM. With zero weights, zero input and c_0 = 1, the only other
    biases zeroed, c_1 = f * 1 + i * tanh(0) = f = sigm(value)."""
    module = make()
    with torch.no_grad():
        for p in module.parameters():
            p.uniform_(-1, 1) if p.dim() == 1 else p.zero_()
    memory.set_forget_bias(module, 1.5)
    is_layered = hasattr(module, "num_layers")
    theirs = module if isinstance(module, (nn.LSTM, nn.LSTMCell)) else None
    if theirs is None:  # copy our biases into torch's module, the oracle
        theirs = nn.LSTM(3, 4, num_layers=2) if is_layered else nn.LSTMCell(3, 4)
        with torch.no_grad():
            for p in theirs.parameters():
                p.zero_()
            cells = module.cells if is_layered else [module]
            for k, cell in enumerate(cells):
                suffix = f"_l{k}" if is_layered else ""
                getattr(theirs, "bias_ih" + suffix).copy_(cell.b_xh)
                getattr(theirs, "bias_hh" + suffix).copy_(cell.b_hh)
    with torch.no_grad():  # keep only the forget-gate bias: zero the biases of i, g, o
        for name, p in theirs.named_parameters():
            if "bias" in name:
                f = p[4:8].clone()
                p.zero_()
                p[4:8] = f
    if is_layered:
        _, (_, c) = theirs(torch.zeros(1, 1, 3), (torch.zeros(2, 1, 4), torch.ones(2, 1, 4)))
        c = c[:, 0]
    else:
        _, c = theirs(torch.zeros(1, 3), (torch.zeros(1, 4), torch.ones(1, 4)))
    torch.testing.assert_close(c, torch.full_like(c, torch.sigmoid(torch.tensor(1.5)).item()))


def test_set_forget_bias_leaves_other_gates_and_checks_arguments():
    lstm = rnn.LSTM(3, 4)
    before = lstm.cells[0].b_xh.detach().clone() + lstm.cells[0].b_hh.detach()
    memory.set_forget_bias(lstm, 2.0)
    after = lstm.cells[0].b_xh + lstm.cells[0].b_hh
    torch.testing.assert_close(after[4:8], torch.full((4,), 2.0))
    torch.testing.assert_close(torch.cat([after[:4], after[8:]]), torch.cat([before[:4], before[8:]]))
    with pytest.raises(TypeError, match="must be an LSTM"):
        memory.set_forget_bias(nn.GRU(3, 4), 1.0)
    with pytest.raises(ValueError, match="bias=False"):
        memory.set_forget_bias(nn.LSTM(3, 4, bias=False), 1.0)


@pytest.mark.parametrize("torch_cls,ours_cls", [(nn.LSTM, rnn.LSTM), (nn.GRU, rnn.GRU)])
def test_run_sliced_equals_torch_with_gradients(torch_cls, ours_cls):
    torch.manual_seed(5)
    theirs = torch_cls(4, 6)
    ours = ours_cls.from_torch(theirs)
    x1, x2 = torch.randn(7, 3, 4).requires_grad_(), None
    x2 = x1.detach().clone().requires_grad_()
    out_ours, _ = memory.run_sliced(ours, x1)
    out_theirs, _ = theirs(x2)
    torch.testing.assert_close(out_ours, out_theirs, **TOL)
    out_ours.sum().backward()
    out_theirs.sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **TOL)
    torch.testing.assert_close(ours.cells[0].W_xh.grad, theirs.weight_ih_l0.grad, **TOL)
    with pytest.raises(ValueError, match="one-layer"):
        memory.run_sliced(rnn.LSTM(4, 6, num_layers=2), x1)


def test_forward_on_the_meta_device():
    for cls in (rnn.LSTM, rnn.GRU):
        net = cls(5, 4, device="meta")
        x = torch.empty(6, 2, 5, device="meta")
        assert memory.gate_trace(net, x)["h"].device.type == "meta"
        assert memory.run_sliced(net, x)[0].device.type == "meta"
    tokens, labels = memory.first_symbol_task(3, 4, device="meta")
    assert tokens.device.type == labels.device.type == "meta"


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_gates_are_the_step_and_match_torch(kind):
    """One home for the gate equations: ``gates`` holds every gate of memory.GATES, its new state is what
    ``step`` returns, and that state equals torch's cell (the oracle)."""
    torch.manual_seed(0)
    theirs = nn.LSTMCell(3, 5) if kind == "lstm" else nn.GRUCell(3, 5)
    cell = (rnn.LSTMCell if kind == "lstm" else rnn.GRUCell).from_torch(theirs)
    x, h, c = torch.randn(4, 3), torch.randn(4, 5), torch.randn(4, 5)
    state = (h, c) if kind == "lstm" else h
    gates = cell.gates(cell.input_projection(x), state)
    assert tuple(gates) == memory.GATES[kind]
    with torch.no_grad():
        expected = theirs(x, state)
    if kind == "lstm":
        torch.testing.assert_close((gates["h"], gates["c"]), expected)
        torch.testing.assert_close(cell.step(cell.input_projection(x), state), expected)
    else:
        torch.testing.assert_close(gates["h"], expected)
        torch.testing.assert_close(cell.step(cell.input_projection(x), state), expected)
