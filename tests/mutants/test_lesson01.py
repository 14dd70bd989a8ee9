"""Lesson 01 checks: pass the solution and right alternatives, report the stub, reject realistic mistakes by name."""

from course_lib.checks import lesson01 as checks

from .mutate import lesson_suite

LESSON = "01_ngrams"
EXERCISES = {
    "count_ngrams": checks.check_count_ngrams,
    "mle_prob": checks.check_mle_prob,
    "laplace_prob": checks.check_laplace_prob,
    "perplexity": checks.check_perplexity,
    "sample_next": checks.check_sample_next,
}
PAD = '["<s>"] * (n - 1) + list(sentence) + ["</s>"] * (n - 1)'
COUNT = "return Counter(tuple(padded[i:i + n]) for i in range(len(padded) - n + 1))"
CONTEXT_COUNT = "sum(c for ngram, c in counts.items() if ngram[:-1] == context)"
SAMPLE = "q = np.asarray(probs, dtype=float) ** (1.0 / temperature)\n    q = q / q.sum()"

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("count_ngrams", PAD, "list(sentence)", "pad the sentence"),
    ("count_ngrams", ' + ["</s>"] * (n - 1)', "", "only the left"),
    ("count_ngrams", '["<s>"] * (n - 1) + list', "list", "only the right"),
    ("count_ngrams", PAD, '["<s>"] * n + list(sentence) + ["</s>"] * n', "too much padding"),
    ("count_ngrams", PAD, '["<s>"] + list(sentence) + ["</s>"]', "not always one"),
    ("count_ngrams", '["</s>"] * (n - 1)', '["</s>"]', "on the right, not one"),
    ("count_ngrams", "len(padded) - n + 1", "len(padded) - n", "off by one"),
    ("count_ngrams", "tuple(padded[i:i + n])", "' '.join(padded[i:i + n])", "tuples"),
    ("count_ngrams", "tuple(padded[i:i + n])", "tuple(padded[i:i + 2])", "length n="),
    ("count_ngrams", COUNT, COUNT.replace("Counter(", "Counter(set(") + ")", "every occurrence"),
    (
        "count_ngrams",
        f"padded = {PAD}",
        'sentence[:0] = ["<s>"] * (n - 1)\n    sentence += ["</s>"] * (n - 1)\n    padded = sentence',
        "in place",
    ),
    (
        "mle_prob",
        "return counts.get(context + (word,), 0) / context_count",
        "return counts.get(context + (word,), 0) / sum(counts.values())",
        "joint probability",
    ),
    ("mle_prob", "if ngram[:-1] == context", "if ngram[-1] == word", "not the word itself"),
    ("mle_prob", "        return 0.0\n", "        pass\n", "dividing by zero"),
    ("mle_prob", "counts.get(context + (word,), 0)", "counts.get((word,) + context, 0)", "off by one"),
    ("mle_prob", CONTEXT_COUNT, CONTEXT_COUNT.replace("sum(c ", "sum(1 "), "not the number of different words"),
    ("mle_prob", "if ngram[:-1] == context", "if ngram[-2] == context[-1]", "only its last word"),
    ("mle_prob", ") / context_count", ") // context_count", "true division"),
    ("mle_prob", "counts.get(context + (word,), 0)", "counts.setdefault(context + (word,), 0)", "in place"),
    ("laplace_prob", "(context_count + k * vocab_size)", "(context_count + k)", "vocabulary size"),
    ("laplace_prob", "(context_count + k * vocab_size)", "context_count", "k * V"),
    ("laplace_prob", "(context_count + k * vocab_size)", "(context_count + vocab_size)", "not V"),
    (
        "laplace_prob",
        "(count + k) / (context_count + k * vocab_size)",
        "(count + 1) / (context_count + vocab_size)",
        "the k you are given",
    ),
    ("laplace_prob", "(count + k)", "(count + 1)", "not 1"),
    ("laplace_prob", "(context_count + k * vocab_size)", "(k * (context_count + vocab_size))", "k multiplies only V"),
    ("perplexity", "return math.exp(J)", "return 2 ** J", "natural logs"),
    ("perplexity", "return math.exp(J)", "return 10 ** J", "not 10^J"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = -sum(log_probs)", "not the sum"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = sum(log_probs) / len(log_probs)", "minus sign"),
    ("perplexity", "/ len(log_probs)", "/ (len(log_probs) - 1)", "not n - 1"),
    ("perplexity", "return math.exp(J)", "return 2 ** (J * math.log(2))", "nats to bits"),
    ("perplexity", "log_probs = list(log_probs)", "log_probs.sort()", "in place"),
    (
        "sample_next",
        'index = int(np.searchsorted(np.cumsum(q), u, side="right"))',
        "index = int(np.argmax(q))",
        "greedy",
    ),
    ("sample_next", "** (1.0 / temperature)", "** temperature", "1 / temperature"),
    ("sample_next", "    q = q / q.sum()\n", "", "renormalise"),
    ("sample_next", "return min(index, len(q) - 1)", "return index + 1", "off by one"),
    ("sample_next", 'side="right"', 'side="left"', "strictly greater"),
    ("sample_next", " ** (1.0 / temperature)", "", "use the temperature"),
    (
        "sample_next",
        SAMPLE,
        "q = np.asarray(probs, dtype=float)\n    q **= 1.0 / temperature\n    q /= q.sum()",
        "in place",
    ),
]

# (function, edit from, edit to): different but right code that must pass
ALTERNATIVES = [
    ("count_ngrams", COUNT, "return Counter(zip(*(padded[i:] for i in range(n))))"),
    ("mle_prob", CONTEXT_COUNT, "sum(counts[g] for g in list(counts) if g[: len(context)] == context)"),
    (
        "laplace_prob",
        "(count + k) / (context_count + k * vocab_size)",
        "(k + count) / (vocab_size * k + context_count)",
    ),
    (
        "perplexity",
        "return math.exp(J)",
        "import torch\n    return torch.tensor(log_probs, dtype=torch.float32).mean().neg().exp().item()",
    ),
    (
        "sample_next",
        'index = int(np.searchsorted(np.cumsum(q), u, side="right"))',
        "total = 0.0\n    for index, w in enumerate(q):\n        total += w\n        if total > u:\n            break",
    ),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))
