"""Checks for lesson 07 (the transformer): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge; see :mod:`course_lib.checks.protocol`), with sizes,
head counts and lengths drawn every run. The oracles are torch's own modules (nn.TransformerEncoderLayer
for the block) and the lecture's formulas, computed here independently of the student's code; each
known mistake is computed too, and when every answer matches one, its hint is shown. Exercise 7.2 is
lesson 06's causal mask, checked by the same check.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_lib.checks import Mistake
from course_lib.checks.lesson06 import _draw_mask, _judge_mask, _tensor_of_shape
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, matches, size_error

# --- Exercise 7.1 -----------------------------------------------------------------------------------------


def _pe(T, d, pos_offset=0, swap=False, exponent="2i", layout="interleaved", odd=np.cos):
    """The lecture's encoding (Vaswani et al.) and the realistic ways to get it wrong."""
    pos = np.arange(pos_offset, T + pos_offset, dtype=np.float64)[:, None]
    pe = np.zeros((T, d))
    if exponent == "j":  # channel index j instead of the pair index 2i
        angle = pos / 10000 ** (np.arange(d) / d)
        even_angle, odd_angle = angle[:, 0::2], angle[:, 1::2]
    else:
        two_i = np.arange(0, d, 2)
        even_angle = odd_angle = pos / 10000 ** ((two_i / 2 if exponent == "i" else two_i) / d)
    first, second = (odd, np.sin) if swap else (np.sin, odd)
    if layout == "concat":
        return np.concatenate([first(even_angle), second(odd_angle)], axis=1)
    pe[:, 0::2], pe[:, 1::2] = first(even_angle), second(odd_angle)
    return pe


def _draw_pe(seed):
    rng = np.random.default_rng(seed)
    # d even; several d per run (so a fixed d fails), a long sequence (slow clocks), T = 1 and d = 2
    return [[5, 4], [int(rng.integers(6, 30)), 2 * int(rng.integers(3, 11))], [50, 16], [1, 2], [7, 2]]


PE_HINTS = [
    "sin and cos are swapped: the course follows Vaswani et al., sin on even channels 2i and cos on odd 2i+1 "
    "(Galerne's slide puts cos first)",
    "the exponent is 2i/d where i indexes the sin/cos PAIR: channels 2i and 2i+1 share one frequency "
    "(you used the channel index j/d)",
    "the exponent is 2i/d, not i/d: the slowest clock must turn once every 10000 * 2 pi positions",
    "positions start at 0, not 1: the first token's encoding is [0, 1, 0, 1, ...]",
    "interleave the channels (PE[:, 0::2] = sin, PE[:, 1::2] = cos); you put all the sines first",
    "the odd channels 2i+1 hold the cosine: you put sin on every channel",
]


def _judge_pe(cases, records):
    got, expected, wrong = [], [], {h: [] for h in PE_HINTS}
    for (T, d), r in zip(cases, records):
        got.append(_tensor_of_shape(r, f"the encodings for T = {T}, d = {d}", (T, d)))
        expected.append(_pe(T, d))
        variants = [
            _pe(T, d, swap=True),
            _pe(T, d, exponent="j"),
            _pe(T, d, exponent="i"),
            _pe(T, d, pos_offset=1),
            _pe(T, d, layout="concat"),
            _pe(T, d, odd=np.sin),
        ]
        for h, v in zip(PE_HINTS, variants):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, [f"the encodings for T = {T}, d = {d}" for T, d in cases])


def _pe_errors(case, record):
    T, d = case
    if size_error(record):
        return f"your function fails for T = {T}, d = {d}: take the sizes from T and d, not a fixed number"
    return ""


check_positional_encoding = Exercise(
    "7.1", "sinusoidal position encodings", "positional_encoding", ("T", "d"), _draw_pe, _judge_pe, errors=_pe_errors
)


# --- Exercise 7.2 -----------------------------------------------------------------------------------------

check_causal_mask = Exercise("7.2", "the causal mask", "causal_mask", ("T",), _draw_mask, _judge_mask)


# --- Exercise 7.3 -----------------------------------------------------------------------------------------


def _draw_heads(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    H1, H2 = (int(h) for h in rng.choice([2, 4, 5, 6, 8], size=2, replace=False))  # two head counts per run
    shapes = [(2, 5, 3, 7), (1, int(rng.integers(2, 9)), H1, int(rng.integers(2, 6))), (2, 4, 1, 6)]
    shapes.append((int(rng.integers(1, 4)), int(rng.integers(2, 7)), H2, int(rng.integers(2, 5))))
    return [[torch.randn(B, T, H * D, generator=g), H] for B, T, H, D in shapes]


HEAD_HINTS = [
    "a plain view(B, H, T, D) mixes time steps into the heads: split the LAST axis (the C features) into "
    "(H, D) first, then move H in front of T",
    "each head must get a contiguous slice of features (head h: h*D .. (h+1)*D - 1, as torch splits W^Q); "
    "you gave head h every H-th feature: view as (B, T, H, D), not (B, T, D, H)",
    "transpose the head axis in front of time: (B, T, H, D) -> (B, H, T, D), so each head attends over its "
    "own (T, D) matrix",
]


def _judge_heads(cases, records):
    got, expected, wrong = [], [], {h: [] for h in HEAD_HINTS}
    for (x, H), r in zip(cases, records):
        B, T, C = x.shape
        D = C // H
        value = r["returned"]
        shape = tuple(value.shape) if _is_tensor(value) else None
        if shape in ((B, T, H, D), (B, T, D, H)) and shape != (B, H, T, D):
            raise Mistake(f"shape {shape}: {HEAD_HINTS[2]}")
        if shape and len(shape) == 4 and shape[1] != H and shape[0] == B and shape[1] * shape[3] == C:
            raise Mistake(
                f"for n_head = {H} the heads axis (axis 1) should have size {H}, got shape {shape}: "
                "use n_head, not a fixed number"
            )
        got.append(_tensor_of_shape(r, f"the heads for x of shape (B, T, C) = {(B, T, C)}, n_head = {H}", (B, H, T, D)))
        expected.append(torch.stack([x[:, :, h * D : (h + 1) * D] for h in range(H)], dim=1))  # head h: its slice
        variants = [x.reshape(B, H, T, D), torch.stack([x[:, :, h::H] for h in range(H)], dim=1), x.reshape(B, T, H, D)]
        for h, v in zip(HEAD_HINTS, variants):
            wrong[h].append(v if tuple(v.shape) == (B, H, T, D) else None)
    wrong = {h: [e if v is None else v for v, e in zip(vs, expected)] for h, vs in wrong.items()}
    expect_answers(got, expected, wrong, [f"the heads for x {tuple(x.shape)}, n_head = {H}" for x, H in cases])


def _heads_errors(case, record):
    x, H = case
    message = record["message"]
    if record["raised"] == "TypeError" and "float" in message:
        return "C / n_head is a float: the head size is D = C // n_head (integer division)"
    if size_error(record):
        return f"your function fails for x of shape {tuple(x.shape)} and n_head = {H}: use n_head, not a fixed number"
    return ""


check_split_heads = Exercise(
    "7.3", "splitting the heads", "split_heads", ("x", "n_head"), _draw_heads, _judge_heads, errors=_heads_errors
)


# --- Exercise 7.4 -----------------------------------------------------------------------------------------


def _layer(recipe) -> nn.TransformerEncoderLayer:
    """torch's pre-norm block with weights drawn from the recipe's seed (never from the global generator)."""
    C, H = recipe["C"], recipe["H"]
    with torch.random.fork_rng(devices=[]):  # its constructor initialises from the global generator
        layer = nn.TransformerEncoderLayer(
            C, H, 2 * C, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        ).eval()
    g = torch.Generator().manual_seed(recipe["seed"])
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if name.startswith("norm"):  # non-trivial gamma and beta, so mixing up the two norms shows
                p.copy_(
                    torch.rand(p.shape, generator=g) + 0.5
                    if name.endswith("weight")
                    else torch.rand(p.shape, generator=g) - 0.5
                )
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5)
    return layer


def _sublayers(layer, T):
    mask = nn.Transformer.generate_square_subsequent_mask(T)

    def self_attention(h):
        return layer.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]

    def feed_forward(h):
        return layer.linear2(torch.nn.functional.gelu(layer.linear1(h)))

    return self_attention, feed_forward


def _draw_block(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []
    for B, T, H, D in [
        (2, 5, 2, 3),
        (1, int(rng.integers(3, 9)), int(rng.choice([1, 4])), int(rng.integers(2, 5))),
        (2, 1, 2, 2),
    ]:
        recipe = {"C": H * D, "H": H, "T": T, "seed": int(rng.integers(0, 2**31))}
        layer = _layer(recipe)
        ln = [(n.weight.detach().clone(), n.bias.detach().clone()) for n in (layer.norm1, layer.norm2)]
        cases.append([torch.randn(B, T, H * D, generator=g) * 2 + 0.5, recipe, recipe, ln[0], ln[1]])
    return cases


def _materialise_block(args):
    x, recipe, _, ln1, ln2 = args
    self_attention, feed_forward = _sublayers(_layer(recipe), recipe["T"])
    return [x, self_attention, feed_forward, ln1, ln2]


def _by_hand(x, layer, T, *, post=False, dim=-1, unbiased=False, residual=(True, True), norms=(1, 2), affine=True):
    """The block written out, with the switches its mistakes flip."""
    self_attention, feed_forward = _sublayers(layer, T)
    norm = {1: layer.norm1, 2: layer.norm2}

    def ln(h, k):
        mu = h.mean(dim, keepdim=True)
        var = h.var(dim, keepdim=True, unbiased=unbiased)
        normed = (h - mu) / torch.sqrt(var + 1e-5)
        return norm[k].weight * normed + norm[k].bias if affine else normed

    if post:
        x = ln(x + self_attention(x), norms[0])
        return ln(x + feed_forward(x), norms[1])
    a = self_attention(ln(x, norms[0]))
    x = x + a if residual[0] else a
    f = feed_forward(ln(x, norms[1]))
    return x + f if residual[1] else f


BLOCK_HINTS = [
    "layer norm normalises each token over its C features (the last axis, dim=-1), not over time",
    "layer norm uses the biased variance (divide by C, unbiased=False), as torch's LayerNorm",
    "that is post-norm, x = LN(x + SA(x)); this block is pre-norm: x = x + SA(LN_1(x)), then x = x + FFN(LN_2(x))",
    "the residual connections are missing: add each sub-layer's output to its input, x = x + SA(LN_1(x))",
    "the feed-forward's residual is missing: x = x + FFN(LN_2(x)), not x = FFN(LN_2(x))",
    "use ln2 (its own gamma and beta) before the feed-forward layer, not ln1 again",
    "ln1 and ln2 are swapped: ln1 goes before the self-attention, ln2 before the feed-forward",
    "layer norm ends with gamma * x_hat + beta: you left out the learned scale and shift",
]


def _judge_block(cases, records):
    got, expected, wrong = [], [], {h: [] for h in BLOCK_HINTS}
    for (x, recipe, _, _, _), r in zip(cases, records):
        got.append(_tensor_of_shape(r, f"the block's output for x of shape {tuple(x.shape)}", x.shape))
        layer, T = _layer(recipe), recipe["T"]
        with torch.no_grad():
            mask = nn.Transformer.generate_square_subsequent_mask(T)
            expected.append(layer(x, src_mask=mask, is_causal=True))  # torch's pre-norm encoder layer: the oracle
            variants = [
                _by_hand(x, layer, T, dim=1),
                _by_hand(x, layer, T, unbiased=True),
                _by_hand(x, layer, T, post=True),
                _by_hand(x, layer, T, residual=(False, False)),
                _by_hand(x, layer, T, residual=(True, False)),
                _by_hand(x, layer, T, norms=(1, 1)),
                _by_hand(x, layer, T, norms=(2, 1)),
                _by_hand(x, layer, T, affine=False),
            ]
        for h, v in zip(BLOCK_HINTS, variants):
            wrong[h].append(v)
    expect_answers(got, expected, wrong, [f"the block's output for x of shape {tuple(x.shape)}" for x, *_ in cases])


check_transformer_block = Exercise(
    "7.4",
    "one transformer block",
    "transformer_block",
    ("x", "self_attention", "feed_forward", "ln1", "ln2"),
    _draw_block,
    _judge_block,
    materialise=_materialise_block,  # the recipe: sizes and a seed for torch's layer
    observe=lambda args, live: [live[0], args[1], args[2], live[3], live[4]],  # the sub-layers are functions
)


# --- Exercise 7.5 -----------------------------------------------------------------------------------------


def _softmax(z):
    p = np.exp(z - z[np.isfinite(z)].max())
    return p / p.sum()


def _top_k(logits, k, temperature):
    """The exercise's rule: softmax(logits / temperature) over every logit >= the k-th largest (ties kept)."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    kth = np.sort(z)[-k]
    return _softmax(np.where(z >= kth, z, -np.inf))


def _draw_top_k(seed):
    rng = np.random.default_rng(seed)
    V = [int(rng.integers(8, 15)), int(rng.integers(15, 40))]
    cases = [
        [rng.normal(0, 2, size=10), 3, 1.0],
        [rng.normal(0, 2, size=V[0]), 2, 0.5],
        [rng.normal(0, 2, size=V[1]), int(rng.integers(2, 6)), 2.0],
        [rng.normal(0, 2, size=V[0]), int(rng.integers(2, 6)), float(rng.uniform(0.3, 3.0))],
        [rng.normal(0, 2, size=9), 1, 1.0],  # k = 1: greedy decoding
        [rng.normal(0, 2, size=V[0]), V[0], 0.7],  # k = V: nothing removed
    ]
    tie = rng.normal(0, 2, size=12).round(1)
    order = np.argsort(-tie)
    tie[order[3]] = tie[order[2]]  # the 3rd and 4th largest are equal: with k = 3 both stay
    cases.append([tie, 3, 1.0])
    return [[torch.tensor(z, dtype=torch.float32), k, t] for z, k, t in cases]


TOP_K_HINTS = [
    "turn the logits into probabilities with a softmax (exp, then divide by the sum): logits are not probabilities",
    "after removing all but the top k, renormalise so the kept probabilities sum to 1",
    "off by one: keep the k largest, the k-th largest logit included (>= it, not >)",
    "divide the logits by the temperature (p = softmax(logits / T)), do not multiply",
    "you ignored the temperature: p = softmax(logits / temperature)",
    "you used the k-th smallest logit as the threshold: keep the k largest (torch.topk's default, largest=True)",
]
TIES = (
    "ties: every logit equal to the k-th largest is kept (as the exercise says), so compare with the k-th "
    "largest value (z >= kth) instead of keeping exactly k indices"
)


def _judge_top_k(cases, records):
    got, expected, wrong, exactly_k = [], [], {h: [] for h in TOP_K_HINTS}, []
    for (logits, k, t), r in zip(cases, records):
        V = logits.shape[0]
        got.append(_tensor_of_shape(r, f"the probabilities for V = {V}, k = {k}", (V,)))
        z = logits.double().numpy()
        want = _top_k(z, k, t)
        expected.append(want)
        keep = z / t >= np.sort(z / t)[-k]
        above = z / t > np.sort(z / t)[-k]  # the off-by-one rule: NaN (no logit left) when k = 1
        kept_logits = np.where(keep, z / t, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):  # the raw-logits mistake may divide by 0
            raw = kept_logits / kept_logits.sum()
        variants = [
            raw,
            np.where(keep, _softmax(z / t), 0.0),
            _softmax(np.where(above, z / t, -np.inf)) if above.any() else np.full(V, np.nan),
            _top_k(z * t * t, k, t),
            _top_k(z * t, k, t),
            _softmax(np.where(z / t >= np.sort(z / t)[k - 1], z / t, -np.inf)),  # threshold: the k-th smallest
        ]
        for h, v in zip(TOP_K_HINTS, variants):
            wrong[h].append(v)
        answer = got[-1].detach().double().numpy()
        if (want > 0).sum() > k:  # a tie at the k-th largest
            exactly_k.append((answer > 0).sum() == k and np.all(answer[want == 0] == 0))
    untied = [i for i, (z, k, _) in enumerate(cases) if (expected[i] > 0).sum() == k]
    if exactly_k and all(exactly_k) and all(matches(got[i], expected[i]) for i in untied):
        raise Mistake(TIES)
    expect_answers(got, expected, wrong, [f"the probabilities for k = {k}, temperature = {t}" for _, k, t in cases])


check_top_k_probs = Exercise(
    "7.5", "top-k sampling", "top_k_probs", ("logits", "k", "temperature"), _draw_top_k, _judge_top_k
)
