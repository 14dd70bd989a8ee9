"""Checks for lesson 01 (n-grams and perplexity), each in three steps (draw, run, judge).

Every draw varies n, sentence lengths and repeated words, and includes the boundary cases
the wording fixes (an unseen context, k = 0, a single token, u exactly on a cumulative sum).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from course_lib.checks import Mistake
from course_lib.checks.protocol import Exercise, expect_answers

BOS, EOS = "<s>", "</s>"
WORDS = ["we", "the", "people", "of", "union", "states", "congress", "nation", "free", "world"]
NUMBER = ("int", "float", "float64", "float32", "ndarray")


def _padded(sentence, n, left=None, right=None):
    left = n - 1 if left is None else left
    right = n - 1 if right is None else right
    return [BOS] * left + list(sentence) + [EOS] * right


def _grams(tokens, n, stop=None):
    stop = len(tokens) - n + 1 if stop is None else stop
    return Counter(tuple(tokens[i : i + n]) for i in range(max(stop, 0)))


def _sentence(rng, length):
    return [WORDS[i] for i in rng.integers(0, len(WORDS), size=length)]


def _expect_number(record, what):
    if record["type"] not in NUMBER or (record["type"] == "ndarray" and np.ndim(record["returned"]) != 0):
        raise Mistake(f"{what}: return a single number (a float), got {record['type']}")
    value = float(record["returned"])
    if not math.isfinite(value):
        raise Mistake(f"{what} is {value}: a probability or perplexity is a finite number")
    return value


# ---------------------------------------------------------------- 1.1


def _draw_count(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for n in (1, 2, 3, 4, int(rng.integers(2, 5))):
        sentence = _sentence(rng, int(rng.integers(2, 8)))
        sentence += sentence[:n]  # a repeated n-gram in every sentence: counts above 1
        cases.append([sentence, n])
    cases.append([_sentence(rng, 1), int(rng.integers(2, 4))])  # one word: every n-gram is mostly padding
    return cases


def _count_variants(sentence, n):
    padded = _padded(sentence, n)
    return {
        f"pad the sentence first: n-1 '{BOS}' on the left and n-1 '{EOS}' on the right, so the first word "
        "has a context and the end of the sentence is predicted too": _grams(list(sentence), n),
        f"you padded only the left: add n-1 '{EOS}' on the right as well (the end of a sentence is a word to "
        "predict)": _grams(_padded(sentence, n, right=0), n),
        f"you padded only the right: add n-1 '{BOS}' on the left as well (the first word needs a context)": _grams(
            _padded(sentence, n, left=0), n
        ),
        "too much padding: n-1 symbols on each side, not n": _grams(_padded(sentence, n, n, n), n),
        "pad with n-1 symbols on each side, not always one (one is right only for bigrams)": _grams(
            _padded(sentence, n, 1, 1), n
        ),
        f"pad with n-1 '{EOS}' on the right, not one": _grams(_padded(sentence, n, right=1), n),
        "the last n-gram is missing: a list of length L has L - n + 1 n-grams (range off by one)": _grams(
            padded, n, len(padded) - n
        ),
        "count every occurrence: a repeated n-gram counts more than once": Counter(set(_grams(padded, n))),
    }


def _judge_count(cases, records):
    wrong: dict[str, list] = {}
    first = ""
    for (sentence, n), r in zip(cases, records):
        if r["type"] not in ("Counter", "dict", "defaultdict", "OrderedDict") or not isinstance(r["returned"], dict):
            raise Mistake(f"return a Counter (or dict) mapping n-gram tuples to counts, got {r['type']}")
        got = r["returned"]
        if got and not all(isinstance(k, tuple) for k in got):
            kind = type(next(k for k in got if not isinstance(k, tuple))).__name__
            raise Mistake(f"the keys must be tuples of words, e.g. ('{BOS}', 'the'), not {kind}s")
        if any(len(k) != n for k in got):
            raise Mistake(f"every key must be an n-gram of length n={n}; found lengths {sorted({len(k) for k in got})}")
        if not all(type(v) is int or (isinstance(v, np.ndarray) and v.dtype.kind in "iu") for v in got.values()):
            raise Mistake("the counts must be whole numbers (ints)")
        got = Counter({k: int(v) for k, v in got.items() if v})
        expected = _grams(_padded(sentence, n), n)
        for hint, value in _count_variants(sentence, n).items():
            wrong.setdefault(hint, []).append(got == value)
        if got != expected and not first:
            missing = next((g for g in expected if got[g] != expected[g]), None)
            gram = missing if missing is not None else next(g for g in got if got[g] != expected[g])
            first = f"for {sentence} and n={n}, the count of {gram} should be {expected[gram]}, got {got[gram]}"
    if not first:
        return
    for hint, explained in wrong.items():
        if all(explained):
            raise Mistake(hint)
    raise Mistake(first)


check_count_ngrams = Exercise(
    "1.1", "counting padded n-grams", "count_ngrams", ("sentence", "n"), _draw_count, _judge_count
)


# ---------------------------------------------------------------- 1.2


def _draw_mle(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for n in (2, 3, int(rng.integers(2, 5))):
        counts: Counter = Counter()
        for _ in range(int(rng.integers(15, 30))):
            counts.update(_grams(_padded(_sentence(rng, int(rng.integers(2, 8))), n), n))
        grams = list(counts)
        for _ in range(2):  # seen n-grams, chosen where the known mistakes give the most different numbers
            best, chosen = -1, grams[0]
            for index in rng.permutation(len(grams)):
                context, word = grams[index][:-1], grams[index][-1]
                values = [_mle(counts, context, word)] + _mle_variants(counts, context, word)
                distinct = len({round(v, 12) for v in values if v is not None})
                if distinct > best:
                    best, chosen = distinct, grams[index]
                if distinct == len(values):
                    break
            cases.append([dict(counts), chosen[:-1], chosen[-1]])
        seen = sorted({g[:-1] for g in grams})
        context = seen[int(rng.integers(len(seen)))]
        cases.append([dict(counts), context, "zebra"])  # a seen context, an unseen word: 0
    cases.append([dict(counts), ("zebra",) * (n - 1), "the"])  # an unseen context: 0.0 (nothing to divide by)
    return cases


def _mle(counts, context, word):
    total = sum(c for g, c in counts.items() if g[:-1] == context)
    return counts.get(context + (word,), 0) / total if total else 0.0


def _mle_variants(counts, context, word):
    c = counts.get(context + (word,), 0)
    total = sum(counts.values())
    word_count = sum(v for g, v in counts.items() if g[-1] == word)
    types = sum(1 for g in counts if g[:-1] == context)
    last = sum(v for g, v in counts.items() if g[-2] == context[-1])
    return [
        c / total,
        c / word_count if word_count else 0.0,
        counts.get((word,) + context, 0) / sum(v for g, v in counts.items() if g[:-1] == context)
        if any(g[:-1] == context for g in counts)
        else None,
        c / types if types else None,
        (c / last if last else 0.0) if len(context) > 1 else _mle(counts, context, word),
        c // sum(v for g, v in counts.items() if g[:-1] == context) if any(g[:-1] == context for g in counts) else None,
    ]


_MLE_HINTS = [
    "divide by the count of the context c(w_{i-1}), not by the number of all n-grams: "
    "that gives the joint probability P(w_{i-1}, w_i)",
    "the denominator counts the context (the words before), not the word itself",
    "off by one: the n-gram is the context followed by the word; you put the word first",
    "the denominator is the total count of n-grams starting with the context (a sum of counts), "
    "not the number of different words that follow it",
    "the context is all n-1 previous words: compare the whole tuple, not only its last word",
    "use true division /, not // (which rounds down to 0)",
]


def _judge_mle(cases, records):
    got, expected = [], []
    wrong = {hint: [] for hint in _MLE_HINTS}
    for (counts, context, word), r in zip(cases, records):
        got.append(_expect_number(r, f"P({word!r} | {context})"))
        expected.append(_mle(counts, context, word))
        if not any(g[:-1] == context for g in counts):
            variants = [expected[-1]] * len(_MLE_HINTS)  # every mistake still says 0 (or crashes) here
        else:
            variants = _mle_variants(counts, context, word)
        for hint, v in zip(_MLE_HINTS, variants):
            wrong[hint].append(v)
    what = [f"P({w!r} | {c})" for _, c, w in cases]
    expect_answers(got, expected, wrong, what, rtol=1e-9, atol=1e-12)


def _mle_errors(case, record):
    counts, context, _ = case
    if record["raised"] == "ZeroDivisionError" and not any(g[:-1] == context for g in counts):
        return "for a context that never occurs, c(context) = 0: return 0.0 instead of dividing by zero"
    if record["raised"] == "KeyError":
        return "an n-gram that was never seen has count 0: use counts.get(ngram, 0) (or a Counter lookup)"
    return ""


check_mle_prob = Exercise(
    "1.2",
    "maximum-likelihood probability from counts",
    "mle_prob",
    ("counts", "context", "word"),
    _draw_mle,
    _judge_mle,
    materialise=lambda args: [Counter(args[0]), *args[1:]],  # the exercise hands a Counter
    observe=lambda args, live: [dict(live[0]), *live[1:]],
    errors=_mle_errors,
)


# ---------------------------------------------------------------- 1.3


def _draw_laplace(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for k in (1.0, round(float(rng.uniform(0.05, 0.9)), 3), round(float(rng.uniform(1.5, 3)), 3), 0.0):
        vocab_size = int(rng.integers(5, 60))
        context_count = int(rng.integers(1, 100))
        count = int(rng.integers(1, context_count + 1))
        cases.append([count, context_count, vocab_size, k])
    cases.append([0, int(rng.integers(1, 50)), int(rng.integers(5, 60)), 0.5])  # an unseen n-gram
    cases.append([0, 0, int(rng.integers(5, 60)), 1.0])  # an unseen context: uniform 1 / V
    return cases


def _laplace_variants(count, context_count, vocab_size, k):
    def safe(a, b):
        return a / b if b else None

    return {
        "you forgot the vocabulary size in the denominator: k is added to each of the V words, "
        "so the denominator grows by k * V": safe(count + k, context_count + k),
        "the denominator needs k * V as well, not only c(context)": safe(count + k, context_count),
        "add k times V to the denominator, not V: every one of the V words received k": safe(
            count + k, context_count + vocab_size
        ),
        "use the k you are given, not always 1 (Laplace is the special case k = 1)": safe(
            count + 1, context_count + vocab_size
        ),
        "add k to the count in the numerator, not 1": safe(count + 1, context_count + k * vocab_size),
        "k multiplies only V: the denominator is c(context) + k * V, not k * (c(context) + V)": safe(
            count + k, k * (context_count + vocab_size)
        ),
    }


def _judge_laplace(cases, records):
    got, expected, wrong = [], [], {}
    for (count, context_count, vocab_size, k), r in zip(cases, records):
        got.append(_expect_number(r, f"P with c={count}, c(context)={context_count}, V={vocab_size}, k={k}"))
        expected.append((count + k) / (context_count + k * vocab_size))
        for hint, v in _laplace_variants(count, context_count, vocab_size, k).items():
            wrong.setdefault(hint, []).append(v)
    what = [f"P with c={c}, c(context)={h}, V={v}, k={k}" for c, h, v, k in cases]
    expect_answers(got, expected, wrong, what, rtol=1e-9, atol=1e-12)


def _laplace_errors(case, record):
    count, context_count, vocab_size, k = case
    if record["raised"] == "ZeroDivisionError" and k == 0:
        return "k multiplies only V: the denominator is c(context) + k * V, not k * (c(context) + V)"
    if record["raised"] == "ZeroDivisionError" and context_count == 0:
        return "the denominator needs k * V as well, not only c(context) (an unseen context has c(context) = 0)"
    return ""


check_laplace_prob = Exercise(
    "1.3",
    "add-k (Laplace) smoothing",
    "laplace_prob",
    ("count", "context_count", "vocab_size", "k"),
    _draw_laplace,
    _judge_laplace,
    errors=_laplace_errors,
)


# ---------------------------------------------------------------- 1.4


def _draw_perplexity(seed):
    rng = np.random.default_rng(seed)
    return [
        [[math.log(1 / 10)] * int(rng.integers(5, 30))],  # the lecture's random digits: perplexity 10
        [[float(x) for x in np.log(rng.uniform(0.01, 1, size=int(rng.integers(5, 40))))]],
        [np.log(rng.uniform(0.2, 1, size=int(rng.integers(3, 9))))],  # a NumPy array works too
        [[float(np.log(rng.uniform(0.05, 0.9)))]],  # a single token
    ]


def _judge_perplexity(cases, records):
    got, expected = [], []
    hints = [
        "these are natural logs (ln), so perplexity is e^J; 2^J is for J in bits (or convert: bits = nats / ln 2)",
        "log base: use e^J for natural logs, not 10^J",
        "J is the mean over tokens, not the sum: divide by the number of tokens",
        "you forgot the minus sign: J = -(1/n) sum log P, and perplexity is at least 1",
        "divide by n, the number of tokens, not n - 1",
        "converting nats to bits divides by ln 2: 2 ** (J / ln 2) equals e^J",
    ]
    wrong = {h: [] for h in hints}
    for (log_probs,), r in zip(cases, records):
        got.append(_expect_number(r, "the perplexity"))
        lp = np.asarray(log_probs, dtype=float)
        J = -lp.mean()
        expected.append(math.exp(J))
        n = len(lp)
        for h, v in zip(
            hints,
            [
                2**J,
                10**J,
                math.exp(-lp.sum()),
                math.exp(-J),
                math.exp(-lp.sum() / (n - 1)) if n > 1 else None,
                2 ** (J * math.log(2)),
            ],
        ):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, ["the perplexity"] * len(got), rtol=1e-5, atol=1e-9)


def _perplexity_errors(case, record):
    if record["raised"] == "ZeroDivisionError" and len(case[0]) == 1:
        return "divide by n, the number of tokens, not n - 1 (a single token is a valid input)"
    if record["raised"] == "OverflowError":
        return "J is the mean over tokens, not the sum: divide by the number of tokens"
    return ""


check_perplexity = Exercise(
    "1.4",
    "perplexity from log-probabilities",
    "perplexity",
    ("log_probs",),
    _draw_perplexity,
    _judge_perplexity,
    errors=_perplexity_errors,
)


# ---------------------------------------------------------------- 1.5


def _draw_sample(seed):
    rng = np.random.default_rng(seed)
    fixed = np.array([0.1, 0.2, 0.3, 0.4])
    # Cases where p ** T and p ** (1 / T) differ, u exactly on a cumulative sum (strictly greater
    # means the next index), u = 0 with a word of probability 0 first, then fresh random ones.
    cases = [
        [fixed.copy(), 1.0, 0.15],
        [fixed.copy(), 0.5, 0.5],
        [fixed.copy(), 2.0, 0.3],
        [np.array([0.25, 0.25, 0.5]), 1.0, 0.25],
        [np.array([0.5, 0.5]), 0.5, 0.5],
        [np.array([0.0, 0.5, 0.5]), 1.0, 0.0],
        [[0.125, 0.375, 0.5], 1.0, 0.5],  # a list works too
    ]
    for _ in range(10):
        p = rng.dirichlet(np.ones(int(rng.integers(3, 9))))
        cases.append([p, float(rng.choice([0.5, 1.0, 2.0])), float(rng.uniform(0, 1))])
    return cases


def _inverse_cdf(weights, u, side="right"):
    return min(int(np.searchsorted(np.cumsum(weights), u, side=side)), len(weights) - 1)


def _judge_sample(cases, records):
    hints = [
        "you always pick the most likely word: that is greedy decoding. Sample instead: walk the "
        "cumulative probabilities until they exceed u",
        "the temperature divides the log-probabilities: use p ** (1 / temperature), not p ** temperature",
        "renormalise after p ** (1 / temperature), so the probabilities sum to 1 again",
        "off by one: return the first index whose cumulative probability exceeds u",
        "strictly greater: when u equals a cumulative sum exactly, the answer is the next index "
        "(searchsorted with side='right', or > rather than >=)",
        "use the temperature: q is proportional to p ** (1 / T), not p itself",
    ]
    got, expected, outside = [], [], None
    wrong = {h: [] for h in hints}
    for (p, temperature, u), r in zip(cases, records):
        p = np.asarray(p, dtype=float)
        kind = r["type"]
        value = r["returned"]
        if kind == "bool" or not (kind == "int" or (kind.startswith(("int", "uint")) and np.ndim(value) == 0)):
            raise Mistake(f"return the index of the sampled word (an int), got {kind}")
        index = int(value)
        if not 0 <= index < len(p) and outside is None:
            outside = (index, len(p))
        q = p ** (1 / temperature)
        right = _inverse_cdf(q / q.sum(), u)
        got.append(index)
        expected.append(right)
        for h, v in zip(
            hints,
            [
                int(np.argmax(p)),
                _inverse_cdf(p**temperature / (p**temperature).sum(), u),
                _inverse_cdf(q, u),
                right + 1,
                _inverse_cdf(q / q.sum(), u, side="left"),
                _inverse_cdf(p, u),
            ],
        ):
            wrong[h].append(v)
    what = [
        f"the index for p={np.round(np.asarray(p, dtype=float), 3).tolist()}, T={t}, u={u:.4g}" for p, t, u in cases
    ]
    try:
        expect_answers(got, expected, wrong, what, rtol=0, atol=0)
    except Mistake as mistake:
        if outside and str(mistake) not in wrong:
            raise Mistake(
                f"you returned index {outside[0]} for {outside[1]} words: indices run from 0 to len(probs) - 1 "
                "(did the probabilities sum to 1?)"
            ) from None
        raise


check_sample_next = Exercise(
    "1.5",
    "sampling the next word with a temperature",
    "sample_next",
    ("probs", "temperature", "u"),
    _draw_sample,
    _judge_sample,
)

__all__ = ["check_count_ngrams", "check_mle_prob", "check_laplace_prob", "check_perplexity", "check_sample_next"]
