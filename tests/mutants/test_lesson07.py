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

SIN_COS = "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)"
MASK = "torch.tril(torch.ones(T, T, dtype=torch.bool))"
SPLIT = "x.view(B, T, n_head, C // n_head).transpose(1, 2)"
NORM = "var = h.var(dim=-1, keepdim=True, unbiased=False)"
BLOCK = "x = x + self_attention(layer_norm(x, *ln1))\n    x = x + feed_forward(layer_norm(x, *ln2))"
KEEP = 'z = z.masked_fill(z < kth, float("-inf"))  # exp(-inf) = 0 outside the top k'

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    (
        "positional_encoding",
        SIN_COS,
        SIN_COS.replace("sin", "TMP").replace("cos", "sin").replace("TMP", "cos"),
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
    ("positional_encoding", SIN_COS, "pe = torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)", "interleave"),
    (
        "positional_encoding",
        "angle = pos / 10000 ** (two_i / d)  # (T, d/2)",
        "angle = pos / 10000 ** (torch.arange(d, dtype=torch.float32) / d)  # (T, d)\n"
        "    pe = torch.zeros(T, d)\n    pe[:, 0::2] = torch.sin(angle[:, 0::2])\n    pe[:, 1::2] = torch.cos(angle[:, 1::2])\n"
        "    return pe",
        "channel index",
    ),
    ("positional_encoding", "pe[:, 1::2] = torch.cos(angle)", "pe[:, 1::2] = torch.sin(angle)", "sin on every channel"),
    ("positional_encoding", "pe = torch.zeros(T, d)", "pe = torch.zeros(T, 16)", "not a fixed number"),
    ("positional_encoding", "    return pe\n", "    return pe.numpy()\n", "return a torch.Tensor"),
    ("causal_mask", MASK, "torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)", "diagonal"),
    ("causal_mask", MASK, "torch.triu(torch.ones(T, T, dtype=torch.bool))", "transposed"),
    ("causal_mask", MASK, "~torch.tril(torch.ones(T, T, dtype=torch.bool))", "attn_mask convention"),
    ("causal_mask", MASK, "torch.triu(torch.full((T, T), float('-inf')), diagonal=1)", "additive"),
    ("causal_mask", MASK, "torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)", "off by one"),
    ("causal_mask", MASK, "torch.tril(torch.ones(T, T))", "boolean tensor"),
    ("causal_mask", MASK, "torch.ones(T, T, dtype=torch.bool)", "nothing is masked"),
    ("split_heads", SPLIT, "x.view(B, n_head, T, C // n_head)", "mixes time steps"),
    ("split_heads", SPLIT, "x.view(B, T, C // n_head, n_head).permute(0, 3, 1, 2)", "every H-th feature"),
    ("split_heads", SPLIT, "x.view(B, T, n_head, C // n_head)", "transpose the head axis"),
    ("split_heads", SPLIT, "x.view(B, T, 4, C // 4).transpose(1, 2)", "not a fixed number"),
    ("split_heads", SPLIT, "x.view(B, T, n_head, C / n_head).transpose(1, 2)", "integer division"),
    ("split_heads", SPLIT, "x.reshape(B, n_head, T, -1)", "mixes time steps"),
    ("split_heads", SPLIT, "x.view(B, T, n_head, C // n_head).transpose(2, 3)", "transpose the head axis"),
    (
        "transformer_block",
        "mu = h.mean(dim=-1, keepdim=True)  # (B, T, 1): over the features of each token\n        " + NORM,
        "mu = h.mean(dim=1, keepdim=True)\n        var = h.var(dim=1, keepdim=True, unbiased=False)",
        "not over time",
    ),
    ("transformer_block", NORM, "var = h.var(dim=-1, keepdim=True)", "biased variance"),
    (
        "transformer_block",
        BLOCK,
        "x = layer_norm(x + self_attention(x), *ln1)\n    x = layer_norm(x + feed_forward(x), *ln2)",
        "post-norm",
    ),
    (
        "transformer_block",
        BLOCK,
        "x = self_attention(layer_norm(x, *ln1))\n    x = feed_forward(layer_norm(x, *ln2))",
        "residual connections are missing",
    ),
    (
        "transformer_block",
        "x = x + feed_forward(layer_norm(x, *ln2))",
        "x = feed_forward(layer_norm(x, *ln2))",
        "feed-forward's residual",
    ),
    (
        "transformer_block",
        "x = x + feed_forward(layer_norm(x, *ln2))",
        "x = x + feed_forward(layer_norm(x, *ln1))",
        "ln2",
    ),
    ("transformer_block", BLOCK, BLOCK.replace("ln1", "TMP").replace("ln2", "ln1").replace("TMP", "ln2"), "swapped"),
    (
        "transformer_block",
        "return gamma * (h - mu) / torch.sqrt(var + eps) + beta",
        "return (h - mu) / torch.sqrt(var + eps)",
        "scale and shift",
    ),
    (
        "transformer_block",
        "x = x + self_attention(layer_norm(x, *ln1))",
        "x += self_attention(layer_norm(x, *ln1))",
        "in place",
    ),
    (
        "top_k_probs",
        "return torch.softmax(z, dim=-1)",
        "z = torch.where(torch.isinf(z), torch.zeros_like(z), z)\n    return z / z.sum()",
        "softmax",
    ),
    (
        "top_k_probs",
        "    " + KEEP + "\n    return torch.softmax(z, dim=-1)",
        "    return torch.softmax(z, dim=-1).masked_fill(z < kth, 0.0)",
        "renormalise",
    ),
    ("top_k_probs", 'z.masked_fill(z < kth, float("-inf"))', 'z.masked_fill(z <= kth, float("-inf"))', "off by one"),
    ("top_k_probs", "z = logits / temperature", "z = logits * temperature", "do not multiply"),
    ("top_k_probs", "z = logits / temperature", "z = logits", "ignored the temperature"),
    ("top_k_probs", "z = logits / temperature", "logits /= temperature\n    z = logits", "in place"),
    ("top_k_probs", "torch.topk(z, k).values[-1]", "torch.topk(z, k, largest=False).values[-1]", "k-th smallest"),
    (
        "top_k_probs",
        "    " + KEEP,
        '    top = torch.topk(z, k).indices\n    z = torch.full_like(z, float("-inf")).scatter(0, top, z[top])',
        "ties",
    ),
]

# (function, edit from, edit to): different but right code, which must pass
ALTERNATIVES = [
    (
        "positional_encoding",
        "angle = pos / 10000 ** (two_i / d)",
        "angle = pos * torch.exp(-torch.log(torch.tensor(10000.0)) * two_i / d)",
    ),
    ("causal_mask", MASK, "torch.arange(T)[None, :] <= torch.arange(T)[:, None]"),
    ("split_heads", SPLIT, "x.unflatten(-1, (n_head, C // n_head)).transpose(1, 2)"),
    ("split_heads", SPLIT, "x.reshape(B, T, n_head, -1).permute(0, 2, 1, 3)"),
    (
        "transformer_block",
        "return gamma * (h - mu) / torch.sqrt(var + eps) + beta",
        "return torch.nn.functional.layer_norm(h, h.shape[-1:], gamma, beta, eps)",
    ),
    ("top_k_probs", 'float("-inf")', "-1e9"),
    ("top_k_probs", "kth = torch.topk(z, k).values[-1]", "kth = torch.sort(z, descending=True).values[k - 1]"),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))
