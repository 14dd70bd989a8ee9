"""N-gram language models, smoothing and perplexity (lesson 01).

A language model gives P(w | h), the probability of the next word w after a history h.
An n-gram model makes the Markov assumption of the lecture and keeps only the last n-1
words of the history:

    P(w_k | w_{1:k-1})  ~  P(w_k | w_{k-n+1:k-1})

and estimates it from counts. We evaluate it with the cross-entropy J (bits per predicted
token) on a test set and its perplexity 2 ** J (lower is better).

Perplexity is counted the standard way (Jurafsky & Martin ch. 3, SRILM, KenLM):

* each sentence is its words plus ONE ``</s>``, with n-1 ``<s>`` on the left as context:
  ``<s> <s> the cat </s>`` for a trigram model; ``<s>`` is never predicted, ``</s>`` is
  (J&M pad n-1 ``<s>`` as here; SRILM and KenLM write one ``<s>`` and score the same tokens);
* so every order scores the same N = words + sentences tokens (the unigram model scores
  ``</s>`` too), and the perplexities of different orders compare;
* training counts the j-grams (j = 1..n) that end at those same scored tokens, so ``<s>`` is
  never an outcome and |V| = the kept words + ``<UNK>`` + ``</s>`` (``vocab`` lists ``<s>``
  too, as an id for contexts);
* words seen fewer than ``unk_cutoff`` times in training, and words never seen, become
  ``<UNK>`` (as ``nltk.lm.Vocabulary``).

nltk.lm's usual recipe (``pad_both_ends``) pads n-1 ``</s>`` on the right instead and scores
them all: the number of scored tokens then grows with the order and the extra ``</s>``, far
more probable than an average token, flatter higher orders. Per n-gram, MLE, Laplace and add-k
probabilities equal nltk.lm's when it is given the same counts (tests/test_ngram.py); lesson 01
shows both counts.

Counting is in ``course_lib.ngram_counts`` (vectorised with numpy) and every smoothing is
a function of ``course_lib.smoothing`` with its formula in its docstring; this module holds
the model that ties them together: vocabulary, padding, probabilities, perplexity, generation.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import chain, count, repeat

import numpy as np

from course_lib import _validate
from course_lib import smoothing as smoothers
from course_lib.ngram_counts import NGramCounts, count_ngrams, fold, lookup_one, unfold

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
SMOOTHINGS = tuple(smoothers.SMOOTHING_FUNCTIONS)  # ("mle", "laplace", "add-k", "interpolated", "kneser-ney")
_INT64_MAX = np.iinfo(np.int64).max


class NotFittedError(ValueError, RuntimeError):
    """The model was used before ``fit`` was called."""


class ZeroProbabilityWarning(UserWarning):
    """The model gave probability 0 to a test n-gram, so the perplexity is infinite."""


# Input checks: a clear message that names the argument and what was expected.
def _bits_per_token(counts: np.ndarray, p: np.ndarray) -> float:
    """J = -1/N sum_i log2 P(w_i | h_i), each distinct n-gram's probability ``p`` weighted by its ``counts``."""
    return float(-np.sum(counts * np.log2(p)) / counts.sum())


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


class NGramLM:
    """An n-gram language model P(w | last n-1 words), as in lesson 01.

    smoothing (each is a function of ``course_lib.smoothing``, whose docstring has its formula):
      * ``"mle"``: ``smoothing.mle``, zero for unseen n-grams (infinite perplexity);
      * ``"laplace"``: ``smoothing.laplace``, add one to every count;
      * ``"add-k"``: ``smoothing.add_k`` with pseudo-count ``k``;
      * ``"interpolated"``: ``smoothing.interpolated`` (Jelinek-Mercer) with weights ``lambdas``
        (lambda_1 for the unigram first; default ``smoothing.default_lambdas``; tune them on
        validation text with ``tune_lambdas``);
      * ``"kneser-ney"``: ``smoothing.kneser_ney`` with absolute ``discount``.

    >>> lm = NGramLM(2, smoothing="laplace").fit([["a", "b"], ["a", "c"]])
    >>> round(lm.prob("b", ["a"]), 4)   # (c(a b) + 1) / (c(a .) + |V|) = 2 / (2 + 5): V = {<UNK>, </s>, a, b, c}
    0.2857
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
        self.order = _validate.positive_int("order", order)
        self.smoothing = _validate.one_of("smoothing", smoothing, SMOOTHINGS)
        self.k = _validate.number("k (the add-k pseudo-count)", k, 0, open_low=True)
        if math.isinf(self.k):
            raise ValueError(f"k (the add-k pseudo-count) must be a finite number > 0, got {k!r}")
        self.discount = _validate.number("discount (the Kneser-Ney absolute discount d)", discount, 0, 1, open_low=True)
        if self.discount == 1:
            raise ValueError("discount (the Kneser-Ney absolute discount d) must be in the open interval (0, 1), got 1")
        self.unk_cutoff = _validate.positive_int("unk_cutoff", unk_cutoff)
        self.lambdas = smoothers.check_lambdas(lambdas, self.order)
        self._fitted = False

    def _smoother(self):
        """P(w | h) for arrays of contexts and words: the smoothing function with this model's parameter."""
        parameter = {"add-k": {"k": self.k}, "interpolated": {"lambdas": self.lambdas}}
        parameter["kneser-ney"] = {"discount": self.discount}
        return partial(smoothers.SMOOTHING_FUNCTIONS[self.smoothing], **parameter.get(self.smoothing, {}))

    def __repr__(self) -> str:
        extra = {
            "add-k": f", k={self.k}",
            "kneser-ney": f", discount={self.discount}",
            "interpolated": f", lambdas={tuple(round(x, 4) for x in self.lambdas)}",
        }
        status = f"|V|={self.vocab_size}" if self._fitted else "not fitted"
        return f"NGramLM(order={self.order}, smoothing={self.smoothing!r}{extra.get(self.smoothing, '')}) [{status}]"

    # Training: build the vocabulary, pad, count all 1..n-grams.
    def fit(self, sentences: Iterable[Sequence[str]]) -> NGramLM:
        """Count the 1..n-grams of the padded training sentences (lists of tokens); returns self."""
        sents = _check_sentences(sentences)
        if not sents:
            raise ValueError("sentences is empty: fit needs at least one sentence (a list of tokens)")
        n = self.order
        # One pass over the tokens: each distinct token gets a provisional id, in order of first appearance
        # (first_seen gives a new token the next number); its count is then one bincount of those ids.
        first_seen = defaultdict(count().__next__)
        try:
            raw_ids = np.fromiter(map(first_seen.__getitem__, chain.from_iterable(sents)), dtype=np.int64)
        except TypeError as err:  # e.g. a list inside a sentence
            raise ValueError(f"sentences must be lists of string tokens ({err})") from None
        distinct = list(first_seen)  # distinct[i] is the token of provisional id i
        _check_tokens(distinct, "sentences")
        if not distinct:
            raise ValueError("sentences contains no tokens: every sentence is empty")
        counts = np.bincount(raw_ids, minlength=len(distinct))

        # Token ids: <UNK>, <s>, </s>, then the words seen >= unk_cutoff times, most frequent
        # first (as nltk.lm.Vocabulary(unk_cutoff)). <s> has an id because it is context, but
        # it is never predicted: |V| (vocab_size) is len(vocab) - 1.
        specials = [UNK, BOS, EOS]
        # most frequent first, ties in order of first appearance (as Counter.most_common orders them)
        by_count = np.argsort(-counts, kind="stable").tolist()
        words = [distinct[i] for i in by_count if counts[i] >= self.unk_cutoff and distinct[i] not in specials]
        self.vocab: list[str] = specials + words
        self.word_to_id: dict[str, int] = {w: i for i, w in enumerate(self.vocab)}
        V = len(self.vocab)  # the base of the n-gram keys
        if V**n > _INT64_MAX:
            raise ValueError(
                f"order={n} is too large for a vocabulary of {V} tokens: an n-gram key needs "
                f"V**order = {V**n:.3g} < 2**63. Use a smaller order or a larger unk_cutoff."
            )
        self._V = V
        self._unk, self._bos, self._eos = 0, 1, 2
        self.n_sentences = len(sents)
        self.n_tokens = len(raw_ids)

        # the provisional ids -> token ids (unknown words -> <UNK>, 0), without a second pass over the tokens
        padded, scored = self._pad(sents, ids=self._ids(distinct)[raw_ids])
        keys = [None] + [self._gram_keys(padded, scored, j) for j in range(1, n + 1)]
        self._table: NGramCounts = count_ngrams(keys, n, V, V - 1, self.smoothing == "kneser-ney")
        self._fitted = True
        return self

    def _ids(self, tokens: Iterable[str], count: int = -1) -> np.ndarray:
        """Token ids, unknown words -> id of <UNK> (0)."""
        # map(get, tokens, repeat(0)) calls word_to_id.get(token, 0) without a Python loop
        return np.fromiter(map(self.word_to_id.get, tokens, repeat(0)), dtype=np.int64, count=count)

    def _pad(self, sents: list[Sequence[str]], ids: np.ndarray | None = None):
        """Each sentence as n-1 <s>, its words, one </s> (the standard count).

        Returns the flat array of padded ids and the positions of the scored tokens (every
        word and every </s>): each has its n-1 tokens of context inside its own sentence.
        ``ids``: the token ids of all the sentences' words in order, if already known.
        """
        p = self.order - 1
        lens = np.fromiter((len(s) for s in sents), dtype=np.int64, count=len(sents))
        if ids is None:
            ids = self._ids(chain.from_iterable(sents), count=int(lens.sum()))
        plen = lens + p + 1
        sent_of = np.repeat(np.arange(len(sents)), plen)
        off = np.arange(int(plen.sum())) - (np.cumsum(plen) - plen)[sent_of]  # position in its sentence
        padded = np.full(len(off), self._bos, dtype=np.int64)
        is_eos = off == plen[sent_of] - 1
        padded[(off >= p) & ~is_eos] = ids  # the words, in order
        padded[is_eos] = self._eos
        return padded, np.flatnonzero(off >= p)

    def _gram_keys(self, padded: np.ndarray, scored: np.ndarray, j: int) -> np.ndarray:
        """Keys of the j-grams that end at the scored positions."""
        key = np.zeros(len(scored), dtype=np.int64)
        for i in range(j - 1, -1, -1):
            key = key * self._V + padded[scored - i]
        return key

    def _fold(self, ids2d: np.ndarray) -> np.ndarray:
        return fold(ids2d, self._V)

    def _unfold(self, keys: np.ndarray, j: int) -> np.ndarray:
        return unfold(keys, j, self._V)

    def _check_fitted(self):
        if not self._fitted:
            raise NotFittedError("This NGramLM is not fitted yet: call .fit(sentences) first")

    # Counts and vocabulary, for teaching.
    @property
    def vocab_size(self) -> int:
        """|V|, the tokens the model can predict: kept words + <UNK> + </s>, i.e. len(vocab) - 1
        (``vocab`` also lists <s>, which is only ever context)."""
        self._check_fitted()
        return self._V - 1

    def lookup(self, tokens: Sequence[str]) -> list[str]:
        """Map tokens to the vocabulary: unknown (or rare) words become '<UNK>'."""
        self._check_fitted()
        tokens = _check_context(tokens, "tokens")
        return [t if t in self.word_to_id else UNK for t in tokens]  # <s> stays <s> (context)

    def count(self, ngram: Sequence[str]) -> int:
        """c(w_1 ... w_j): how often the j-gram ends at a scored token of the padded training
        text (1 <= j <= order); a j-gram ending in <s> is never counted."""
        self._check_fitted()
        if isinstance(ngram, str):  # a single word is a unigram
            ngram = (ngram,)
        ngram = _check_context(ngram, "ngram")
        if not 1 <= len(ngram) <= self.order:
            raise ValueError(f"ngram must have 1 to {self.order} tokens, got {len(ngram)}")
        key = 0  # fold's key, in plain Python ints: a lesson counts 100,000s of grams one at a time
        for token in ngram:
            key = key * self._V + self.word_to_id.get(token, self._unk)
        return lookup_one(self._table.keys[len(ngram)], self._table.counts[len(ngram)], key)

    def distinct_ngrams(self, j: int | None = None) -> int:
        """How many different j-grams (default j = order) the model counted: the size of the
        count table it stores for that order."""
        self._check_fitted()
        j = self.order if j is None else j
        if _validate.positive_int("j", j) > self.order:
            raise ValueError(f"j must be an integer in 1..{self.order}, got {j!r}")
        return len(self._table.keys[j])

    def most_common(self, j: int | None = None, top: int = 10) -> list[tuple[tuple[str, ...], int]]:
        """The `top` most frequent j-grams (default j = order) with their counts."""
        self._check_fitted()
        j = self.order if j is None else j
        if _validate.positive_int("j", j) > self.order:
            raise ValueError(f"j must be an integer in 1..{self.order}, got {j!r}")
        counts = self._table.counts[j]
        best = np.argsort(-counts, kind="stable")[:top]
        grams = self._unfold(self._table.keys[j][best], j).tolist()
        return [(tuple(self.vocab[i] for i in g), int(c)) for g, c in zip(grams, counts[best])]

    # Probabilities P(w | h).
    def _prob_ids(self, ctx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """P(w | h) for M (context, word) pairs at once: ctx (M, L) ids, w (M,) ids, L < order.

        With L < order - 1 (a short context) this is the lower-order model, as in nltk.
        """
        return self._smoother()(self._table, ctx, w)

    def _context_ids(self, context) -> np.ndarray:
        context = _check_context(context)
        context = context[len(context) - (self.order - 1) :] if self.order > 1 else []
        return self._ids(context)

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """P(word | context), using the last order-1 tokens of `context` (a list of tokens).

        ``<s>`` is never predicted: its probability is 0."""
        self._check_fitted()
        if not isinstance(word, str):
            raise ValueError(f"word must be a string token, got {word!r}")
        if word == BOS:
            return 0.0
        ctx = self._context_ids(context)
        return float(self._prob_ids(ctx[None, :], self._ids([word]))[0])

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """log2 P(word | context); -inf when the probability is 0."""
        p = self.prob(word, context)
        return math.log2(p) if p > 0 else -math.inf

    def next_distribution(self, context: Sequence[str] = ()) -> np.ndarray:
        """P(. | context) as an array over ``self.vocab`` (sums to 1, except MLE on an unseen context:
        all 0); the entry of <s> is 0, it is never predicted."""
        self._check_fitted()
        ctx = self._context_ids(context)
        p = self._prob_ids(np.broadcast_to(ctx, (self._V, len(ctx))), np.arange(self._V))
        p[self._bos] = 0.0
        return p

    # Evaluation: cross-entropy J and perplexity 2 ** J.
    def _test_ngram_ids(self, sentences) -> np.ndarray:
        sents = _check_sentences(sentences)
        if not sents:
            raise ValueError("sentences is empty: nothing to evaluate")
        _check_tokens(set(chain.from_iterable(sents)), "sentences")
        padded, scored = self._pad(sents)
        return padded[scored[:, None] + np.arange(1 - self.order, 1)]  # (N, n): N = words + sentences

    def ngrams(self, sentences: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """The N order-n n-grams that `perplexity` scores, one per word and one per sentence
        end (n-1 tokens of context, then the scored token), unknown words shown as '<UNK>'."""
        self._check_fitted()
        return [tuple(self.vocab[i] for i in row) for row in self._test_ngram_ids(sentences).tolist()]

    def cross_entropy(self, sentences: Iterable[Sequence[str]]) -> float:
        """J = -1/N sum_i log2 P(w_i | h_i) over the N = words + sentences scored tokens (bits/token)."""
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
        return _bits_per_token(counts, p)

    def probs(self, sentences: Iterable[Sequence[str]]) -> np.ndarray:
        """P(w_i | h_i) for each n-gram of ``ngrams(sentences)``, in that order (the terms of J)."""
        self._check_fitted()
        grams = self._test_ngram_ids(sentences)
        return self._prob_ids(grams[:, :-1], grams[:, -1])

    def tune_lambdas(self, sentences: Iterable[Sequence[str]], steps: int = 10) -> tuple[float, ...]:
        """The weights (lambda_1, ..., lambda_n) of ``smoothing.interpolated``, on a grid of 1/steps
        (``smoothers.lambda_grid``), that give ``sentences`` the lowest perplexity. Pass validation
        sentences, never the test set; then build ``NGramLM(n, "interpolated", lambdas=...)``."""
        self._check_fitted()
        keys, counts = np.unique(self._fold(self._test_ngram_ids(sentences)), return_counts=True)
        grams = self._unfold(keys, self.order)
        p, seen = smoothers.interpolation_terms(self._table, grams[:, :-1], grams[:, -1])
        best, best_J = None, math.inf
        for lambdas in smoothers.lambda_grid(self.order, _validate.positive_int("steps", steps)):
            weight = lambdas[:, None] * seen
            J = -np.sum(counts * np.log2((weight * p).sum(0) / weight.sum(0))) / counts.sum()
            if J < best_J:
                best, best_J = lambdas, J
        return tuple(float(x) for x in best)

    def perplexity(self, sentences: Iterable[Sequence[str]]) -> float:
        """Perplexity 2 ** J of the test sentences (lists of tokens); inf if some P(w | h) = 0."""
        j = self.cross_entropy(sentences)
        return math.inf if math.isinf(j) else float(2.0**j)

    def sentence_perplexities(self, sentences: Iterable[Sequence[str]]) -> np.ndarray:
        """The perplexity of each sentence on its own, ``perplexity([s])`` for each s (the same arithmetic,
        so the same floats), with the probabilities of all the sentences' n-grams looked up at once."""
        self._check_fitted()
        sents = _check_sentences(sentences)  # read once: an iterator would be empty the second time
        grams = self._test_ngram_ids(sents)  # len(s) + 1 n-grams per sentence, in order
        keys, p = self._fold(grams), self._prob_ids(grams[:, :-1], grams[:, -1])
        ends = np.cumsum([len(s) + 1 for s in sents])
        out = np.empty(len(ends))
        with np.errstate(divide="ignore"):  # log2(0) = -inf: that sentence's perplexity is inf
            for i, (start, end) in enumerate(zip(np.r_[0, ends[:-1]], ends)):
                # as cross_entropy: each distinct n-gram once, weighted by its count, in the order of its key
                _, first, counts = np.unique(keys[start:end], return_index=True, return_counts=True)
                out[i] = 2.0 ** _bits_per_token(counts, p[start:end][first])
        return out

    # Generation.
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
        _validate.non_negative_int("n_words", n_words)
        temperature = _validate.number("temperature", temperature, 0, open_low=True)
        if math.isinf(temperature):
            raise ValueError("temperature must be a finite number > 0, got inf")
        history = [self._bos] * (self.order - 1) + self._ids(_check_context(context)).tolist()
        V = self._V
        rng = np.random.default_rng(seed)
        out: list[str] = []
        for _ in range(n_words):
            ctx = history[len(history) - (self.order - 1) :] if self.order > 1 else []
            while True:
                ctx_ids = np.array(ctx, dtype=np.int64)
                p = self._prob_ids(np.broadcast_to(ctx_ids, (V, len(ctx))), np.arange(V))
                p[self._bos] = 0.0  # never predicted
                if p.sum() > 0 or not ctx:
                    break
                ctx = ctx[1:]  # MLE after a context never seen: back off to a shorter one
            with np.errstate(divide="ignore"):
                logits = np.log(p) / temperature  # p ** (1/T), computed in log space
            q = np.exp(logits - logits.max())
            cdf = np.cumsum(q)
            w = int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), V - 1))
            if w == self._eos:
                break
            out.append(self.vocab[w])
            history.append(w)
        return out
