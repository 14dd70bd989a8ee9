"""Lesson 01 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

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

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("count_ngrams", '["<s>"] * (n - 1) + list(sentence) + ["</s>"] * (n - 1)', "list(sentence)", "pad the sentence"),
    ("count_ngrams", ' + ["</s>"] * (n - 1)', "", "only the left"),
    (
        "count_ngrams",
        '["<s>"] * (n - 1) + list(sentence) + ["</s>"] * (n - 1)',
        '["<s>"] * n + list(sentence) + ["</s>"] * n',
        "too much padding",
    ),
    ("count_ngrams", "len(padded) - n + 1", "len(padded) - n", "off by one"),
    ("count_ngrams", "tuple(padded[i:i + n])", "' '.join(padded[i:i + n])", "tuples"),
    (
        "mle_prob",
        "return counts.get(context + (word,), 0) / context_count",
        "return counts.get(context + (word,), 0) / sum(counts.values())",
        "joint probability",
    ),
    ("mle_prob", "if ngram[:-1] == context", "if ngram[-1] == word", "not the word itself"),
    ("mle_prob", "        return 0.0\n", "        pass\n", "dividing by zero"),
    ("mle_prob", "counts.get(context + (word,), 0)", "counts.get((word,) + context, 0)", "off by one"),
    ("laplace_prob", "(context_count + k * vocab_size)", "(context_count + k)", "vocabulary size"),
    ("laplace_prob", "(context_count + k * vocab_size)", "context_count", "k * V"),
    ("laplace_prob", "(context_count + k * vocab_size)", "(context_count + vocab_size)", "not V"),
    (
        "laplace_prob",
        "(count + k) / (context_count + k * vocab_size)",
        "(count + 1) / (context_count + vocab_size)",
        "the k you are given",
    ),
    ("perplexity", "return math.exp(J)", "return 2 ** J", "natural logs"),
    ("perplexity", "return math.exp(J)", "return 10 ** J", "not 10^J"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = -sum(log_probs)", "not the sum"),
    ("perplexity", "J = -sum(log_probs) / len(log_probs)", "J = sum(log_probs) / len(log_probs)", "minus sign"),
    (
        "sample_next",
        'index = int(np.searchsorted(np.cumsum(q), u, side="right"))',
        "index = int(np.argmax(q))",
        "greedy",
    ),
    ("sample_next", "** (1.0 / temperature)", "** temperature", "1 / temperature"),
    ("sample_next", "    q = q / q.sum()\n", "", "renormalise"),
    ("sample_next", "return min(index, len(q) - 1)", "return index + 1", "off by one"),
]


(
    test_solution_passes,
    test_stub_is_not_implemented,
    test_mutant_is_rejected_with_a_targeted_hint,
    test_every_exercise_has_at_least_three_mutants,
    test_a_crash_in_student_code_is_reported_not_raised,
) = lesson_suite(LESSON, EXERCISES, MUTANTS, solution_repeats=1, mutant_repeats=5)
