"""A Kneser-Ney ``NGramLM`` written as an ARPA file, the text format of SRILM and KenLM (lesson 01).

An ARPA file stores, for each order j, the j-grams the model saw with log10 P(w | h) and a
back-off weight log10 bow(h w); a j-gram it does not list is scored as
bow(h) * P(w | h without its first word). Interpolated Kneser-Ney has exactly that shape:
P_KN(w | h) = max(c - d, 0) / c(h .) + lambda(h) P_KN(w | h'), and for an unseen (h, w) the
first term is 0, so listing P_KN for every j-gram with a (continuation) count and
bow(h) = lambda(h) writes the model exactly. KenLM then scores text as ``NGramLM`` does.

The n-1 ``<s>`` of the standard count: KenLM's own sentence start is one ``<s>``; to give it
the model's n-1, score ``"<s> " * (n-1) + sentence`` with ``bos=False`` and drop the first
n-1 scores (those of the ``<s>`` themselves, listed with log10 P = -99 as SRILM does).
"""

from __future__ import annotations

import numpy as np

from course_lib.ngram import BOS, UNK, NGramLM
from course_lib.ngram_counts import unfold

__all__ = ["to_arpa"]

NEVER = -99.0  # SRILM's and KenLM's log10 probability of a token that is never predicted (<s>)


def to_arpa(lm: NGramLM, path) -> None:
    """Write the fitted Kneser-Ney model ``lm`` to ``path`` in ARPA format (``<UNK>`` is ``<unk>``)."""
    if not getattr(lm, "_fitted", False) or lm.smoothing != "kneser-ney":
        raise ValueError("lm must be a fitted NGramLM with smoothing='kneser-ney' (its ARPA form is exact)")
    n, V, table, d = lm.order, lm._V, lm._table, lm.discount
    names = ["<unk>" if w == UNK else w for w in lm.vocab]
    bos = lm.word_to_id[BOS]
    levels = []
    for j in range(1, n + 1):
        if j == 1:
            keys = np.array([i for i in range(V) if i != bos], dtype=np.int64)
        else:
            keys = table.keys[n] if j == n else table.cont_keys[j]
        grams = unfold(keys, j, V)
        p = lm._prob_ids(grams[:, :-1], grams[:, -1]) if j == n else _level_prob(lm, grams, j)
        entries = {tuple(g): float(np.log10(q)) for g, q in zip(grams.tolist(), p)}
        if j < n or j == 1:  # <s> and the all-<s> contexts (<s> <s> ...) are contexts, never an outcome
            entries.setdefault((bos,) * j, NEVER)
        levels.append(entries)
    # back-off weights: lambda(h) = d N1+(h .) / c(h .) of the level above, for every listed h
    for j in range(1, n):
        ctx_keys, total, types = table.ctx[j + 1] if j + 1 == n else table.cont_ctx[j + 1]
        bows = dict(zip(ctx_keys.tolist(), (d * types / total).tolist()))
        for gram in levels[j - 1]:
            key = 0
            for i in gram:
                key = key * V + i
            lam = bows.get(key)
            levels[j - 1][gram] = (levels[j - 1][gram], None if lam is None else float(np.log10(lam)))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\\data\\\n")
        for j, entries in enumerate(levels, 1):
            f.write(f"ngram {j}={len(entries)}\n")
        for j, entries in enumerate(levels, 1):
            f.write(f"\n\\{j}-grams:\n")
            for gram, value in sorted(entries.items()):
                logp, logbow = value if isinstance(value, tuple) else (value, None)
                words = " ".join(names[i] for i in gram)
                f.write(f"{logp:.10f}\t{words}" + (f"\t{logbow:.10f}" if logbow is not None else "") + "\n")
        f.write("\n\\end\\\n")


def _level_prob(lm: NGramLM, grams: np.ndarray, j: int) -> np.ndarray:
    """P_KN at level j < n (continuation counts) for each row of ``grams``: the recursion of
    ``smoothing.kneser_ney`` stopped at level j."""
    table, d = lm._table, lm.discount
    ctx, w = grams[:, :-1], grams[:, -1]
    p = np.full(len(w), 1.0 / table.V_pred)
    for level in range(1, j + 1):
        c, total, types = table.continuation_at(ctx, w, level)
        safe = np.maximum(total, 1)
        p = np.where(total > 0, np.maximum(c - d, 0.0) / safe + d * types / safe * p, p)
    return p
