"""Checks for lesson 06 (masked self-attention): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge; see :mod:`course_lib.checks.protocol`). Sizes are
drawn every run (a mask of T > 8, rows and matrices of several lengths), so code written for one size
fails on every run. The references are written out here from the lecture's definitions (key j <= i
is allowed, -inf before the softmax, 1-based alpha_{i,j}), independently of ``course_lib.attention``;
each known mistake is computed too, and when every answer matches one, its hint is shown.
Exercises 6.1 and 6.3 share the hints of the mistakes they share.
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


# --- The causal mask (used by lesson 07) -----------------------------------------------------------------------------------------


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


# (No exercise of lesson 06 any more: the causal mask is part of exercise 6.3; lesson 07's check uses these.)


def _reference_row(e, i):
    """alpha_i for 1-based query i, from the definition: exp(e_j) / sum_{k <= i} exp(e_k) for j <= i, else 0."""
    e = np.asarray(e, dtype=float)
    out = np.zeros_like(e)
    kept = np.exp(e[:i] - e[:i].max())
    out[:i] = kept / kept.sum()
    return out


# --- Exercise 6.1 -----------------------------------------------------------------------------------------

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


AHEAD = "the mask is off by one: query i may see key i + 1 in your mask, one step into the future (tril(1))"
ALPHA_HINTS = [
    "the softmax runs over the wrong axis: for each query i (a row) the weights over the keys j sum to 1, so "
    "take the softmax along dim=-1",
    "alpha_{i,j} has the query i as its row and the key j as its column: you swapped i and j",
    "i and j count from 1 as in the lecture: alpha_{i,j} is weights[i - 1, j - 1] in Python",
]


def _judge_alpha(cases, records):
    mistakes = [UNMASKED, AFTER, ZERO, NO_SOFTMAX, LOG, PAST, DIAGONAL, AHEAD, *ALPHA_HINTS]
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
        wrong[AHEAD].append(float(_masked_weights(e, _lower(n, 1))[i - 1, j - 1]))
        axis0 = _masked_weights(e, allowed, axis=0)[i - 1, j - 1]
        # counted from 0: weights[i, j] wherever it exists; past the matrix's edge any answer (clamped, wrapped)
        zero_based = weights[i, j] if i < n and j < n else got[-1]
        for h, v in zip(ALPHA_HINTS, [axis0, weights[j - 1, i - 1], zero_based]):
            wrong[h].append(None if v is None else float(v))
    wrong = {h: [e if v is None else v for v, e in zip(vs, expected)] for h, vs in wrong.items()}
    what = [f"alpha_{{{i},{j}}} for scores of shape {tuple(e.shape)}" for e, i, j in cases]
    expect_answers(got, expected, wrong, what, atol=1e-6)


def _alpha_errors(case, record):
    e, i, j = case
    if record["raised"] == "IndexError" and j > i:  # row i's kept scores alone have no entry j > i
        return (
            f"alpha_{{{i},{j}}} raised IndexError: key j = {j} is in query i = {i}'s future, so its weight is 0; "
            "mask the whole (n, n) matrix, take the softmax of each row, then pick weights[i - 1, j - 1]"
        )
    if record["raised"] == "IndexError":
        return f"alpha_{{{i},{j}}} raised IndexError for an n = {e.shape[0]} matrix: {ALPHA_HINTS[2]}"
    if size_error(record):
        return f"your function fails for an n = {e.shape[0]} matrix: take n from scores.shape, not a fixed size"
    return ""


# torch's softmax over what a mask keeps, in one call, under each of its names: the masked tensors' (the mask
# argument does the filling; softmin is softmax of the negated scores) and the sparse tensors' (what is not stored
# counts as -inf: the sparsity pattern is the mask)
TORCH_MASKED_SOFTMAX = (
    "torch.masked.softmax",
    "torch.masked.log_softmax",
    "torch.masked.softmin",
    "torch.sparse.softmax",
    "torch.sparse.log_softmax",
)


check_alpha = Exercise(
    "6.1",
    "the quiz for any score matrix",
    "alpha",
    ("scores", "i", "j"),
    _draw_alpha,
    _judge_alpha,
    errors=_alpha_errors,
    forbidden=(
        "course_lib.attention.masked_softmax",
        "course_lib.attention.causal_mask",
        "course_lib.attention.decoder_mask",
        "course_lib.attention.scaled_dot_product_attention",
        "torch.nn.functional.scaled_dot_product_attention",
        *TORCH_MASKED_SOFTMAX,
    ),
)


FORBIDDEN_MASKING = (
    "course_lib.attention.masked_softmax",
    "course_lib.attention.causal_mask",
    "course_lib.attention.padding_mask",
    "course_lib.attention.decoder_mask",
    "course_lib.attention.scaled_dot_product_attention",
    "course_lib.attention.MultiHeadAttention",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    # torch's causal-mask helpers (torch.nn.attention's, which builds the rest, is refused as a folder: see
    # borrowed.ATTENTION_PYTHON; tests/test_checks.py lists torch's mask builders against these)
    "torch.nn.Transformer.generate_square_subsequent_mask",
    "torch.nn.modules.transformer._generate_square_subsequent_mask",
    "torch.nn.MultiheadAttention.merge_masks",  # the padding mask and the causal one, combined
    *TORCH_MASKED_SOFTMAX,
)


def _allowed(T, lengths, causal_shift=0, pad_shift=0, on="keys", combine="and", transposed=False):
    """(B, T, T): where query i may attend to key j (the keyword arguments give the known mistakes)."""
    causal = _lower(T, causal_shift)
    causal = causal.T if transposed else causal
    real = torch.arange(T)[None, :] < (torch.as_tensor(lengths)[:, None] + pad_shift)  # (B, T)
    pad = real[:, None, :] if on == "keys" else real[:, :, None]
    if combine == "causal":
        return causal[None].expand(len(lengths), T, T)
    if combine == "padding":
        return pad.expand(len(lengths), T, T)
    return causal[None] & pad if combine == "and" else causal[None] | pad


# --- Exercise 6.2: padding and the future, by hand --------------------------------------------------------

BY_HAND = ("alpha_22", "alpha_33", "alpha_42", "alpha_44")


def _lecture_weights(**mistake):
    """The quiz's scores in a batch of one sentence of 3 real tokens (token 4 is padding)."""
    e = torch.tensor([LECTURE], dtype=torch.float64)
    fill = mistake.pop("fill", float("-inf"))
    allowed = _allowed(4, [3], **mistake)
    return torch.softmax(e.masked_fill(~allowed, fill), dim=-1)[0]


HAND_HINTS = {
    "key 4 is padding: no query may attend to it, so alpha_44 = 0 and it drops out of every denominator": {
        "combine": "causal"
    },
    "mask the padded keys (columns), not the padded query (row 4): query 4 still attends to keys 1..3 "
    "(its output is ignored by the loss)": {"on": "queries"},
    "masked attention also hides the future: query i sees the keys j <= i only": {"combine": "padding"},
    "a masked score is -inf, not 0: exp(0) = 1 would still give it weight": {"fill": 0.0},
}


def _draw_by_hand(seed):
    return [[]]  # the lecture's matrix: nothing to draw


def _judge_by_hand(cases, records):
    value = records[0]["returned"]
    if not isinstance(value, dict) or set(value) != set(BY_HAND):
        raise Mistake(f"return a dict with exactly the keys {list(BY_HAND)}, got {records[0]['type']}")
    bad = [k for k in BY_HAND if type(value[k]) not in (int, float) or not np.isfinite(value[k])]
    if bad:
        raise Mistake(f"each weight is a number (a float); {bad[0]!r} is not")
    right = _lecture_weights()
    pick = {k: float(right[int(k[-2]) - 1, int(k[-1]) - 1]) for k in BY_HAND}
    wrong_keys = [k for k in BY_HAND if not np.isclose(value[k], pick[k], rtol=1e-4, atol=1e-6)]
    if not wrong_keys:
        return
    for hint, mistake in HAND_HINTS.items():
        w = _lecture_weights(**mistake)
        k = wrong_keys[0]
        v = float(w[int(k[-2]) - 1, int(k[-1]) - 1])
        if np.isclose(value[k], v, rtol=1e-4, atol=1e-6) or (np.isnan(v) and value[k] == 0.0):
            raise Mistake(f"{k}: {hint}")
    raise Mistake(
        f"{wrong_keys[0]} is not right: write row {wrong_keys[0][-2]}'s kept scores, the softmax over them, "
        f"then take entry {wrong_keys[0][-1]} (0 if that key is masked)"
    )


check_by_hand = Exercise(
    "6.2",
    "padding and the future, by hand",
    "by_hand",
    (),
    _draw_by_hand,
    _judge_by_hand,
    forbidden=FORBIDDEN_MASKING,
)


# --- Exercise 6.3: masked attention over a padded batch (the build) ---------------------------------------


def _draw_masked_attention(seed):
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    cases = []
    for T in (int(rng.integers(4, 7)), int(rng.integers(9, 13))):  # one T above 8 on every draw: a size typed
        B, d_v = int(rng.integers(2, 5)), int(rng.integers(2, 6))  # as a number (then sliced) fails on it
        lengths = rng.integers(1, T, size=B)  # padded sentences ...
        lengths[int(rng.integers(B))] = T  # ... and one of full length
        scores = torch.randn(B, T, T, generator=g, dtype=torch.float64) * 1.5
        cases.append([scores, torch.randn(B, T, d_v, generator=g, dtype=torch.float64), torch.tensor(lengths)])
    T = int(rng.integers(3, 7))  # an empty sentence beside a full one: its queries see no key at all
    cases.append(
        [
            torch.randn(2, T, T, generator=g, dtype=torch.float64),
            torch.randn(2, T, 2, generator=g, dtype=torch.float64),
            torch.tensor([T, 0]),
        ]
    )
    lecture = torch.tensor([LECTURE], dtype=torch.float64)  # the quiz's matrix, token 4 padding
    cases.append([lecture, torch.randn(1, 4, 3, generator=g, dtype=torch.float64), torch.tensor([3])])
    return cases


MASKING_HINTS = {
    "softmax over the wrong axis: each query's weights (a row) run over the keys j, dim=-1": {"axis": -2},
    "you masked the diagonal too: query i may attend to itself (j = i); only j > i is the future": {"causal_shift": -1},
    "the causal mask is off by one: query i may see key i + 1 in your mask, one step into the future": {
        "causal_shift": 1
    },
    "the padding mask is off by one: key j (counted from 1) is real when j <= lengths[b], "
    "in Python positions j < lengths[b]": {"pad_shift": 1},
    "the padding mask is off by one the other way: the last real token (position lengths[b] - 1 in "
    "Python) is a real key": {"pad_shift": -1},
    "a masked score of 0 still gets weight exp(0) = 1: fill the masked scores with -inf": {"fill": 0.0},
    "the padding mask is on the query axis: mask the padded keys (columns), allowed[b, i, j] needs key j real; "
    "padded queries still attend to the real past": {"on": "queries"},
    "keys and queries are swapped: rows are queries i, columns keys j, and query i may see j <= i "
    "(the lower triangle)": {"transposed": True},
    "you ignored the padding: no query may attend to a padded key": {"combine": "causal"},
    "you ignored the future: the causal mask (j <= i) must hold too": {"combine": "padding"},
    "combine the masks with AND (both must allow), not OR": {"combine": "or"},
    "zeroing after the softmax leaves rows that no longer sum to 1: mask the scores with -inf before it": {
        "after": True
    },
    "a query with no key at all (an empty sentence) got equal weights 1/T: a large negative number instead of "
    "-inf leaves its row of scores all equal; give such a query weights 0 and output 0": {"fill": -1e9, "safe": False},
    "a query with no key at all (an empty sentence) got NaN: softmax of a row of -inf is 0/0; give such "
    "rows weights 0 (fill their scores with 0 before the softmax, then their weights with 0)": {"safe": False},
}


def reference_masked_attention(scores, values, lengths, axis=-1, fill=float("-inf"), after=False, safe=True, **mask):
    """(output, weights): causal AND padding-key masks, -inf, softmax over the keys, weights @ values."""
    T = scores.shape[-1]
    allowed = _allowed(T, lengths, **mask)
    if after:
        weights = torch.softmax(scores, dim=-1) * allowed
    else:
        empty = ~allowed.any(dim=-1, keepdim=True) & safe  # a query with no key at all: weights 0, not NaN
        e = scores.masked_fill(~allowed, fill).masked_fill(empty, 0.0)
        weights = torch.softmax(e, dim=axis).masked_fill(empty, 0.0)
    return weights @ values, weights


def _judge_masked_attention(cases, records):
    got, expected, wrong = [], [], {h: [] for h in MASKING_HINTS}
    outputs = []
    for (scores, values, lengths), r in zip(cases, records):
        B, T, _ = scores.shape
        value = r["returned"]
        if not (isinstance(value, tuple) and len(value) == 2 and all(_is_tensor(x) for x in value)):
            raise Mistake(f"return a tuple (output, weights) of two tensors, got {r['type']}")
        output, weights = value
        if tuple(weights.shape) != (B, T, T):
            raise Mistake(
                f"weights should have the shape of the scores, (B, T, T) = {(B, T, T)}, got {tuple(weights.shape)}"
            )
        if tuple(output.shape) != tuple(values.shape):
            raise Mistake(
                f"the output has one row h_i per query: (B, T, d_v) = {tuple(values.shape)}, got {tuple(output.shape)}"
            )
        got.append(weights)
        expected.append(reference_masked_attention(scores, values, lengths)[1])
        for hint, mistake in MASKING_HINTS.items():
            mistaken = reference_masked_attention(scores, values, lengths, **mistake)[1]
            if not torch.isnan(weights).any():  # a mistake's NaN (e.g. a padded key's column, softmax over the
                mistaken = torch.nan_to_num(mistaken, nan=0.0)  # queries), which the student zeroed
            wrong[hint].append(mistaken)
        outputs.append((output, values))
    what = [f"the weights for lengths {c[2].tolist()}" for c in cases]
    expect_answers(got, expected, wrong, what, atol=1e-6)
    for (output, values), weights in zip(outputs, expected):
        if torch.allclose(output.double(), weights.transpose(-2, -1) @ values, atol=1e-6) and not torch.allclose(
            weights, weights.transpose(-2, -1)
        ):
            raise Mistake("h_i = sum_j alpha_ij v_j: that is weights @ values, not weights^T @ values")
    expect_answers(
        [o for o, _ in outputs], [w @ v for (_, v), w in zip(outputs, expected)], {}, ["the output"] * len(outputs)
    )


def _masked_attention_errors(case, record):
    scores, values, lengths = case
    if size_error(record):
        return (
            f"your function fails for scores {tuple(scores.shape)} and lengths {lengths.tolist()}: take T and B "
            "from the inputs; the causal mask is (T, T), the padding mask (B, T), combined (B, T, T)"
        )
    return ""


check_masked_attention = Exercise(
    "6.3",
    "masked attention over a padded batch",
    "masked_attention",
    ("scores", "values", "lengths"),
    _draw_masked_attention,
    _judge_masked_attention,
    errors=_masked_attention_errors,
    forbidden=FORBIDDEN_MASKING,
)


# --- Exercise 6.4: what leaks (the experiment) ------------------------------------------------------------

LEAK_KEYS = ("padding", "last token", "last token, earlier queries")


def _reference_attention_fn(scores, values, lengths):
    return reference_masked_attention(scores, values, lengths)


def _causal_only_attention_fn(scores, values, lengths):
    """A masked attention that forgets the padding mask: the padded queries see the padded keys, the real ones
    never do (padding is their future). Handed in once per draw, so that a 'padding' measured over every output
    (padded queries too) differs from one over the real outputs only: with a right masked attention both are 0."""
    return reference_masked_attention(scores, values, lengths, combine="causal")


# the masked attention each case hands in (a case's first argument names it)
LEAK_ATTENTIONS = {None: _reference_attention_fn, "causal only": _causal_only_attention_fn}


def _reference_leaks(scores, values, lengths, attention=reference_masked_attention):
    output, _ = attention(scores, values, lengths)
    real = torch.arange(scores.shape[1])[None, :] < lengths[:, None]
    padded = values.clone()
    padded[~real] += 100.0
    moved_padding = (attention(scores, padded, lengths)[0] - output).abs()[real].max().item()
    last = int(lengths[0]) - 1
    changed = values.clone()
    changed[0, last] += 100.0
    moved = (attention(scores, changed, lengths)[0] - output).abs()[0]
    return {
        "padding": moved_padding,
        "last token": moved[last].max().item(),
        "last token, earlier queries": moved[:last].max().item(),
    }


def _draw_leaks(seed):
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    cases = []
    for attention in (None, None, "causal only"):  # the right masked attention twice, then a leaky one
        T, B, d_v = int(rng.integers(4, 9)), int(rng.integers(2, 4)), int(rng.integers(2, 5))
        lengths = rng.integers(1, T, size=B)
        lengths[0] = int(rng.integers(2, T))  # sentence 1 is padded too, and has an earlier query
        scores = torch.randn(B, T, T, generator=g, dtype=torch.float64)
        values = torch.randn(B, T, d_v, generator=g, dtype=torch.float64)
        cases.append([attention, scores, values, torch.tensor(lengths)])
    return cases


LEAK_HINTS = {
    "padding": "changing the padding's values must move no real output: change values[b, j] for j >= lengths[b] "
    "only, and compare the real queries' outputs (j < lengths[b])",
    "last token": "the last real token of sentence 1 is position lengths[0] - 1; its own output (it attends to "
    "itself) moves",
    "last token, earlier queries": "the queries before the last token cannot see it (it is their future): "
    "compare their outputs only, output[0, :last]",
}


def _judge_leaks(cases, records):
    for (attention, scores, values, lengths), r in zip(cases, records):
        value = r["returned"]
        if not isinstance(value, dict) or set(value) != set(LEAK_KEYS):
            raise Mistake(f"return a dict with exactly the keys {list(LEAK_KEYS)}, got {r['type']}")
        leaky = attention is not None
        right = _reference_leaks(
            scores, values, lengths, _causal_only_attention_fn if leaky else reference_masked_attention
        )
        for key in LEAK_KEYS:
            got = value[key]
            if type(got) not in (int, float) or not np.isclose(got, right[key], rtol=1e-4, atol=1e-6):
                if key == "padding" and leaky and type(got) in (int, float) and got > 1e-6:
                    raise Mistake(  # the padded queries' outputs were measured too
                        f"'padding': measure only the real queries' outputs (i < lengths[b]): handed a masked_attention "
                        f"that masks only the future, no real query can see the padding (its future), yet your number "
                        f"is {got:.4g}: the padded queries' outputs moved, and they do not count"
                    )
                if key == "last token" and type(got) in (int, float) and got > 1e-6 and right[key] > 1e-6:
                    raise Mistake(  # the right token moved, by another amount: another change than the text's
                        f"'last token': add exactly 100.0 to every entry of values[0, lengths[0] - 1] (the text's "
                        f"change); your number {got:.4g} is not the {right[key]:.4g} that change gives"
                    )
                raise Mistake(f"{key!r}: {LEAK_HINTS[key]}")


check_leak_test = Exercise(
    "6.4",
    "what leaks",
    "leak_test",
    ("masked_attention", "scores", "values", "lengths"),
    _draw_leaks,
    _judge_leaks,
    forbidden=FORBIDDEN_MASKING,
    materialise=lambda args: [LEAK_ATTENTIONS[args[0]], *args[1:]],  # the recipe names the masked attention
    observe=lambda args, live: [args[0], *live[1:]],  # the name of the masked attention, not the function
)
