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

BOS, EOS, UNK = "<s>", "</s>", "<UNK>"
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


def _standard(sentence, n, left=None, right=1):
    """The n-grams that end at each scored token of the padded sentence: n-1 <s>, words, one </s>."""
    padded = _padded(sentence, n, left=left, right=right)
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(max(n - 1, 0), len(padded)))


def _draw_count(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for n in (1, 3, 2, 4, int(rng.integers(3, 6))):
        sentence = _sentence(rng, int(rng.integers(2, 8)))
        sentence += sentence[:n]  # a repeated n-gram in every sentence: counts above 1
        cases.append([sentence, n])
    cases.append([_sentence(rng, 1), int(rng.integers(3, 5))])  # one word: every n-gram is mostly padding
    return cases


def _count_variants(sentence, n):
    padded = _padded(sentence, n, right=1)
    return {
        f"pad the sentence first: n-1 '{BOS}' on the left (context) and one '{EOS}' on the right (predicted)": (
            _grams(list(sentence), n)
        ),
        f"add one '{EOS}' on the right: the end of a sentence is a token the model must predict": _standard(
            sentence, n, right=0
        ),
        f"pad n-1 '{BOS}' on the left as well: the first word needs a context of n-1 tokens": _grams(
            _padded(sentence, n, left=0, right=1), n
        ),
        f"too much padding: n-1 '{BOS}' on the left, not n (an n-gram ending in '{BOS}' predicts '{BOS}', "
        "which is never predicted)": _grams(_padded(sentence, n, left=n, right=1), n),
        f"one '{EOS}' per sentence, not n-1: extra '{EOS}' are near-certain predictions that flatter "
        "higher orders (that is nltk's pad_both_ends)": _grams(_padded(sentence, n, right=n - 1), n),
        f"n-1 '{BOS}' on the left, not always one (one is right only for bigrams)": _grams(
            _padded(sentence, n, left=1, right=1), n
        ),
        "off by one: the first n-gram ends at the first word, index n-1 of the padded list": Counter(
            tuple(padded[i - n + 1 : i + 1]) for i in range(n, len(padded))
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
        expected = _standard(sentence, n)
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
    "1.1",
    "the n-grams of the standard count",
    "count_ngrams",
    ("sentence", "n"),
    _draw_count,
    _judge_count,
    forbidden=("course_lib.ngram.NGramLM", "nltk.lm.preprocessing.pad_both_ends", "nltk.util.ngrams"),
)


# ---------------------------------------------------------------- 1.2


def add_k_perplexity(train, test, n, k, *, left=None, right=1, v_shift=0, numerator_only=False, log_mix=False,
                     plain_v=False, per_sentence=False, words_only=False, every_context=False):  # fmt: skip
    """The reference (keyword arguments off): perplexity of an add-k n-gram model under the standard count.

    The keywords give the known mistakes: ``left``/``right`` padding, |V| shifted by ``v_shift``, k
    added to the numerator only (or V, not k * V, in the denominator), natural logs raised to 2, J divided by the number of sentences, J
    divided by the number of words only (the ends scored but not counted in N), c(h) counted for
    every (n-1)-gram of the padded sentence (the last one, which ends at the end symbol, too).
    """
    left = n - 1 if left is None else left
    vocab = {w for s in train for w in s} | {EOS, UNK}
    V = len(vocab) + v_shift

    def pad(sentence):
        return [BOS] * left + [w if w in vocab else UNK for w in sentence] + [EOS] * right

    counts, context_counts = Counter(), Counter()
    for sentence in train:
        p = pad(sentence)
        for i in range(n - 1, len(p)):
            counts[tuple(p[i - n + 1 : i + 1])] += 1
            context_counts[tuple(p[i - n + 1 : i])] += 1
        if every_context:
            context_counts[tuple(p[len(p) - n + 1 :])] += 1
    total, N = 0.0, 0
    for sentence in test:
        p = pad(sentence)
        for i in range(n - 1, len(p)):
            gram = tuple(p[i - n + 1 : i + 1])
            denominator = context_counts[gram[:-1]] + (0 if numerator_only else V if plain_v else k * V)
            if denominator == 0:
                return None
            prob = (counts[gram] + k) / denominator
            total += math.log(prob) if log_mix else math.log2(prob)
            N += 1
    if words_only:
        N -= len(test) * right
    return 2 ** (-total / (len(test) if per_sentence else N))


_PPL_HINTS = {
    f"score the end: pad one '{EOS}' after each sentence and predict it (N = words + sentences)": {"right": 0},
    f"'{BOS}' is context, never predicted: pad n-1 '{BOS}', not n": {"left": "n"},
    f"one '{EOS}' per sentence, not n-1 (nltk's pad_both_ends): the extra ones are near-certain and flatter "
    "higher orders": {"right": "n-1"},
    "k pseudo-counts go to every one of the V words: add k * V to the denominator too": {"numerator_only": True},
    "the denominator adds k * V (k for each of the V words), not V": {"plain_v": True},
    f"V counts every token the model can predict: the training words, '{EOS}' and '{UNK}'": {"v_shift": -1},
    f"V counts '{EOS}' and '{UNK}' too, not only the training words: both can be predicted": {"v_shift": -2},
    f"'{BOS}' is never predicted, so it is not in V: V = training words + '{EOS}' + '{UNK}'": {"v_shift": 1},
    "log base: you summed natural logs (ln) but raised 2 to J; use log2 with 2 ** J (or ln with e ** J)": {
        "log_mix": True
    },
    "use the k you are given: you added 1 (add-one, Laplace) where add-k adds k, to the numerator and k * V to "
    "the denominator": {"k": 1.0},
    "J is the mean over the N scored tokens (words + one end per sentence), not over sentences": {"per_sentence": True},
    f"N counts every scored token: the words and the one '{EOS}' per sentence (N = words + sentences), "
    "not the words alone": {"words_only": True},
    "c(h) counts h only as the context of an n-gram you counted: the last (n-1)-gram of a padded sentence "
    f"(the one ending at '{EOS}') is no context": {"every_context": True},
}


def _ppl_variant(case, spec):
    train, test, n, k = case
    kwargs = {key: (n if v == "n" else n - 1 if v == "n-1" else v) for key, v in spec.items()}
    k = kwargs.pop("k", k)  # a mistake's own k (add-one)
    return add_k_perplexity(train, test, n, k, **kwargs)


def _draw_ppl(seed):
    rng = np.random.default_rng(seed)
    words = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(5, len(WORDS) + 1)), replace=False)]

    def sentences(count, extra=()):
        pool = words + list(extra)
        return [[pool[i] for i in rng.integers(0, len(pool), size=int(rng.integers(1, 7)))] for _ in range(count)]

    cases = []
    for n in (1, 3, 2, int(rng.integers(3, 5))):  # n = 1 first: k in the numerator only is still finite there
        train = sentences(int(rng.integers(6, 15)))
        test = sentences(int(rng.integers(3, 7)), extra=("zebra",))  # unseen words become <UNK>
        test.append(["zebra"])  # an unseen word, so an unseen context too for n > 1
        k = float(rng.choice([1.0, round(float(rng.uniform(0.05, 0.9)), 3)]))
        cases.append([train, test, n, k])
    cases[2][3] = round(float(rng.uniform(0.05, 0.9)), 3)  # one k below 1 on every draw: add-one shows
    return cases


def _judge_ppl(cases, records):
    got = [_expect_number(r, f"the perplexity for n={c[2]}, k={c[3]}") for c, r in zip(cases, records)]
    expected = [add_k_perplexity(*c) for c in cases]
    wrong = {hint: [_ppl_variant(c, spec) for c in cases] for hint, spec in _PPL_HINTS.items()}
    what = [f"the perplexity for n={n}, k={k} ({len(test)} test sentences)" for _, test, n, k in cases]
    expect_answers(got, expected, wrong, what, rtol=1e-6, atol=1e-9)


def _ppl_errors(case, record):
    if record["raised"] == "ZeroDivisionError":
        return "k pseudo-counts go to every one of the V words: add k * V to the denominator too"
    if record["raised"] == "ValueError" and "math domain" in record.get("message", ""):
        return "a probability of 0 has no log: smooth every count with k, including unseen n-grams and contexts"
    return ""


check_add_k_perplexity = Exercise(
    "1.2",
    "an add-k n-gram model and its perplexity",
    "add_k_perplexity",
    ("train", "test", "n", "k"),
    _draw_ppl,
    _judge_ppl,
    errors=_ppl_errors,
    forbidden=(
        "course_lib.ngram.NGramLM",
        "course_lib.smoothing.add_k",
        "nltk.lm.Lidstone",
        "nltk.lm.Laplace",
        "nltk.lm.MLE",
        "nltk.lm.preprocessing.pad_both_ends",
    ),
)


# ---------------------------------------------------------------- 1.3


def _tune(train, val, n, ks, perplexity):
    ppl = [perplexity(train, val, n, k) for k in ks]
    return ks[int(np.argmin(ppl))], ppl


def _draw_tune(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for n in (2, int(rng.choice([1, 3]))):
        for _ in range(100):  # until the best k lies strictly inside the grid (then every mistake shows)
            sentences = [
                [WORDS[i] for i in rng.zipf(1.6, size=int(rng.integers(1, 8))) % len(WORDS)]
                for _ in range(int(rng.integers(40, 80)))
            ]
            cut = int(0.75 * len(sentences))
            ks = sorted({round(float(x), 4) for x in 10.0 ** rng.uniform(-3, 1.5, size=int(rng.integers(5, 9)))})
            ks = [ks[i] for i in rng.permutation(len(ks))]  # not sorted: the best k is found, not assumed
            ppl = [add_k_perplexity(sentences[:cut], sentences[cut:], n, k) for k in ks]
            best = int(np.argmin(ppl))
            in_sorted = sorted(ks).index(ks[best])  # where the best k sits once ks is sorted: elsewhere than in ks
            worst = ks[int(np.argmax(ppl))]  # the highest's k is not the sorted position's (two mistakes apart)
            if min(ks) < ks[best] < max(ks) and ppl != sorted(ppl) and in_sorted != best and sorted(ks)[best] != worst:
                break
        cases.append([sentences[:cut], sentences[cut:], n, ks])
    return cases


def _tune_variants(train, val, n, ks):
    ppl = [add_k_perplexity(train, val, n, k) for k in ks]
    on_train = [add_k_perplexity(train, train, n, k) for k in ks]
    bigram = [add_k_perplexity(train, val, 2, k) for k in ks]
    return {
        "the best k has the LOWEST validation perplexity (you took the highest)": (ks[int(np.argmax(ppl))], ppl),
        "choose k on the validation sentences, not on the training sentences (those favour k -> 0)": (
            ks[int(np.argmin(on_train))],
            on_train,
        ),
        "return the best k itself, not its position in ks": (int(np.argmin(ppl)), ppl),
        "return one perplexity per k, in the order of ks": (ks[int(np.argmin(ppl))], sorted(ppl)),
        "ks is not sorted: return the perplexities in the order of ks as given, not of sorted(ks)": (
            ks[int(np.argmin(ppl))],
            [add_k_perplexity(train, val, n, k) for k in sorted(ks)],
        ),
        "best_k is ks[i] for the position i of the lowest perplexity, in ks as given (ks is not sorted)": (
            sorted(ks)[int(np.argmin(ppl))],
            ppl,
        ),
        "use the order n you are given": (ks[int(np.argmin(bigram))], bigram),
        "best_k is a value of k (the one with the lowest perplexity), not the lowest perplexity itself": (
            min(ppl),
            ppl,
        ),
    }


def _judge_tune(cases, records):
    for (*_, ks), r in zip(cases, records):
        value = r["returned"]
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise Mistake("return a pair (best_k, perplexities): the best k and the list of perplexities, one per k")
        if not isinstance(value[1], (list, tuple, np.ndarray)) or len(value[1]) != len(ks):
            raise Mistake(f"perplexities must have one number per k ({len(ks)} here)")
    # one flat list of numbers: per case, the best k then the perplexities
    got = [float(x) for r in records for x in [r["returned"][0], *r["returned"][1]]]
    expected, wrong, what = [], {}, []
    for case in cases:
        best, ppl = _tune(*case, add_k_perplexity)
        expected += [best, *ppl]
        what += [f"best_k for n={case[2]}, ks={case[3]}"] + [f"the perplexity for k={k} (n={case[2]})" for k in case[3]]
        for hint, (b, p) in _tune_variants(*case).items():
            wrong.setdefault(hint, []).extend([float(b), *p])
    expect_answers(got, expected, wrong, what, rtol=1e-6, atol=1e-9)


check_tune_k = Exercise(
    "1.3",
    "tuning k on held-out text",
    "tune_k",
    ("train", "val", "n", "ks", "perplexity"),
    _draw_tune,
    _judge_tune,
    # the perplexity function handed to the student's tune_k is the check's own reference, so a
    # mistake in Exercise 1.2 does not fail this one
    materialise=lambda args: [*args, add_k_perplexity],
    observe=lambda args, live: live[:4],
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
        "J / ln 2 is in bits, so raise 2 to it (2 ** (J / ln 2) = e^J), not e",
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
                math.exp(J / math.log(2)),
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
    forbidden=("course_lib.train.perplexity",),  # and with it, in a build exercise, all of course_lib
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
    # the same draw _SAME times: an answer that ignores u (np.random.choice) varies between them
    cases += [[np.full(4, 0.25), 1.0, 0.3] for _ in range(_SAME)]
    return cases


_SAME = 6  # repeats of one draw in the cases: all six agree by chance with probability 4 ** -5


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
        if len(got) == len(cases) and len(set(got[-_SAME:])) > 1:
            raise Mistake(
                "use the u you are given: the same probs, temperature and u gave different words "
                "(np.random.choice or random.random draws a number of its own)"
            )
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
    forbidden=("course_lib.lm.sample_next",),
)

__all__ = [
    "check_count_ngrams",
    "check_add_k_perplexity",
    "check_tune_k",
    "check_perplexity",
    "check_sample_next",
    "add_k_perplexity",
]
