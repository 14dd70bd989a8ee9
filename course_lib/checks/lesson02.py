"""Checks for lesson 02 (backprop by hand), each in three steps (draw, run, judge).

torch.autograd computes the reference in the judge; every known mistake (sign, axis, transpose,
= instead of +=, ...) is computed too, so the hint names it. Sizes are drawn on every run (a
hard-coded size fails every time), a correct float32 solution passes, and results must be tensors.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course_lib.checks import Mistake
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers

D64 = torch.float64


def _randn(rng, *shape, scale=1.0):
    return torch.tensor(rng.normal(size=shape) * scale, dtype=D64)


def _outputs(record, names):
    """The student's tensors, by name; a hint when they are not tensors or not as many as asked."""
    value = record["returned"]
    if len(names) == 1:
        if not _is_tensor(value):
            raise Mistake(f"return {names[0]} as a torch tensor, got {record['type']}")
        return [value]
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        raise Mistake(f"return the {len(names)} gradients ({', '.join(names)}) as a tuple, got {record['type']}")
    for name, v in zip(names, value):
        if not _is_tensor(v):
            raise Mistake(f"return {name} as a torch tensor, got {type(v).__name__}")
    return list(value)


def _expect_shape(got, shape, name, hint=""):
    if tuple(got.shape) != tuple(shape):
        raise Mistake(f"{name} must have shape {tuple(shape)}, got {tuple(got.shape)}. {hint}".strip())


def _judge_by_name(names, answers, expected, wrong, what):
    for name in names:
        expect_answers(answers[name], expected[name], wrong.get(name, {}), [f"{name} {w}" for w in what])


# ---------------------------------------------------------------- 2.1

OVERFLOW = (
    "with logits like 1000, exp(z) overflows to inf: subtract max(z) before exp "
    "(softmax(z - c) = softmax(z) for any constant c)"
)


def _draw_jacobian(seed):
    rng = np.random.default_rng(seed)
    cases = [[torch.tensor([1.0, 2.0, 0.5], dtype=D64)]]
    cases += [[_randn(rng, k, scale=2)] for k in rng.permutation(np.arange(2, 8))[:4]]
    cases.append([torch.tensor([1000.0, 999.0, -5.0, 998.0][: int(rng.integers(3, 5))], dtype=D64)])
    return cases


def _judge_jacobian(cases, records):
    hints = [
        "the off-diagonal entries are missing: dy_i/dz_j = -y_i y_j for i != j (every output depends on every logit)",
        "check the signs: the diagonal is y_i (1 - y_i) and the off-diagonal entries are -y_i y_j",
        "use the probabilities y = softmax(z) in the formula, not the logits z",
        "normalise: y_i = exp(z_i - max z) / sum_j exp(z_j - max z); you forgot to divide by the sum",
        "the diagonal is missing y_i: it is y_i (1 - y_i) = y_i - y_i^2, so J = diag(y) - y y^T",
        "softmax over the logits, not a sigmoid of each: y = exp(z) / sum exp(z)",
    ]
    got, expected, wrong = [], [], {h: [] for h in hints}
    for (z,), r in zip(cases, records):
        (J,) = _outputs(r, ["the Jacobian"])
        _expect_shape(
            J, (len(z), len(z)), f"the Jacobian of softmax for {len(z)} logits", "Row i, column j holds d y_i / d z_j."
        )
        if z.max() > 500 and not torch.isfinite(J).all():
            raise Mistake(OVERFLOW)
        y = torch.softmax(z, 0)
        es = torch.exp(z - z.max())
        s = torch.sigmoid(z) / torch.sigmoid(z).sum()
        got.append(J)
        expected.append(torch.autograd.functional.jacobian(lambda v: torch.softmax(v, 0), z))
        for h, v in zip(
            hints,
            [
                torch.diag(y * (1 - y)),
                torch.diag(y) + torch.outer(y, y),
                torch.diag(z) - torch.outer(z, z),
                torch.diag(es) - torch.outer(es, es),
                -torch.outer(y, y),
                torch.diag(s) - torch.outer(s, s),
            ],
        ):
            wrong[h].append(v)
    expect_answers(
        got, expected, wrong, [f"the Jacobian for {len(z)} logits (case {i + 1})" for i, (z,) in enumerate(cases)]
    )


check_softmax_jacobian = Exercise(
    "2.1", "the softmax Jacobian", "softmax_jacobian", ("z",), _draw_jacobian, _judge_jacobian
)


# ---------------------------------------------------------------- 2.2


def _draw_ce(seed):
    rng = np.random.default_rng(seed)
    sizes = [(3, 4), (1, int(rng.integers(3, 6))), (int(rng.integers(4, 7)), int(rng.integers(6, 9))), (5, 3)]
    cases = []
    for i, (B, K) in enumerate(sizes):
        high = K - 1 if i % 2 == 0 else K  # half the batches lack the last class: one_hot must be told K
        cases.append([_randn(rng, B, K, scale=2), torch.tensor(rng.integers(0, high, size=B))])
    return cases


def _judge_ce(cases, records):
    hints = [
        "sign flipped: dL/dz = y_hat - y (the loss goes down when the true class's logit goes up)",
        "softmax over the wrong axis: each row (one example) is a distribution over the K classes, so use dim=1",
        "the loss is the mean over the batch, so the gradient of each row is divided by the batch size B",
        "divide by the batch size B = z.shape[0], not by the number of classes K",
        "subtract the one-hot target: dL/dz = y_hat - y, not y_hat alone",
        "y_hat are probabilities: use softmax, not log_softmax",
    ]
    got, expected, wrong = [], [], {h: [] for h in hints}
    for (z, t), r in zip(cases, records):
        B, K = z.shape
        (dz,) = _outputs(r, ["dL/dz"])
        if dz.shape[0] == B and dz.ndim == 2 and dz.shape[1] == int(t.max()) + 1 != K:
            raise Mistake(
                "the one-hot targets need K columns even when the batch lacks the last class: "
                "one_hot(targets, num_classes=z.shape[1])"
            )
        _expect_shape(dz, (B, K), "dL/dz", "It has the shape of the logits z: one row per example.")
        zz = z.clone().requires_grad_()
        F.cross_entropy(zz, t).backward()
        y, p = F.one_hot(t, K).to(D64), torch.softmax(z, 1)
        got.append(dz)
        expected.append(zz.grad)
        for h, v in zip(
            hints,
            [(y - p) / B, (torch.softmax(z, 0) - y) / B, p - y, (p - y) / K, p / B, (torch.log_softmax(z, 1) - y) / B],
        ):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, [f"dL/dz for B={z.shape[0]}, K={z.shape[1]}" for z, _ in cases])


def _ce_errors(case, record):
    z, t = case
    if record["raised"] == "RuntimeError" and int(t.max()) < z.shape[1] - 1 and "must match" in record["message"]:
        return (
            "the one-hot targets need K columns even when the batch lacks the last class: "
            "one_hot(targets, num_classes=z.shape[1])"
        )
    return ""


check_cross_entropy_grad = Exercise(
    "2.2",
    "the cross-entropy gradient with respect to the logits",
    "cross_entropy_grad",
    ("z", "targets"),
    _draw_ce,
    _judge_ce,
    errors=_ce_errors,
)


# ---------------------------------------------------------------- 2.3

LINEAR_HINTS = {
    "dx": {"dx = dz W (shape of x); you used W^T. Forward z = x W^T, so going back multiplies by W": "dx_t"},
    "dW": {
        "dW is transposed: for z = x W^T it is dz^T x, with W's shape (n_out, n_in)": "dW_t",
        "dW sums over the batch (every row used the same W): dz^T x, not an average": "dW_mean",
    },
    "db": {
        "db sums dz over the batch (every example used the same b): sum, not mean": "db_mean",
        "db is dz summed over the batch: no factor x (b is added, not multiplied)": "db_x",
    },
}


def _draw_linear(seed):
    rng = np.random.default_rng(seed)
    # Square W first (a transposed gradient keeps its shape, so its values name the mistake),
    # then shapes where B, n_in and n_out all differ.
    n = int(rng.integers(2, 6))
    sizes = [(4, n, n), (1, 2, 2), (3, 3, 5), (2, 4, 2), (int(rng.integers(5, 8)), 1, 3)]
    return [[_randn(rng, B, n_out), _randn(rng, B, n_in), _randn(rng, n_out, n_in)] for B, n_in, n_out in sizes]


def _judge_linear(cases, records):
    names = ("dx", "dW", "db")
    answers = {k: [] for k in names}
    expected = {k: [] for k in names}
    wrong = {k: {h: [] for h in hints} for k, hints in LINEAR_HINTS.items()}
    nan = float("nan")
    for (dz, x, W), r in zip(cases, records):
        B, n_in = x.shape
        n_out = W.shape[0]
        dx, dW, db = _outputs(r, names)
        if n_in != n_out and tuple(dW.shape) == (n_in, n_out):
            raise Mistake("dW is transposed: for z = x W^T it is dz^T x, with W's shape (n_out, n_in)")
        if tuple(db.shape) == (B,) and B != n_out:
            raise Mistake("db sums over the batch axis (dim=0), giving one entry per output")
        _expect_shape(dx, (B, n_in), "dx", "A gradient has the shape of what it is the gradient of: here x.")
        _expect_shape(dW, (n_out, n_in), "dW", "A gradient has the shape of what it is the gradient of: here W.")
        _expect_shape(db, (n_out,), "db", "One entry per output, summed over the batch.")
        xx, WW = x.clone().requires_grad_(), W.clone().requires_grad_()
        bb = torch.zeros(n_out, dtype=D64, requires_grad=True)
        (F.linear(xx, WW, bb) * dz).sum().backward()
        square = n_in == n_out
        variants = {
            "dx_t": dz @ W.T if square else torch.full((B, n_in), nan),
            "dW_t": x.T @ dz if square else torch.full((n_out, n_in), nan),
            "dW_mean": dz.T @ x / B,
            "db_mean": dz.mean(0),
            "db_x": (dz.T @ x).sum(1) if n_in == 1 else torch.full((n_out,), nan),
        }
        for k, value, ref in zip(names, (dx, dW, db), (xx.grad, WW.grad, bb.grad)):
            answers[k].append(value)
            expected[k].append(ref)
            for h, key in LINEAR_HINTS[k].items():
                wrong[k][h].append(variants[key])
    what = [f"for x {tuple(x.shape)}, W {tuple(W.shape)}" for _, x, W in cases]
    _judge_by_name(("dW", "dx", "db"), answers, expected, wrong, what)


check_linear_backward = Exercise(
    "2.3", "a linear layer's backward pass", "linear_backward", ("dz", "x", "W"), _draw_linear, _judge_linear
)


# ---------------------------------------------------------------- 2.4


def _draw_embedding(seed):
    rng = np.random.default_rng(seed)
    cases = [[torch.tensor([2, 0, 2]), 5, 3], [torch.tensor([[1, 3, 1], [1, 0, 4]]), 6, 2]]
    for _ in range(3):
        V = int(rng.integers(4, 9))
        ids = torch.tensor(rng.integers(0, V - 1, size=(int(rng.integers(2, 4)), int(rng.integers(2, 5)))))
        ids[0, 0] = ids[-1, -1]  # a repeated id; and the last word of the vocabulary is never used
        cases.append([ids, V, int(rng.integers(1, 5))])
    return [[_randn(rng, *ids.shape, d), ids, V] for ids, V, d in cases]


def _judge_embedding(cases, records):
    hints = [
        "repeated ids must accumulate: a word used twice gets the SUM of both gradients. "
        "dE[i] = ... (or dE[ids] += de, which indexes each repeated row once) keeps only one of them",
        "add the gradients of a repeated word, do not average them: the word was used that many times",
    ]
    got, expected, wrong = [], [], {h: [] for h in hints}
    for (de, ids, V), r in zip(cases, records):
        d = de.shape[-1]
        (dE,) = _outputs(r, ["dE"])
        per_lookup = tuple(dE.shape) == (ids.numel(), d) and torch.allclose(dE.double(), de.reshape(-1, d))
        if per_lookup and ids.numel() != V:
            raise Mistake(
                f"dE must have the shape of E, (vocab_size, d) = ({V}, {d}): one row per word of the "
                "vocabulary, zero for words that were not used, not one row per lookup"
            )
        if tuple(dE.shape) == (int(ids.max()) + 1, d):
            raise Mistake(
                "dE has one row per word of the vocabulary (vocab_size rows), even for words the batch "
                "never used: do not size it by the largest id"
            )
        if dE.ndim == 2 and dE.shape[0] == V and dE.shape[1] != d:
            raise Mistake("the embedding size d is de.shape[-1]: do not hard-code it (it changes from call to call)")
        _expect_shape(dE, (V, d), "dE", "One row per word of the vocabulary.")
        E = torch.zeros(V, d, dtype=D64, requires_grad=True)
        (F.embedding(ids, E) * de).sum().backward()
        got.append(dE)
        expected.append(E.grad)
        last = torch.zeros(V, d, dtype=D64)
        last[ids.reshape(-1)] = de.reshape(-1, d)  # what overwriting leaves
        counts = torch.bincount(ids.reshape(-1), minlength=V).clamp_min(1).to(D64)
        for h, v in zip(hints, [last, E.grad / counts[:, None]]):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, [f"dE for ids {ids.tolist()}" for _, ids, _ in cases])


def _embedding_errors(case, record):
    if record["raised"] == "RuntimeError" and "is invalid for input of size" in record["message"]:
        return "the embedding size d is de.shape[-1]: do not hard-code it (it changes from call to call)"
    return ""


check_embedding_backward = Exercise(
    "2.4",
    "the embedding backward pass",
    "embedding_backward",
    ("de", "ids", "vocab_size"),
    _draw_embedding,
    _judge_embedding,
    errors=_embedding_errors,
)


# ---------------------------------------------------------------- 2.5

TRANSPOSED = "W_hh is transposed: the forward pass is h_prev W_hh^T, so dh_prev = da W_hh"
SKIPPED_TANH = "go back through the tanh before W_hh: dh_prev = da W_hh with da = dh * (1 - h^2), not dh W_hh"
TANH_HINTS = {
    "forgot the derivative of tanh: first da = dh * (1 - h^2), then the weight gradients": "dh",
    "tanh'(a) = 1 - tanh(a)^2 = 1 - h^2 (squared), not 1 - h": "1-h",
    "tanh'(a) = 1 - h^2 uses this step's output h, not h_prev": "h_prev",
}
BPTT_NAMES = ("dW_xh", "dW_hh", "db_h", "dh_prev")


def _draw_bptt(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for B, D, H in [(2, 3, 4), (1, 2, 3), (int(rng.integers(2, 5)), 4, 4), (3, 1, 2), (4, int(rng.integers(5, 7)), 3)]:
        x, h_prev = _randn(rng, B, D), torch.tanh(_randn(rng, B, H))
        W_xh, W_hh, b_h = _randn(rng, H, D), _randn(rng, H, H) * 0.8, _randn(rng, H) * 0.1
        h = torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)
        cases.append([_randn(rng, B, H), h, h_prev, x, W_hh])
    return cases


def _judge_bptt(cases, records):
    answers = {k: [] for k in BPTT_NAMES}
    expected = {k: [] for k in BPTT_NAMES}
    wrong = {k: {h: [] for h in TANH_HINTS} for k in BPTT_NAMES}
    wrong["dW_hh"]["dW_hh multiplies by the input of W_hh at this step, h_prev (h_{t-1}), not by h (h_t)"] = []
    wrong["dW_xh"]["dW_xh is da^T x (shape (H, D)): sum over the batch, not an average"] = []
    wrong["db_h"]["db_h sums da over the batch (dim=0), not the mean"] = []
    wrong["dh_prev"] = {TRANSPOSED: [], SKIPPED_TANH: [], **wrong["dh_prev"]}  # these first: dh W_hh is both
    for (dh, h, h_prev, x, W_hh), r in zip(cases, records):
        B, H = h.shape
        D = x.shape[1]
        out = _outputs(r, BPTT_NAMES)
        for k, value, shape in zip(BPTT_NAMES, out, [(H, D), (H, H), (H,), (B, H)]):
            _expect_shape(value, shape, k, f"It has the shape of {k[1:]}.")

        def grads(da, h_used=h_prev, W=W_hh):
            return dict(dW_xh=da.T @ x, dW_hh=da.T @ h_used, db_h=da.sum(0), dh_prev=da @ W)

        da = dh * (1 - h**2)
        refs = grads(da)
        variants = {"dh": grads(dh), "1-h": grads(dh * (1 - h)), "h_prev": grads(dh * (1 - h_prev**2))}
        for k, value in zip(BPTT_NAMES, out):
            answers[k].append(value)
            expected[k].append(refs[k])
            for hint, key in TANH_HINTS.items():
                wrong[k][hint].append(variants[key][k])
        wrong["dW_hh"]["dW_hh multiplies by the input of W_hh at this step, h_prev (h_{t-1}), not by h (h_t)"].append(
            grads(da, h_used=h)["dW_hh"]
        )
        wrong["dW_xh"]["dW_xh is da^T x (shape (H, D)): sum over the batch, not an average"].append(da.T @ x / B)
        wrong["db_h"]["db_h sums da over the batch (dim=0), not the mean"].append(da.mean(0))
        wrong["dh_prev"][TRANSPOSED].append(da @ W_hh.T)
        wrong["dh_prev"][SKIPPED_TANH].append(dh @ W_hh)
    _judge_by_name(BPTT_NAMES, answers, expected, wrong, [f"(case {i + 1})" for i in range(len(cases))])


check_bptt_step = Exercise(
    "2.5",
    "one step of backpropagation through time",
    "bptt_step",
    ("dh", "h", "h_prev", "x", "W_hh"),
    _draw_bptt,
    _judge_bptt,
)
