"""Checks for lesson 07 (the transformer): one per exercise, each with targeted hints.

The oracles are torch's own modules (nn.LayerNorm, nn.TransformerEncoderLayer) and the
formulas of the lecture, computed here independently of the student's code.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from course_lib.checks import Mistake, close, exercise, expect, expect_values


def _tensor(got, what: str) -> torch.Tensor:
    expect(isinstance(got, torch.Tensor), f"return a torch.Tensor ({what}), got {type(got).__name__}")
    return got


def _pe(T, d, pos_offset=0, swap=False, exponent="2i", layout="interleaved"):
    """The lecture's encoding and the realistic ways to get it wrong."""
    pos = np.arange(pos_offset, T + pos_offset, dtype=np.float64)[:, None]
    pe = np.zeros((T, d))
    if exponent == "j":  # channel index j instead of the pair index 2i
        j = np.arange(d)
        angle = pos / 10000 ** (j / d)
        even, odd = angle[:, 0::2], angle[:, 1::2]
    else:
        two_i = np.arange(0, d, 2)
        base = 10000 ** ((two_i / 2 if exponent == "i" else two_i) / d)
        even = odd = pos / base
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    if layout == "concat":
        return np.concatenate([first(even), second(odd)], axis=1)
    pe[:, 0::2], pe[:, 1::2] = first(even), second(odd)
    return pe


@exercise("7.1", "sinusoidal position encodings")
def check_positional_encoding(positional_encoding):
    rng = np.random.default_rng()
    cases = [(5, 4), (int(rng.integers(6, 30)), 2 * int(rng.integers(2, 10))), (50, 16)]
    got, expected, what = [], [], []
    wrong = {
        "sin and cos are swapped: the course follows Vaswani et al., sin on even channels 2i and cos on odd 2i+1 (Galerne's slide puts cos first)": [],
        "the exponent is 2i/d where i indexes the sin/cos PAIR: channels 2i and 2i+1 share one frequency "
        "(you used the channel index j/d)": [],
        "the exponent is 2i/d, not i/d: the slowest clock must turn once every 10000 * 2 pi positions": [],
        "positions start at 0, not 1: the first token's encoding is [0, 1, 0, 1, ...]": [],
        "interleave the channels (PE[:, 0::2] = sin, PE[:, 1::2] = cos); you put all the sines first": [],
    }
    swap, by_j, by_i, from_one, concat = wrong
    for T, d in cases:
        out = _tensor(positional_encoding(T, d), "the (T, d) encodings")
        expect(
            tuple(out.shape) == (T, d),
            f"for T={T}, d={d} the result must have shape (T, d) = {(T, d)}, got {tuple(out.shape)}",
        )
        got.append(out.detach().double().cpu().numpy())
        expected.append(_pe(T, d))
        what.append(f"the encodings for T={T}, d={d}")
        wrong[swap].append(_pe(T, d, swap=True))
        wrong[by_j].append(_pe(T, d, exponent="j"))
        wrong[by_i].append(_pe(T, d, exponent="i"))
        wrong[from_one].append(_pe(T, d, pos_offset=1))
        wrong[concat].append(_pe(T, d, layout="concat"))
    expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-5)


@exercise("7.2", "the causal mask")
def check_causal_mask(causal_mask):
    for T in (4, int(np.random.default_rng().integers(5, 12)), 1):  # T = 1 last: there, several mistakes agree
        m = _tensor(causal_mask(T), "a (T, T) boolean mask")
        expect(tuple(m.shape) == (T, T), f"for T={T} the mask must have shape (T, T) = {(T, T)}, got {tuple(m.shape)}")
        if m.dtype != torch.bool:
            if m.dtype.is_floating_point and torch.isinf(m).any():
                raise Mistake(
                    "return a boolean mask (True = may attend), not the additive 0 / -inf float mask: "
                    "the -inf is put in later, by masked_fill"
                )
            raise Mistake(f"return a boolean tensor (dtype torch.bool), got {m.dtype}")
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        right = j <= i
        if torch.equal(m, right):
            continue
        if torch.equal(m, j < i):
            raise Mistake("off by one: position i may attend to itself too (j <= i), so the diagonal is True")
        if torch.equal(m, j >= i):
            raise Mistake("that mask lets position i see the FUTURE (j >= i): keep the lower triangle, j <= i")
        if torch.equal(m, j > i):
            raise Mistake(
                "inverted: True must mean 'may attend' (as in F.scaled_dot_product_attention); you marked "
                "what is forbidden"
            )
        if T > 1 and torch.equal(m, torch.ones(T, T, dtype=torch.bool)):
            raise Mistake("nothing is masked: query i may only attend to keys j <= i")
        raise Mistake(f"for T={T} the mask should be {right.int().tolist()}, got {m.int().tolist()}")


@exercise("7.3", "splitting the heads")
def check_split_heads(split_heads):
    rng = np.random.default_rng()
    B, T, H, D = 2, int(rng.integers(4, 7)), 3, int(rng.integers(7, 9))  # all different, so shapes tell
    x = torch.randn(B, T, H * D)
    got = _tensor(split_heads(x.clone(), H), "(B, H, T, D)")
    want = (B, H, T, D)
    if tuple(got.shape) == (B, T, H, D):
        raise Mistake(
            f"shape (B, T, H, D) = {(B, T, H, D)}: transpose the head axis in front of time, "
            f"to (B, H, T, D) = {want}, so each head attends over its own (T, D) matrix"
        )
    expect(
        tuple(got.shape) == want,
        f"for x of shape (B, T, C) = {(B, T, H * D)} and n_head={H} the result "
        f"must have shape (B, H, T, D) = {want}, got {tuple(got.shape)}",
    )
    right = torch.stack([x[:, :, h * D : (h + 1) * D] for h in range(H)], dim=1)  # head h: features hD..(h+1)D-1
    if close(got, right):
        return
    if close(got, x.reshape(B, H, T, D)):
        raise Mistake(
            "a plain view(B, H, T, D) mixes time steps into the heads: split the LAST axis (the C "
            "features) into (H, D) first, then move H in front of T"
        )
    if close(got, torch.stack([x[:, :, h::H] for h in range(H)], dim=1)):
        raise Mistake(
            "each head must get a contiguous slice of features (head h: h*D .. (h+1)*D - 1, as torch "
            "splits W^Q); you gave head h every H-th feature: view as (B, T, H, D), not (B, T, D, H)"
        )
    raise Mistake("head h of token t should hold x[b, t, h*D:(h+1)*D]")


def _random_layer(C, H, rng_seed):
    torch.manual_seed(rng_seed)
    layer = nn.TransformerEncoderLayer(
        C, H, 2 * C, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    ).eval()
    with torch.no_grad():  # non-trivial gamma and beta, so mixing up the two norms shows
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return layer


def _by_hand(x, layer, mask, *, post=False, dim=-1, unbiased=False, residual=True, same_norm=False):
    def ln(h, norm):
        mu = h.mean(dim, keepdim=True)
        var = h.var(dim, keepdim=True, unbiased=unbiased)
        return norm.weight * (h - mu) / torch.sqrt(var + 1e-5) + norm.bias

    sa = lambda h: layer.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]  # noqa: E731
    ff = lambda h: layer.linear2(torch.nn.functional.gelu(layer.linear1(h)))  # noqa: E731
    n1, n2 = layer.norm1, (layer.norm1 if same_norm else layer.norm2)
    if post:
        x = ln(x + sa(x), n1)
        return ln(x + ff(x), n2)
    if not residual:
        x = sa(ln(x, n1))
        return ff(ln(x, n2))
    x = x + sa(ln(x, n1))
    return x + ff(ln(x, n2))


@exercise("7.4", "one transformer block")
def check_transformer_block(transformer_block):
    rng = np.random.default_rng()
    got, expected, what = [], [], []
    wrong = {
        "layer norm normalises each token over its C features (the last axis, dim=-1), not over time": [],
        "layer norm uses the biased variance (divide by C, unbiased=False), as torch's LayerNorm": [],
        "that is post-norm, x = LN(x + SA(x)); this block is pre-norm: x = x + SA(LN_1(x)), "
        "then x = x + FFN(LN_2(x))": [],
        "the residual connections are missing: add each sub-layer's output to its input, x = x + SA(LN_1(x))": [],
        "use ln2 (its own gamma and beta) before the feed-forward layer, not ln1 again": [],
    }
    by_time, unbiased, post, no_residual, same = wrong
    for _ in range(3):
        B, T, H = 2, int(rng.integers(4, 8)), 2
        C = 2 * int(rng.integers(3, 6))
        layer = _random_layer(C, H, int(rng.integers(0, 10_000)))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        x = torch.randn(B, T, C) * 2 + 0.5

        def self_attention(h):
            return layer.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]

        def feed_forward(h):
            return layer.linear2(torch.nn.functional.gelu(layer.linear1(h)))

        ln1 = (layer.norm1.weight.detach().clone(), layer.norm1.bias.detach().clone())
        ln2 = (layer.norm2.weight.detach().clone(), layer.norm2.bias.detach().clone())
        with torch.no_grad():
            out = _tensor(transformer_block(x.clone(), self_attention, feed_forward, ln1, ln2), "(B, T, C)")
            expect(
                tuple(out.shape) == (B, T, C),
                f"the block maps (B, T, C) = {(B, T, C)} to the same shape, got {tuple(out.shape)}",
            )
            got.append(out)
            expected.append(layer(x, src_mask=mask))  # torch's pre-norm encoder layer, causal: the oracle
            what.append(f"the block's output for x of shape {(B, T, C)}")
            wrong[by_time].append(_by_hand(x, layer, mask, dim=1))
            wrong[unbiased].append(_by_hand(x, layer, mask, unbiased=True))
            wrong[post].append(_by_hand(x, layer, mask, post=True))
            wrong[no_residual].append(_by_hand(x, layer, mask, residual=False))
            wrong[same].append(_by_hand(x, layer, mask, same_norm=True))
    expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-5)


def _top_k(logits, k, temperature):
    z = logits / temperature
    kth = np.sort(z)[-k]
    p = np.where(z >= kth, np.exp(z - z.max()), 0.0)
    return p / p.sum()


@exercise("7.5", "top-k sampling")
def check_top_k_probs(top_k_probs):
    rng = np.random.default_rng()
    got, expected, what = [], [], []
    wrong = {
        "turn the logits into probabilities with a softmax (exp, then divide by the sum): logits are not "
        "probabilities": [],
        "after removing all but the top k, renormalise so the k probabilities sum to 1": [],
        "off by one: keep exactly the k largest, the k-th largest logit included (>= it, not >)": [],
        "divide the logits by the temperature (p = softmax(logits / T)), do not multiply": [],
    }
    raw, unnormalised, off_by_one, times_t = wrong
    for k, temperature in ((3, 1.0), (2, 0.5), (int(rng.integers(2, 6)), 2.0), (4, 1.0)):
        V = int(rng.integers(8, 14))
        logits = rng.normal(0, 2, size=V)
        given = torch.tensor(logits, dtype=torch.float32)
        out = _tensor(top_k_probs(given.clone(), k, temperature), "probabilities of shape (V,)")
        expect(
            tuple(out.shape) == (V,), f"return one probability per token, shape (V,) = ({V},), got {tuple(out.shape)}"
        )
        got.append(out.detach().double().cpu().numpy())
        logits = given.double().numpy()
        expected.append(_top_k(logits, k, temperature))
        what.append(f"the probabilities for k={k}, temperature={temperature}")
        z = logits / temperature
        keep = z >= np.sort(z)[-k]
        wrong[raw].append(np.where(keep, z, 0.0) / np.where(keep, z, 0.0).sum())
        full = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        wrong[unnormalised].append(np.where(keep, full, 0.0))
        wrong[off_by_one].append(_top_k(logits, k - 1, temperature))  # kept only those > the k-th: k - 1 left
        wrong[times_t].append(_top_k(logits * temperature * temperature, k, temperature))
    expect_values(got, expected, wrong, what, rtol=1e-4, atol=1e-6)
    expect(math.isclose(float(got[-1].sum()), 1.0, rel_tol=1e-5), "the probabilities must sum to 1")
