"""Checks for lesson 02 (backprop by hand), each in three steps (draw, run, judge).

2.1 the softmax Jacobian (a warm-up), 2.2 backprop ninja (the feedforward LM's whole backward pass),
2.3 training with those gradients, 2.4 one step of BPTT (with notebook 02b). torch.autograd computes
the reference in the judge; every known mistake (sign, transpose, a missing (1 - h^2), = instead of
index_add, ...) is computed too, so the hint names it and the first gradient it makes wrong. Sizes are drawn on every run (a
hard-coded size fails every time), a correct float32 solution passes, and results must be tensors.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course_lib.checks import Mistake, probes
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, as_array, expect_answers, size_error

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


def _all_finite(*values) -> bool:
    arrays = [as_array(v) for v in values]
    return all(a is not None and bool(np.all(np.isfinite(a))) for a in arrays)


def _expect_shape(got, shape, name, hint=""):
    if tuple(got.shape) != tuple(shape):
        raise Mistake(f"{name} must have shape {tuple(shape)}, got {tuple(got.shape)}. {hint}".strip())


def _judge_by_name(names, answers, expected, wrong, what):
    """The first wrong tensor, named ("dW_hh differs: ..."), with its mistake's hint or its first difference."""
    for name in names:
        try:
            expect_answers(answers[name], expected[name], wrong.get(name, {}), [f"{name} {w}" for w in what])
        except Mistake as m:
            raise Mistake(f"{name} differs: {m}") from None


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
        "-y_i y_j is an outer product, torch.outer(y, y) (K, K): y * y is only its diagonal, broadcast",
        "the sign is flipped: J = diag(y) - y y^T (the diagonal y_i (1 - y_i) is positive), not y y^T - diag(y)",
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
                torch.diag(y) - y * y,
                torch.outer(y, y) - torch.diag(y),
            ],
        ):
            wrong[h].append(v)
    try:
        expect_answers(
            got, expected, wrong, [f"the Jacobian for {len(z)} logits (case {i + 1})" for i, (z,) in enumerate(cases)]
        )
    except Mistake as mistake:  # a first difference: name the property that fails, if one does
        if " should be " not in str(mistake):
            raise
        raise Mistake(probes.softmax_sum_mistake(got, [z for (z,) in cases]) or str(mistake)) from None


AUTOGRAD = ("torch.Tensor.backward", "torch.autograd.grad", "torch.autograd.backward")

check_softmax_jacobian = Exercise(
    "2.1",
    "the softmax Jacobian",
    "softmax_jacobian",
    ("z",),
    _draw_jacobian,
    _judge_jacobian,
    forbidden=(*AUTOGRAD, "torch.autograd.functional.jacobian", "course_lib.backprop.softmax_jacobian"),
)


# ---------------------------------------------------------------- 2.2 (the build: backprop ninja)

FF_NAMES = ("U", "c", "W", "b", "E")  # in the order the backward pass computes them: the first wrong one is named
FF_SHAPES = {"E": "(V, d)", "W": "(H, n d)", "b": "(H,)", "U": "(V, H)", "c": "(V,)"}


def _ff_params(rng, V, n, d, H):
    return {
        "E": _randn(rng, V, d),
        "W": _randn(rng, H, n * d, scale=1 / np.sqrt(n * d)),
        "b": _randn(rng, H, scale=0.3),
        "U": _randn(rng, V, H, scale=1 / np.sqrt(H)),
        "c": _randn(rng, V, scale=0.3),
    }


def _ff_sizes(rng, count):
    """count sets of V, n, d, H, B; no two sets share n, d, H or B, so no hard-coded size passes, and within
    a set V, H, n d and B all differ, so a transposed or unsummed gradient has the wrong shape."""
    while True:
        ns, ds = rng.permutation([2, 3, 4])[:count], rng.permutation([2, 3, 4, 5])[:count]
        Hs, Bs = rng.permutation(np.arange(3, 9))[:count], rng.permutation(np.arange(3, 9))[:count]
        sizes = [(int(rng.integers(9, 17)), int(n), int(d), int(H), int(B)) for n, d, H, B in zip(ns, ds, Hs, Bs)]
        if all(len({V, H, n * d, B}) == 4 and n != d for V, n, d, H, B in sizes):
            return sizes


def _ff_batch(rng, V, n, B):
    contexts = torch.tensor(rng.integers(0, V - 1, size=(B, n)))  # the last word is never in a context
    contexts[-1, -1] = contexts[0, 0]  # a word used twice in the batch ...
    contexts[1, 1] = contexts[1, 0]  # ... and twice in one context
    return contexts, torch.tensor(rng.integers(0, V, size=B))


SHIFT = 1000.0  # the last case is the first with every logit shifted by this (c + SHIFT): the same softmax


def _draw_ninja(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for V, n, d, H, B in _ff_sizes(rng, 3):
        cases.append([_ff_params(rng, V, n, d, H), *_ff_batch(rng, V, n, B)])
    params, contexts, targets = cases[0]
    cases.append([{**params, "c": params["c"] + SHIFT}, contexts.clone(), targets.clone()])
    return cases


def ff_loss(params, contexts, targets):
    """The feedforward LM's loss written with torch operations, for autograd: mean cross-entropy of the batch."""
    B = contexts.shape[0]
    e = params["E"][contexts].reshape(B, -1)  # (B, n d)
    h = torch.tanh(e @ params["W"].T + params["b"])  # (B, H)
    return F.cross_entropy(h @ params["U"].T + params["c"], targets)


def _autograd_loss_and_grads(params, contexts, targets):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    loss = ff_loss(leaves, contexts, targets)
    grads = torch.autograd.grad(loss, [leaves[k] for k in FF_NAMES])
    return float(loss.detach()), dict(zip(FF_NAMES, grads))


def _wrong_grads(params, contexts, targets, mistake):
    """The gradients a known mistake gives (the judge's own forward, then a backward with that one error)."""
    P = params
    B, n = contexts.shape
    d = P["E"].shape[1]
    e = P["E"][contexts].reshape(B, n * d)
    a = e @ P["W"].T + P["b"]
    h = torch.tanh(a)
    y_hat = torch.softmax(h @ P["U"].T + P["c"], dim=1)
    y = F.one_hot(targets, P["U"].shape[0]).to(D64)
    dz = {"no_one_hot": y_hat / B, "no_batch": y_hat - y, "sign": (y - y_hat) / B}.get(mistake, (y_hat - y) / B)
    dU = dz.T @ (a if mistake == "dU_a" else h)
    dc = dz.mean(0) if mistake == "mean" else dz.sum(0)
    dh = dz @ P["U"]
    da = {"no_tanh": dh, "tanh_1-h": dh * (1 - h), "tanh_a": dh * (1 - a**2)}.get(mistake, dh * (1 - h**2))
    dW = da.T @ e
    db = {"mean": da.mean(0), "db_dh": dh.sum(0)}.get(mistake, da.sum(0))
    de = (da @ P["W"]).reshape(B * n, d)
    dE = torch.zeros_like(P["E"])
    if mistake == "ids_T":
        dE.index_add_(0, contexts.T.reshape(-1), de)  # rows of de in (B, n) order, ids in (n, B) order
    elif mistake == "one_position":
        dE.index_add_(0, contexts[:, 0], de.reshape(B, n * d)[:, :d])  # only the first word of each context
    elif mistake == "assigned":
        dE[contexts.reshape(-1)] = de  # a repeated word keeps one of its gradients
    else:
        dE.index_add_(0, contexts.reshape(-1), de)
    return {"E": dE, "W": dW, "b": db, "U": dU, "c": dc}


NINJA_HINTS = {  # gradient -> {mistake: hint}; a mistake is named at the first gradient it makes wrong
    "U": {
        "sign": "the sign is flipped: dL/dz = (y_hat - y) / B (the loss falls when the true word's logit rises)",
        "no_one_hot": "subtract the one-hot target: dL/dz = (y_hat - y) / B, not y_hat / B",
        "no_batch": "the loss is a mean over the batch: dL/dz = (y_hat - y) / B, divided by the batch size B",
        "dU_a": "dU = dz^T h uses the tanh output h (what U multiplies), not the pre-activation a",
    },
    "c": {"mean": "dc sums dz over the batch (every example used the same c): sum, not mean"},
    "W": {
        "no_tanh": "go back through the tanh: da = dh * (1 - h^2) before dW and de (the (1 - h^2) is missing)",
        "tanh_1-h": "tanh'(a) = 1 - tanh(a)^2 = 1 - h^2 (squared), not 1 - h",
        "tanh_a": "tanh'(a) = 1 - h^2 with h = tanh(a), not 1 - a^2",
    },
    "b": {
        "mean": "db sums da over the batch (every example used the same b): sum, not mean",
        "db_dh": "b is added before the tanh: db sums da = dh * (1 - h^2), not dh",
    },
    "E": {
        "assigned": "a word used twice must get the SUM of its gradients: accumulate (index_add_, or += one row "
        "at a time); dE[ids] = de or dE[ids] += de keeps only one of them",
        "ids_T": "de.reshape(B * n, d) lists the words row by row, as contexts.reshape(-1) does; "
        "contexts.T.reshape(-1) lists them position by position and pairs each piece with the wrong word",
        "one_position": "every one of the n context words gets its piece of de (n pieces of size d), not only the "
        "first: de.reshape(B * n, d) goes with contexts.reshape(-1)",
    },
}


def _ninja_outputs(record, params):
    value = record["returned"]
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[1], dict):
        raise Mistake(f"return (loss, grads) with grads a dict of the gradients by name, got {record['type']}")
    loss, grads = value
    missing = [k for k in ("E", "W", "b", "U", "c") if k not in grads]
    if missing:
        raise Mistake(f"grads must have one entry per parameter, E, W, b, U and c: {', '.join(missing)} missing")
    for k in FF_NAMES:
        g, shape = grads[k], tuple(params[k].shape)
        if not _is_tensor(g):
            raise Mistake(f"return d{k} as a torch tensor, got {type(g).__name__}")
        if tuple(g.shape) == shape[::-1] and len(shape) == 2:
            raise Mistake(
                f"d{k} is transposed: it has the shape of {k}, {FF_SHAPES[k]}; for z = x {k}^T, d{k} = dz^T x"
            )
        if k in "bc" and g.ndim == 2:
            raise Mistake(f"d{k} sums over the batch (dim=0): one entry per unit, shape {FF_SHAPES[k]}")
        _expect_shape(g, shape, f"d{k}", f"A gradient has the shape of its parameter, {FF_SHAPES[k]}.")
    return loss, grads


def _judge_ninja(cases, records):
    losses, got = [], {k: [] for k in FF_NAMES}
    expected_loss, expected = [], {k: [] for k in FF_NAMES}
    wrong = {k: {h: [] for h in hints.values()} for k, hints in NINJA_HINTS.items()}
    outputs = [_ninja_outputs(r, p) for (p, _, _), r in zip(cases, records)]
    # the property first (a shifted copy of case 1 overflows a naive softmax), then the values. The results' dtype
    # is not judged here: the text asks for new tensors in the parameters' dtype, and computing in float32 is allowed
    finite = [_all_finite(loss, *grads.values()) for loss, grads in outputs]
    hint = probes.overflow_mistake(all(finite[:-1]), finite[-1], f"on case {len(cases)} (case 1)")
    if hint:
        raise Mistake(hint)
    for (params, contexts, targets), (loss, grads) in zip(cases, outputs):
        ref_loss, ref = _autograd_loss_and_grads(params, contexts, targets)  # autograd is the referee
        losses.append(loss)
        expected_loss.append(ref_loss)
        for k in FF_NAMES:
            got[k].append(grads[k])
            expected[k].append(ref[k])
            for mistake, hint in NINJA_HINTS[k].items():
                wrong[k][hint].append(_wrong_grads(params, contexts, targets, mistake)[k])
    what = [f"(case {i + 1}: V={p['E'].shape[0]}, B={c.shape[0]})" for i, (p, c, _) in enumerate(cases)]
    loss_wrong = {
        "the loss is the MEAN cross-entropy over the batch, not the sum": [
            ref * c.shape[0] for ref, (_, c, _) in zip(expected_loss, cases)
        ]
    }
    try:
        expect_answers(losses, expected_loss, loss_wrong, [f"the loss {w}" for w in what])
    except Mistake as m:
        raise Mistake(f"the loss differs: {m}") from None
    for k in FF_NAMES:
        try:
            expect_answers(got[k], expected[k], wrong[k], [f"d{k} {w}" for w in what])
        except Mistake as m:
            layout = " should be " in str(m) and probes.rearranged_mistake(
                f"d{k}", got[k], expected[k], f"d{k} has the layout of {k}, {FF_SHAPES[k]}"
            )
            raise Mistake(f"d{k} differs: {layout or m}") from None


check_fflm_backward = Exercise(
    "2.2",
    "backprop ninja: the feedforward language model's backward pass",
    "fflm_loss_and_grads",
    ("params", "contexts", "targets"),
    _draw_ninja,
    _judge_ninja,
    errors=lambda case, record: (
        "a shape mismatch: V, n, d, H and B change on every call, so read them from the tensors "
        "(B, n = contexts.shape; d = E.shape[1]), and check each matrix product's shapes"
        if size_error(record)
        else ""
    ),
    forbidden=(
        *AUTOGRAD,
        "torch.autograd.functional.jacobian",
        "torch.autograd.functional.vjp",
        "course_lib.backprop.linear_backward",
        "course_lib.backprop.activation_backward",
        "course_lib.backprop.cross_entropy_backward",
        "course_lib.backprop.softmax_backward",
        "course_lib.backprop.embedding_backward",
        "course_lib.backprop.autograd_gradients",
        "course_lib.fflm.FeedForwardLM.loss_and_grads",
        "course_lib.checks.lesson02.hand_loss_and_grads",
        "course_lib.checks.lesson02._wrong_grads",
    ),
)


# ---------------------------------------------------------------- 2.3 (the experiment: train with them)


def hand_loss_and_grads(params, contexts, targets):
    """The course's hand-written backward pass, given to the training-loop check (exercise 2.3) so that
    the loop is judged on its own, whatever the student's exercise 2.2 gives."""
    loss = float(ff_loss(params, contexts, targets))
    return loss, _wrong_grads(params, contexts, targets, None)


def _draw_train(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for V, n, d, H, B in _ff_sizes(rng, 2):
        steps = int(rng.integers(3, 6))
        batches = [list(_ff_batch(rng, V, n, B)) for _ in range(steps)]
        lr, penalty = float(rng.choice([0.3, 0.5, 0.7, 2.0])), float(rng.choice([0.05, 0.1, 0.2]))
        cases.append([_ff_params(rng, V, n, d, H), batches, lr, penalty])  # the function given travels as penalty
    return cases


def with_penalty(grads_of, penalty):
    """grads_of's loss plus penalty/2 times the sum of the squared weights, and its gradients: the function
    the check gives to train_sgd, so that a loop calling the student's own fflm_loss_and_grads (not the
    loss_and_grads it is given) is told apart on every draw."""

    def loss_and_grads(params, contexts, targets):
        loss, grads = grads_of(params, contexts, targets)
        squares = sum(float((params[k] ** 2).sum()) for k in FF_NAMES)
        return loss + penalty / 2 * squares, {k: grads[k] + penalty * params[k] for k in FF_NAMES}

    return loss_and_grads


def _materialise_train(args):
    params, batches, lr, penalty = args
    return [params, batches, lr, with_penalty(hand_loss_and_grads, penalty)]


def _sgd(params, batches, lr, *, grads_of=hand_loss_and_grads, sign=1.0, same_batch=False, lr_over_b=False,
         loss_after=False):  # fmt: skip
    """The reference loop (with grads_of=autograd's gradients), and with sign/same_batch/... the known mistakes."""
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches[:1] * len(batches) if same_batch else batches:
        loss, grads = grads_of(params, contexts, targets)
        step = lr / len(targets) if lr_over_b else lr
        for k in FF_NAMES:
            params[k] = params[k] - sign * step * grads[k]
        losses.append(grads_of(params, contexts, targets)[0] if loss_after else loss)
    return losses, params


TRAIN_MISTAKES = {
    "the update goes uphill: gradient DEscent subtracts, params[k] = params[k] - lr * grads[k]": dict(sign=-1.0),
    "each step uses its own batch, in order: batch i for step i": dict(same_batch=True),
    "the gradients are already averaged over the batch (the loss is a mean): step by lr * grad, "
    "without dividing by the batch size again": dict(lr_over_b=True),
    "record the loss that loss_and_grads returned for the batch, before the update (not the loss after it)": dict(
        loss_after=True
    ),
}
IGNORED = (
    "call the loss_and_grads your function is given (the check's adds a weight penalty), not your own "
    "fflm_loss_and_grads: the experiment passes autograd's through it too"
)


def _judge_train(cases, records):
    got_losses, got_params, ref_losses, ref_params = [], [], [], []
    wrong = {h: [] for h in TRAIN_MISTAKES}
    wrong["multiply the gradient by the learning rate lr: params[k] - lr * grads[k]"] = []
    wrong[IGNORED] = []
    for (params, batches, lr, penalty), r in zip(cases, records):
        given = with_penalty(hand_loss_and_grads, penalty)
        value = r["returned"]
        if not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[1], dict):
            raise Mistake(
                f"return (losses, params): the list of losses and the dict of trained parameters, got {r['type']}"
            )
        losses, trained = value
        as_list = as_array(losses)
        if as_list is None or as_list.ndim != 1:
            raise Mistake("losses must be a list of numbers, one per step")
        if len(as_list) != len(batches):
            raise Mistake(
                f"one step (and one loss) per batch, in order: {len(batches)} batches gave {len(as_list)} losses"
            )
        if set(trained) != set(FF_NAMES):
            raise Mistake("return the trained parameters as a dict with the keys E, W, b, U, c")
        still = [k for k in FF_NAMES if _is_tensor(trained[k]) and torch.equal(trained[k].double(), params[k])]
        if still:
            raise Mistake(f"update every parameter: {', '.join(still)} never changed")
        ref_l, ref_p = _sgd(params, batches, lr, grads_of=with_penalty(_autograd_loss_and_grads, penalty))
        got_losses.append(as_list)
        ref_losses.append(np.array(ref_l))
        for k in FF_NAMES:
            got_params.append(trained[k])
            ref_params.append(ref_p[k])
        for hint, kwargs in TRAIN_MISTAKES.items():
            wl, wp = _sgd(params, batches, lr, grads_of=given, **kwargs)
            wrong[hint].append((np.array(wl), [wp[k] for k in FF_NAMES]))
        wl, wp = _sgd(params, batches, 1.0, grads_of=given)
        wrong["multiply the gradient by the learning rate lr: params[k] - lr * grads[k]"].append(
            (np.array(wl), [wp[k] for k in FF_NAMES])
        )
        wl, wp = _sgd(params, batches, lr)  # the model's own gradients, without the penalty
        wrong[IGNORED].append((np.array(wl), [wp[k] for k in FF_NAMES]))
    flat_wrong = {h: [x for losses, ps in v for x in [losses, *ps]] for h, v in wrong.items()}
    got, expected, what = [], [], []
    for i, (_, batches, _, _) in enumerate(cases):
        got += [got_losses[i], *got_params[i * 5 : i * 5 + 5]]
        expected += [ref_losses[i], *ref_params[i * 5 : i * 5 + 5]]
        what += [f"the losses (case {i + 1}, {len(batches)} steps)"] + [
            f"the trained {k} (case {i + 1})" for k in FF_NAMES
        ]
    expect_answers(got, expected, flat_wrong, what)


check_train_sgd = Exercise(
    "2.3",
    "train with your own gradients",
    "train_sgd",
    ("params", "batches", "lr", "loss_and_grads"),
    _draw_train,
    _judge_train,
    materialise=_materialise_train,
    observe=lambda args, live: [*live[:3], args[3]],  # the function given is not data: its recipe stands in
    forbidden=(*AUTOGRAD, "torch.optim.SGD"),
)


# ---------------------------------------------------------------- 2.4 (with notebook 02b)

TRANSPOSED = "W_hh is transposed: the forward pass is h_prev W_hh^T, so dh_prev = da W_hh"
SKIPPED_TANH = "go back through the tanh before W_hh: dh_prev = da W_hh with da = dh * (1 - h^2), not dh W_hh"
TANH_HINTS = {
    "forgot the derivative of tanh: first da = dh * (1 - h^2), then the weight gradients": "dh",
    "tanh'(a) = 1 - tanh(a)^2 = 1 - h^2 (squared), not 1 - h": "1-h",
    "tanh'(a) = 1 - h^2 uses this step's output h, not h_prev": "h_prev",
}
BPTT_NAMES = ("dW_xh", "dW_hh", "db_h", "dh_prev")
# W_hh is square, so its transposed gradient has the right shape on every draw: only this hint tells it apart
W_HH_T = "dW_hh is transposed: dW_hh = da^T h_prev (row i for unit i of h_t), not h_prev^T da"


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
    wrong["dW_hh"][W_HH_T] = []
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
        wrong["dW_hh"][W_HH_T].append(h_prev.T @ da)
        wrong["dW_xh"]["dW_xh is da^T x (shape (H, D)): sum over the batch, not an average"].append(da.T @ x / B)
        wrong["db_h"]["db_h sums da over the batch (dim=0), not the mean"].append(da.mean(0))
        wrong["dh_prev"][TRANSPOSED].append(da @ W_hh.T)
        wrong["dh_prev"][SKIPPED_TANH].append(dh @ W_hh)
    _judge_by_name(BPTT_NAMES, answers, expected, wrong, [f"(case {i + 1})" for i in range(len(cases))])


check_bptt_step = Exercise(
    "2.4",
    "one step of backpropagation through time",
    "bptt_step",
    ("dh", "h", "h_prev", "x", "W_hh"),
    _draw_bptt,
    _judge_bptt,
    forbidden=(*AUTOGRAD, "course_lib.bptt.bptt_step", "course_lib.backprop.activation_backward"),
)


# ---------------------------------------------------------------- 2.5 BPTT over a whole sequence, truncated (with 02b)

LOOP_NAMES = ("dW_xh", "dW_hh", "db_h", "dh_total")
LOOP_HINTS = {  # mistake -> hint; each is computed by _loop_variant on every case
    "no_carry": "the gradient from step t+1 is missing: dL/dh_t = dL_t/dh_t + (da_{t+1} W_hh), sent back each step",
    "ignore_truncate": "truncate is ignored: with truncate=k, no gradient flows from step k, 2k, ... back to the step before",
    "cut_late": "the cut is in the wrong place, one step off: chunks are steps [0, k), [k, 2k), ... from step 0; "
    "zero the carry leaving step t when t > 0 and t % k == 0",
    "from_end": "the cut is in the wrong place, counted from the end: chunks are steps [0, k), [k, 2k), ... from "
    "step 0 (the last one may be shorter); zero the carry leaving step t when t > 0 and t % k == 0",
    "wrap_h0": "at t = 0 the previous state is h0 (hs[t - 1] would wrap around to hs[-1], the last state)",
    "carry_dh": "go back through the tanh before W_hh: the carry is da W_hh with da = dh * (1 - h^2), not dh W_hh",
    "carry_T": "W_hh is transposed in the carry: the forward pass is h_prev W_hh^T, so the carry is da W_hh",
    "no_sum": "the weights are shared by every step: add each step's gradient to dW_xh, dW_hh, db_h (+=, not =)",
    "forward_order": "BPTT runs backward in time, t = T-1, ..., 0: step t needs the carry from step t+1",
}


def _loop_variant(dhs, xs, hs, h0, W_hh, truncate, mistake=None):
    """BPTT by a loop over time, or one known mistake of it (the hints above)."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    dW_xh, dW_hh, db_h = torch.zeros(H, D, dtype=D64), torch.zeros(H, H, dtype=D64), torch.zeros(H, dtype=D64)
    dh_total, carry = torch.zeros_like(hs), torch.zeros_like(h0)
    steps = range(T) if mistake == "forward_order" else reversed(range(T))
    for t in steps:
        dh = dhs[t] + (0 if mistake == "no_carry" else carry)
        dh_total[t] = dh
        h_prev = hs[t - 1] if (t > 0 or mistake == "wrap_h0") else h0
        da = dh * (1 - hs[t] ** 2)
        if mistake == "no_sum":
            dW_xh, dW_hh, db_h = da.T @ xs[t], da.T @ h_prev, da.sum(0)
        else:
            dW_xh, dW_hh, db_h = dW_xh + da.T @ xs[t], dW_hh + da.T @ h_prev, db_h + da.sum(0)
        carry = {"carry_dh": dh @ W_hh, "carry_T": da @ W_hh.T}.get(mistake, da @ W_hh)
        cut_at = {"cut_late": t + 1, "from_end": T - t}.get(mistake, t)
        if truncate and mistake != "ignore_truncate" and t > 0 and cut_at % truncate == 0:
            carry = torch.zeros_like(carry)
    return {"dW_xh": dW_xh, "dW_hh": dW_hh, "db_h": db_h, "dh_total": dh_total}


def _autograd_loop(dhs, xs, h0, W_xh, W_hh, b_h, truncate):
    """The reference: autograd through the forward pass, h.detach() at every chunk start, and dL/dh_t of each h_t."""
    W_xh, W_hh, b_h = (p.detach().clone().requires_grad_() for p in (W_xh, W_hh, b_h))
    h, states, loss = h0, [], 0
    for t in range(xs.shape[0]):
        if truncate and t > 0 and t % truncate == 0:
            h = h.detach()
        h = torch.tanh(xs[t] @ W_xh.T + h @ W_hh.T + b_h)
        h.retain_grad()
        states.append(h)
        loss = loss + (h * dhs[t]).sum()
    loss.backward()
    return {"dW_xh": W_xh.grad, "dW_hh": W_hh.grad, "db_h": b_h.grad, "dh_total": torch.stack([s.grad for s in states])}


def _draw_loop(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for truncate in (None, int(rng.integers(2, 4)), int(rng.integers(2, 4)), None):
        T, B, D, H = int(rng.integers(5, 9)), int(rng.integers(1, 4)), int(rng.integers(2, 5)), int(rng.integers(2, 6))
        if truncate and T % truncate == 0:  # a last chunk shorter than k: chunks counted from the end then differ
            T += 1
        xs, h0 = _randn(rng, T, B, D), torch.tanh(_randn(rng, B, H))
        W_xh, W_hh, b_h = _randn(rng, H, D) * 0.7, _randn(rng, H, H) * 0.7, _randn(rng, H) * 0.1
        h, hs = h0, []
        for t in range(T):
            h = torch.tanh(xs[t] @ W_xh.T + h @ W_hh.T + b_h)
            hs.append(h)
        cases.append([_randn(rng, T, B, H), xs, torch.stack(hs), h0, W_hh, truncate, W_xh, b_h])
    return cases


def _loop_args(args):
    return args[:6]  # W_xh and b_h are for the judge's autograd reference only: BPTT does not need them


def _judge_loop(cases, records):
    answers = {k: [] for k in LOOP_NAMES}
    expected = {k: [] for k in LOOP_NAMES}
    wrong = {k: {hint: [] for hint in LOOP_HINTS.values()} for k in LOOP_NAMES}
    for (dhs, xs, hs, h0, W_hh, truncate, W_xh, b_h), r in zip(cases, records):
        T, B, H = hs.shape
        out = _outputs(r, LOOP_NAMES)
        hint = probes.dtype_mistake(dict(zip(LOOP_NAMES, out)), str(hs.dtype))
        if hint:
            raise Mistake(hint)
        for k, value, shape in zip(LOOP_NAMES, out, [(H, xs.shape[2]), (H, H), (H,), (T, B, H)]):
            _expect_shape(value, shape, k, "It has the shape of the weight (for dh_total: of hs).")
        refs = _autograd_loop(dhs, xs, h0, W_xh, W_hh, b_h, truncate)
        variants = {m: _loop_variant(dhs, xs, hs, h0, W_hh, truncate, m) for m in LOOP_HINTS}
        for k, value in zip(LOOP_NAMES, out):
            answers[k].append(value)
            expected[k].append(refs[k])
            for m, hint in LOOP_HINTS.items():
                wrong[k][hint].append(variants[m][k])
    what = [f"(case {i + 1}, truncate={c[5]})" for i, c in enumerate(cases)]
    # dh_total first: the carry's mistakes show there before they reach the weights
    _judge_by_name(("dh_total", "dW_hh", "dW_xh", "db_h"), answers, expected, wrong, what)


check_bptt_loop = Exercise(
    "2.5",
    "backpropagation through time over a sequence, truncated",
    "bptt_backward",
    ("dhs", "xs", "hs", "h0", "W_hh", "truncate"),
    _draw_loop,
    _judge_loop,
    materialise=_loop_args,
    forbidden=(*AUTOGRAD, "course_lib.bptt.rnn_backward", "course_lib.bptt.bptt_step"),
)
