"""Lesson 01 checks: pass the solution and right alternatives, report the stub, reject realistic mistakes by name."""

from course_lib.checks import lesson01 as checks

from .mutate import lesson_suite

LESSON = "01_ngrams"
EXERCISES = {
    "count_ngrams": checks.check_count_ngrams,
    "add_k_perplexity": checks.check_add_k_perplexity,
    "tune_k": checks.check_tune_k,
    "perplexity": checks.check_perplexity,
    "sample_next": checks.check_sample_next,
}
PAD = '["<s>"] * (n - 1) + list(sentence) + ["</s>"]'
COUNT = "return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))"
MODEL_PAD = '["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]'
ADD_K = "p = (counts[ngram] + k) / (context_counts[ngram[:-1]] + k * V)"
SAMPLE = "q = np.asarray(probs, dtype=float) ** (1.0 / temperature)\n    q = q / q.sum()"
BEST = "best_k = ks[int(np.argmin(perplexities))]"

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("count_ngrams", PAD, "list(sentence)", "pad the sentence"),
    ("count_ngrams", ' + ["</s>"]', "", "add one '</s>'"),
    ("count_ngrams", '["<s>"] * (n - 1) + list', "list", "pad n-1 '<s>' on the left"),
    ("count_ngrams", '["<s>"] * (n - 1)', '["<s>"] * n', "not n"),
    ("count_ngrams", '["</s>"]', '["</s>"] * (n - 1)', "not n-1"),
    ("count_ngrams", '["<s>"] * (n - 1)', '["<s>"]', "not always one"),
    ("count_ngrams", "range(n - 1, len(padded))", "range(n, len(padded))", "off by one"),
    ("count_ngrams", COUNT, COUNT.replace("Counter(", "Counter(set(") + ")", "every occurrence"),
    (
        "count_ngrams",
        f"padded = {PAD}",
        'sentence[:0] = ["<s>"] * (n - 1)\n    sentence.append("</s>")\n    padded = sentence',
        "in place",
    ),
    # the build: the standard count, add-k and the perplexity
    ("add_k_perplexity", ' + ["</s>"]\n', "\n", "score the end"),
    ("add_k_perplexity", MODEL_PAD, MODEL_PAD.replace('["<s>"] * (n - 1)', '["<s>"] * n'), "never predicted"),
    ("add_k_perplexity", MODEL_PAD, MODEL_PAD.replace('["</s>"]', '["</s>"] * (n - 1)'), "not n-1"),
    ("add_k_perplexity", "+ k * V)", ")", "add k * V to the denominator"),
    ("add_k_perplexity", '| {"</s>", "<UNK>"}', '| {"<UNK>"}', "V counts every token"),
    ("add_k_perplexity", ' | {"</s>", "<UNK>"}', "", "not only the training words"),
    ("add_k_perplexity", ADD_K, "p = (counts[ngram] + 1) / (context_counts[ngram[:-1]] + V)", "add-one"),
    ("add_k_perplexity", "+ k * V)", "+ V)", "not V"),
    ("add_k_perplexity", '| {"</s>", "<UNK>"}', '| {"<s>", "</s>", "<UNK>"}', "not in V"),
    ("add_k_perplexity", "math.log2(p)", "math.log(p)", "log base"),
    ("add_k_perplexity", "-log_prob / N", "-log_prob / len(test)", "not over sentences"),
    ("add_k_perplexity", ADD_K, ADD_K.replace("(counts[ngram] + k)", "counts[ngram]"), "smooth every count"),
    (
        "add_k_perplexity",
        "return 2 ** (-log_prob / N)",
        "return 2 ** (-log_prob / sum(len(sentence) for sentence in test))",
        "not the words alone",
    ),
    (
        "add_k_perplexity",
        "            context_counts[tuple(padded[i - n + 1 : i])] += 1\n",
        "            context_counts[tuple(padded[i - n + 1 : i])] += 1\n"
        "        context_counts[tuple(padded[len(padded) - n + 1 :])] += 1\n",
        "is no context",
    ),
    # the experiment's function
    ("tune_k", BEST, "best_k = ks[int(np.argmax(perplexities))]", "LOWEST"),
    ("tune_k", "perplexity(train, val, n, k)", "perplexity(train, train, n, k)", "validation sentences"),
    ("tune_k", BEST, "best_k = int(np.argmin(perplexities))", "not its position"),
    ("tune_k", BEST, "best_k = min(perplexities)", "not the lowest perplexity itself"),
    ("tune_k", "perplexity(train, val, n, k)", "perplexity(train, val, 2, k)", "the order n"),
    ("tune_k", "return best_k, perplexities", "return best_k, sorted(perplexities)", "in the order of ks"),
    ("tune_k", BEST, "best_k = sorted(ks)[int(np.argmin(perplexities))]", "in ks as given"),
    (
        "tune_k",
        "perplexities = [perplexity(train, val, n, k) for k in ks]\n    " + BEST,
        "perplexities = [perplexity(train, val, n, k) for k in sorted(ks)]\n"
        "    best_k = sorted(ks)[int(np.argmin(perplexities))]",
        "not of sorted(ks)",
    ),
    ("perplexity", "return math.exp(J)", "return 2 ** J", "natural logs"),
    ("perplexity", "return math.exp(J)", "return 10 ** J", "not 10^J"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = -sum(log_probs)", "not the sum"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = sum(log_probs) / len(log_probs)", "minus sign"),
    ("perplexity", "/ len(log_probs)", "/ (len(log_probs) - 1)", "not n - 1"),
    ("perplexity", "return math.exp(J)", "return 2 ** (J * math.log(2))", "nats to bits"),
    ("perplexity", "return math.exp(J)", "return math.exp(J / math.log(2))", "raise 2 to it"),
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
    (
        "sample_next",
        'index = int(np.searchsorted(np.cumsum(q), u, side="right"))',
        "index = int(np.random.choice(len(q), p=q))",
        "use the u you are given",
    ),
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
    (
        "add_k_perplexity",
        "log_prob += math.log2(p)",
        "log_prob += math.log(p) / math.log(2)",
    ),
    (
        "add_k_perplexity",
        "    return 2 ** (-log_prob / N)",
        "    return math.exp(-log_prob * math.log(2) / N)  # e ** J_nats, the same number",
    ),
    (
        "tune_k",
        BEST,
        "best_k = min(zip(perplexities, range(len(ks))))[1]\n    best_k = ks[best_k]",
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
# (function, edit from, edit to, the forbidden name it calls): borrowed answers, refused
BORROWED = [
    # issue 34: course_lib's own answer, reached by names built at run time (the observer refuses it by what runs)
    (
        "perplexity",
        "    return math.exp(J)",
        "    import importlib\n\n    return getattr(importlib.import_module('course_lib.' + 'train'), 'perplexity')(J)",
        "course_lib.train.perplexity",
    ),
    (
        "sample_next",
        "    return min(index, len(q) - 1)",
        "    import importlib\n\n    getattr(importlib.import_module('course_lib.lm'), 'sample_' + 'next')\n"
        "    return getattr(importlib.import_module('course_lib.' + 'lm'), 'sample_next')(None)",
        "course_lib.lm.sample_next",
    ),
    (
        "add_k_perplexity",
        "    vocab = {w for sentence in train",
        '    from course_lib.ngram import NGramLM\n\n    return NGramLM(n, "add-k", k=k).fit(train).perplexity(test)\n'
        "    vocab = {w for sentence in train",
        "course_lib.ngram.NGramLM",
    ),
    (
        "add_k_perplexity",
        "    vocab = {w for sentence in train",
        "    from nltk.lm import Lidstone\n\n    Lidstone(k, n)\n    vocab = {w for sentence in train",
        "nltk.lm.Lidstone",
    ),
    (
        "count_ngrams",
        "    padded = ",
        "    from nltk.lm.preprocessing import pad_both_ends\n\n    list(pad_both_ends(sentence, n))\n    padded = ",
        "nltk.lm.preprocessing.pad_both_ends",
    ),
]

globals().update(
    lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, borrowed=BORROWED, solution_repeats=3, mutant_repeats=5)
)
