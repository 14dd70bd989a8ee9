"""Checks for lesson 02 (backprop by hand): one per exercise, torch.autograd as the reference,
and a targeted hint for each classic mistake (sign, axis, transpose, = instead of +=, ...)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course_lib.checks import Mistake, close, exercise, expect, expect_values

D64 = torch.float64


def _rng():
    return np.random.default_rng()


def _randn(rng, *shape, scale=1.0):
    return torch.tensor(rng.normal(size=shape) * scale, dtype=D64)


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else None


def _expect_shape(got, shape, what, hint=""):
    expect(hasattr(got, "shape"), f"{what} must be a tensor, got {type(got).__name__}")
    expect(
        tuple(got.shape) == tuple(shape),
        f"{what} must have shape {tuple(shape)}, got {tuple(got.shape)}. {hint}".strip(),
    )


def _expect_finite(got, hint):
    expect(
        bool(torch.isfinite(torch.as_tensor(np.asarray(got.detach() if hasattr(got, "detach") else got))).all()), hint
    )


def _untouched(before, after, name):
    expect(
        torch.equal(before, after), f"do not change {name} in place (it is the caller's tensor): work on new tensors"
    )


# --------------------------------------------------------------------------------------
@exercise("2.1", "the softmax Jacobian")
def check_softmax_jacobian(softmax_jacobian):
    rng = _rng()
    cases = [torch.tensor([1.0, 2.0, 0.5], dtype=D64)] + [
        _randn(rng, int(rng.integers(2, 7)), scale=2) for _ in range(4)
    ]
    got, expected, what = [], [], []
    wrong = {
        "the off-diagonal entries are missing: dy_i/dz_j = -y_i y_j for i != j (every output depends on every logit)": [],
        "check the signs: the diagonal is y_i (1 - y_i) and the off-diagonal entries are -y_i y_j": [],
        "use the probabilities y = softmax(z) in the formula, not the logits z": [],
        "normalise: y_i = exp(z_i) / sum_j exp(z_j); you used exp(z) without dividing by the sum": [],
        "normalise: y_i = exp(z_i - max z) / sum_j exp(z_j - max z); you forgot to divide by the sum": [],
        "the diagonal is missing y_i: it is y_i (1 - y_i) = y_i - y_i^2, so J = diag(y) - y y^T": [],
    }
    off_diag, sign, logits, unnormalised, unnormalised_shifted, no_diag = wrong
    for z in cases:
        given = z.clone()
        J = softmax_jacobian(given)
        _untouched(z, given, "z")
        _expect_shape(
            J, (len(z), len(z)), f"the Jacobian of softmax for {len(z)} logits", "Row i, column j holds d y_i / d z_j."
        )
        y = torch.softmax(z, 0)
        e = torch.exp(z)
        got.append(J)
        expected.append(torch.autograd.functional.jacobian(lambda v: torch.softmax(v, 0), z))
        what.append(f"the Jacobian for z = {np.round(z.numpy(), 3)}")
        wrong[off_diag].append(torch.diag(y * (1 - y)))
        wrong[sign].append(torch.diag(y) + torch.outer(y, y))
        wrong[logits].append(torch.diag(z) - torch.outer(z, z))
        wrong[unnormalised].append(torch.diag(e) - torch.outer(e, e))
        es = torch.exp(z - z.max())
        wrong[unnormalised_shifted].append(torch.diag(es) - torch.outer(es, es))
        wrong[no_diag].append(-torch.outer(y, y))
    expect_values(got, expected, wrong, what)
    # large logits: the formula is fine, but exp(1000) overflows unless you subtract max(z) first
    z = torch.tensor([1000.0, 999.0, -5.0], dtype=D64)
    J = softmax_jacobian(z.clone())
    _expect_finite(
        J,
        "with logits like 1000, exp(z) overflows to inf: subtract max(z) before exp "
        "(softmax(z - c) = softmax(z) for any constant c)",
    )
    expect(
        close(J, torch.autograd.functional.jacobian(lambda v: torch.softmax(v, 0), z)),
        "your Jacobian is wrong for large logits (z = [1000, 999, -5])",
    )


# --------------------------------------------------------------------------------------
@exercise("2.2", "the cross-entropy gradient with respect to the logits")
def check_cross_entropy_grad(cross_entropy_grad):
    rng = _rng()
    got, expected, what = [], [], []
    wrong = {
        "sign flipped: dL/dz = y_hat - y (the loss goes down when the true class's logit goes up)": [],
        "softmax over the wrong axis: each row (one example) is a distribution over the K classes, so use dim=1": [],
        "the loss is the mean over the batch, so the gradient of each row is divided by the batch size B": [],
        "divide by the batch size B = z.shape[0], not by the number of classes K": [],
        "subtract the one-hot target: dL/dz = y_hat - y, not y_hat alone": [],
        "y_hat are probabilities: use softmax, not log_softmax": [],
    }
    sign, axis, no_mean, by_k, no_onehot, log = wrong
    for B, K in [(3, 4), (int(rng.integers(2, 6)), int(rng.integers(6, 9))), (5, 3), (2, 5)]:
        z = _randn(rng, B, K, scale=2)
        t = torch.tensor(rng.integers(0, K, size=B))
        given = z.clone()
        dz = cross_entropy_grad(given, t)
        _untouched(z, given, "z")
        _expect_shape(dz, (B, K), "dL/dz", "It has the shape of the logits z: one row per example.")
        zz = z.clone().requires_grad_()
        F.cross_entropy(zz, t).backward()
        y, p = F.one_hot(t, K).to(D64), torch.softmax(z, 1)
        got.append(dz)
        expected.append(zz.grad)
        what.append(f"dL/dz for a batch of {B} examples with {K} classes")
        wrong[sign].append((y - p) / B)
        wrong[axis].append((torch.softmax(z, 0) - y) / B)
        wrong[no_mean].append(p - y)
        wrong[by_k].append((p - y) / K)
        wrong[no_onehot].append(p / B)
        wrong[log].append((torch.log_softmax(z, 1) - y) / B)
    expect_values(got, expected, wrong, what)


# --------------------------------------------------------------------------------------
@exercise("2.3", "a linear layer's backward pass")
def check_linear_backward(linear_backward):
    rng = _rng()
    # Square W first: there a transposed gradient still has the right shape, so its values tell
    # us which mistake it is (with a non-square W it would crash inside the student's code).
    _check_linear_cases(linear_backward, rng, [(4, 3, 3), (1, 2, 2), (int(rng.integers(2, 6)), 4, 4)])
    _check_linear_cases(linear_backward, rng, [(3, 3, 5), (2, 4, 2), (5, 1, 3)])


def _check_linear_cases(linear_backward, rng, sizes):
    names = ("dx", "dW", "db")
    answers = {n: [] for n in names}
    expected = {n: [] for n in names}
    wrong = {
        "dx": {"dx = dz W (shape of x); you used W^T. Forward z = x W^T, so going back multiplies by W": []},
        "dW": {
            "dW is transposed: for z = x W^T it is dz^T x, with W's shape (n_out, n_in)": [],
            "dW sums over the batch (every row used the same W): dz^T x, not an average": [],
        },
        "db": {"db sums dz over the batch (every example used the same b): sum, not mean": []},
    }
    nan = float("nan")
    for B, n_in, n_out in sizes:
        x, W, dz = _randn(rng, B, n_in), _randn(rng, n_out, n_in), _randn(rng, B, n_out)
        copies = [dz.clone(), x.clone(), W.clone()]
        out = linear_backward(*copies)
        for a, b, name in zip((dz, x, W), copies, ("dz", "x", "W")):
            _untouched(a, b, name)
        expect(isinstance(out, (tuple, list)) and len(out) == 3, "return the three gradients (dx, dW, db)")
        dx, dW, db = out
        if n_in != n_out and _shape(dW) == (n_in, n_out):
            raise Mistake("dW is transposed: for z = x W^T it is dz^T x, with W's shape (n_out, n_in)")
        if _shape(db) == (B,) and B != n_out:
            raise Mistake("db sums over the batch axis (dim=0), giving one entry per output")
        _expect_shape(dx, (B, n_in), "dx", "A gradient has the shape of what it is the gradient of: here x.")
        _expect_shape(dW, (n_out, n_in), "dW", "A gradient has the shape of what it is the gradient of: here W.")
        _expect_shape(db, (n_out,), "db", "One entry per output, summed over the batch.")
        xx, WW = x.clone().requires_grad_(), W.clone().requires_grad_()
        bb = torch.zeros(n_out, dtype=D64, requires_grad=True)
        (F.linear(xx, WW, bb) * dz).sum().backward()
        for name, value, ref in zip(names, (dx, dW, db), (xx.grad, WW.grad, bb.grad)):
            answers[name].append(value)
            expected[name].append(ref)
        square = n_in == n_out
        (dx_t,) = wrong["dx"].values()
        dx_t.append(dz @ W.T if square else torch.full((B, n_in), nan))
        dW_t, dW_mean = wrong["dW"].values()
        dW_t.append(x.T @ dz if square else torch.full((n_out, n_in), nan))
        dW_mean.append(dz.T @ x / B)
        (db_mean,) = wrong["db"].values()
        db_mean.append(dz.mean(0))
    for name in ("dW", "dx", "db"):
        expect_values(
            answers[name],
            expected[name],
            wrong[name],
            [f"{name} for x of shape ({B}, {n_in}) and W of shape ({n_out}, {n_in})" for B, n_in, n_out in sizes],
        )


# --------------------------------------------------------------------------------------
@exercise("2.4", "the embedding backward pass")
def check_embedding_backward(embedding_backward):
    rng = _rng()
    got, expected, what = [], [], []
    wrong = {
        "repeated ids must accumulate: a word used twice gets the SUM of both gradients. "
        "dE[i] = ... (or dE[ids] += de, which indexes each repeated row once) keeps only one of them": [],
        "add the gradients of a repeated word, do not average them: the word was used that many times": [],
    }
    no_accumulate, average = wrong
    cases = [(torch.tensor([2, 0, 2]), 4, 3), (torch.tensor([[1, 3, 1], [1, 0, 4]]), 6, 2)]
    for _ in range(3):
        V = int(rng.integers(3, 8))
        ids = torch.tensor(rng.integers(0, V, size=(int(rng.integers(2, 4)), 3)))
        ids[0, 0] = ids[-1, -1]  # at least one repeated id
        cases.append((ids, V, int(rng.integers(1, 5))))
    for ids, V, d in cases:
        de = _randn(rng, *ids.shape, d)
        given_de, given_ids = de.clone(), ids.clone()
        dE = embedding_backward(given_de, given_ids, V)
        _untouched(de, given_de, "de")
        _untouched(ids, given_ids, "ids")
        if _shape(dE) == (ids.numel(), d) and ids.numel() != V:
            raise Mistake(
                f"dE must have the shape of E, (vocab_size, d) = ({V}, {d}): one row per word of the "
                "vocabulary, zero for words that were not used, not one row per lookup"
            )
        _expect_shape(dE, (V, d), "dE", "One row per word of the vocabulary.")
        E = torch.zeros(V, d, dtype=D64, requires_grad=True)
        (F.embedding(ids, E) * de).sum().backward()
        got.append(dE)
        expected.append(E.grad)
        what.append(f"dE for ids {ids.tolist()}")
        last = torch.zeros(V, d, dtype=D64)
        last[ids.reshape(-1)] = de.reshape(-1, d)  # what overwriting leaves
        wrong[no_accumulate].append(last)
        counts = torch.bincount(ids.reshape(-1), minlength=V).clamp_min(1).to(D64)
        wrong[average].append(E.grad / counts[:, None])
    expect_values(got, expected, wrong, what)


# --------------------------------------------------------------------------------------
TRANSPOSED = "W_hh is transposed: the forward pass is h_prev W_hh^T, so dh_prev = da W_hh"
SKIPPED_TANH = "go back through the tanh before W_hh: dh_prev = da W_hh with da = dh * (1 - h^2), not dh W_hh"


@exercise("2.5", "one step of backpropagation through time")
def check_bptt_step(bptt_step):
    rng = _rng()
    names = ("dW_xh", "dW_hh", "db_h", "dh_prev")
    answers = {n: [] for n in names}
    expected = {n: [] for n in names}
    wrong = {
        "dW_xh": {},
        "db_h": {},
        "dW_hh": {"dW_hh multiplies by the input of W_hh at this step, h_prev (h_{t-1}), not by h (h_t)": []},
        "dh_prev": {TRANSPOSED: [], SKIPPED_TANH: []},
    }
    tanh_hints = {
        "forgot the derivative of tanh: first da = dh * (1 - h^2), then the weight gradients": "dh",
        "tanh'(a) = 1 - tanh(a)^2 = 1 - h^2 (squared), not 1 - h": "1-h",
    }
    for n in names:
        for hint in tanh_hints:
            wrong[n][hint] = []
    for B, D, H in [(2, 3, 4), (1, 2, 3), (int(rng.integers(2, 5)), 4, 4), (3, 1, 2)]:
        x, h_prev = _randn(rng, B, D), torch.tanh(_randn(rng, B, H))
        W_xh, W_hh, b_h = _randn(rng, H, D), _randn(rng, H, H) * 0.8, _randn(rng, H) * 0.1
        dh = _randn(rng, B, H)
        leaves = [t.clone().requires_grad_() for t in (x, h_prev, W_xh, W_hh, b_h)]
        xx, hp, Wx, Wh, bb = leaves
        h = torch.tanh(xx @ Wx.T + hp @ Wh.T + bb)
        (h * dh).sum().backward()
        h = h.detach()
        copies = [dh.clone(), h.clone(), h_prev.clone(), x.clone(), W_hh.clone()]
        out = bptt_step(*copies)
        for a, b, name in zip((dh, h, h_prev, x, W_hh), copies, ("dh", "h", "h_prev", "x", "W_hh")):
            _untouched(a, b, name)
        expect(
            isinstance(out, (tuple, list)) and len(out) == 4, "return the four gradients (dW_xh, dW_hh, db_h, dh_prev)"
        )
        for n, value, shape in zip(names, out, [(H, D), (H, H), (H,), (B, H)]):
            _expect_shape(value, shape, n, f"It has the shape of {n[1:]}.")
        refs = dict(dW_xh=Wx.grad, dW_hh=Wh.grad, db_h=bb.grad, dh_prev=hp.grad)

        def grads(da, h_used=h_prev, W=W_hh):
            return dict(dW_xh=da.T @ x, dW_hh=da.T @ h_used, db_h=da.sum(0), dh_prev=da @ W)

        da = dh * (1 - h**2)
        variants = {"dh": grads(dh), "1-h": grads(dh * (1 - h))}
        for n in names:
            answers[n].append(out[names.index(n)])
            expected[n].append(refs[n])
            for hint, key in tanh_hints.items():
                wrong[n][hint].append(variants[key][n])
        wrong["dW_hh"]["dW_hh multiplies by the input of W_hh at this step, h_prev (h_{t-1}), not by h (h_t)"].append(
            grads(da, h_used=h)["dW_hh"]
        )
        wrong["dh_prev"][TRANSPOSED].append(da @ W_hh.T)
        wrong["dh_prev"][SKIPPED_TANH].append(dh @ W_hh)
    for n in names:
        expect_values(answers[n], expected[n], wrong[n], [f"{n} (case {i + 1})" for i in range(len(answers[n]))])
