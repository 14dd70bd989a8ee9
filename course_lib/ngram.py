"""N-gram language models, smoothing and perplexity (lesson 01).

A language model gives P(w | h), the probability of the next word w after a history h.
An n-gram model makes the Markov assumption of the lecture and keeps only the last n-1
words of the history:

    P(w_k | w_{1:k-1})  ~  P(w_k | w_{k-n+1:k-1})

and estimates it from counts. We evaluate it with the cross-entropy J (bits per predicted
token) on a test set and its perplexity 2 ** J (lower is better).

Conventions follow ``nltk.lm`` so that you can check every number against it:

* every sentence is padded with n-1 ``<s>`` on the left and n-1 ``</s>`` on the right
  (``nltk.lm.preprocessing.pad_both_ends``) and all 1..n-grams of the padded sentence are
  counted (``padded_everygram_pipeline``);
* words seen fewer than ``unk_cutoff`` times in training, and words never seen, become
  ``<UNK>`` (``nltk.lm.Vocabulary``); the vocabulary holds ``<UNK>``, ``<s>`` and ``</s>``;
* ``perplexity(sentences)`` scores every order-n n-gram of the padded test sentences, i.e.
  ``nltk_model.perplexity(ngrams(pad_both_ends(sent, n), n) for all sentences)``.

Counting and scoring are vectorised with numpy: each word gets an integer id, an n-gram
(w_1, ..., w_k) gets the integer key ((w_1 * V + w_2) * V + ...) * V + w_k (its digits in
base V), ``np.unique`` counts the keys and ``np.searchsorted`` looks them up.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain, repeat

import numpy as np

__all__ = [
    "NGramLM",
    "SMOOTHINGS",
    "BOS",
    "EOS",
    "UNK",
    "NotFittedError",
    "ZeroProbabilityWarning",
]

BOS, EOS, UNK = "<s>", "</s>", "<UNK>"
SMOOTHINGS = ("mle", "laplace", "add-k", "interpolated", "kneser-ney")
_INT64_MAX = np.iinfo(np.int64).max


class NotFittedError(ValueError, RuntimeError):
    """The model was used before ``fit`` was called."""


class ZeroProbabilityWarning(UserWarning):
    """The model gave probability 0 to a test n-gram, so the perplexity is infinite."""


# --------------------------------------------------------------------------------------
# Input checks: a clear message that names the argument and what was expected.
# --------------------------------------------------------------------------------------
def _check_sentences(sentences, name: str = "sentences") -> list[Sequence[str]]:
    """Return `sentences` as a list of token sequences, or raise a ValueError."""
    if isinstance(sentences, str):
        raise ValueError(
            f"{name} must be a list of sentences, each a list of tokens "
            f"(e.g. [['the', 'cat'], ['a', 'dog']]), got a single string {sentences[:40]!r}. "
            f"Split it first, e.g. [text.split()] for words or [list(text)] for characters."
        )
    if not isinstance(sentences, Iterable):
        raise ValueError(f"{name} must be a list of sentences (lists of tokens), got {type(sentences).__name__}")
    sents = list(sentences)
    for i, sent in enumerate(sents):
        if type(sent) is list or type(sent) is tuple:  # the usual case, checked fast
            continue
        if isinstance(sent, str):
            raise ValueError(
                f"{name}[{i}] is a string ({sent[:40]!r}); each sentence must be a list of "
                f"tokens, e.g. {sent.split()[:4]!r} (words) or {list(sent)[:4]!r} (characters)"
            )
        if not isinstance(sent, Sequence):
            if isinstance(sent, Iterable):
                sents[i] = list(sent)
            else:
                raise ValueError(f"{name}[{i}] must be a list of tokens, got {type(sent).__name__}")
    return sents


def _check_tokens(tokens: Iterable, name: str) -> None:
    """Every distinct token must be a string (checked on the set, so it is cheap)."""
    for tok in tokens:
        if not isinstance(tok, str):
            raise ValueError(f"{name} must contain string tokens, found {tok!r} ({type(tok).__name__})")


def _check_context(context, name: str = "context") -> list[str]:
    if isinstance(context, str):
        raise ValueError(
            f"{name} must be a sequence of tokens such as ['the', 'cat'], not a string "
            f"({context!r}); use {context.split()!r} or {list(context)!r}"
        )
    if context is None:
        return []
    try:
        context = list(context)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of tokens, got {type(context).__name__}") from None
    _check_tokens(context, name)
    return context


def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """values[i] where keys[i] == query, else 0. `keys` is sorted (vectorised dict lookup)."""
    if len(keys) == 0:
        return np.zeros(len(query), dtype=values.dtype)
    idx = np.searchsorted(keys, query)
    idx = np.minimum(idx, len(keys) - 1)
    return np.where(keys[idx] == query, values[idx], 0)


def _group_by_prefix(keys: np.ndarray, values: np.ndarray, V: int):
    """Group sorted j-gram keys by their context h (first j-1 words: key // V).

    Returns (context keys, sum of values per context, number of distinct words per context).
    """
    prefix = keys // V  # still sorted, so each context is one run of equal values
    start = np.flatnonzero(np.diff(prefix, prepend=-1))  # where each run begins
    total = np.add.reduceat(values, start) if len(values) else np.zeros(0, np.int64)
    types = np.diff(np.append(start, len(keys)))
    return prefix[start], total.astype(np.int64), types.astype(np.int64)


def _add_count(keys: np.ndarray, counts: np.ndarray, key: int, amount: int):
    """Add `amount` to the count of `key` in sorted (keys, counts), inserting it if absent."""
    i = int(np.searchsorted(keys, key))
    if i < len(keys) and keys[i] == key:
        counts = counts.copy()
        counts[i] += amount
        return keys, counts
    return np.insert(keys, i, key), np.insert(counts, i, amount)


class NGramLM:
    """An n-gram language model P(w | last n-1 words), as in lesson 01.

    smoothing:
      * ``"mle"``: P(w | h) = c(h w) / c(h .), zero for unseen n-grams (infinite perplexity);
      * ``"laplace"``: add one to every count, (c(h w) + 1) / (c(h .) + |V|);
      * ``"add-k"``: add ``k`` to every count, (c(h w) + k) / (c(h .) + k |V|);
      * ``"interpolated"``: Jelinek-Mercer, sum_j lambda_j P_MLE(w | last j-1 words), with
        ``lambdas[j-1]`` weighting the j-gram estimate (J&M order: lambda_1 is the unigram);
        the unigram estimate is add-one smoothed so that unseen words keep a non-zero
        probability, and the weight of a context never seen in training is shared among the
        lower orders (renormalised);
      * ``"kneser-ney"``: interpolated Kneser-Ney with absolute ``discount`` and continuation
        counts for the lower orders, recursing down to the uniform distribution 1/|V|.

    >>> lm = NGramLM(2, smoothing="laplace").fit([["a", "b"], ["a", "c"]])
    >>> round(lm.prob("b", ["a"]), 4)   # (c(a b) + 1) / (c(a .) + |V|) = 2 / (2 + 6)
    0.25
    """

    def __init__(
        self,
        order: int,
        smoothing: str = "mle",
        k: float = 1.0,
        discount: float = 0.75,
        lambdas: Sequence[float] | None = None,
        unk_cutoff: int = 1,
    ):
        if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order < 1:
            raise ValueError(f"order must be an integer >= 1, got {order!r}")
        if not isinstance(smoothing, str) or smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {', '.join(repr(s) for s in SMOOTHINGS)}, got {smoothing!r}")
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (0 < k < math.inf):
            raise ValueError(f"k (the add-k pseudo-count) must be a number > 0, got {k!r}")
        if isinstance(discount, bool) or not isinstance(discount, numbers.Real) or not (0 < discount < 1):
            raise ValueError(
                f"discount (the Kneser-Ney absolute discount d) must be in the open interval (0, 1), got {discount!r}"
            )
        if isinstance(unk_cutoff, bool) or not isinstance(unk_cutoff, numbers.Integral) or unk_cutoff < 1:
            raise ValueError(f"unk_cutoff must be an integer >= 1, got {unk_cutoff!r}")
        self.order = int(order)
        self.smoothing = smoothing
        self.k = float(k)
        self.discount = float(discount)
        self.unk_cutoff = int(unk_cutoff)
        self.lambdas = self._check_lambdas(lambdas, self.order)
        self._fitted = False

    @staticmethod
    def _check_lambdas(lambdas, order: int) -> tuple[float, ...]:
        if lambdas is None:
            # Default: weight 2**(j-1) for the j-gram, normalised (e.g. 1/7, 2/7, 4/7 for a
            # trigram): longer contexts are more specific, so they get more weight.
            w = [2.0**j for j in range(order)]
            return tuple(x / sum(w) for x in w)
        if isinstance(lambdas, str) or not isinstance(lambdas, Iterable):
            raise ValueError(f"lambdas must be a sequence of {order} numbers, got {lambdas!r}")
        lambdas = list(lambdas)
        if len(lambdas) != order:
            raise ValueError(
                f"lambdas must have one weight per order 1..{order} ({order} numbers, lambda_1 "
                f"for the unigram first), got {len(lambdas)}"
            )
        if not all(isinstance(x, numbers.Real) and 0 <= x <= 1 for x in lambdas):
            raise ValueError(f"lambdas must be numbers in [0, 1], got {lambdas!r}")
        if abs(sum(lambdas) - 1.0) > 1e-6:
            raise ValueError(f"lambdas must sum to 1, got sum {sum(lambdas)!r} for {lambdas!r}")
        return tuple(float(x) for x in lambdas)

    def __repr__(self) -> str:
        extra = {
            "add-k": f", k={self.k}",
            "kneser-ney": f", discount={self.discount}",
            "interpolated": f", lambdas={tuple(round(x, 4) for x in self.lambdas)}",
        }
        status = f"|V|={self.vocab_size}" if self._fitted else "not fitted"
        return f"NGramLM(order={self.order}, smoothing={self.smoothing!r}{extra.get(self.smoothing, '')}) [{status}]"

    # ----------------------------------------------------------------------------------
    # Training: build the vocabulary, pad, count all 1..n-grams.
    # ----------------------------------------------------------------------------------
    def fit(self, sentences: Iterable[Sequence[str]]) -> NGramLM:
        """Count the 1..n-grams of the padded training sentences (lists of tokens); returns self."""
        sents = _check_sentences(sentences)
        if not sents:
            raise ValueError("sentences is empty: fit needs at least one sentence (a list of tokens)")
        n = self.order
        try:
            word_counts = Counter(chain.from_iterable(sents))
        except TypeError as err:  # e.g. a list inside a sentence
            raise ValueError(f"sentences must be lists of string tokens ({err})") from None
        _check_tokens(word_counts, "sentences")
        if not word_counts:
            raise ValueError("sentences contains no tokens: every sentence is empty")

        # Vocabulary as nltk.lm.Vocabulary(unk_cutoff): words seen >= unk_cutoff times, plus
        # <UNK> and (for n > 1) the padding symbols. Most frequent words first.
        specials = [UNK] + ([BOS, EOS] if n > 1 else [])
        words = [w for w, c in word_counts.most_common() if c >= self.unk_cutoff and w not in specials]
        self.vocab: list[str] = specials + words
        self.word_to_id: dict[str, int] = {w: i for i, w in enumerate(self.vocab)}
        V = len(self.vocab)
        if V**n > _INT64_MAX:
            raise ValueError(
                f"order={n} is too large for a vocabulary of {V} tokens: an n-gram key needs "
                f"V**order = {V**n:.3g} < 2**63. Use a smaller order or a larger unk_cutoff."
            )
        self._V = V
        self._unk, self._bos, self._eos = 0, self.word_to_id.get(BOS, -1), self.word_to_id.get(EOS, -1)
        self.n_sentences = len(sents)
        self.n_tokens = sum(word_counts.values())

        padded, off, plen = self._pad(sents)
        # _keys[j], _counts[j]: sorted keys of all j-grams and their counts c(w_1..w_j).
        # _ctx[j] = (context keys, c(h .) = sum_w c(h w), N1+(h .) = #{w : c(h w) > 0})
        # for the j-gram contexts h of j-1 words (j = 1: the empty context, key 0).
        self._keys, self._counts, self._ctx = [None] * (n + 1), [None] * (n + 1), [None] * (n + 1)
        keys, counts = np.unique(self._window_keys(padded, off, plen, n), return_counts=True)
        self._keys[n], self._counts[n] = keys, counts.astype(np.int64)
        # The shorter j-grams need no more sorting: every j-gram of a padded sentence is the
        # start of a (j+1)-gram, except the last one, which is all </s> (one per sentence):
        #   c(h) = sum_w c(h w) + [h = </s> ... </s>] * (number of sentences)
        for j in range(n, 0, -1):
            self._ctx[j] = _group_by_prefix(self._keys[j], self._counts[j], V)
            if j > 1:
                keys, counts, _ = self._ctx[j]
                eos_key = self._fold(np.full((1, j - 1), self._eos, dtype=np.int64))[0]
                self._keys[j - 1], self._counts[j - 1] = _add_count(keys, counts, eos_key, len(sents))

        # Kneser-Ney continuation counts for the lower orders j < n: for a j-gram g,
        #   N1+(. g) = number of distinct words seen right before g
        #            = number of distinct (j+1)-grams that end with g.
        self._cont_keys, self._cont_counts, self._cont_ctx = [None], [None], [None]
        if self.smoothing == "kneser-ney":
            for j in range(1, n):
                suffix = self._keys[j + 1] % (V**j)  # drop the first word
                keys, counts = np.unique(suffix, return_counts=True)
                counts = counts.astype(np.int64)
                self._cont_keys.append(keys)
                self._cont_counts.append(counts)
                self._cont_ctx.append(_group_by_prefix(keys, counts, V))
        self._fitted = True
        return self

    def _ids(self, tokens: Iterable[str], count: int = -1) -> np.ndarray:
        """Token ids, unknown words -> id of <UNK> (0)."""
        # map(get, tokens, repeat(0)) calls word_to_id.get(token, 0) without a Python loop
        return np.fromiter(map(self.word_to_id.get, tokens, repeat(0)), dtype=np.int64, count=count)

    def _pad(self, sents: list[Sequence[str]]):
        """Pad every sentence with n-1 <s> and n-1 </s> (as nltk's pad_both_ends).

        Returns the flat array of padded ids, and for each position its offset in its
        padded sentence and the length of that padded sentence.
        """
        p = self.order - 1
        lens = np.fromiter((len(s) for s in sents), dtype=np.int64, count=len(sents))
        ids = self._ids(chain.from_iterable(sents), count=int(lens.sum()))
        plen = lens + 2 * p
        sent_of = np.repeat(np.arange(len(sents)), plen)
        start = np.cumsum(plen) - plen
        off = np.arange(int(plen.sum())) - start[sent_of]
        length = lens[sent_of]
        padded = np.full(len(off), self._bos, dtype=np.int64)
        padded[(off >= p) & (off < p + length)] = ids  # the words, in order
        padded[off >= p + length] = self._eos
        return padded, off, plen[sent_of]

    def _window_starts(self, off, plen, j: int) -> np.ndarray:
        """Start positions of the j-grams that lie inside one padded sentence."""
        last = len(off) - j + 1
        if last <= 0:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(off[:last] + j <= plen[:last])

    def _window_keys(self, padded, off, plen, j: int) -> np.ndarray:
        starts = self._window_starts(off, plen, j)
        key = padded[starts].copy()
        for i in range(1, j):
            key = key * self._V + padded[starts + i]
        return key

    def _fold(self, ids2d: np.ndarray) -> np.ndarray:
        """Integer key of each row of token ids: digits in base V (empty row -> 0)."""
        key = np.zeros(ids2d.shape[0], dtype=np.int64)
        for col in ids2d.T:
            key = key * self._V + col
        return key

    def _unfold(self, keys: np.ndarray, j: int) -> np.ndarray:
        """Inverse of _fold: the (M, j) token ids of M j-gram keys."""
        powers = self._V ** np.arange(j - 1, -1, -1, dtype=np.int64)
        return (keys[:, None] // powers) % self._V

    def _check_fitted(self):
        if not self._fitted:
            raise NotFittedError("This NGramLM is not fitted yet: call .fit(sentences) first")

    # ----------------------------------------------------------------------------------
    # Counts and vocabulary, for teaching.
    # ----------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """|V|, as nltk counts it: kept words + <UNK> (+ <s>, </s> when order > 1)."""
        self._check_fitted()
        return self._V

    def lookup(self, tokens: Sequence[str]) -> list[str]:
        """Map tokens to the vocabulary: unknown (or rare) words become '<UNK>'."""
        self._check_fitted()
        tokens = _check_context(tokens, "tokens")
        return [t if t in self.word_to_id else UNK for t in tokens]

    def count(self, ngram: Sequence[str]) -> int:
        """c(w_1 ... w_j): how often the j-gram occurs in the padded training text (1 <= j <= order)."""
        self._check_fitted()
        if isinstance(ngram, str):  # a single word is a unigram
            ngram = (ngram,)
        ngram = _check_context(ngram, "ngram")
        if not 1 <= len(ngram) <= self.order:
            raise ValueError(f"ngram must have 1 to {self.order} tokens, got {len(ngram)}")
        key = self._fold(self._ids(ngram)[None, :])
        return int(_lookup(self._keys[len(ngram)], self._counts[len(ngram)], key)[0])

    def most_common(self, j: int | None = None, top: int = 10) -> list[tuple[tuple[str, ...], int]]:
        """The `top` most frequent j-grams (default j = order) with their counts."""
        self._check_fitted()
        j = self.order if j is None else j
        if not isinstance(j, numbers.Integral) or not 1 <= j <= self.order:
            raise ValueError(f"j must be an integer in 1..{self.order}, got {j!r}")
        counts = self._counts[j]
        best = np.argsort(-counts, kind="stable")[:top]
        grams = self._unfold(self._keys[j][best], j).tolist()
        return [(tuple(self.vocab[i] for i in g), int(c)) for g, c in zip(grams, counts[best])]

    # ----------------------------------------------------------------------------------
    # Probabilities P(w | h).
    # ----------------------------------------------------------------------------------
    def _prob_ids(self, ctx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """P(w | h) for M (context, word) pairs at once: ctx (M, L) ids, w (M,) ids, L < order.

        With L < order - 1 (a short context) this is the lower-order model, as in nltk.
        """
        V, L = self._V, ctx.shape[1]
        top = L + 1  # the order of the n-grams we score

        def level(j):  # keys of the context (last j-1 words) and of the j-gram (h, w)
            h = self._fold(ctx[:, L - (j - 1) :])
            return h, h * V + w

        if self.smoothing in ("mle", "laplace", "add-k"):
            h, hw = level(top)
            c = _lookup(self._keys[top], self._counts[top], hw)  # c(h w)
            ctx_keys, ctx_total, _ = self._ctx[top]
            total = _lookup(ctx_keys, ctx_total, h)  # c(h .)
            if self.smoothing == "mle":
                # P(w | h) = c(h w) / c(h .); 0 when h was never seen (as nltk)
                return np.where(total > 0, c / np.maximum(total, 1), 0.0)
            k = 1.0 if self.smoothing == "laplace" else self.k
            return (c + k) / (total + k * V)  # (c(h w) + k) / (c(h .) + k |V|)

        if self.smoothing == "interpolated":
            # P(w | h) = sum_j lambda_j P_j(w | last j-1 words of h), over the levels whose
            # context was seen in training, weights renormalised over those levels.
            num = np.zeros(len(w))
            weight = np.zeros(len(w))
            for j in range(1, top + 1):
                h, hw = level(j)
                c = _lookup(self._keys[j], self._counts[j], hw)
                total = _lookup(self._ctx[j][0], self._ctx[j][1], h)
                if j == 1:  # add-one unigram: every word of V keeps some probability
                    p_j, seen = (c + 1.0) / (total + V), np.ones(len(w), dtype=bool)
                else:
                    p_j, seen = c / np.maximum(total, 1), total > 0
                num += self.lambdas[j - 1] * seen * p_j
                weight += self.lambdas[j - 1] * seen
            return num / weight

        # Interpolated Kneser-Ney, from the uniform distribution up to the top order:
        #   P_KN(w | h) = max(c_KN(h w) - d, 0) / c_KN(h .) + lambda(h) P_KN(w | h without its first word)
        #   lambda(h)   = d * N1+(h .) / c_KN(h .)
        # where c_KN is the count c for the highest order and the continuation count
        # N1+(. h w) for the lower ones. A context never seen gives lambda(h) = 1.
        d = self.discount
        p = np.full(len(w), 1.0 / V)
        for j in range(1, top + 1):
            h, hw = level(j)
            if j == self.order:
                keys, counts, (ctx_keys, ctx_total, ctx_types) = self._keys[j], self._counts[j], self._ctx[j]
            else:
                keys, counts, (ctx_keys, ctx_total, ctx_types) = (
                    self._cont_keys[j],
                    self._cont_counts[j],
                    self._cont_ctx[j],
                )
            c = _lookup(keys, counts, hw)
            total = _lookup(ctx_keys, ctx_total, h)
            types = _lookup(ctx_keys, ctx_types, h)
            safe = np.maximum(total, 1)
            p = np.where(total > 0, np.maximum(c - d, 0.0) / safe + d * types / safe * p, p)
        return p

    def _context_ids(self, context) -> np.ndarray:
        context = _check_context(context)
        context = context[len(context) - (self.order - 1) :] if self.order > 1 else []
        return self._ids(context)

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """P(word | context), using the last order-1 tokens of `context` (a list of tokens)."""
        self._check_fitted()
        if not isinstance(word, str):
            raise ValueError(f"word must be a string token, got {word!r}")
        ctx = self._context_ids(context)
        return float(self._prob_ids(ctx[None, :], self._ids([word]))[0])

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """log2 P(word | context); -inf when the probability is 0."""
        p = self.prob(word, context)
        return math.log2(p) if p > 0 else -math.inf

    def next_distribution(self, context: Sequence[str] = ()) -> np.ndarray:
        """P(. | context) as an array over ``self.vocab`` (sums to 1, except MLE on an unseen context: all 0)."""
        self._check_fitted()
        ctx = self._context_ids(context)
        return self._prob_ids(np.broadcast_to(ctx, (self._V, len(ctx))), np.arange(self._V))

    # ----------------------------------------------------------------------------------
    # Evaluation: cross-entropy J and perplexity 2 ** J.
    # ----------------------------------------------------------------------------------
    def _test_ngram_ids(self, sentences) -> np.ndarray:
        sents = _check_sentences(sentences)
        if not sents:
            raise ValueError("sentences is empty: nothing to evaluate")
        _check_tokens(set(chain.from_iterable(sents)), "sentences")
        padded, off, plen = self._pad(sents)
        starts = self._window_starts(off, plen, self.order)
        if len(starts) == 0:
            raise ValueError("sentences has no n-grams to score (all sentences are empty)")
        return padded[starts[:, None] + np.arange(self.order)]  # (M, n)

    def ngrams(self, sentences: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """The order-n n-grams of the padded sentences that `perplexity` scores (as nltk's
        ``ngrams(pad_both_ends(sent, n), n)``), with unknown words shown as '<UNK>'."""
        self._check_fitted()
        return [tuple(self.vocab[i] for i in row) for row in self._test_ngram_ids(sentences).tolist()]

    def cross_entropy(self, sentences: Iterable[Sequence[str]]) -> float:
        """J = -1/N sum_i log2 P(w_i | h_i) over the N n-grams of the padded test sentences (bits/token)."""
        self._check_fitted()
        grams = self._test_ngram_ids(sentences)
        # Score each distinct test n-gram once (np.unique also sorts them, which makes the
        # look-ups faster) and weight its log-probability by how often it occurs.
        keys, counts = np.unique(self._fold(grams), return_counts=True)
        grams = self._unfold(keys, self.order)
        p = self._prob_ids(grams[:, :-1], grams[:, -1])
        zero = p == 0
        if zero.any():
            example = tuple(self.vocab[i] for i in grams[np.argmax(zero)])
            hint = (
                "MLE gives probability 0 to every n-gram it never saw in training (and to "
                "every word after a context it never saw). Use smoothing: "
                "'laplace', 'add-k', 'interpolated' or 'kneser-ney'."
                if self.smoothing == "mle"
                else ""
            )
            warnings.warn(
                f"{int(counts[zero].sum())} of the {int(counts.sum())} test n-grams get probability 0 "
                f"(e.g. {example}), so the cross-entropy and the perplexity are infinite. {hint}",
                ZeroProbabilityWarning,
                stacklevel=3,
            )
            return math.inf
        return float(-np.sum(counts * np.log2(p)) / counts.sum())  # J = -1/N sum_i log2 P(w_i | h_i)

    def perplexity(self, sentences: Iterable[Sequence[str]]) -> float:
        """Perplexity 2 ** J of the test sentences (lists of tokens); inf if some P(w | h) = 0."""
        j = self.cross_entropy(sentences)
        return math.inf if math.isinf(j) else float(2.0**j)

    # ----------------------------------------------------------------------------------
    # Generation.
    # ----------------------------------------------------------------------------------
    def generate(
        self,
        n_words: int = 20,
        context: Sequence[str] = (),
        temperature: float = 1.0,
        seed: int | np.random.Generator | None = None,
    ) -> list[str]:
        """Sample up to `n_words` words after n-1 '<s>' + `context`; stop at '</s>' (not returned).

        Each word is drawn from P(. | h) ** (1 / temperature), renormalised; '<s>' is never drawn.
        The same `seed` gives the same words.
        """
        self._check_fitted()
        if isinstance(n_words, bool) or not isinstance(n_words, numbers.Integral) or n_words < 0:
            raise ValueError(f"n_words must be an integer >= 0, got {n_words!r}")
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, numbers.Real)
            or not (0 < temperature < math.inf)
        ):
            raise ValueError(f"temperature must be a number > 0, got {temperature!r}")
        history = [self._bos] * (self.order - 1) + self._ids(_check_context(context)).tolist()
        rng = np.random.default_rng(seed)
        out: list[str] = []
        for _ in range(n_words):
            ctx = history[len(history) - (self.order - 1) :] if self.order > 1 else []
            while True:
                ctx_ids = np.array(ctx, dtype=np.int64)
                p = self._prob_ids(np.broadcast_to(ctx_ids, (self._V, len(ctx))), np.arange(self._V))
                if self._bos >= 0:
                    p[self._bos] = 0.0
                if p.sum() > 0 or not ctx:
                    break
                ctx = ctx[1:]  # MLE after a context never seen: back off to a shorter one
            with np.errstate(divide="ignore"):
                logits = np.log(p) / temperature  # p ** (1/T), computed in log space
            q = np.exp(logits - logits.max())
            cdf = np.cumsum(q)
            w = int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), self._V - 1))
            if w == self._eos:
                break
            out.append(self.vocab[w])
            history.append(w)
        return out
