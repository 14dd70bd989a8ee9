"""The count tables behind lesson 01's n-gram models, vectorised with numpy.

Each word has an integer id; an n-gram (w_1, ..., w_k) has the integer key
((w_1 * V + w_2) * V + ...) * V + w_k (its digits in base V). ``np.unique`` counts the keys
and ``np.searchsorted`` looks them up, so a table of millions of n-grams is a few sorted arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NGramCounts", "count_ngrams", "fold", "unfold", "lookup", "lookup_one"]


def fold(ids2d: np.ndarray, V: int) -> np.ndarray:
    """Integer key of each row of token ids: digits in base V (empty row -> 0)."""
    key = np.zeros(ids2d.shape[0], dtype=np.int64)
    for col in ids2d.T:
        key = key * V + col
    return key


def unfold(keys: np.ndarray, j: int, V: int) -> np.ndarray:
    """Inverse of ``fold``: the (M, j) token ids of M j-gram keys."""
    powers = V ** np.arange(j - 1, -1, -1, dtype=np.int64)
    return (keys[:, None] // powers) % V


def lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """values[i] where keys[i] == query, else 0. ``keys`` is sorted (a vectorised dict lookup)."""
    if len(keys) == 0:
        return np.zeros(len(query), dtype=values.dtype)
    idx = np.searchsorted(keys, query)
    idx = np.minimum(idx, len(keys) - 1)
    return np.where(keys[idx] == query, values[idx], 0)


def lookup_one(keys: np.ndarray, values: np.ndarray, key: int) -> int:
    """``lookup`` for one key, a plain int: one binary search and no arrays built (callers that count one
    n-gram at a time, 100,000s of times, pay about 20x more per call through ``lookup``)."""
    at = int(np.searchsorted(keys, key))
    return int(values[at]) if at < len(keys) and keys[at] == key else 0


def _group_by_prefix(keys: np.ndarray, values: np.ndarray, V: int):
    """Group sorted j-gram keys by their context h (first j-1 words: key // V).

    Returns (context keys, sum of values per context, number of distinct words per context).
    """
    prefix = keys // V  # still sorted, so each context is one run of equal values
    start = np.flatnonzero(np.diff(prefix, prepend=-1))  # where each run begins
    total = np.add.reduceat(values, start) if len(values) else np.zeros(0, np.int64)
    types = np.diff(np.append(start, len(keys)))
    return prefix[start], total.astype(np.int64), types.astype(np.int64)


@dataclass
class NGramCounts:
    """Counts of the 1..n-grams of a padded training text, for the smoothing functions.

    ``V`` is the base of the keys (every id, ``<s>`` included); ``V_pred`` is |V|, the number of
    tokens a model can predict (words, ``<UNK>`` and ``</s>``; never ``<s>``).
    ``keys[j]``, ``counts[j]``: sorted keys of the j-grams and their counts c(w_1..w_j);
    ``ctx[j]`` = (context keys, c(h .) = sum_w c(h w), N1+(h .) = #{w : c(h w) > 0}) for the
    contexts h of j-1 words (j = 1: the empty context, key 0). ``cont_*[j]`` (j < n, Kneser-Ney
    only) are the same tables for the continuation counts N1+(. g).
    """

    V: int
    order: int
    V_pred: int
    keys: list
    counts: list
    ctx: list
    cont_keys: list
    cont_counts: list
    cont_ctx: list

    def context_and_gram_keys(self, ctx: np.ndarray, w: np.ndarray, j: int):
        """Keys of the context (the last j-1 words of each row of ``ctx``) and of the j-gram (h, w)."""
        L = ctx.shape[1]
        h = fold(ctx[:, L - (j - 1) :], self.V)
        return h, h * self.V + w

    def counts_at(self, ctx: np.ndarray, w: np.ndarray, j: int):
        """c(h w), c(h .) and N1+(h .) for the j-grams ending each row, with h the last j-1 context words."""
        h, hw = self.context_and_gram_keys(ctx, w, j)
        ctx_keys, ctx_total, ctx_types = self.ctx[j]
        return lookup(self.keys[j], self.counts[j], hw), lookup(ctx_keys, ctx_total, h), lookup(ctx_keys, ctx_types, h)

    def continuation_at(self, ctx: np.ndarray, w: np.ndarray, j: int):
        """As ``counts_at`` with the continuation counts N1+(. h w) in place of c(h w) (j < order)."""
        h, hw = self.context_and_gram_keys(ctx, w, j)
        ctx_keys, ctx_total, ctx_types = self.cont_ctx[j]
        return (
            lookup(self.cont_keys[j], self.cont_counts[j], hw),
            lookup(ctx_keys, ctx_total, h),
            lookup(ctx_keys, ctx_types, h),
        )


def count_ngrams(gram_keys: list, order: int, V: int, V_pred: int, continuation: bool) -> NGramCounts:
    """The tables of ``NGramCounts`` from ``gram_keys[j]``, the keys of the j-gram that ends at
    every scored token of the padded training sentences (j = 1..order; ``gram_keys[0]`` unused).

    Counting only the j-grams that end at a scored token (a word or the one ``</s>``) means
    ``<s>`` is never counted as an outcome: c(h .) sums the words that really follow h, and the
    unigram total is N = words + sentences, the same tokens the perplexity scores.
    """
    n = order
    keys_, counts_, ctx_ = [None] * (n + 1), [None] * (n + 1), [None] * (n + 1)
    for j in range(1, n + 1):
        keys, counts = np.unique(gram_keys[j], return_counts=True)
        keys_[j], counts_[j] = keys, counts.astype(np.int64)
        ctx_[j] = _group_by_prefix(keys, counts_[j], V)

    # Kneser-Ney continuation counts for the lower orders j < n: for a j-gram g,
    #   N1+(. g) = number of distinct words seen right before g
    #            = number of distinct (j+1)-grams that end with g.
    cont_keys, cont_counts, cont_ctx = [None], [None], [None]
    if continuation:
        for j in range(1, n):
            suffix = keys_[j + 1] % (V**j)  # drop the first word
            keys, counts = np.unique(suffix, return_counts=True)
            counts = counts.astype(np.int64)
            cont_keys.append(keys)
            cont_counts.append(counts)
            cont_ctx.append(_group_by_prefix(keys, counts, V))
    return NGramCounts(V, n, V_pred, keys_, counts_, ctx_, cont_keys, cont_counts, cont_ctx)
