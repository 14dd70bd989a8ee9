"""Checks for lesson 05 (attention): one per exercise, each with hints for the usual mistakes.

Every check draws fresh random inputs (its own generator, so the notebook's seed is not
disturbed) and compares the student's answer with a reference written here, and with what
each known mistake would give: when every answer matches one mistake, its hint is shown.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from course_lib.checks import Mistake, exercise, expect, expect_values


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(int(np.random.default_rng().integers(2**31)))


def _tensor_answer(got, name: str, shape) -> None:
    expect(isinstance(got, torch.Tensor), f"return a torch.Tensor (the {name}), got {type(got).__name__}")
    expect(tuple(got.shape) == tuple(shape), f"the {name} should have shape {tuple(shape)}, got {tuple(got.shape)}")


# --- Exercise 5.1 -----------------------------------------------------------------------------------------


def _scores(Q, K):
    return Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])


@exercise("5.1", "scaled dot-product attention scores")
def check_attention_scores(attention_scores):
    g = _generator()
    # (T_q, T_k, d, batch dims): non-square first, so swapped keys and queries show in the shape
    shapes = [(2, 5, 4, ()), (3, 6, 9, (2,)), (4, 4, 16, ()), (5, 3, 8, (2, 3))]
    got, expected, what = [], [], []
    wrong = {
        "you computed K Q^T: keys and queries are swapped. Row i must hold query i's scores "
        "against every key: Q K^T, shape (..., T_q, T_k)": [],
        "divide by sqrt(d), the feature size of the queries and keys: without the scale, large d "
        "gives large scores and a softmax that saturates": [],
        "scale by the square root of d, not by d itself": [],
        "the scale uses d, the feature size (Q.shape[-1]), not the number of keys T_k": [],
        "scale by 1/sqrt(d) (divide), not by sqrt(d) (multiply)": [],
    }
    swapped, unscaled, by_d, by_T, times = wrong.values()
    for T_q, T_k, d, batch in shapes:
        Q = torch.randn(*batch, T_q, d, generator=g)
        K = torch.randn(*batch, T_k, d, generator=g)
        Q_given, K_given = Q.clone(), K.clone()
        try:
            answer = attention_scores(Q_given, K_given)
        except RuntimeError as exc:
            if "shape" in str(exc) or "size" in str(exc):
                raise Mistake(
                    f"your function fails for Q of shape {tuple(Q.shape)} and K of shape {tuple(K.shape)} "
                    f"({exc}); the scores are Q K^T: transpose K's last two axes "
                    "(K.transpose(-2, -1)), not K itself"
                ) from None
            raise
        expect(torch.equal(Q_given, Q) and torch.equal(K_given, K), "do not change Q or K in place")
        expect(isinstance(answer, torch.Tensor), f"return a torch.Tensor of scores, got {type(answer).__name__}")
        raw = Q @ K.transpose(-2, -1)
        got.append(answer)
        expected.append(raw / math.sqrt(d))
        what.append(f"the scores for Q {tuple(Q.shape)} and K {tuple(K.shape)}")
        swapped.append(K @ Q.transpose(-2, -1) / math.sqrt(d))
        unscaled.append(raw)
        by_d.append(raw / d)
        by_T.append(raw / math.sqrt(T_k))
        times.append(raw * math.sqrt(d))
    expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-5)


# --- Exercise 5.2 -----------------------------------------------------------------------------------------


def _weights(scores, mask):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


@exercise("5.2", "attention weights: a masked softmax")
def check_attention_weights(attention_weights):
    g = _generator()
    cases = []
    # padding: each row of a batch may look at its first n keys (B, 1, T_k) against scores (B, T_q, T_k)
    lengths = torch.tensor([6, 2, 4])
    cases.append((torch.randn(3, 4, 6, generator=g), (torch.arange(6)[None, :] < lengths[:, None])[:, None, :]))
    cases.append((torch.randn(5, 5, generator=g), torch.ones(5, 5, dtype=torch.bool).tril()))  # causal
    cases.append((torch.randn(3, 7, generator=g), None))  # no mask
    cases.append((torch.randn(2, 3, 5, generator=g), torch.rand(3, 5, generator=g) < 0.6))
    cases[-1][1][:, 0] = True  # every query may attend to at least one key
    got, expected, what = [], [], []
    wrong = {
        "softmax over the wrong axis: normalise over the keys, the last axis (dim=-1), so each "
        "query's weights sum to 1": [],
        "softmax over the wrong axis (dim 0): normalise over the keys, the last axis (dim=-1)": [],
        "the mask is inverted: True means 'may attend' (as in torch's scaled_dot_product_attention), "
        "so fill the scores where the mask is False": [],
        "a masked score set to 0 still gets weight e^0 = 1 after the softmax: set it to -inf "
        "(float('-inf')) so its weight is exactly 0": [],
        "you ignored the mask: the masked positions (mask False) must get weight 0": [],
        "mask before the softmax, not after: zeroing weights after it leaves rows that no longer sum to 1": [],
    }
    wrong_axis, wrong_axis0, inverted, zero_fill, ignored, after = wrong.values()
    for scores, mask in cases:
        given = scores.clone()
        answer = attention_weights(given, None if mask is None else mask.clone())
        expect(
            torch.equal(given, scores),
            "do not change the scores in place: masked_fill (no underscore) returns a new tensor",
        )
        _tensor_answer(answer, "attention weights", scores.shape)
        full_mask = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
        got.append(answer)
        expected.append(_weights(scores, mask))
        what.append(
            f"the weights for scores of shape {tuple(scores.shape)}" + (" with a mask" if mask is not None else "")
        )
        masked = scores.masked_fill(~full_mask, float("-inf"))
        wrong_axis.append(_nan_to_zero(torch.softmax(masked, dim=-2)))
        wrong_axis0.append(_nan_to_zero(torch.softmax(masked, dim=0)))
        inverted.append(
            _nan_to_zero(torch.softmax(scores.masked_fill(full_mask, float("-inf")), dim=-1))
            if mask is not None
            else torch.softmax(scores, -1)
        )
        zero_fill.append(torch.softmax(scores.masked_fill(~full_mask, 0.0), dim=-1))
        ignored.append(torch.softmax(scores, dim=-1))
        after.append(torch.softmax(scores, dim=-1) * full_mask)
    if all(close_or_nan(g_, e) for g_, e in zip(got, expected)):
        return
    # a mistake that explains the masked cases only also counts (the unmasked case cannot tell them apart)
    for hint, values in wrong.items():
        if all(close_or_nan(g_, v) for g_, v in zip(got, values)):
            raise Mistake(hint)
    for g_ in got:
        if torch.isnan(g_).any():
            raise Mistake("your weights contain NaN: did a whole row get -inf? Only masked positions get -inf")
    sums = [g_.sum(-1) for g_ in got]
    if not all(torch.allclose(s, torch.ones_like(s), atol=1e-5) for s in sums):
        raise Mistake("each query's weights must sum to 1 over the keys (the last axis)")
    expect_values(got, expected, None, what, rtol=1e-4, atol=1e-6)


def _nan_to_zero(t):
    return torch.nan_to_num(t, nan=0.0)


def close_or_nan(a, b) -> bool:
    """Equal within tolerance, with NaN in the answer matching 0 in a mistake's reference (an all--inf row)."""
    if not isinstance(a, torch.Tensor) or a.shape != b.shape:
        return False
    return bool(torch.allclose(torch.nan_to_num(a.detach().double(), nan=0.0), b.double(), rtol=1e-4, atol=1e-6))


# --- Exercise 5.3 -----------------------------------------------------------------------------------------


@exercise("5.3", "the context vector: a weighted average of the values")
def check_context_vector(context_vector):
    g = _generator()
    got, expected, what = [], [], []
    wrong = {
        "that is mean-pooling: it ignores the attention weights. Weight each value by its alpha_j, "
        "then add them up": [],
        "sum over the positions (axis 1, the T encoder states), not over the features": [],
        "the weights already sum to 1, so add the weighted values up (sum); the mean divides by T again": [],
        "you picked the single value with the largest weight (hard attention): take the weighted "
        "average of all the values instead": [],
    }
    mean_pool, over_features, mean_of_weighted, hard = wrong.values()
    for B, T, d in [(2, 5, 3), (3, 4, 4), (1, 7, 2), (4, 6, 6)]:
        weights = torch.softmax(torch.randn(B, T, generator=g) * 2, dim=-1)
        values = torch.randn(B, T, d, generator=g)
        given_w, given_v = weights.clone(), values.clone()
        answer = context_vector(given_w, given_v)
        expect(
            torch.equal(given_w, weights) and torch.equal(given_v, values),
            "do not change the weights or values in place",
        )
        expect(
            isinstance(answer, torch.Tensor),
            f"return a torch.Tensor (the context vectors), got {type(answer).__name__}",
        )
        weighted = weights.unsqueeze(-1) * values
        got.append(answer)
        expected.append(torch.einsum("bt,btd->bd", weights, values))  # the reference: c = sum_j alpha_j h_j
        what.append(f"the context for weights {tuple(weights.shape)} and values {tuple(values.shape)}")
        mean_pool.append(values.mean(1))
        over_features.append(weighted.sum(-1))
        mean_of_weighted.append(weighted.mean(1))
        hard.append(values[torch.arange(B), weights.argmax(-1)])
    try:
        expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-6)
    except Mistake as mistake:
        if str(mistake) not in wrong and tuple(got[0].shape) != tuple(expected[0].shape):
            raise Mistake(
                f"one context vector per sequence: for weights (B, T) = {(2, 5)} and values (B, T, d) = "
                f"{(2, 5, 3)} the context has shape (B, d) = {(2, 3)}, got {tuple(got[0].shape)}"
            ) from None
        raise


# --- Exercise 5.4 -----------------------------------------------------------------------------------------


@exercise("5.4", "additive (Bahdanau) attention scores")
def check_additive_scores(additive_scores):
    g = _generator()
    got, expected, what = [], [], []
    wrong = {
        "you forgot the tanh: e_j = v^T tanh(W_q s + W_k h_j). Without it the scorer is linear and "
        "the query adds the same amount to every key's score": [],
        "apply tanh to W_q s + W_k h_j, before the dot product with v, not after it": [],
        "W_q and W_k are swapped: W_q projects the query (the decoder state s), W_k the keys (the encoder states h_j)": [],
        "the score is the dot product with the learned vector v, not a plain sum over the attention features": [],
        "the non-linearity is tanh (Bahdanau et al.), not ReLU": [],
        "the non-linearity is tanh (Bahdanau et al.), not the sigmoid": [],
    }
    no_tanh, tanh_after, swapped, no_v, relu, sigmoid = wrong.values()
    for B, T, d, a in [(2, 5, 4, 3), (3, 6, 4, 5), (1, 4, 6, 6)]:
        # d_q = d_k = d, so that swapped projections still run and are caught by their values
        query, keys = torch.randn(B, d, generator=g), torch.randn(B, T, d, generator=g)
        W_q, W_k, v = torch.randn(a, d, generator=g), torch.randn(a, d, generator=g), torch.randn(a, generator=g)
        inputs = [query, keys, W_q, W_k, v]
        copies = [t.clone() for t in inputs]
        answer = additive_scores(*copies)
        expect(all(torch.equal(x, y) for x, y in zip(copies, inputs)), "do not change the inputs in place")
        _tensor_answer(answer, "scores", (B, T))
        hidden = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T  # (B, T, a)
        got.append(answer)
        expected.append(
            torch.stack(
                [torch.stack([v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, j]) for j in range(T)]) for b in range(B)]
            )
        )  # the formula, one score at a time
        what.append(f"the scores for query {tuple(query.shape)} and keys {tuple(keys.shape)}")
        no_tanh.append(hidden @ v)
        tanh_after.append(torch.tanh(hidden @ v))
        swapped.append(torch.tanh((query @ W_k.T).unsqueeze(1) + keys @ W_q.T) @ v)
        no_v.append(torch.tanh(hidden).sum(-1))
        relu.append(torch.relu(hidden) @ v)
        sigmoid.append(torch.sigmoid(hidden) @ v)
    expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-5)
