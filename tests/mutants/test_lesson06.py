"""Lesson 06 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson06 as checks

from .mutate import lesson_suite

LESSON = "06_masked_attention"
EXERCISES = {
    "causal_mask": checks.check_causal_mask,
    "masked_row": checks.check_masked_row,
    "alpha": checks.check_alpha,
}

MASK = "torch.ones(T, T, dtype=torch.bool).tril()"
FILL = 'e_i = e_i.masked_fill(j > i, float("-inf"))'

ROW = "return torch.softmax(e_i, dim=0)"
ALPHA = 'weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)'

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool).triu()", "transposed"),
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool).tril(-1)", "diagonal"),
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool).triu(1)", "nn.MultiheadAttention's attn_mask convention"),
    ("causal_mask", MASK, "torch.ones(T, T).tril()", "boolean tensor"),
    (
        "causal_mask",
        MASK,
        'torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))',
        "additive float mask",
    ),
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool).tril(1)", "off by one"),
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool)", "nothing is masked"),
    ("causal_mask", MASK, "torch.ones(8, 8, dtype=torch.bool).tril()", "not a fixed number"),
    ("causal_mask", MASK, MASK + ".numpy()", "return a torch.Tensor"),
    ("causal_mask", MASK, MASK + ".tolist()", "return a torch.Tensor"),
    ("masked_row", FILL, "pass", "forgot the mask"),
    (
        "masked_row",
        FILL + "  # the future gets -inf, so exp(-inf) = 0\n    " + ROW,
        ROW + " * (j <= i)",
        "summing to less than 1",
    ),
    ("masked_row", "j > i", "j >= i", "masked the diagonal"),
    ("masked_row", "j > i", "j < i", "masked the past"),
    ("masked_row", "torch.arange(1, n + 1, device=e_i.device)", "torch.arange(n, device=e_i.device)", "off by one"),
    ("masked_row", 'float("-inf")', "0.0", "exp(0) = 1"),
    ("masked_row", "e_i = e_i.masked_fill(", "e_i.masked_fill_(", "changed its input `e_i` in place"),
    ("masked_row", ROW, "return e_i", "returned the masked scores"),
    ("masked_row", ROW, "return torch.log_softmax(e_i, dim=0)", "log_softmax"),
    ("masked_row", "n = e_i.shape[0]", "n = 5", "not a fixed size"),
    ("masked_row", ROW, "return torch.softmax(e_i, dim=0).tolist()", "return a torch.Tensor"),
    ("alpha", "weights[i - 1, j - 1]", "weights[i, j]", "count from 1"),
    ("alpha", "dim=-1", "dim=0", "wrong axis"),
    (
        "alpha",
        "dtype=torch.bool, device=scores.device).tril()",
        "dtype=torch.bool, device=scores.device).triu()",
        "masked the past",
    ),
    ("alpha", 'scores.masked_fill(~allowed, float("-inf"))', "scores", "forgot the mask"),
    ("alpha", "weights[i - 1, j - 1]", "weights[j - 1, i - 1]", "swapped i and j"),
    (
        "alpha",
        "dtype=torch.bool, device=scores.device).tril()",
        "dtype=torch.bool, device=scores.device).tril(-1)",
        "diagonal",
    ),
    ("alpha", 'float("-inf")', "0.0", "exp(0) = 1"),
    (
        "alpha",
        ALPHA,
        'scores.masked_fill_(~allowed, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)',
        "changed its input `scores` in place",
    ),
    ("alpha", "weights[i - 1, j - 1].item()", "weights[i - 1, j - 1]", "not a tensor"),
    ("alpha", ALPHA, "weights = torch.softmax(scores, dim=-1) * allowed", "summing to less than 1"),
    ("alpha", "n = scores.shape[0]", "n = 6", "not a fixed size"),
]

# (function, edit from, edit to): different but right code, which must pass
ALTERNATIVES = [
    ("causal_mask", MASK, "torch.arange(T)[:, None] >= torch.arange(T)[None, :]"),
    ("causal_mask", MASK, "~torch.ones(T, T, dtype=torch.bool).triu(1)"),
    ("masked_row", 'float("-inf")', "-1e9"),
    (
        "masked_row",
        FILL + "  # the future gets -inf, so exp(-inf) = 0\n    " + ROW,
        "w = torch.exp(e_i[:i] - e_i[:i].max())\n    return torch.cat([w / w.sum(), torch.zeros(n - i, dtype=e_i.dtype)])",
    ),
    (
        "alpha",
        "return weights[i - 1, j - 1].item()",
        "row = torch.softmax(scores[i - 1, :i], dim=0)\n    return float(row[j - 1]) if j <= i else 0.0",
    ),
    ("alpha", 'float("-inf")', 'float("-1e30")'),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=5, mutant_repeats=8))


def test_the_checks_agree_with_course_lib_attention():
    """The checks' own references and the library compute the same thing (two independent oracles)."""
    import torch

    from course_lib.attention import causal_mask, masked_softmax

    for T in (1, 3, 6):
        assert torch.equal(checks._lower(T), causal_mask(T))
    e = torch.randint(-2, 3, (6, 6)).double()
    weights = masked_softmax(e, causal_mask(6))
    for i in range(1, 7):
        assert torch.allclose(torch.tensor(checks._reference_row(e[i - 1].numpy(), i)), weights[i - 1])
    assert torch.allclose(checks._masked_weights(e, checks._lower(6)), weights, atol=1e-12)
