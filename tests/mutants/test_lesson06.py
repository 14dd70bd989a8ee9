"""Lesson 06 checks: pass the solution, report the stub, reject realistic mistakes with the right hint,
refuse a borrowed answer."""

from course_lib.checks import lesson06 as checks

from .mutate import lesson_suite

LESSON = "06_masked_attention"
EXERCISES = {
    "alpha": checks.check_alpha,
    "by_hand": checks.check_by_hand,
    "masked_attention": checks.check_masked_attention,
    "leak_test": checks.check_leak_test,
}

ALPHA = 'weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)'
ALLOWED = "allowed = causal[None, :, :] & real_keys[:, None, :]"
SAFE = (  # the solution's care for a query with no key at all
    "    empty = ~allowed.any(dim=-1, keepdim=True)  # (B, T, 1): a query with no key at all (an empty sentence)\n"
    "    e = e.masked_fill(empty, 0.0)  # the softmax of a row of -inf would be 0/0 = NaN\n"
    "    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1\n"
    "    weights = weights.masked_fill(empty, 0.0)  # no key: weights 0 and output 0 (torch 2.5 and later do the same)"
)

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("alpha", "weights[i - 1, j - 1]", "weights[i, j]", "count from 1"),
    # issue 34b (outsider M6.1.1): counted from 0, clamped at the edge so that it never crashes
    ("alpha", "weights[i - 1, j - 1]", "weights[min(i, n - 1), min(j, n - 1)]", "count from 1"),
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
    (  # row i's kept scores alone: no entry for a key j > i
        "alpha",
        ALPHA + "  # each row sums to 1\n    return weights[i - 1, j - 1].item()",
        "row = torch.softmax(scores[i - 1, :i], dim=0)\n    return row[j - 1].item()",
        "its weight is 0",
    ),
    (
        "alpha",
        "dtype=torch.bool, device=scores.device).tril()",
        "dtype=torch.bool, device=scores.device).tril(1)",
        "one step into the future",
    ),
    (
        "alpha",
        ALPHA,
        'scores.masked_fill_(~allowed, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)',
        "changed its input `scores` in place",
    ),
    ("alpha", "weights[i - 1, j - 1].item()", "weights[i - 1, j - 1]", "not a tensor"),
    ("alpha", ALPHA, "weights = torch.softmax(scores, dim=-1) * allowed", "summing to less than 1"),
    ("alpha", "n = scores.shape[0]", "n = 6", "not a fixed size"),
    # by hand
    ("by_hand", '"alpha_44": 0.0', '"alpha_44": exp(1) / (exp(-1) + exp(-1) + exp(2) + exp(1))', "key 4 is padding"),
    ("by_hand", '"alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2))', '"alpha_42": 0.0', "not the padded query"),
    (
        "by_hand",
        '"alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2))',
        '"alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2) + exp(1))',
        "key 4 is padding",
    ),
    (
        "by_hand",
        '"alpha_22": exp(1) / (exp(1) + exp(1))',
        '"alpha_22": exp(1) / (exp(1) + exp(1) + exp(-1))',
        "hides the future",
    ),
    (
        "by_hand",
        '"alpha_33": exp(1) / (exp(0) + exp(1) + exp(1))',
        '"alpha_33": exp(1) / (exp(0) + exp(1) + exp(1) + exp(0))',
        "-inf, not 0",
    ),
    ("by_hand", '"alpha_33": exp(1) / (exp(0) + exp(1) + exp(1))', '"alpha_33": 0.5', "alpha_33 is not right"),
    ("by_hand", '"alpha_44": 0.0', '"alpha_44": None', "a number"),
    # the build
    ("masked_attention", "torch.softmax(e, dim=-1)", "torch.softmax(e, dim=-2)", "wrong axis"),
    (  # the same mistake, with the NaN of the all-masked columns zeroed
        "masked_attention",
        "torch.softmax(e, dim=-1)",
        "torch.nan_to_num(torch.softmax(e, dim=-2), nan=0.0)",
        "wrong axis",
    ),
    ("masked_attention", "causal = j <= i", "causal = j < i", "diagonal"),
    ("masked_attention", "causal = j <= i", "causal = j <= i + 1", "off by one"),
    ("masked_attention", "causal = j <= i", "causal = j >= i", "swapped"),
    (  # a size typed as a number, then sliced: fails only when some T exceeds it (a T above 8 on every draw)
        "masked_attention",
        "causal = j <= i",
        "causal = torch.ones(8, 8, dtype=torch.bool).tril()[:T, :T]",
        "take T and B from the inputs",
    ),
    ("masked_attention", "< lengths[:, None]", "<= lengths[:, None]", "padding mask is off by one"),
    ("masked_attention", 'float("-inf")', "0.0", "exp(0) = 1"),
    ("masked_attention", ALLOWED, "allowed = causal[None, :, :] & real_keys[:, :, None]", "query axis"),
    ("masked_attention", ALLOWED, "allowed = causal[None, :, :] | real_keys[:, None, :]", "AND"),
    ("masked_attention", ALLOWED, "allowed = causal[None, :, :].expand(B, T, T)", "ignored the padding"),
    ("masked_attention", ALLOWED, "allowed = real_keys[:, None, :].expand(B, T, T)", "ignored the future"),
    (
        "masked_attention",
        "output = weights @ values",
        "output = weights.transpose(-2, -1) @ values",
        "weights @ values",
    ),
    (
        "masked_attention",
        'e = scores.masked_fill(~allowed, float("-inf"))',
        'e = scores.masked_fill_(~allowed, float("-inf"))',
        "in place",
    ),
    ("masked_attention", "return output, weights", "return weights, output", "shape"),
    ("masked_attention", SAFE, "    weights = torch.softmax(e, dim=-1)", "NaN"),
    (  # a large negative number for -inf, and no care for an empty sentence: its queries spread 1/T
        "masked_attention",
        'e = scores.masked_fill(~allowed, float("-inf"))  # exp(-inf) = 0\n' + SAFE,
        "e = scores.masked_fill(~allowed, -1e9)\n    weights = torch.softmax(e, dim=-1)",
        "equal weights 1/T",
    ),
    # the experiment
    ("leak_test", "padded[~real] += 100.0", "padded[:, 0] += 100.0", "'padding'"),
    ("leak_test", "last = lengths[0].item() - 1", "last = lengths[0].item()", "'last token'"),
    ("leak_test", '"last token, earlier queries": moved[:last]', '"last token, earlier queries": moved[:]', "earlier"),
    (
        "leak_test",
        '"last token, earlier queries": moved[:last]',
        '"last token, earlier queries": moved[: last + 1]',
        "earlier",
    ),
    ("leak_test", "changed[0, last] += 100.0", "changed[0, -1] += 100.0", "'last token'"),
    ("leak_test", '"padding": moved_padding,', '"pad": moved_padding,', "exactly the keys"),
    ("leak_test", "changed[0, last] += 100.0", "changed[0, last] += 10.0", "add exactly 100.0"),
    (
        "leak_test",
        "changed[0, last] += 100.0",
        "changed[0, last] = torch.randn(changed.shape[-1])",
        "add exactly 100.0",
    ),
    # issue 34b (outsider M6.4.1): 'padding' over every output, the padded queries too (0 with a right masked
    # attention: the check hands in a leaky one, causal mask only, where the padded queries' outputs move)
    (
        "leak_test",
        "(masked_attention(scores, padded, lengths)[0] - output).abs()[real].max()",
        "(masked_attention(scores, padded, lengths)[0] - output).abs().max()",
        "padded queries' outputs",
    ),
]

# (function, edit from, edit to): different but right code, which must pass
ALTERNATIVES = [
    (
        "alpha",
        "return weights[i - 1, j - 1].item()",
        "row = torch.softmax(scores[i - 1, :i], dim=0)\n    return float(row[j - 1]) if j <= i else 0.0",
    ),
    ("alpha", 'float("-inf")', 'float("-1e30")'),
    ("by_hand", '"alpha_22": exp(1) / (exp(1) + exp(1))', '"alpha_22": 0.5'),
    ("masked_attention", "causal = j <= i", "causal = torch.ones(T, T, dtype=torch.bool).tril()"),
    ("masked_attention", "    e = e.masked_fill(empty, 0.0)", "    pass"),  # NaN rows, zeroed after: right too
    ("masked_attention", "output = weights @ values", 'output = torch.einsum("bij,bjd->bid", weights, values)'),
    ("leak_test", "padded[~real] += 100.0", "padded = torch.where(real[:, :, None], values, values - 7.0)"),
]

# (function, edit from, edit to, the forbidden name it calls): right answers that borrow, to be refused
BORROWED = [
    (
        "alpha",
        ALPHA,
        "from course_lib.attention import masked_softmax\n    weights = masked_softmax(scores, allowed)",
        "course_lib.attention.masked_softmax",
    ),
    (
        "by_hand",
        "    exp = math.exp\n",
        "    import torch\n"
        "    from course_lib.attention import decoder_mask, masked_softmax\n"
        "    e = torch.tensor([[1.0, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]])\n"
        "    w = masked_softmax(e, decoder_mask([3], 4)[0])\n"
        "    return {k: w[int(k[-2]) - 1, int(k[-1]) - 1].item() for k in ('alpha_22', 'alpha_33', 'alpha_42', 'alpha_44')}\n"
        "    exp = math.exp\n",
        "course_lib.attention.decoder_mask",
    ),
    (
        "masked_attention",
        ALLOWED,
        "from course_lib.attention import decoder_mask\n    allowed = decoder_mask(lengths, T)",
        "course_lib.attention.decoder_mask",
    ),
    (
        "leak_test",
        "real = positions[None, :] < lengths[:, None].to(values.device)",
        "from course_lib.attention import padding_mask\n    real = padding_mask(lengths, scores.shape[1])",
        "course_lib.attention.padding_mask",
    ),
    # refused by what runs, whatever name reached it: routes that no list of forbidden names covers
    (  # the check's own reference function
        "masked_attention",
        "    B, T, _ = scores.shape\n",
        "    from course_lib.checks import lesson06\n    return lesson06.reference_masked_attention(scores, values, lengths)\n",
        "course_lib.checks.lesson06.reference_masked_attention",
    ),
    (  # issue 34b (outsider B6.3.4): torch's fused masked softmax, reached by a string
        "masked_attention",
        "    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1\n",
        '    weights = getattr(torch, "_masked" + "_softmax")(scores, ~allowed, 2, 0).nan_to_num(0.0)\n',
        "torch._masked_softmax",
    ),
    (  # the same family: the softmax that zeroes a row with no key (what torch's SDPA kernels use)
        "masked_attention",
        "    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1\n",
        "    weights = torch.ops.aten._safe_softmax(scores.masked_fill(~allowed, float('-inf')), -1)\n",
        "torch.ops.aten._safe_softmax",
    ),
    # issue 33, seventh class: torch's softmax over what a mask keeps, under its other names
    (  # softmin of the negated scores is the softmax
        "masked_attention",
        "    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1\n",
        "    weights = torch.masked.softmin(-scores, -1, mask=allowed).nan_to_num(0.0)\n",
        "torch.masked.softmin",
    ),
    (  # a sparse tensor's softmax: what is not stored counts as -inf, so the sparsity pattern is the mask
        "masked_attention",
        "    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1\n",
        "    kept = torch.sparse_coo_tensor(allowed.nonzero().T, scores[allowed], scores.shape)\n"
        "    weights = torch.sparse.softmax(kept, -1).to_dense()\n",
        "torch.sparse.softmax",
    ),
    (  # 6.1 too: the masked softmax of the masked tensors
        "alpha",
        ALPHA,
        "weights = torch.masked.softmax(scores, -1, mask=allowed).nan_to_num(0.0)",
        "torch.masked.softmax",
    ),
]

# pytest collects the suite's tests (solution, stub, mutants, alternatives, borrowed, random state) here.
globals().update(
    lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, borrowed=BORROWED, solution_repeats=3, mutant_repeats=5)
)


def test_the_checks_agree_with_course_lib_attention():
    """The checks' own references and the library compute the same thing (two independent oracles)."""
    import torch

    from course_lib.attention import causal_mask, decoder_mask, masked_softmax

    for T in (1, 3, 6):
        assert torch.equal(checks._lower(T), causal_mask(T))
    e = torch.randint(-2, 3, (6, 6)).double()
    weights = masked_softmax(e, causal_mask(6))
    for i in range(1, 7):
        assert torch.allclose(torch.tensor(checks._reference_row(e[i - 1].numpy(), i)), weights[i - 1])
    scores, lengths = torch.randn(3, 5, 5, dtype=torch.float64), torch.tensor([5, 2, 3])
    ours = checks.reference_masked_attention(scores, torch.eye(5, dtype=torch.float64).expand(3, 5, 5), lengths)[1]
    assert torch.allclose(ours, masked_softmax(scores, decoder_mask(lengths, 5)))


def test_the_lecture_quiz_is_a_test_vector():
    """UKP Lab's quiz: alpha_22 = 0.5 with the causal mask, and padding token 4 leaves it 0.5."""
    import math

    weights = checks._lecture_weights()
    assert weights[1, 1].item() == 0.5
    assert math.isclose(weights[3, 1].item(), math.exp(-1) / (2 * math.exp(-1) + math.exp(2)))
    assert weights[3, 3].item() == 0.0 and torch_all_rows_sum_to_one(weights)


def torch_all_rows_sum_to_one(weights):
    import torch

    return torch.allclose(weights.sum(-1), torch.ones(4, dtype=weights.dtype))
