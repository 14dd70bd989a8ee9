"""Checks for lesson 06 (masked self-attention): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge; see :mod:`course_lib.checks.protocol`). Sizes are
drawn every run (a mask of T > 8, rows and matrices of several lengths), so code written for one size
fails on every run. The references are written out here from the lecture's definitions (key j <= i
is allowed, -inf before the softmax, 1-based alpha_{i,j}), independently of ``course_lib.attention``;
each known mistake is computed too, and when every answer matches one, its hint is shown.
Exercises 6.2 and 6.3 share the hints of the mistakes they share.
"""

from __future__ import annotations

import numpy as np
import torch

from course_lib.checks import Mistake
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, size_error


def _lower(T, k=0):
    """[[j <= i + k]]: True where query i may attend to key j (k = 0: the causal mask)."""
    return torch.tensor([[j <= i + k for j in range(T)] for i in range(T)], dtype=torch.bool)


def _tensor_of_shape(record, name, shape):
    value = record["returned"]
    if not _is_tensor(value):
        raise Mistake(f"return a torch.Tensor ({name}), got {record['type']}")
    if tuple(value.shape) != tuple(shape):
        raise Mistake(
            f"{name} should have shape {tuple(shape)}, got {tuple(value.shape)}: take the size from the input, "
            "not a fixed number"
        )
    return value


# The mistakes 6.2 and 6.3 share, and their hints.
UNMASKED = "you forgot the mask: the future keys j > i must get weight 0 (their scores set to -inf before the softmax)"
AFTER = (
    "zeroing the future after the softmax leaves the row summing to less than 1: set the future scores to "
    "-inf before the softmax"
)
DIAGONAL = "you masked the diagonal too: query i may attend to itself (j = i); only the keys j > i are the future"
PAST = "you masked the past instead of the future: query i may attend to the keys j <= i (the lower triangle)"
ZERO = "a masked score of 0 still gets weight, since exp(0) = 1: set the masked scores to -inf"
NO_SOFTMAX = "you returned the masked scores: the weights are their softmax (each row sums to 1)"
LOG = "you returned log-weights (log_softmax): return the weights themselves (softmax)"


def _masked_weights(e: torch.Tensor, allowed: torch.Tensor, axis: int = -1, fill=float("-inf")) -> torch.Tensor:
    """softmax of the scores with the disallowed ones set to ``fill``, along ``axis``."""
    return torch.softmax(e.masked_fill(~allowed, fill), dim=axis)


def _mistakes(e: torch.Tensor, allowed: torch.Tensor) -> dict:
    """What each shared mistake gives for scores e (a row or a matrix) and the allowed keys."""
    with torch.no_grad():
        return {
            UNMASKED: torch.softmax(e, dim=-1),
            AFTER: torch.softmax(e, dim=-1) * allowed,
            ZERO: _masked_weights(e, allowed, fill=0.0),
            NO_SOFTMAX: e.masked_fill(~allowed, float("-inf")),
            LOG: torch.log_softmax(e.masked_fill(~allowed, float("-inf")), dim=-1),
        }


# --- Exercise 6.1 -----------------------------------------------------------------------------------------


def _draw_mask(seed):
    rng = np.random.default_rng(seed)
    # a size above 8 on every draw, one below, and T = 1 (where several mistakes look alike) last
    return [[4], [2], [int(rng.integers(9, 17))], [int(rng.integers(3, 9))], [1]]


MASK_HINTS = [
    "the mask is transposed: row i is the query and may see the keys j <= i, so the True values form the "
    "lower triangle (torch.tril), not the upper one",
    "True must mean 'may attend' (F.scaled_dot_product_attention's convention); you marked the blocked future "
    "with True, which is nn.MultiheadAttention's attn_mask convention",
    "you masked the diagonal too: a token may attend to itself (j = i), only j > i is the future",
    "off by one: query i may see key i + 1 in your mask, one step into the future",
    "nothing is masked: every entry is True, so every token sees the future",
    "nothing may be attended: every entry is False, but each token may see itself and the past",
]


def _judge_mask(cases, records):
    got, expected, wrong = [], [], {h: [] for h in MASK_HINTS}
    for (T,), r in zip(cases, records):
        mask = _tensor_of_shape(r, f"the mask for T = {T}", (T, T))
        if mask.dtype != torch.bool:
            if mask.is_floating_point() and bool(torch.isinf(mask).any()):
                raise Mistake(
                    "that is an additive float mask (0 and -inf): here return booleans, True where attending is "
                    "allowed, as F.scaled_dot_product_attention takes them"
                )
            raise Mistake(
                f"return a boolean tensor (dtype=torch.bool), True where attending is allowed; got {mask.dtype}"
            )
        got.append(mask)
        expected.append(_lower(T))
        for h, v in zip(
            MASK_HINTS,
            [_lower(T).T, ~_lower(T), _lower(T, -1), _lower(T, 1), torch.ones(T, T, dtype=torch.bool), ~_lower(T, T)],
        ):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, [f"the mask for T = {T}" for (T,) in cases], atol=0)


check_causal_mask = Exercise("6.1", "the causal mask", "causal_mask", ("T",), _draw_mask, _judge_mask)


# --- Exercise 6.2 -----------------------------------------------------------------------------------------


def _reference_row(e, i):
    """alpha_i for 1-based query i, from the definition: exp(e_j) / sum_{k <= i} exp(e_k) for j <= i, else 0."""
    e = np.asarray(e, dtype=float)
    out = np.zeros_like(e)
    kept = np.exp(e[:i] - e[:i].max())
    out[:i] = kept / kept.sum()
    return out


def _draw_row(seed):
    rng = np.random.default_rng(seed)
    n_big, n_small = int(rng.integers(9, 15)), int(rng.integers(4, 9))
    rows = [
        (5, 2),
        (7, 3),
        (n_big, int(rng.integers(2, n_big))),
        (n_small, n_small - 1),
        (6, 1),  # the first token sees only itself
        (n_small, n_small),  # the last token sees everything
    ]
    cases = [[torch.tensor(rng.normal(0, 1.5, size=n).round(2)), i] for n, i in rows]
    tie = torch.tensor([1.0, 1.0] + [-1.0] * (n_small - 2))  # two equal scores share the weight equally
    return cases + [[tie, 2]]


ROW_HINTS = {
    "off by one: i counts from 1 as in the lecture, so keys 1..i are allowed (in Python, e_i[:i])": +1,
    DIAGONAL: -1,
}


def _judge_row(cases, records):
    mistakes = [UNMASKED, AFTER, ZERO, NO_SOFTMAX, LOG, PAST, *ROW_HINTS]
    got, expected, wrong = [], [], {h: [] for h in mistakes}
    for (e, i), r in zip(cases, records):
        n = e.shape[0]
        got.append(_tensor_of_shape(r, f"alpha_{i} for a row of n = {n} scores", (n,)))
        expected.append(torch.tensor(_reference_row(e.numpy(), i)))
        j = torch.arange(1, n + 1)
        shared = _mistakes(e, j <= i)
        for h in (UNMASKED, AFTER, ZERO, NO_SOFTMAX, LOG):
            wrong[h].append(shared[h])
        wrong[PAST].append(_masked_weights(e, j >= i))
        for h, shift in ROW_HINTS.items():
            wrong[h].append(_masked_weights(e, j <= i + shift))
    what = [f"alpha_{i} for e_{i} = {e.tolist()}" for e, i in cases]
    expect_answers(got, expected, wrong, what, atol=1e-6)


def _row_errors(case, record):
    e, i = case
    if size_error(record):
        return f"your function fails for a row of n = {e.shape[0]} scores: take n from e_i (e_i.shape[0]), not a fixed size"
    return ""


check_masked_row = Exercise(
    "6.2",
    "one row of masked attention weights",
    "masked_row",
    ("e_i", "i"),
    _draw_row,
    _judge_row,
    errors=_row_errors,
)


# --- Exercise 6.3 -----------------------------------------------------------------------------------------

NUMBER = ("int", "float", "float64", "float32", "ndarray")
LECTURE = [[1.0, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]]  # the quiz's scores: alpha_{2,2} = 0.5


def _draw_alpha(seed):
    rng = np.random.default_rng(seed)
    lecture = torch.tensor(LECTURE)
    n, big = int(rng.integers(5, 8)), int(rng.integers(9, 13))
    e = torch.tensor(rng.integers(-2, 3, size=(n, n)).astype(float))  # small integers, as in the quiz: ties
    e_big = torch.tensor(rng.normal(0, 1.5, size=(big, big)).round(2))
    # 1-based (i, j): j < i, j = i, j > i; below n first (so a 0-based index still runs), then the corners
    pairs = [(2, 1), (3, 3), (2, 4), (int(rng.integers(3, n)), 2), (n - 1, n - 1), (3, 2), (2, 2)]
    cases = [[e, i, j] for i, j in pairs] + [[lecture, 2, 2], [e_big, int(rng.integers(2, big)), 1]]
    cases += [[e_big, big - 1, big - 2], [e, 1, 1]]
    return cases + [[e, n, n], [lecture, 4, 3], [e_big, big, 1]]  # i = n last: a 0-based index fails there


ALPHA_HINTS = [
    "the softmax runs over the wrong axis: for each query i (a row) the weights over the keys j sum to 1, so "
    "take the softmax along dim=-1",
    "alpha_{i,j} has the query i as its row and the key j as its column: you swapped i and j",
    "i and j count from 1 as in the lecture: alpha_{i,j} is weights[i - 1, j - 1] in Python",
]


def _judge_alpha(cases, records):
    mistakes = [UNMASKED, AFTER, ZERO, NO_SOFTMAX, LOG, PAST, DIAGONAL, *ALPHA_HINTS]
    got, expected, wrong = [], [], {h: [] for h in mistakes}
    for (e, i, j), r in zip(cases, records):
        if r["type"] == "Tensor":
            raise Mistake("return a Python float (weights[i - 1, j - 1].item()), not a tensor")
        if r["type"] not in NUMBER or np.ndim(r["returned"]) != 0:
            raise Mistake(f"return a single number (a float), got {r['type']}")
        got.append(float(r["returned"]))
        n = e.shape[0]
        allowed = _lower(n)
        weights = _masked_weights(e, allowed)
        expected.append(float(_reference_row(e[i - 1].numpy(), i)[j - 1]))  # row i from the definition
        shared = _mistakes(e, allowed)
        for h in (UNMASKED, AFTER, ZERO, NO_SOFTMAX, LOG):
            wrong[h].append(float(shared[h][i - 1, j - 1]))
        wrong[PAST].append(float(_masked_weights(e, allowed.T)[i - 1, j - 1]))
        wrong[DIAGONAL].append(float(_masked_weights(e, _lower(n, -1))[i - 1, j - 1]))
        axis0 = _masked_weights(e, allowed, axis=0)[i - 1, j - 1]
        zero_based = weights[i, j] if i < n and j < n else None
        for h, v in zip(ALPHA_HINTS, [axis0, weights[j - 1, i - 1], zero_based]):
            wrong[h].append(None if v is None else float(v))
    wrong = {h: [e if v is None else v for v, e in zip(vs, expected)] for h, vs in wrong.items()}
    what = [f"alpha_{{{i},{j}}} for scores of shape {tuple(e.shape)}" for e, i, j in cases]
    expect_answers(got, expected, wrong, what, atol=1e-6)


def _alpha_errors(case, record):
    e, i, j = case
    if record["raised"] == "IndexError":
        return f"alpha_{{{i},{j}}} raised IndexError for an n = {e.shape[0]} matrix: {ALPHA_HINTS[2]}"
    if size_error(record):
        return f"your function fails for an n = {e.shape[0]} matrix: take n from scores.shape, not a fixed size"
    return ""


check_alpha = Exercise(
    "6.3",
    "the quiz for any score matrix",
    "alpha",
    ("scores", "i", "j"),
    _draw_alpha,
    _judge_alpha,
    errors=_alpha_errors,
)
