"""course_lib.rnn against torch.nn (the oracle) and against the lecture's per-sample networks."""

import pytest
import torch
from torch import nn

from course_lib import memory, rnn

TOL = dict(rtol=1e-5, atol=1e-5)

PAIRS = [  # (ours, torch's, extra constructor arguments)
    (rnn.LSTM, nn.LSTM, {}),
    (rnn.GRU, nn.GRU, {}),
    (rnn.ElmanRNN, nn.RNN, {"nonlinearity": "relu"}),
    (rnn.ElmanRNN, nn.RNN, {"nonlinearity": "tanh"}),
]
CELLS = [
    (rnn.LSTMCell, nn.LSTMCell, {}),
    (rnn.GRUCell, nn.GRUCell, {}),
    (rnn.ElmanCell, nn.RNNCell, {"nonlinearity": "relu"}),
]


def _first(state):
    return state[0] if isinstance(state, tuple) else state


def _grads(module, names):
    params = dict(module.named_parameters())
    return [params[n].grad for n in names]


def _param_map(ours, theirs):
    """Pairs (our name, torch name) for every weight, layer by layer."""
    pairs = []
    for layer in range(getattr(theirs, "num_layers", 1)):
        suffix = f"_l{layer}" if hasattr(theirs, "num_layers") else ""
        prefix = f"cells.{layer}." if hasattr(ours, "cells") else ""
        pairs += [(prefix + "W_xh", "weight_ih" + suffix), (prefix + "W_hh", "weight_hh" + suffix)]
        if theirs.bias:
            if (
                hasattr(ours, "cells")
                and isinstance(ours.cells[layer], rnn.ElmanCell)
                or isinstance(ours, rnn.ElmanCell)
            ):
                pairs += [(prefix + "b_h", "bias_ih" + suffix), (prefix + "b_h", "bias_hh" + suffix)]
            else:
                pairs += [(prefix + "b_xh", "bias_ih" + suffix), (prefix + "b_hh", "bias_hh" + suffix)]
    return pairs


def _compare(ours, theirs, run):
    """Run both, backpropagate the same loss, compare outputs, states, input and weight gradients."""
    out_ours, out_theirs = run(ours), run(theirs)
    for a, b in zip(out_ours, out_theirs):
        torch.testing.assert_close(a, b, **TOL)
    loss = lambda outs: sum((o * torch.linspace(-1, 1, o.numel()).view_as(o)).sum() for o in outs)  # noqa: E731
    loss(out_ours).backward()
    loss(out_theirs).backward()
    for our_name, torch_name in _param_map(ours, theirs):
        g_ours = dict(ours.named_parameters())[our_name].grad
        g_theirs = dict(theirs.named_parameters())[torch_name].grad
        torch.testing.assert_close(g_ours, g_theirs, **TOL, msg=f"gradient of {our_name} vs {torch_name}")


def _flatten(output, state):
    return (output,) + (tuple(state) if isinstance(state, tuple) else (state,))


@pytest.mark.parametrize("ours_cls,torch_cls,kwargs", PAIRS, ids=lambda p: getattr(p, "__name__", str(p)))
@pytest.mark.parametrize(
    "num_layers,T,B,batch_first,with_state",
    [
        (1, 7, 4, False, False),
        (2, 5, 3, False, True),
        (3, 1, 2, False, True),
        (2, 6, 1, True, False),
        (1, 1, 5, True, True),
    ],
)
def test_layers_equal_torch(ours_cls, torch_cls, kwargs, num_layers, T, B, batch_first, with_state):
    torch.manual_seed(num_layers * 100 + T * 10 + B)
    theirs = torch_cls(4, 6, num_layers=num_layers, batch_first=batch_first, **kwargs)
    ours = ours_cls.from_torch(theirs)
    x = torch.randn((B, T, 4) if batch_first else (T, B, 4))
    h0 = torch.randn(num_layers, B, 6) if with_state else None
    if with_state and ours_cls is rnn.LSTM:
        h0 = (h0, torch.randn(num_layers, B, 6))
    xs = {}

    def run(m):
        xs[m] = x.clone().requires_grad_()
        output, state = m(xs[m], h0)
        assert output.shape == ((B, T, 6) if batch_first else (T, B, 6))
        assert _first(state).shape == (num_layers, B, 6)
        return _flatten(output, state)

    _compare(ours, theirs, run)
    torch.testing.assert_close(xs[ours].grad, xs[theirs].grad, **TOL)


@pytest.mark.parametrize("ours_cls,torch_cls,kwargs", PAIRS[:3], ids=["LSTM", "GRU", "RNN"])
def test_unbatched_input_and_no_bias_equal_torch(ours_cls, torch_cls, kwargs):
    torch.manual_seed(3)
    theirs = torch_cls(3, 5, num_layers=2, bias=False, **kwargs)
    ours = ours_cls.from_torch(theirs)
    assert not any("b_" in name for name, _ in ours.named_parameters())
    x = torch.randn(6, 3)  # (T, I): no batch dimension, as torch allows

    def run(m):
        output, state = m(x)
        assert output.shape == (6, 5) and _first(state).shape == (2, 5)
        return _flatten(output, state)

    _compare(ours, theirs, run)


@pytest.mark.parametrize("ours_cls,torch_cls,kwargs", PAIRS[:3], ids=["LSTM", "GRU", "RNN"])
def test_defaults_and_parameter_counts_match_torch(ours_cls, torch_cls, kwargs):
    for layers in (1, 2):
        ours, theirs = ours_cls(10, 16, num_layers=layers, **kwargs), torch_cls(10, 16, num_layers=layers, **kwargs)
        assert ours.batch_first is theirs.batch_first is False
        # the lecture's Elman network has one bias b_h where torch has two (b_ih + b_hh)
        merged = layers * 16 if ours_cls is rnn.ElmanRNN else 0
        assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters()) - merged
        bound = 1 / 16**0.5  # torch's initialisation: U(-1/sqrt(H), 1/sqrt(H))
        assert all(p.abs().max() <= bound for p in ours.parameters())


@pytest.mark.parametrize("ours_cls,torch_cls,kwargs", CELLS, ids=["LSTMCell", "GRUCell", "RNNCell"])
@pytest.mark.parametrize("batched,with_state", [(True, True), (True, False), (False, True)])
def test_cells_equal_torch(ours_cls, torch_cls, kwargs, batched, with_state):
    torch.manual_seed(7)
    theirs = torch_cls(4, 6, **kwargs)
    ours = ours_cls.from_torch(theirs)
    shape = (3,) if batched else ()
    x = torch.randn(*shape, 4)
    hx = None
    if with_state:
        hx = torch.randn(*shape, 6)
        if ours_cls is rnn.LSTMCell:
            hx = (hx, torch.randn(*shape, 6))

    def run(m):
        out = m(x, hx)
        out = out if isinstance(out, tuple) else (out,)
        assert all(o.shape == (*shape, 6) for o in out)
        return out

    _compare(ours, theirs, run)


def test_from_torch_keeps_dtype_mode_and_options():
    theirs = nn.LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.25).double().eval()
    ours = rnn.LSTM.from_torch(theirs)
    assert ours.cells[0].W_xh.dtype == torch.float64 and not ours.training
    assert (ours.batch_first, ours.dropout, ours.num_layers) == (True, 0.25, 2)
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    torch.testing.assert_close(ours(x)[0], theirs(x)[0])  # dropout is off in eval mode


def test_dropout_between_layers_in_training_only():
    torch.manual_seed(0)
    net = rnn.GRU(3, 8, num_layers=2, dropout=0.5)
    x = torch.randn(4, 2, 3)
    assert not torch.equal(net(x)[0], net(x)[0])
    net.eval()
    assert torch.equal(net(x)[0], net(x)[0])


def test_from_torch_rejects_the_wrong_module():
    with pytest.raises(TypeError, match="expects a torch.nn.LSTM"):
        rnn.LSTM.from_torch(nn.GRU(2, 3))
    with pytest.raises(TypeError, match="expects a torch.nn.GRUCell"):
        rnn.GRUCell.from_torch(nn.LSTMCell(2, 3))
    with pytest.raises(TypeError, match="no torch twin"):
        rnn.GatedRNN.from_torch(nn.RNN(2, 3))
    with pytest.raises(TypeError, match="torch has no twin of GatedCell"):
        rnn.GatedCell.from_torch(nn.RNNCell(2, 3))
    with pytest.raises(ValueError, match="bidirectional"):
        rnn.LSTM.from_torch(nn.LSTM(2, 3, bidirectional=True))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: rnn.LSTM(3, 4)(torch.randn(5, 2, 7)), "7 features but input_size is 3"),
        (lambda: rnn.LSTM(3, 4)(torch.randn(5, 3)[None, None]), "3-D tensor"),
        (lambda: rnn.LSTM(3, 4)(torch.randn(5, 2, 3), torch.zeros(1, 2, 4)), "pair"),
        (
            lambda: rnn.GRU(3, 4, num_layers=2)(torch.randn(5, 2, 3), torch.zeros(1, 2, 4)),
            r"h_0 must have shape \(2, 2, 4\)",
        ),
        (lambda: rnn.GRU(3, 4)(torch.randn(0, 2, 3)), "0 time steps"),
        (lambda: rnn.GRU(3, 4, bidirectional=True), "bidirectional"),
        (lambda: rnn.GRU(3, 0), "hidden_size must be a positive integer"),
        (lambda: rnn.ElmanRNN(3, 4, nonlinearity="sigmoid"), "nonlinearity must be one of"),
        (lambda: rnn.LSTMCell(3, 4)(torch.randn(2, 3), torch.zeros(2, 4)), "pair"),
        (lambda: rnn.GRUCell(3, 4)(torch.randn(2, 3), torch.zeros(3, 4)), r"h_0 must have shape \(2, 4\)"),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_packed_sequences_are_refused_clearly():
    packed = nn.utils.rnn.pack_sequence([torch.randn(3, 2), torch.randn(2, 2)])
    with pytest.raises(TypeError, match="PackedSequence"):
        rnn.LSTM(2, 3)(packed)


# --------------------------------------------------------------------------- the lecture's networks


class RecNet(nn.Module):
    """The lecture's Elman network, verbatim: one sample at a time, no batches."""

    def __init__(self, dim_input, dim_recurrent, dim_output):
        super().__init__()
        self.fc_x2h = nn.Linear(dim_input, dim_recurrent)
        self.fc_h2h = nn.Linear(dim_recurrent, dim_recurrent, bias=False)
        self.fc_h2y = nn.Linear(dim_recurrent, dim_output)

    def forward(self, x):
        h = x.new_zeros(1, self.fc_h2y.weight.size(1))
        for t in range(x.size(0)):
            h = torch.relu(self.fc_x2h(x[t, :]) + self.fc_h2h(h))
        return self.fc_h2y(h)


class RecNetGating(nn.Module):
    """The lecture's gated RNN, verbatim."""

    def __init__(self, dim_input=10, dim_recurrent=50, dim_output=2):
        super().__init__()
        self.fc_x2h = nn.Linear(dim_input, dim_recurrent)
        self.fc_h2h = nn.Linear(dim_recurrent, dim_recurrent, bias=False)
        self.fc_x2z = nn.Linear(dim_input, dim_recurrent)
        self.fc_h2z = nn.Linear(dim_recurrent, dim_recurrent, bias=False)
        self.fc_h2y = nn.Linear(dim_recurrent, dim_output)

    def forward(self, x):
        h = x.new_zeros(1, self.fc_h2y.weight.size(1))
        for t in range(x.size(0)):
            z = torch.sigmoid(self.fc_x2z(x[t, :]) + self.fc_h2z(h))
            hb = torch.relu(self.fc_x2h(x[t, :]) + self.fc_h2h(h))
            h = z * h + (1 - z) * hb
        return self.fc_h2y(h)


def _lecture_copy(classifier, lecture_net):
    cell = classifier.rnn.cells[0]
    with torch.no_grad():
        lecture_net.fc_x2h.weight.copy_(cell.W_xh)
        lecture_net.fc_x2h.bias.copy_(cell.b_h)
        lecture_net.fc_h2h.weight.copy_(cell.W_hh)
        if isinstance(cell, rnn.GatedCell):
            lecture_net.fc_x2z.weight.copy_(cell.W_xz)
            lecture_net.fc_x2z.bias.copy_(cell.b_z)
            lecture_net.fc_h2z.weight.copy_(cell.W_hz)
        lecture_net.fc_h2y.load_state_dict(classifier.W_hy.state_dict())


@pytest.mark.parametrize("kind,lecture_cls", [("elman", RecNet), ("gated", RecNetGating)])
def test_batched_classifier_equals_the_lectures_per_sample_network(kind, lecture_cls):
    """A padded batch of sequences of different lengths gives, sequence by sequence, the lecture's logits."""
    torch.manual_seed(1)
    ours = rnn.SequenceClassifier(kind, n_symbols=10, hidden_size=12)
    lecture = lecture_cls(10, 12, 2)
    _lecture_copy(ours, lecture)
    seqs = [[2, 0, 9, 7, 0, 9], [1, 8, 3, 6], [0, 9, 2, 4, 5, 2, 7, 7], [1, 8]]
    tokens = torch.zeros(len(seqs), 8, dtype=torch.long)
    for i, s in enumerate(seqs):
        tokens[i, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) for s in seqs])
    batched = ours(tokens, lengths)
    for i, s in enumerate(seqs):
        one_hot = nn.functional.one_hot(torch.tensor(s), 10).float()
        torch.testing.assert_close(batched[i], lecture(one_hot)[0], **TOL)
    # step_logits: the prediction after each prefix is the prediction for that prefix alone
    steps = ours.step_logits(tokens)
    torch.testing.assert_close(steps[2, 3], ours(tokens[2:3, :4])[0], **TOL)


def test_classifier_wraps_torch_modules_and_checks_input():
    torch.manual_seed(0)
    theirs = rnn.SequenceClassifier(nn.LSTM(10, 8), n_symbols=10)
    ours = rnn.SequenceClassifier(rnn.LSTM.from_torch(theirs.rnn), n_symbols=10)
    ours.W_hy.load_state_dict(theirs.W_hy.state_dict())
    tokens = torch.randint(0, 10, (5, 6))
    torch.testing.assert_close(ours(tokens), theirs(tokens), **TOL)
    with pytest.raises(ValueError, match=r"symbol ids in \[0, 10\)"):
        ours(tokens + 5)
    with pytest.raises(ValueError, match="torch.long"):
        ours(tokens.float())
    with pytest.raises(ValueError, match="lengths"):
        ours(tokens, torch.tensor([7, 1, 1, 1, 1]))
    with pytest.raises(ValueError, match="rnn must be one of"):
        rnn.SequenceClassifier("transformer", 10, 8)


@pytest.mark.parametrize("kind", sorted(rnn.RNN_TYPES))
def test_forward_on_the_meta_device_makes_no_cpu_tensor(kind):
    """Every tensor is made on the input's device: on 'meta', mixing in a CPU tensor fails."""
    net = rnn.RNN_TYPES[kind](10, 8, num_layers=2, device="meta")
    output, state = net(torch.empty(5, 3, 10, device="meta"))
    assert output.device.type == _first(state).device.type == "meta"
    clf = rnn.SequenceClassifier(kind, 10, 8).to("meta")
    with pytest.raises((NotImplementedError, RuntimeError)):  # data-dependent checks cannot run on meta
        clf(torch.empty(3, 5, dtype=torch.long, device="meta"))


def test_classifier_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    model = rnn.SequenceClassifier("gru", n_symbols=6, hidden_size=5, num_layers=2)
    path = tmp_path / "m.safetensors"
    info = {"history": {"step": [0, 1], "loss": [0.7, 0.6], "evals": [{"step": 2, "acc": 0.5}]}, "note": "x"}
    rnn.save_classifier(path, model, info=info)
    loaded, loaded_info = rnn.load_classifier(path)
    assert loaded_info == {
        "history": {"step": [0, 1], "loss": [0.7, 0.6], "evals": [{"step": 2, "acc": 0.5}]},
        "note": "x",
    }
    assert isinstance(loaded.rnn, rnn.GRU) and loaded.rnn.num_layers == 2 and not loaded.training
    tokens = torch.randint(0, 6, (3, 4))
    torch.testing.assert_close(loaded(tokens), model(tokens))
    with pytest.raises(ValueError, match="built from a name"):
        rnn.save_classifier(tmp_path / "x.safetensors", rnn.SequenceClassifier(nn.GRU(6, 5), n_symbols=6))
    torch.save({"weights": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="is not a safetensors checkpoint"):
        rnn.load_classifier(tmp_path / "other.pt")


# --- the recurrent language model (lesson 07's character LSTM) -------------------------------------


@pytest.mark.parametrize("kind, torch_cls", [("lstm", nn.LSTM), ("gru", nn.GRU)])
def test_language_model_equals_embedding_torch_rnn_and_linear(kind, torch_cls):
    torch.manual_seed(0)
    lm = rnn.RNNLanguageModel(13, 5, 7, rnn=kind, num_layers=2)
    oracle = torch_cls(5, 7, num_layers=2, batch_first=True)
    ours = rnn.RNN_TYPES[kind].from_torch(oracle)
    lm.rnn.load_state_dict(ours.state_dict())
    idx = torch.randint(0, 13, (3, 9))
    targets = torch.randint(0, 13, (3, 9))
    logits, loss = lm(idx, targets)
    expected = lm.W_hy(oracle(lm.embedding.weight[idx])[0])  # E[x_t], torch's RNN, W_hy h_t + b_y
    torch.testing.assert_close(logits, expected, **TOL)
    manual = -torch.log_softmax(expected, -1).gather(-1, targets[..., None]).mean()
    torch.testing.assert_close(loss, manual, **TOL)


def test_language_model_never_looks_ahead():
    torch.manual_seed(1)
    lm = rnn.RNNLanguageModel(11, 4, 6)
    idx = torch.randint(0, 11, (2, 8))
    changed = idx.clone()
    changed[:, 5] = (changed[:, 5] + 1) % 11
    before, after = lm(idx)[0], lm(changed)[0]
    torch.testing.assert_close(before[:, :5], after[:, :5], rtol=0, atol=0)
    assert not torch.allclose(before[:, 5:], after[:, 5:])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rnn.RNNLanguageModel(10, 4, 6, rnn="transformer"), "rnn must be one of"),
        (lambda: rnn.RNNLanguageModel(0, 4, 6), "vocab_size must be a positive integer"),
        (lambda: rnn.RNNLanguageModel(10, 4, 6)(torch.zeros(2, 3)), r"idx must be a \(B, T\) tensor of token ids"),
        (
            lambda: rnn.RNNLanguageModel(10, 4, 6)(
                torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long)
            ),
            "targets must have the shape of idx",
        ),
    ],
)
def test_language_model_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- fused=True: torch's own modules, and unfused() back to ours (lesson 04 trains this way) ----------

FUSED = [("elman", nn.RNN, rnn.ElmanRNN), ("gru", nn.GRU, rnn.GRU), ("lstm", nn.LSTM, rnn.LSTM)]


def _padded_batch(n_symbols, gen):
    tokens = torch.randint(0, n_symbols, (6, 11), generator=gen)
    lengths = torch.tensor([11, 1, 5, 11, 7, 2])
    return tokens, lengths


@pytest.mark.parametrize("kind,torch_cls,ours_cls", FUSED, ids=[k for k, _, _ in FUSED])
@pytest.mark.parametrize("layers", [1, 2])
def test_fused_classifier_is_torchs_module_and_unfused_computes_the_same(kind, torch_cls, ours_cls, layers):
    """fused=True builds torch's module (ReLU for Elman, as ours); unfused() is our layer with its weights.
    Oracle: torch's module itself, run by hand on the one-hot input, for logits and for dL/dx."""
    torch.manual_seed(3)
    fused = rnn.SequenceClassifier(kind, n_symbols=7, hidden_size=9, n_classes=3, fused=True, num_layers=layers)
    assert type(fused.rnn) is torch_cls and fused.rnn.num_layers == layers
    if kind == "elman":
        assert fused.rnn.nonlinearity == "relu"
    ours = fused.unfused()
    assert type(ours.rnn) is ours_cls and type(fused.rnn) is torch_cls  # a copy: the fused model is unchanged
    tokens, lengths = _padded_batch(7, torch.Generator().manual_seed(4))
    x = nn.functional.one_hot(tokens.T, 7).float()
    h = fused.rnn(x)[0]  # the oracle: torch's module, by hand
    expected = fused.W_hy(h[lengths - 1, torch.arange(6)])
    torch.testing.assert_close(ours(tokens, lengths), expected, **TOL)
    torch.testing.assert_close(fused(tokens, lengths), expected, **TOL)
    torch.testing.assert_close(ours.step_logits(tokens), fused.W_hy(h).transpose(0, 1), **TOL)
    labels = torch.randint(0, 3, (6,), generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(
        memory.input_gradients(ours, tokens, labels), memory.input_gradients(fused, tokens, labels), **TOL
    )


def test_unfused_is_an_independent_copy_that_keeps_mode_and_config():
    torch.manual_seed(0)
    fused = rnn.SequenceClassifier("lstm", n_symbols=5, hidden_size=4, fused=True).eval()
    ours = fused.unfused()
    assert not ours.training and not ours.rnn.training
    assert fused.config["fused"] is True and "fused" not in ours.config
    with torch.no_grad():
        ours.W_hy.weight.zero_()
        ours.rnn.cells[0].W_hh.zero_()
    assert fused.W_hy.weight.abs().sum() > 0 and fused.rnn.weight_hh_l0.abs().sum() > 0
    # the copy is the network the name builds: its config rebuilds our LSTM
    assert isinstance(rnn.SequenceClassifier(ours.config.pop("rnn"), **ours.config).rnn, rnn.LSTM)
    with pytest.raises(TypeError, match="unfused"):
        ours.unfused()


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_training_the_fused_module_trains_the_same_network_as_our_cells(kind):
    """Same seed, same initial weights (torch's initialisation, drawn in the same order); then the same Adam
    steps on each give the same weights, up to float32 rounding: the fused module is a faster way to train ours."""
    torch.manual_seed(7)
    cells = rnn.SequenceClassifier(kind, n_symbols=6, hidden_size=8, n_classes=3)
    torch.manual_seed(7)
    fused = rnn.SequenceClassifier(kind, n_symbols=6, hidden_size=8, n_classes=3, fused=True)
    for a, b in zip(cells.parameters(), fused.unfused().parameters()):
        assert torch.equal(a, b)
    gen = torch.Generator().manual_seed(8)
    batches = [
        (torch.randint(0, 6, (16, 12), generator=gen), torch.randint(0, 3, (16,), generator=gen)) for _ in range(20)
    ]
    for model in (cells, fused):
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for tokens, labels in batches:
            loss = nn.functional.cross_entropy(model(tokens), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
    for a, b in zip(cells.parameters(), fused.unfused().parameters()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_fused_options_are_checked_and_a_fused_checkpoint_round_trips(tmp_path):
    with pytest.raises(ValueError, match="with fused=True"):
        rnn.SequenceClassifier("gated", n_symbols=5, hidden_size=4, fused=True)
    with pytest.raises(ValueError, match="only when rnn is a name"):
        rnn.SequenceClassifier(nn.LSTM(5, 4), n_symbols=5, fused=True)
    torch.manual_seed(0)
    model = rnn.SequenceClassifier("gru", n_symbols=5, hidden_size=4, fused=True)
    rnn.save_classifier(tmp_path / "f.safetensors", model)
    loaded, _ = rnn.load_classifier(tmp_path / "f.safetensors")
    assert type(loaded.rnn) is nn.GRU
    tokens = torch.randint(0, 5, (3, 6))
    torch.testing.assert_close(loaded(tokens), model(tokens))
