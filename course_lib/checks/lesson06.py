"""Checks for lesson 06 (masked self-attention): one per exercise, each with targeted hints.

The references are written out here from the lecture's definitions (j <= i is allowed,
-inf before the softmax, 1-based alpha_{i,j}), independently of ``course_lib.attention``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from course_lib.checks import Mistake, exercise, expect, expect_values, is_number


def _lower(T, k=0):
    """[[j <= i + k]]: True where query i may attend to key j (k = 0: the causal mask)."""
    return torch.tensor([[j <= i + k for j in range(T)] for i in range(T)])


@exercise("6.1", "the causal mask")
def check_causal_mask(causal_mask):
    rng = np.random.default_rng()
    sizes = [4, 2, int(rng.integers(3, 9)), 1]  # T = 1 last: there several mistakes look alike
    for T in sizes:
        got = causal_mask(T)
        expect(isinstance(got, torch.Tensor), f"return a torch tensor, got {type(got).__name__}")
        expect(tuple(got.shape) == (T, T), f"for T = {T} the mask must have shape ({T}, {T}), got {tuple(got.shape)}")
        if got.dtype != torch.bool:
            values = set(got.flatten().tolist())
            if float("-inf") in values:
                raise Mistake(
                    "that is an additive float mask (0 and -inf): here return booleans, True where "
                    "attending is allowed, as F.scaled_dot_product_attention takes them"
                )
            raise Mistake(
                f"return a boolean tensor (dtype=torch.bool), True where attending is allowed; got {got.dtype}"
            )
        got = got.cpu()
        if torch.equal(got, _lower(T)):
            continue
        if torch.equal(got, _lower(T).T):
            raise Mistake(
                "the mask is transposed: row i is the query and may see the keys j <= i, "
                "so the True values form the lower triangle (torch.tril), not the upper one"
            )
        if torch.equal(got, ~_lower(T)):
            raise Mistake(
                "True must mean 'may attend' (F.scaled_dot_product_attention's convention); you marked "
                "the blocked future with True, which is nn.MultiheadAttention's attn_mask convention"
            )
        if torch.equal(got, _lower(T, -1)):
            raise Mistake("you masked the diagonal too: a token may attend to itself (j = i), only j > i is the future")
        if torch.equal(got, _lower(T, 1)):
            raise Mistake("off by one: query i may see key i + 1 in your mask, one step into the future")
        if bool(got.all()):
            raise Mistake("nothing is masked: every entry is True, so every token sees the future")
        raise Mistake(f"for T = {T} expected\n{_lower(T).int().numpy()}\n(1 = True), got\n{got.int().numpy()}")


def _reference_row(e, i):
    """alpha_i for 1-based query i: softmax over the keys j <= i, 0 for the future."""
    e = np.asarray(e, dtype=float)
    out = np.zeros_like(e)
    kept = np.exp(e[:i] - e[:i].max())
    out[:i] = kept / kept.sum()
    return out


def _softmax(e):
    z = np.exp(np.asarray(e, dtype=float) - np.max(e))
    return z / z.sum()


@exercise("6.2", "one row of masked attention weights")
def check_masked_row(masked_row):
    rng = np.random.default_rng()
    n = int(rng.integers(5, 8))
    cases = []
    for i in (2, 3, int(rng.integers(2, n)), n - 1):  # 2 <= i < n: first, mistakes that differ everywhere
        cases.append((rng.normal(0, 1.5, size=n).round(2), i))
    got, expected, what = [], [], []
    wrong = {
        "you took the softmax of the whole row: the future keys j > i must get weight 0 (set their scores to "
        "-inf before the softmax)": [],
        "zeroing the future after the softmax leaves the row summing to less than 1: set the future scores to "
        "-inf before the softmax (or renormalise what is left)": [],
        "you masked the diagonal too: query i may attend to itself, only the keys j > i are the future": [],
        "you masked the past instead of the future: query i may attend to the keys j <= i": [],
        "off by one: i counts from 1 as in the lecture, so keys 1..i are allowed (in Python, e_i[:i])": [],
        "a masked score of 0 still gets weight, since exp(0) = 1: set the masked scores to -inf": [],
    }
    unmasked, no_renorm, diagonal, past, off_by_one, zero = wrong
    for e, i in cases:
        given = torch.tensor(e, dtype=torch.float64)
        answer = masked_row(given.clone(), i)
        expect(isinstance(answer, torch.Tensor), f"return a torch tensor of weights, got {type(answer).__name__}")
        expect(tuple(answer.shape) == (n,), f"return one weight per key: shape ({n},), got {tuple(answer.shape)}")
        got.append(answer.detach().cpu().numpy())
        expected.append(_reference_row(e, i))
        what.append(f"alpha_{i} for e_{i} = {e.tolist()}")
        wrong[unmasked].append(_softmax(e))
        wrong[no_renorm].append(_softmax(e) * (np.arange(1, n + 1) <= i))
        wrong[diagonal].append(_reference_row(e, i - 1))
        future = _softmax(e[i - 1 :])
        wrong[past].append(np.concatenate([np.zeros(i - 1), future]))
        wrong[off_by_one].append(_reference_row(e, i + 1))
        wrong[zero].append(_softmax(np.where(np.arange(1, n + 1) <= i, e, 0.0)))
    if any(np.isnan(g).any() for g in got):
        raise Mistake(
            "your weights contain NaN: exp of a large score overflows (use torch.softmax), or a row has "
            "no key left to attend to"
        )
    expect_values(got, expected, wrong, what, rtol=1e-5, atol=1e-7)
    # The first token sees only itself, and scores with ties share the weight equally.
    for e, i, want in ((rng.normal(size=n), 1, np.eye(n)[0]), (np.array([1.0, 1.0] + [-1.0] * (n - 2)), 2, None)):
        answer = masked_row(torch.tensor(e, dtype=torch.float64), i).detach().cpu().numpy()
        want = _reference_row(e, i) if want is None else want
        expect(
            np.allclose(answer, want, atol=1e-6),
            f"alpha_{i} for e_{i} = {np.round(e, 2).tolist()} should be "
            f"{np.round(want, 4).tolist()}, got {np.round(answer, 4).tolist()}",
        )


def _variant(rng, n):
    # Small integer scores, as in the lecture's quiz: ties are common.
    return rng.integers(-2, 3, size=(n, n)).astype(float)


def _alpha(e, i, j, *, mask="causal", axis=1):
    """Reference and its mistakes: alpha_{i,j} (1-based) from the score matrix e."""
    n = len(e)
    allowed = {
        "causal": _lower(n),
        "transposed": _lower(n).T,
        "none": torch.ones(n, n, dtype=torch.bool),
        "diagonal": _lower(n, -1),
    }[mask].numpy()
    scores = np.where(allowed, e, -np.inf)
    with np.errstate(invalid="ignore"):
        z = np.exp(scores - np.max(scores, axis=axis, keepdims=True))
        weights = z / z.sum(axis=axis, keepdims=True)
    return float(weights[i - 1, j - 1])


@exercise("6.3", "the quiz for any score matrix")
def check_alpha(alpha):
    rng = np.random.default_rng()
    n = int(rng.integers(5, 7))
    e = _variant(rng, n)
    # 1-based i, j below n (so a 0-based index still runs), with j < i, j = i and j > i
    pairs = [(2, 1), (3, 3), (2, 4), (int(rng.integers(2, n)), 1), (n - 1, n - 1), (3, 2), (2, 2)]
    got, expected, what = [], [], []
    wrong = {
        "i and j count from 1 as in the lecture: alpha_{i,j} is weights[i - 1, j - 1] in Python": [],
        "the softmax runs over the wrong axis: for each query i (a row), the weights over the keys j sum to 1, "
        "so take the softmax along dim=-1": [],
        "the mask is transposed: query i may see the keys j <= i (the lower triangle)": [],
        "you forgot the mask: that is the attention without masking (the quiz's tempting option C)": [],
        "alpha_{i,j} has the query i as its row and the key j as its column: you swapped i and j": [],
        "you masked the diagonal too: query i may attend to itself (j = i)": [],
    }
    zero_based, axis0, transposed, unmasked, swapped, diagonal = wrong
    for i, j in pairs:
        try:
            answer = alpha(torch.tensor(e), i, j)
        except IndexError:
            raise Mistake(
                "index out of range: i and j count from 1 as in the lecture, so alpha_{i,j} is "
                "weights[i - 1, j - 1] in Python"
            ) from None
        expect(is_number(answer), f"return a single number (a float), got {type(answer).__name__}")
        got.append(float(answer))
        expected.append(_alpha(e, i, j))
        what.append(f"alpha_{{{i},{j}}}")
        wrong[zero_based].append(_alpha(e, i + 1, j + 1))
        wrong[axis0].append(_alpha(e, i, j, axis=0))
        wrong[transposed].append(_alpha(e, i, j, mask="transposed"))
        wrong[unmasked].append(_alpha(e, i, j, mask="none"))
        wrong[swapped].append(_alpha(e, j, i))
        wrong[diagonal].append(_alpha(e, i, j, mask="diagonal") if i > 1 else math.nan)
    if any(math.isnan(g) for g in got):
        raise Mistake("you returned NaN: a row with no key to attend to. Query i may always attend to itself (j = i)")
    matrix = "\n".join("  " + " ".join(f"{x:3.0f}" for x in row) for row in e)
    try:
        expect_values(got, expected, wrong, what, rtol=1e-5, atol=1e-7)
    except Mistake as mistake:
        raise Mistake(f"{mistake}\n(scores e =\n{matrix})") from None
    # The lecture's own quiz, and the last row and column
    lecture = torch.tensor([[1.0, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]])
    expect(
        math.isclose(float(alpha(lecture, 2, 2)), 0.5, abs_tol=1e-6),
        f"on the lecture's matrix alpha_{{2,2}} should be 0.5, got {float(alpha(lecture, 2, 2))}",
    )
    try:
        last = float(alpha(torch.tensor(e), n, n))
    except IndexError:
        raise Mistake(
            f"alpha_{{{n},{n}}} raised IndexError: i and j run from 1 to n = {n}, "
            "so alpha_{i,j} is weights[i - 1, j - 1]"
        ) from None
    expect(
        math.isclose(last, _alpha(e, n, n), rel_tol=1e-5),
        f"alpha_{{{n},{n}}} should be {_alpha(e, n, n):.6f}, got {last}",
    )
