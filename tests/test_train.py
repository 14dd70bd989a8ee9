"""The shared training loop against a hand-written PyTorch loop (the oracle)."""

import pytest
import torch

from course_lib import train


def data():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(100, 3, generator=g)
    y = (X @ torch.tensor([1.0, -2.0, 0.5]) > 0).long()
    return X, y


def loss_fn(model, batch):
    x, y = batch
    return torch.nn.functional.cross_entropy(model(x), y)


def test_fit_equals_a_plain_loop():
    X, y = data()
    torch.manual_seed(1)
    ours = torch.nn.Linear(3, 2)
    theirs = torch.nn.Linear(3, 2)
    theirs.load_state_dict(ours.state_dict())
    batches = train.make_batches(X, y, batch_size=16, shuffle=False)
    history = train.fit(ours, loss_fn, torch.optim.SGD(ours.parameters(), lr=0.1), batches, epochs=3, progress=False)
    opt = torch.optim.SGD(theirs.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        for start in range(0, 100, 16):
            loss = loss_fn(theirs, (X[start : start + 16], y[start : start + 16]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert history.loss == pytest.approx(losses)
    assert len(history.step) == 3 * 7  # ceil(100 / 16) = 7 batches: the last, smaller one is kept
    for p, q in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(p, q)


def test_max_steps_eval_and_continuation():
    X, y = data()
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    evaluate = lambda m: {"acc": train.accuracy(m(X), y)}  # noqa: E731
    h = train.fit(
        model,
        loss_fn,
        opt,
        train.make_batches(X, y, batch_size=10),
        epochs=50,
        max_steps=40,
        evaluate=evaluate,
        eval_every=20,
        progress=False,
    )
    assert len(h.loss) == 40 and [e["step"] for e in h.evals] == [20, 40]
    h = train.fit(
        model,
        loss_fn,
        opt,
        train.make_batches(X, y, batch_size=10),
        max_steps=5,
        progress=False,
        history=h,
        evaluate=evaluate,
    )
    assert h.step[-1] == 44 and h.evals[-1]["step"] == 45
    assert h.last("acc") > 0.9  # a linearly separable problem is learned
    with pytest.raises(KeyError, match="never evaluated"):
        h.last("loss")


def test_batches_cover_every_example_once():
    X, y = data()
    seen = torch.cat(
        [xb for xb, _ in train.make_batches(X, y, batch_size=32, generator=torch.Generator().manual_seed(3))()]
    )
    assert sorted(seen[:, 0].tolist()) == sorted(X[:, 0].tolist())


def test_bad_arguments():
    X, y = data()
    with pytest.raises(ValueError, match=r"tensors\[1\] has 99 rows"):
        train.make_batches(X, y[:99], batch_size=4)
    with pytest.raises(ValueError, match="batch_size"):
        train.make_batches(X, batch_size=0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="epochs"):
        train.fit(model, loss_fn, opt, train.make_batches(X, y, batch_size=4), epochs=0)
    with pytest.raises(TypeError, match="batches must be a function"):
        train.fit(model, loss_fn, opt, [(X, y)])
    with pytest.raises(ValueError, match="logits must have shape"):
        train.accuracy(torch.zeros(4, 2), torch.zeros(5, dtype=torch.long))


def test_diverging_loss_is_reported():
    X, y = data()
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=1e30)
    with pytest.raises(FloatingPointError, match="learning rate"):
        train.fit(model, loss_fn, opt, train.make_batches(X * 1e30, y, batch_size=50), epochs=5, progress=False)


def test_smoothed_loss():
    h = train.History(loss=[1.0, 3.0, 5.0, 7.0])
    assert h.smoothed_loss(2) == [1.0, 2.0, 4.0, 6.0]


def test_to_device_on_meta():
    moved = train.to_device({"x": torch.ones(2), "y": [torch.zeros(1), 3]}, torch.device("meta"))
    assert moved["x"].device.type == "meta" and moved["y"][0].device.type == "meta" and moved["y"][1] == 3


def test_next_token_loss_is_the_mean_cross_entropy_and_checks_shapes():
    from course_lib.train import check_token_ids, next_token_loss

    g = torch.Generator().manual_seed(0)
    logits, idx, targets = (
        torch.randn(2, 3, 5, generator=g),
        torch.zeros(2, 3, dtype=torch.long),
        torch.tensor([[0, 4, 2], [1, 1, 3]]),
    )
    by_hand = -sum(torch.log_softmax(logits[b, t], -1)[targets[b, t]] for b in range(2) for t in range(3)) / 6
    assert next_token_loss(logits, idx, targets).item() == pytest.approx(by_hand.item(), abs=1e-6)
    with pytest.raises(ValueError, match=r"targets must have the shape of idx \(2, 3\), got \(3, 2\)"):
        next_token_loss(logits, idx, targets.T)
    with pytest.raises(ValueError, match=r"src must be a \(B, T\) tensor of token ids \(torch.long\), got list"):
        check_token_ids([[1, 2]], "src")
    with pytest.raises(ValueError, match="got shape \\(2, 3\\), dtype torch.float32"):
        check_token_ids(torch.zeros(2, 3))
