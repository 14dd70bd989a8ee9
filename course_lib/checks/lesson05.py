"""Checks for lesson 05 (attention): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge). Inputs come from a generator seeded by the
draw (the notebook's random state is never touched) with sizes drawn every run; the judge
compares the answer with a reference written here, and with what each known mistake would
give: when every answer matches one mistake, its hint is shown. NaN never passes.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from course_lib.checks import Mistake
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, size_error


def _tensor(record, name, shape):
    value = record["returned"]
    if not _is_tensor(value):
        raise Mistake(f"return a torch.Tensor (the {name}), got {record['type']}")
    if tuple(value.shape) != tuple(shape):
        raise Mistake(f"the {name} should have shape {tuple(shape)}, got {tuple(value.shape)}")
    return value


# --- Exercise 5.1 -----------------------------------------------------------------------------------------


def _scores(Q, K):
    return Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])


def _draw_scores(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    # (T_q, T_k, d, batch dims): non-square first, so swapped keys and queries show in the shape
    shapes = [(2, 5, 4, ()), (3, 6, 9, (2,)), (4, 4, 16, ()), (5, 3, 8, (2, 3))]
    shapes.append(
        (int(rng.integers(2, 6)), int(rng.integers(6, 9)), int(rng.integers(2, 12)), (int(rng.integers(1, 4)),))
    )
    return [[torch.randn(*b, tq, d, generator=g), torch.randn(*b, tk, d, generator=g)] for tq, tk, d, b in shapes]


SCORE_HINTS = [
    "you computed K Q^T: keys and queries are swapped. Row i must hold query i's scores "
    "against every key: Q K^T, shape (..., T_q, T_k)",
    "divide by sqrt(d), the feature size of the queries and keys: without the scale, large d "
    "gives large scores and a softmax that saturates",
    "scale by the square root of d, not by d itself",
    "the scale uses d, the feature size (Q.shape[-1]), not the number of keys T_k",
    "scale by 1/sqrt(d) (divide), not by sqrt(d) (multiply)",
]


def _judge_scores(cases, records):
    got, expected, wrong = [], [], {h: [] for h in SCORE_HINTS}
    for (Q, K), r in zip(cases, records):
        T_q, d = Q.shape[-2:]
        T_k = K.shape[-2]
        if _is_tensor(r["returned"]) and tuple(r["returned"].shape) == (*Q.shape[:-2], T_k, T_q) and T_q != T_k:
            raise Mistake(SCORE_HINTS[0])
        got.append(_tensor(r, "scores", (*Q.shape[:-2], T_q, T_k)))
        raw = Q @ K.transpose(-2, -1)
        expected.append(raw / math.sqrt(d))
        for h, v in zip(
            SCORE_HINTS,
            [K @ Q.transpose(-2, -1) / math.sqrt(d), raw, raw / d, raw / math.sqrt(T_k), raw * math.sqrt(d)],
        ):
            wrong[h].append(v)
    expect_answers(
        got, expected, wrong, [f"the scores for Q {tuple(Q.shape)} and K {tuple(K.shape)}" for Q, K in cases]
    )


def _scores_errors(case, record):
    Q, K = case
    if size_error(record):
        return (
            f"your function fails for Q of shape {tuple(Q.shape)} and K of shape {tuple(K.shape)}; the scores are "
            "Q K^T: transpose K's last two axes (K.transpose(-2, -1)), not K itself"
        )
    return ""


check_attention_scores = Exercise(
    "5.1",
    "scaled dot-product attention scores",
    "attention_scores",
    ("Q", "K"),
    _draw_scores,
    _judge_scores,
    errors=_scores_errors,
)


# --- Exercise 5.2 -----------------------------------------------------------------------------------------


def _weights(scores, mask):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def _draw_weights(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    B, T_k = int(rng.integers(2, 5)), int(rng.integers(4, 8))
    lengths = torch.tensor(rng.integers(1, T_k + 1, size=B))
    lengths[0] = T_k
    padding = (torch.arange(T_k)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T_k): row b sees its first keys
    T = int(rng.integers(3, 7))
    random_mask = torch.rand(3, 5, generator=g) < 0.6
    random_mask[:, 0] = True  # every query may attend to at least one key
    return [
        [torch.randn(B, int(rng.integers(2, 6)), T_k, generator=g), padding],
        [torch.randn(T, T, generator=g), torch.ones(T, T, dtype=torch.bool).tril()],  # causal
        [torch.randn(3, int(rng.integers(4, 9)), generator=g), None],  # no mask
        [torch.randn(2, 3, 5, generator=g), random_mask],
    ]


WEIGHT_HINTS = [
    "softmax over the wrong axis: normalise over the keys, the last axis (dim=-1), so each query's weights sum to 1",
    "softmax over the wrong axis (dim 0): normalise over the keys, the last axis (dim=-1)",
    "the mask is inverted: True means 'may attend' (as in torch's scaled_dot_product_attention), "
    "so fill the scores where the mask is False",
    "a masked score set to 0 still gets weight e^0 = 1 after the softmax: set it to -inf "
    "(float('-inf')) so its weight is exactly 0",
    "you ignored the mask: the masked positions (mask False) must get weight 0",
    "mask before the softmax, not after: zeroing weights after it leaves rows that no longer sum to 1",
]


def _judge_weights(cases, records):
    got, expected, wrong = [], [], {h: [] for h in WEIGHT_HINTS}
    for (scores, mask), r in zip(cases, records):
        got.append(_tensor(r, "attention weights", scores.shape))
        full = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
        masked = scores.masked_fill(~full, float("-inf"))
        expected.append(_weights(scores, mask))
        for h, v in zip(
            WEIGHT_HINTS,
            [
                torch.softmax(masked, dim=-2),
                torch.softmax(masked, dim=0),
                torch.softmax(scores.masked_fill(full, float("-inf")), dim=-1) if mask is not None else None,
                torch.softmax(scores.masked_fill(~full, 0.0), dim=-1),
                torch.softmax(scores, dim=-1),
                torch.softmax(scores, dim=-1) * full,
            ],
        ):
            wrong[h].append(v)
    wrong = {h: v if None not in v else [e if x is None else x for x, e in zip(v, expected)] for h, v in wrong.items()}
    what = [
        f"the weights for scores of shape {tuple(s.shape)}" + (" with a mask" if m is not None else "")
        for s, m in cases
    ]
    expect_answers(got, expected, wrong, what, atol=1e-6)


check_attention_weights = Exercise(
    "5.2", "attention weights: a masked softmax", "attention_weights", ("scores", "mask"), _draw_weights, _judge_weights
)


# --- Exercise 5.3 -----------------------------------------------------------------------------------------


def _draw_context(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    sizes = [
        (2, 5, 3),
        (3, 4, 4),
        (1, 7, 2),
        (int(rng.integers(2, 6)), int(rng.integers(2, 9)), int(rng.integers(2, 9))),
    ]
    return [
        [torch.softmax(torch.randn(B, T, generator=g) * 2, dim=-1), torch.randn(B, T, d, generator=g)]
        for B, T, d in sizes
    ]


CONTEXT_HINTS = [
    "that is mean-pooling: it ignores the attention weights. Weight each value by its alpha_j, then add them up",
    "sum over the positions (axis 1, the T encoder states), not over the features",
    "the weights already sum to 1, so add the weighted values up (sum); the mean divides by T again",
    "you picked the single value with the largest weight (hard attention): take the weighted "
    "average of all the values instead",
]


def _judge_context(cases, records):
    got, expected, wrong = [], [], {h: [] for h in CONTEXT_HINTS}
    for (weights, values), r in zip(cases, records):
        B, T, d = values.shape
        value = r["returned"]
        if _is_tensor(value) and tuple(value.shape) == (B, T, d):
            raise Mistake(
                f"one context vector per sequence: for weights (B, T) = {(B, T)} and values (B, T, d) = {(B, T, d)} "
                f"the context has shape (B, d) = {(B, d)}: sum the weighted values over T"
            )
        weighted = weights.unsqueeze(-1) * values
        variants = [values.mean(1), weighted.sum(-1), weighted.mean(1), values[torch.arange(B), weights.argmax(-1)]]
        if _is_tensor(value) and tuple(value.shape) == (B, T) and T != d:
            if torch.allclose(value.double(), weighted.sum(-1).double(), atol=1e-5):
                raise Mistake(CONTEXT_HINTS[1])
        got.append(_tensor(r, "context vectors", (B, d)))
        expected.append(torch.einsum("bt,btd->bd", weights, values))  # c = sum_j alpha_j h_j
        for h, v in zip(CONTEXT_HINTS, variants):
            wrong[h].append(v if tuple(v.shape) == (B, d) else None)
    expect_answers(got, expected, wrong, [f"the context for values {tuple(v.shape)}" for _, v in cases])


check_context_vector = Exercise(
    "5.3",
    "the context vector: a weighted average of the values",
    "context_vector",
    ("weights", "values"),
    _draw_context,
    _judge_context,
)


# --- Exercise 5.4 -----------------------------------------------------------------------------------------


def _draw_additive(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    # d_q = d_k = d, so that swapped projections still run and are caught by their values
    sizes = [(2, 5, 4, 3), (3, 6, 4, 5), (1, 4, 6, 6)]
    sizes.append((int(rng.integers(1, 5)), int(rng.integers(2, 9)), int(rng.integers(2, 8)), int(rng.integers(2, 8))))
    return [
        [
            torch.randn(B, d, generator=g),
            torch.randn(B, T, d, generator=g),
            torch.randn(a, d, generator=g),
            torch.randn(a, d, generator=g),
            torch.randn(a, generator=g),
        ]
        for B, T, d, a in sizes
    ]


ADDITIVE_HINTS = [
    "you forgot the tanh: e_j = v^T tanh(W_q s + W_k h_j). Without it the scorer is linear and "
    "the query adds the same amount to every key's score",
    "apply tanh to W_q s + W_k h_j, before the dot product with v, not after it",
    "W_q and W_k are swapped: W_q projects the query (the decoder state s), W_k the keys (the encoder states h_j)",
    "the score is the dot product with the learned vector v, not a plain sum over the attention features",
    "the non-linearity is tanh (Bahdanau et al.), not ReLU",
    "the non-linearity is tanh (Bahdanau et al.), not the sigmoid",
]


def _judge_additive(cases, records):
    got, expected, wrong = [], [], {h: [] for h in ADDITIVE_HINTS}
    for (query, keys, W_q, W_k, v), r in zip(cases, records):
        B, T, _ = keys.shape
        got.append(_tensor(r, "scores", (B, T)))
        hidden = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T  # (B, T, a)
        expected.append(
            torch.stack(
                [torch.stack([v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, j]) for j in range(T)]) for b in range(B)]
            )
        )  # the formula, one score at a time
        for h, x in zip(
            ADDITIVE_HINTS,
            [
                hidden @ v,
                torch.tanh(hidden @ v),
                torch.tanh((query @ W_k.T).unsqueeze(1) + keys @ W_q.T) @ v,
                torch.tanh(hidden).sum(-1),
                torch.relu(hidden) @ v,
                torch.sigmoid(hidden) @ v,
            ],
        ):
            wrong[h].append(x)
    expect_answers(got, expected, wrong, [f"the scores for keys {tuple(k.shape)}" for _, k, *_ in cases])


check_additive_scores = Exercise(
    "5.4",
    "additive (Bahdanau) attention scores",
    "additive_scores",
    ("query", "keys", "W_q", "W_k", "v"),
    _draw_additive,
    _judge_additive,
)
