"""Smoothing for n-gram language models (lesson 01): one function per method, each P(w | h).

Every function takes the count tables of a fitted model (``NGramCounts``), M contexts ``ctx``
(an (M, L) array of word ids, L < order) and M words ``w`` (ids), and returns the M
probabilities P(w | h). A context shorter than order - 1 words gives the lower-order model,
as in nltk.lm. ``NGramLM(order, smoothing=...)`` picks one of them by name (``SMOOTHING_FUNCTIONS``).

|V| (``table.V_pred``) counts the tokens a model can predict: the kept words, ``<UNK>`` and
``</s>``, never ``<s>`` (it is only ever context), so each P(. | h) sums to 1 over them.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable, Sequence

import numpy as np

from course_lib.ngram_counts import NGramCounts

__all__ = [
    "mle",
    "laplace",
    "add_k",
    "interpolated",
    "interpolation_terms",
    "kneser_ney",
    "default_lambdas",
    "check_lambdas",
    "lambda_grid",
    "SMOOTHING_FUNCTIONS",
]


def mle(table: NGramCounts, ctx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Maximum likelihood: P(w | h) = c(h w) / c(h .), and 0 when h was never seen (as nltk.lm).

    Zero for every n-gram not seen in training, so the perplexity of new text is usually infinite.
    """
    c, total, _ = table.counts_at(ctx, w, ctx.shape[1] + 1)
    return np.where(total > 0, c / np.maximum(total, 1), 0.0)


def add_k(table: NGramCounts, ctx: np.ndarray, w: np.ndarray, k: float = 1.0) -> np.ndarray:
    """Add-k (Lidstone): P(w | h) = (c(h w) + k) / (c(h .) + k |V|), k pseudo-counts for every word."""
    c, total, _ = table.counts_at(ctx, w, ctx.shape[1] + 1)
    return (c + k) / (total + k * table.V_pred)


def laplace(table: NGramCounts, ctx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Laplace (add-one): P(w | h) = (c(h w) + 1) / (c(h .) + |V|), add-k with k = 1."""
    return add_k(table, ctx, w, 1.0)


def interpolation_terms(table: NGramCounts, ctx: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pieces that ``interpolated`` weighs: for j = 1 .. L + 1, rows j - 1 of (P, seen) hold

    * P_1(w) = (c(w) + 1) / (N + |V|), the add-one unigram (every word keeps some probability),
      and P_j(w | h_j) = c(h_j w) / c(h_j .) for j > 1, with h_j the last j - 1 words of the context;
    * seen_j: whether c(h_j .) > 0 (always true for j = 1).
    """
    top = ctx.shape[1] + 1
    p, seen = np.zeros((top, len(w))), np.zeros((top, len(w)), dtype=bool)
    for j in range(1, top + 1):
        c, total, _ = table.counts_at(ctx, w, j)
        if j == 1:
            p[0], seen[0] = (c + 1.0) / (total + table.V_pred), True
        else:
            p[j - 1], seen[j - 1] = c / np.maximum(total, 1), total > 0
    return p, seen


def interpolated(table: NGramCounts, ctx: np.ndarray, w: np.ndarray, lambdas: Sequence[float]) -> np.ndarray:
    """Jelinek-Mercer interpolation, with ``lambdas[j-1]`` = lambda_j weighting the j-gram estimate:

        P(w | h) = sum_j lambda_j [c(h_j .) > 0] P_j(w | h_j)  /  sum_j lambda_j [c(h_j .) > 0]

    with P_j of ``interpolation_terms`` (add-one unigram, MLE above). The weight of a context
    never seen in training is shared among the other orders (the denominator renormalises);
    when every context was seen the denominator is sum_j lambda_j = 1, the textbook formula.
    """
    p, seen = interpolation_terms(table, ctx, w)
    num, weight = np.zeros(len(w)), np.zeros(len(w))
    for j in range(len(p)):
        num += lambdas[j] * seen[j] * p[j]
        weight += lambdas[j] * seen[j]
    return num / weight


def kneser_ney(table: NGramCounts, ctx: np.ndarray, w: np.ndarray, discount: float = 0.75) -> np.ndarray:
    """Interpolated Kneser-Ney, from the uniform distribution 1/|V| up to the top order:

        P_KN(w | h) = max(c_KN(h w) - d, 0) / c_KN(h .) + lambda(h) P_KN(w | h'),
        lambda(h)   = d N1+(h .) / c_KN(h .)

    where h' is h without its first word, d = ``discount``, and c_KN is the count c for the
    model's highest order and the continuation count N1+(. h w) (in how many different
    contexts the n-gram follows) for the lower ones. A context never seen gives lambda(h) = 1.
    """
    d = discount
    p = np.full(len(w), 1.0 / table.V_pred)
    for j in range(1, ctx.shape[1] + 2):
        c, total, types = (table.counts_at if j == table.order else table.continuation_at)(ctx, w, j)
        safe = np.maximum(total, 1)
        p = np.where(total > 0, np.maximum(c - d, 0.0) / safe + d * types / safe * p, p)
    return p


SMOOTHING_FUNCTIONS = {
    "mle": mle,
    "laplace": laplace,
    "add-k": add_k,
    "interpolated": interpolated,
    "kneser-ney": kneser_ney,
}


def default_lambdas(order: int) -> tuple[float, ...]:
    """Weight 2**(j-1) for the j-gram, normalised (1/7, 2/7, 4/7 for a trigram): longer contexts
    are more specific, so they get more weight. A starting point; tune them on validation text."""
    w = [2.0**j for j in range(order)]
    return tuple(x / sum(w) for x in w)


def check_lambdas(lambdas, order: int) -> tuple[float, ...]:
    """``lambdas`` as a tuple of ``order`` weights in [0, 1] summing to 1 (None: ``default_lambdas``)."""
    if lambdas is None:
        return default_lambdas(order)
    if isinstance(lambdas, str) or not isinstance(lambdas, Iterable):
        raise ValueError(f"lambdas must be a sequence of {order} numbers, got {lambdas!r}")
    lambdas = list(lambdas)
    if len(lambdas) != order:
        raise ValueError(
            f"lambdas must have one weight per order 1..{order} ({order} numbers, lambda_1 "
            f"for the unigram first), got {len(lambdas)}"
        )
    if not all(isinstance(x, numbers.Real) and not isinstance(x, bool) and 0 <= x <= 1 for x in lambdas):
        raise ValueError(f"lambdas must be numbers in [0, 1], got {lambdas!r}")
    if abs(sum(lambdas) - 1.0) > 1e-6:
        raise ValueError(f"lambdas must sum to 1, got sum {sum(lambdas)!r} for {lambdas!r}")
    return tuple(float(x) for x in lambdas)


def lambda_grid(order: int, steps: int = 10) -> np.ndarray:
    """Every (lambda_1, ..., lambda_order) on a grid of 1/steps that sums to 1 and has lambda_1 > 0
    (the add-one unigram is what keeps unseen words possible). Shape (G, order)."""
    rows = [c for c in itertools.product(range(1, steps + 1), *[range(steps + 1)] * (order - 1)) if sum(c) == steps]
    return np.array(rows, dtype=np.float64) / steps
