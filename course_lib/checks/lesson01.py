"""Checks for lesson 01 (n-grams and perplexity): one per exercise, each with targeted hints."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from course_lib.checks import Mistake, exercise, expect, expect_value, expect_values, is_number

BOS, EOS = "<s>", "</s>"


def _padded_ngrams(sentence, n):
    """The reference: nltk.lm's padding (n-1 <s> left, n-1 </s> right), then every n-gram."""
    padded = [BOS] * (n - 1) + list(sentence) + [EOS] * (n - 1)
    return Counter(tuple(padded[i : i + n]) for i in range(len(padded) - n + 1))


def _fresh_sentence(rng, length):
    words = ["we", "the", "people", "of", "union", "states", "congress", "nation"]
    return [words[i] for i in rng.integers(0, len(words), size=length)]


@exercise("1.1", "counting padded n-grams")
def check_count_ngrams(count_ngrams):
    rng = np.random.default_rng()
    # Trigrams first: there, forgetting the right padding and dropping the last n-gram differ.
    cases = [
        (["we", "the", "people"], 3),
        (["the", "union", "is", "strong"], 2),
        (["hello"], 1),
        (_fresh_sentence(rng, 7), 2),
        (_fresh_sentence(rng, 5), 3),
        (["to", "be", "or", "not", "to", "be"], 2),
    ]
    for sentence, n in cases:
        got = count_ngrams(list(sentence), n)
        expect(
            isinstance(got, dict),
            f"return a Counter (or dict) mapping n-gram tuples to counts, got {type(got).__name__}",
        )
        expected = _padded_ngrams(sentence, n)
        if got and not all(isinstance(k, tuple) for k in got):
            raise Mistake("the keys must be tuples of words, e.g. ('<s>', 'the'), not strings or lists")
        if got and any(len(k) != n for k in got):
            raise Mistake(f"every key must be an n-gram of length n={n}; found lengths {sorted({len(k) for k in got})}")
        got = Counter({k: v for k, v in got.items() if v})
        if got == expected:
            continue
        bare = Counter(tuple(sentence[i : i + n]) for i in range(len(sentence) - n + 1))
        left_only = Counter(tuple(([BOS] * (n - 1) + sentence)[i : i + n]) for i in range(len(sentence)))
        over = _padded_ngrams([BOS] + list(sentence) + [EOS], n) if n > 1 else None
        short = Counter(_padded_ngrams(sentence, n))
        last = tuple((list(sentence) + [EOS] * (n - 1))[-n:])
        short[last] -= 1
        short = +short
        if got == bare:
            raise Mistake(
                f"pad the sentence first: {n - 1} '<s>' on the left and {n - 1} '</s>' on the right, "
                "so the first word has a context and the end of the sentence is predicted too"
            )
        if got == left_only:
            raise Mistake(
                "you padded only the left: add n-1 '</s>' on the right as well (the end of a sentence is a word to predict)"
            )
        if over is not None and got == over:
            raise Mistake(f"too much padding: use n-1 = {n - 1} '<s>' and '</s>' for n = {n}, not n")
        if got == short:
            raise Mistake("the last n-gram is missing: a list of length L has L - n + 1 n-grams (range off by one)")
        if sum(got.values()) != sum(expected.values()):
            raise Mistake(
                f"for {sentence} and n={n} there should be {sum(expected.values())} n-grams in all, "
                f"you counted {sum(got.values())}"
            )
        raise Mistake(f"for {sentence} and n={n} expected {dict(expected)}, got {dict(got)}")


def _corpus_counts(rng, n):
    counts: Counter = Counter()
    for _ in range(30):
        counts.update(_padded_ngrams(_fresh_sentence(rng, int(rng.integers(2, 9))), n))
    return counts


@exercise("1.2", "maximum-likelihood probability from counts")
def check_mle_prob(mle_prob):
    rng = np.random.default_rng()
    for n in (2, 3, 2):
        counts = _corpus_counts(rng, n)
        # A seen n-gram (context, word), picked at random among those where every known mistake
        # gives a different number, so the hint can tell them apart.
        for index in rng.permutation(len(counts)):
            ngram = list(counts)[index]
            context, word = ngram[:-1], ngram[-1]
            context_count = sum(c for g, c in counts.items() if g[:-1] == context)
            expected = counts[ngram] / context_count
            word_count = sum(c for g, c in counts.items() if g[-1] == word)
            wrong = {
                "divide by the count of the context c(w_{i-1}), not by the number of all n-grams: "
                "that gives the joint probability P(w_{i-1}, w_i)": counts[ngram] / sum(counts.values()),
                "the denominator counts the context (the words before), not the word itself": counts[ngram]
                / word_count,
                "off by one: the n-gram is the context followed by the word; you put the word first": counts.get(
                    (word,) + tuple(context), 0
                )
                / context_count,
            }
            if all(not math.isclose(v, expected) for v in wrong.values()):
                break
        got = mle_prob(counts, tuple(context), word)
        expect(is_number(got), f"return a single number (a float), got {type(got).__name__}")
        expect_value(got, expected, wrong, what=f"P({word!r} | {context})")
    # the context is never seen: MLE has nothing to divide by; the answer we ask for is 0.0
    try:
        got = mle_prob(counts, ("zebra",) * (n - 1), "the")
    except ZeroDivisionError:
        raise Mistake(
            "for a context that never occurs, c(context) = 0: return 0.0 instead of dividing by zero"
        ) from None
    expect_value(got, 0.0, what="the probability after an unseen context")


@exercise("1.3", "add-k (Laplace) smoothing")
def check_laplace_prob(laplace_prob):
    rng = np.random.default_rng()
    for k in (1.0, 1.0, 0.1, 0.5):
        vocab_size = int(rng.integers(5, 50))
        context_count = int(rng.integers(1, 100))
        count = int(rng.integers(0, context_count + 1))
        got = laplace_prob(count, context_count, vocab_size, k=k)
        expect(is_number(got), f"return a single number (a float), got {type(got).__name__}")
        expected = (count + k) / (context_count + k * vocab_size)
        wrong = {
            "you forgot the vocabulary size in the denominator: k is added to each of the V words, "
            "so the denominator grows by k * V": (count + k) / (context_count + k),
            "the denominator needs k * V as well, not only c(context)": (count + k) / context_count,
            "add k times V to the denominator, not V: every one of the V words received k": (count + k)
            / (context_count + vocab_size),
        }
        if k != 1.0:
            wrong["use the k you are given, not always 1 (Laplace is the special case k = 1)"] = (count + 1) / (
                context_count + vocab_size
            )
        expect_value(got, expected, wrong, what=f"P with c={count}, c(context)={context_count}, V={vocab_size}, k={k}")
    # smoothed probabilities over the whole vocabulary must still sum to 1
    counts = rng.integers(0, 20, size=12)
    total = sum(laplace_prob(int(c), int(counts.sum()), len(counts), k=0.3) for c in counts)
    expect(math.isclose(total, 1.0, rel_tol=1e-9), f"over the vocabulary your probabilities sum to {total:.6f}, not 1")


@exercise("1.4", "perplexity from log-probabilities")
def check_perplexity(perplexity):
    rng = np.random.default_rng()
    digits = [math.log(1 / 10)] * 25  # the lecture's random digits: perplexity 10
    got = perplexity(digits)
    expect(is_number(got), f"return a single number, got {type(got).__name__}")
    for log_probs in (
        digits,
        list(np.log(rng.uniform(0.01, 1, size=int(rng.integers(5, 40))))),
        np.log(rng.uniform(0.2, 1, size=7)),
    ):
        lp = np.asarray(log_probs, dtype=float)
        expected = math.exp(-lp.mean())
        wrong = {
            "these are natural logs (ln), so perplexity is e^J; 2^J is for J in bits "
            "(or convert: bits = nats / ln 2)": 2 ** (-lp.mean()),
            "log base: use e^J for natural logs, not 10^J": 10 ** (-lp.mean()),
            "J is the mean over tokens, not the sum: divide by the number of tokens": math.exp(min(-lp.sum(), 700)),
            "you forgot the minus sign: J = -(1/n) sum log P, and perplexity is at least 1": math.exp(lp.mean()),
        }
        expect_value(perplexity(log_probs), expected, wrong, what="the perplexity", rtol=1e-6)


@exercise("1.5", "sampling the next word with a temperature")
def check_sample_next(sample_next):
    rng = np.random.default_rng()
    fixed = np.array([0.1, 0.2, 0.3, 0.4])
    # Hand-picked cases where p ** T and p ** (1 / T) give different words, then fresh random ones.
    cases = [(fixed, 1.0, 0.15), (fixed, 1.0, 0.05), (fixed, 0.5, 0.5), (fixed, 2.0, 0.3)]
    for _ in range(14):
        p = rng.dirichlet(np.ones(int(rng.integers(3, 9))))
        cases.append((p, float(rng.choice([0.5, 1.0, 2.0])), float(rng.uniform(0, 1))))

    def inverse_cdf(weights, u):  # first index whose cumulative weight exceeds u
        return min(int(np.searchsorted(np.cumsum(weights), u, side="right")), len(weights) - 1)

    got, expected, what = [], [], []
    wrong = {
        "you always pick the most likely word: that is greedy decoding. Sample instead: walk the "
        "cumulative probabilities until they exceed u": [],
        "the temperature divides the log-probabilities: use p ** (1 / temperature), not p ** temperature": [],
        "renormalise after p ** (1 / temperature), so the probabilities sum to 1 again": [],
        "off by one: return the first index whose cumulative probability exceeds u": [],
    }
    greedy, power, unnormalised, off_by_one = wrong
    for p, temperature, u in cases:
        given = p.copy()
        answer = sample_next(given, temperature, u)
        expect(np.array_equal(given, p), "do not change the probabilities you were given (work on a copy)")
        expect(
            isinstance(answer, (int, np.integer)) and not isinstance(answer, bool),
            f"return the index of the sampled word (an int), got {type(answer).__name__}",
        )
        q = p ** (1 / temperature)
        right = inverse_cdf(q / q.sum(), u)
        got.append(int(answer))
        expected.append(right)
        what.append(f"the index for p={np.round(p, 3)}, T={temperature}, u={u:.3f}")
        wrong[greedy].append(int(np.argmax(p)))
        wrong[power].append(inverse_cdf(p**temperature / (p**temperature).sum(), u))
        wrong[unnormalised].append(inverse_cdf(q, u))
        wrong[off_by_one].append(right + 1)
    try:
        expect_values(got, expected, wrong, what)
    except Mistake as mistake:
        outside = [(g, len(p)) for g, (p, _, _) in zip(got, cases) if not 0 <= g < len(p)]
        if outside and str(mistake) not in wrong:
            raise Mistake(
                f"you returned index {outside[0][0]} for {outside[0][1]} words: indices run from 0 "
                "to len(probs) - 1 (did the probabilities sum to 1?)"
            ) from None
        raise
