"""Lesson 06 entries."""

LESSON = "06"

ALPHA_RIGHT = """
import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return float(w[i - 1, j - 1])
"""

MASKED_RIGHT = """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.ones(T, T, dtype=torch.bool, device=scores.device).tril()
    pad = torch.arange(T, device=scores.device)[None, :] < lengths[:, None]
    mask = causal[None, :, :] & pad[:, None, :]
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    w = torch.nan_to_num(w, nan=0.0)
    return w @ values, w
"""

LEAK_RIGHT = """
import torch


def leak_test(masked_attention, scores, values, lengths):
    output, _ = masked_attention(scores, values, lengths)
    B, T, _ = values.shape
    real = torch.arange(T)[None, :] < lengths[:, None]
    v1 = values.clone()
    v1[~real] += 100.0
    out1, _ = masked_attention(scores, v1, lengths)
    pad_change = (out1 - output).abs()[real].max().item() if real.any() else 0.0
    last = int(lengths[0]) - 1
    v2 = values.clone()
    v2[0, last] += 100.0
    out2, _ = masked_attention(scores, v2, lengths)
    own = (out2[0, last] - output[0, last]).abs().max().item()
    earlier = (out2[0, :last] - output[0, :last]).abs().max().item() if last > 0 else 0.0
    return {"padding": float(pad_change), "last token": float(own), "last token, earlier queries": float(earlier)}
"""

RIGHT = {"6.1": ALPHA_RIGHT, "6.3": MASKED_RIGHT, "6.4": LEAK_RIGHT}
PREREQ = {}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="06-6.1-right", ex="6.1", kind="right", desc="tril mask", code=ALPHA_RIGHT),
    dict(
        id="06-6.1-m-zero-index",
        ex="6.1",
        kind="mistake",
        desc="indexes with i, j directly (0-based)",
        code=sub(ALPHA_RIGHT, "w[i - 1, j - 1]", "w[min(i, n - 1), min(j, n - 1)]"),
    ),
    dict(
        id="06-6.1-m-inplace",
        ex="6.1",
        kind="mistake",
        desc="masks scores in place (masked_fill_)",
        code=sub(ALPHA_RIGHT, "scores.masked_fill(~allowed", "scores.masked_fill_(~allowed"),
    ),
    dict(
        id="06-6.1-m-triu",
        ex="6.1",
        kind="mistake",
        desc="mask keeps j >= i",
        code=sub(ALPHA_RIGHT, ".tril()", ".triu()"),
    ),
    dict(id="06-6.3-right", ex="6.3", kind="right", desc="both masks", code=MASKED_RIGHT),
    dict(
        id="06-6.3-m-pad-on-queries",
        ex="6.3",
        kind="mistake",
        desc="padding mask on the query axis (pad[:, :, None])",
        code=sub(MASKED_RIGHT, "pad[:, None, :]", "pad[:, :, None]"),
    ),
    dict(
        id="06-6.3-m-nan-empty",
        ex="6.3",
        kind="mistake",
        desc="no NaN handling for an empty sentence",
        code=sub(MASKED_RIGHT, "    w = torch.nan_to_num(w, nan=0.0)\n", ""),
    ),
    dict(
        id="06-6.3-m-le-length",
        ex="6.3",
        kind="mistake",
        desc="padding mask j <= lengths (off by one)",
        code=sub(MASKED_RIGHT, "[None, :] < lengths[:, None]", "[None, :] <= lengths[:, None]"),
    ),
    dict(
        id="06-6.3-m-zero-not-inf",
        ex="6.3",
        kind="mistake",
        desc="masked scores set to 0 instead of -inf",
        code=sub(MASKED_RIGHT, 'scores.masked_fill(~mask, float("-inf"))', "scores.masked_fill(~mask, 0.0)"),
    ),
    dict(
        id="06-6.3-m-no-causal",
        ex="6.3",
        kind="mistake",
        desc="only the padding mask (future visible)",
        code=sub(MASKED_RIGHT, "mask = causal[None, :, :] & pad[:, None, :]", "mask = pad[:, None, :].expand(B, T, T)"),
    ),
    dict(
        id="06-6.3-b-sdpa",
        ex="6.3",
        kind="borrowed",
        desc="torch's masked softmax via torch._masked_softmax reached by getattr string",
        code=sub(
            MASKED_RIGHT,
            """    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)""",
            """    w = getattr(torch, "_masked_" + "softmax")(scores, ~mask, -1)""",
        ),
    ),
    dict(
        id="06-6.3-b-courselib-decoder-mask",
        ex="6.3",
        kind="borrowed",
        desc="course_lib.attention.masked_softmax",
        code=sub(
            MASKED_RIGHT,
            """    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)""",
            """    from course_lib.attention import masked_softmax
    w = masked_softmax(scores, mask)""",
        ),
    ),
    dict(id="06-6.4-right", ex="6.4", kind="right", desc="clones", code=LEAK_RIGHT),
    dict(
        id="06-6.4-m-inplace-values",
        ex="6.4",
        kind="mistake",
        desc="adds 100 to values in place (no clone)",
        code=LEAK_RIGHT.replace("values.clone()", "values"),
    ),
    dict(
        id="06-6.4-m-all-outputs",
        ex="6.4",
        kind="mistake",
        desc="padding change measured over every output, padding queries included",
        code=sub(
            LEAK_RIGHT,
            "(out1 - output).abs()[real].max().item() if real.any() else 0.0",
            "(out1 - output).abs().max().item()",
        ),
    ),
]
