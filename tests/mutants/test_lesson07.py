"""Lesson 07 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson07 as checks

from .mutate import lesson_suite

LESSON = "07_transformer"
EXERCISES = {
    "positional_encoding": checks.check_positional_encoding,
    "causal_mask": checks.check_causal_mask,
    "split_heads": checks.check_split_heads,
    "transformer_block": checks.check_transformer_block,
    "top_k_probs": checks.check_top_k_probs,
}

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    (
        "positional_encoding",
        "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
        "pe[:, 0::2] = torch.cos(angle)\n    pe[:, 1::2] = torch.sin(angle)",
        "swapped",
    ),
    (
        "positional_encoding",
        "two_i = torch.arange(0, d, 2, dtype=torch.float32)",
        "two_i = torch.arange(0, d // 2, dtype=torch.float32)",
        "not i/d",
    ),
    (
        "positional_encoding",
        "pos = torch.arange(T, dtype=torch.float32)[:, None]",
        "pos = torch.arange(1, T + 1, dtype=torch.float32)[:, None]",
        "start at 0",
    ),
    (
        "positional_encoding",
        "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
        "pe = torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)",
        "interleave",
    ),
    (
        "positional_encoding",
        "angle = pos / 10000 ** (two_i / d)  # (T, d/2)",
        "angle = pos / 10000 ** (torch.arange(d, dtype=torch.float32) / d)  # (T, d)\n"
        "    pe = torch.zeros(T, d)\n    pe[:, 0::2] = torch.sin(angle[:, 0::2])\n    pe[:, 1::2] = torch.cos(angle[:, 1::2])\n"
        "    return pe",
        "channel index",
    ),
    (
        "causal_mask",
        "torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)",
        "off by one",
    ),
    (
        "causal_mask",
        "torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "torch.triu(torch.ones(T, T, dtype=torch.bool))",
        "FUTURE",
    ),
    (
        "causal_mask",
        "torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "~torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "inverted",
    ),
    (
        "causal_mask",
        "torch.tril(torch.ones(T, T, dtype=torch.bool))",
        "torch.triu(torch.full((T, T), float('-inf')), diagonal=1)",
        "additive",
    ),
    (
        "split_heads",
        "x.view(B, T, n_head, C // n_head).transpose(1, 2)",
        "x.view(B, n_head, T, C // n_head)",
        "mixes time steps",
    ),
    (
        "split_heads",
        "x.view(B, T, n_head, C // n_head).transpose(1, 2)",
        "x.view(B, T, C // n_head, n_head).permute(0, 3, 1, 2)",
        "every H-th feature",
    ),
    (
        "split_heads",
        "x.view(B, T, n_head, C // n_head).transpose(1, 2)",
        "x.view(B, T, n_head, C // n_head)",
        "transpose the head axis",
    ),
    (
        "transformer_block",
        "mu = h.mean(dim=-1, keepdim=True)  # (B, T, 1): over the features of each token\n"
        "        var = h.var(dim=-1, keepdim=True, unbiased=False)",
        "mu = h.mean(dim=1, keepdim=True)\n        var = h.var(dim=1, keepdim=True, unbiased=False)",
        "not over time",
    ),
    (
        "transformer_block",
        "var = h.var(dim=-1, keepdim=True, unbiased=False)",
        "var = h.var(dim=-1, keepdim=True)",
        "biased variance",
    ),
    (
        "transformer_block",
        "x = x + self_attention(layer_norm(x, *ln1))\n    x = x + feed_forward(layer_norm(x, *ln2))",
        "x = layer_norm(x + self_attention(x), *ln1)\n    x = layer_norm(x + feed_forward(x), *ln2)",
        "post-norm",
    ),
    (
        "transformer_block",
        "x = x + self_attention(layer_norm(x, *ln1))\n    x = x + feed_forward(layer_norm(x, *ln2))",
        "x = self_attention(layer_norm(x, *ln1))\n    x = feed_forward(layer_norm(x, *ln2))",
        "residual",
    ),
    (
        "transformer_block",
        "x = x + feed_forward(layer_norm(x, *ln2))",
        "x = x + feed_forward(layer_norm(x, *ln1))",
        "ln2",
    ),
    (
        "top_k_probs",
        "return torch.softmax(z, dim=-1)",
        "z = torch.where(torch.isinf(z), torch.zeros_like(z), z)\n    return z / z.sum()",
        "softmax",
    ),
    (
        "top_k_probs",
        '    z = z.masked_fill(z < kth, float("-inf"))  # exp(-inf) = 0 outside the top k\n    return torch.softmax(z, dim=-1)',
        "    return torch.softmax(z, dim=-1).masked_fill(z < kth, 0.0)",
        "renormalise",
    ),
    ("top_k_probs", 'z.masked_fill(z < kth, float("-inf"))', 'z.masked_fill(z <= kth, float("-inf"))', "off by one"),
    ("top_k_probs", "z = logits / temperature", "z = logits * temperature", "do not multiply"),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(
    lesson_suite(LESSON, EXERCISES, MUTANTS, globals().get("ALTERNATIVES", []), solution_repeats=3, mutant_repeats=5)
)
