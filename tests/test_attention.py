"""course_lib.attention against PyTorch: F.scaled_dot_product_attention and nn.MultiheadAttention are the oracles."""

import math
import re

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib.attention import (
    MultiHeadAttention,
    causal_mask,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)

ATOL = 1e-5


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- the lecture's quiz (UKP Lab): test vectors -----------------------------------------------------

QUIZ = torch.tensor([[1.0, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]])


def test_quiz_alpha_22_is_one_half_with_the_mask_and_option_c_without():
    # 1-based as in the lecture: alpha_{2,2} is row 2, column 2 -> [1, 1] in Python.
    masked = masked_softmax(QUIZ, causal_mask(4))
    assert masked[1, 1].item() == pytest.approx(0.5, abs=1e-7)  # softmax([1, 1]) by hand
    e = math.e
    unmasked = masked_softmax(QUIZ)
    assert unmasked[1, 1].item() == pytest.approx(e / (2 * e + e**-1 + 1), abs=1e-7)  # option (C)
    assert masked[0, 0].item() == 1.0  # the first token sees only itself
    assert torch.all(masked.triu(1) == 0)


# --- causal_mask, padding_mask -------------------------------------------------------------------


def test_causal_mask_matches_the_definition_and_torch():
    for T in (1, 2, 5):
        m = causal_mask(T)
        assert m.dtype == torch.bool and m.shape == (T, T)
        assert m.tolist() == [[j <= i for j in range(T)] for i in range(T)]
        # torch's own causal mask is float, -inf where NOT allowed
        assert torch.equal(m, nn.Transformer.generate_square_subsequent_mask(T) == 0)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "4"])
def test_causal_mask_rejects_bad_lengths(bad):
    with pytest.raises(ValueError, match="T must be a positive int"):
        causal_mask(bad)


def test_decoder_mask_is_causal_and_padding_by_the_definition_and_torchs_module():
    from course_lib.attention import decoder_mask

    lengths, T = [4, 2, 1], 4
    mask = decoder_mask(lengths, T)
    assert mask.shape == (3, 4, 4) and mask.dtype == torch.bool
    for b, n in enumerate(lengths):
        for i in range(T):
            for j in range(T):
                assert mask[b, i, j].item() == (j <= i and j < n)
    # torch's module with its own masks (True = may NOT attend) gives the same weights
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(6, 2, batch_first=True).eval()
    x = torch.randn(3, T, 6)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
    padded = torch.arange(T)[None, :] >= torch.tensor(lengths)[:, None]
    _, theirs = mha(x, x, x, attn_mask=blocked, key_padding_mask=padded)
    ours = MultiHeadAttention.from_torch(mha).eval()
    _, with_ours = ours(x, x, x, attn_mask=~mask.repeat_interleave(2, dim=0))
    assert torch.allclose(theirs, with_ours, atol=1e-6)


def test_padding_mask():
    m = padding_mask([3, 1, 0], 4)
    assert m.tolist() == [[True, True, True, False], [True, False, False, False], [False] * 4]
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, T=4\]"):
        padding_mask([5], 4)
    with pytest.raises(ValueError, match="lengths must be a 1-D"):
        padding_mask([[1]], 4)
    with pytest.raises(ValueError, match="lengths must be a 1-D"):
        padding_mask([1.5], 4)


# --- scaled_dot_product_attention ----------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 8), (2, 5, 8), (2, 3, 5, 8)])
def test_sdpa_equals_torch_without_mask(shape):
    q, k, v = randn(*shape, seed=1), randn(*shape, seed=2), randn(*shape[:-1], 6, seed=3)
    out, w = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=ATOL)
    assert torch.allclose(w.sum(-1), torch.ones(shape[:-1]), atol=ATOL)
    # the weights by hand: softmax(q k^T / sqrt(d_k))
    assert torch.allclose(w, torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(shape[-1]), dim=-1), atol=ATOL)


def test_sdpa_equals_torch_with_causal_bool_and_float_masks_and_cross_lengths():
    q, k, v = randn(2, 3, 4, 8, seed=1), randn(2, 3, 6, 8, seed=2), randn(2, 3, 6, 5, seed=3)
    bool_mask = torch.rand(4, 6, generator=torch.Generator().manual_seed(4)) > 0.3
    bool_mask[:, 0] = True  # no fully masked row here (see the test below)
    float_mask = torch.zeros(4, 6).masked_fill(~bool_mask, float("-inf"))
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask)
    for mask in (bool_mask, float_mask, bool_mask[None, None]):
        out, w = scaled_dot_product_attention(q, k, v, mask=mask)
        assert torch.allclose(out, expected, atol=ATOL)
        assert torch.all(w[..., ~bool_mask] == 0)
    causal = scaled_dot_product_attention(q[..., :4, :], k[..., :4, :], v[..., :4, :], mask=causal_mask(4))[0]
    assert torch.allclose(
        causal, F.scaled_dot_product_attention(q[..., :4, :], k[..., :4, :], v[..., :4, :], is_causal=True), atol=ATOL
    )


def test_sdpa_fully_masked_row_gives_zeros_like_torch_not_nan():
    q, k, v = randn(1, 3, 4, seed=1), randn(1, 3, 4, seed=2), randn(1, 3, 4, seed=3)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=ATOL)
    assert torch.all(w[0, 1] == 0) and torch.all(out[0, 1] == 0) and not torch.isnan(out).any()
    # and the gradient stays finite
    q.requires_grad_(True)
    scaled_dot_product_attention(q, k, v, mask=torch.zeros(3, 3).masked_fill(~mask, float("-inf")))[0].sum().backward()
    assert torch.isfinite(q.grad).all()


def test_sdpa_padding_mask_broadcast_over_queries():
    q = k = v = randn(2, 4, 8, seed=5)
    keep = padding_mask([4, 2], 4)[:, None, :]  # (B, 1, T)
    out, w = scaled_dot_product_attention(q, k, v, mask=keep)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep), atol=ATOL)
    assert torch.all(w[1, :, 2:] == 0)


@given(T=st.integers(1, 8), d=st.integers(1, 6), t=st.integers(0, 7), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_causal_attention_never_leaks_the_future(T, d, t, seed):
    """Changing the token at position t changes no output before t."""
    t = t % T
    x = randn(T, d, seed=seed)
    changed = x.clone()
    changed[t] = randn(d, seed=seed + 1) * 10
    out1, w1 = scaled_dot_product_attention(x, x, x, mask=causal_mask(T))
    out2, _ = scaled_dot_product_attention(changed, changed, changed, mask=causal_mask(T))
    assert torch.equal(out1[:t], out2[:t])
    assert torch.all(w1.triu(1) == 0)
    assert torch.allclose(w1.sum(-1), torch.ones(T), atol=ATOL)


@given(T=st.integers(1, 7), t=st.integers(0, 6), seed=st.integers(0, 2**16))
@settings(max_examples=25, deadline=None)
def test_multi_head_attention_with_causal_mask_never_leaks_the_future(T, t, seed):
    t = t % T
    torch.manual_seed(seed)
    mha = MultiHeadAttention(8, 2, batch_first=True).eval()
    x = randn(1, T, 8, seed=seed)
    changed = x.clone()
    changed[0, t] += 5.0
    blocked = ~causal_mask(T)  # torch's module convention: True = may NOT attend
    for need_weights in (True, False):
        a = mha(x, x, x, attn_mask=blocked, need_weights=need_weights)[0]
        b = mha(changed, changed, changed, attn_mask=blocked, need_weights=need_weights)[0]
        assert torch.allclose(a[0, :t], b[0, :t], atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(q=torch.randn(3, 4), k=torch.randn(3, 5), v=torch.randn(3, 4)), "same last dim d_k"),
        (dict(q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(2, 4)), "same length T_k"),
        (dict(q=torch.randn(2, 3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4)), "same leading"),
        (dict(q=torch.ones(3, 4, dtype=torch.long), k=torch.randn(3, 4), v=torch.randn(3, 4)), "q must be a floating"),
        (
            dict(q=torch.randn(4), k=torch.randn(3, 4), v=torch.randn(3, 4)),
            "q must be a floating-point tensor of shape",
        ),
        (
            dict(q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4), mask=torch.ones(3, dtype=torch.bool)),
            "mask must have between 2",
        ),
        (
            dict(
                q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4), mask=torch.ones(2, 3, dtype=torch.bool)
            ),
            "does not fit the scores",
        ),
        (
            dict(
                q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4), mask=torch.ones(3, 3, dtype=torch.long)
            ),
            "mask must be bool",
        ),
        (
            dict(q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4), mask=[[True] * 3] * 3),
            "mask must be a torch.Tensor",
        ),
        (dict(q=torch.randn(3, 4), k=torch.randn(3, 4), v=torch.randn(3, 4), dropout_p=1.5), "dropout_p"),
    ],
)
def test_sdpa_bad_input_is_a_clear_error(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        scaled_dot_product_attention(**kwargs)


# --- MultiHeadAttention: a drop-in for nn.MultiheadAttention ------------------------------------

CONFIGS = [
    dict(),
    dict(batch_first=True),
    dict(bias=False),
    dict(kdim=6, vdim=5),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
]


def make_pair(config, E=8, H=2, seed=0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(E, H, **config).eval()
    return theirs, MultiHeadAttention.from_torch(theirs)


def inputs(config, L=5, S=7, N=3, E=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    kdim, vdim = config.get("kdim", E), config.get("vdim", E)
    shape = (lambda T, d: (N, T, d)) if config.get("batch_first") else (lambda T, d: (T, N, d))
    return (
        torch.randn(*shape(L, E), generator=g),
        torch.randn(*shape(S, kdim), generator=g),
        torch.randn(*shape(S, vdim), generator=g),
    )


def assert_same(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        assert a.shape == b.shape and torch.allclose(a, b, atol=ATOL), (a - b).abs().max()


@pytest.mark.parametrize("config", CONFIGS, ids=[str(c) or "default" for c in CONFIGS])
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_mha_equals_torch(config, need_weights, average):
    theirs, ours = make_pair(config)
    q, k, v = inputs(config)
    N, L, S = 3, 5, 7
    g = torch.Generator().manual_seed(1)
    kpm = torch.zeros(N, S, dtype=torch.bool)
    kpm[1, 4:] = True  # sequence 1 has 4 real keys
    masks = [
        dict(),
        dict(key_padding_mask=kpm),
        dict(attn_mask=torch.rand(L, S, generator=g) > 0.7),
        dict(attn_mask=torch.randn(N * 2, L, S, generator=g)),  # float: added to the scores
        dict(attn_mask=torch.rand(L, S, generator=g) > 0.7, key_padding_mask=kpm),
    ]
    for mask in masks:
        if "attn_mask" in mask and mask["attn_mask"].dtype == torch.bool:
            mask["attn_mask"][:, 0] = False  # keep every row attending to something (see fully masked test)
        expected = theirs(q, k, v, need_weights=need_weights, average_attn_weights=average, **mask)
        got = ours(q, k, v, need_weights=need_weights, average_attn_weights=average, **mask)
        assert_same(got[0], expected[0])
        assert_same(got[1], expected[1])


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_causal_self_attention_and_the_is_causal_hint(batch_first):
    theirs, ours = make_pair(dict(batch_first=batch_first))
    x = inputs(dict(batch_first=batch_first), S=5)[0]
    blocked = ~causal_mask(5)
    float_mask = nn.Transformer.generate_square_subsequent_mask(5)
    for mask in (blocked, float_mask):
        for need_weights in (True, False):
            for is_causal in (False, True):
                expected = theirs(x, x, x, attn_mask=mask, need_weights=need_weights, is_causal=is_causal)
                got = ours(x, x, x, attn_mask=mask, need_weights=need_weights, is_causal=is_causal)
                assert_same(got[0], expected[0])
                assert_same(got[1], expected[1])
    with pytest.raises(ValueError, match="is_causal=True is only a hint"):
        ours(x, x, x, is_causal=True)


def test_mha_unbatched_input():
    theirs, ours = make_pair(dict())
    x = randn(5, 8, seed=3)
    kpm = torch.tensor([False, False, False, True, True])
    for kwargs in (dict(), dict(key_padding_mask=kpm), dict(attn_mask=~causal_mask(5))):
        for need_weights in (True, False):
            expected = theirs(x, x, x, need_weights=need_weights, **kwargs)
            got = ours(x, x, x, need_weights=need_weights, **kwargs)
            assert_same(got[0], expected[0])
            assert_same(got[1], expected[1])


def test_explicit_and_fused_paths_agree():
    _, ours = make_pair(dict(batch_first=True), E=32, H=4)
    x = randn(2, 64, 32, seed=7)
    for mask in (None, ~causal_mask(64)):
        ours.fused = True
        fast = ours(x, x, x, attn_mask=mask, need_weights=False)[0]
        ours.fused = False
        explicit, weights = ours(x, x, x, attn_mask=mask, need_weights=False)
        assert weights is None
        assert torch.allclose(fast, explicit, atol=ATOL)
    ours.fused = True


def test_fully_masked_row_gives_zeros_in_both_paths_like_torchs_fused_path():
    theirs, ours = make_pair(dict())
    x = randn(4, 1, 8, seed=2)
    kpm = torch.ones(1, 4, dtype=torch.bool)  # every key is padding
    fused_torch = theirs(x, x, x, key_padding_mask=kpm, need_weights=False)[0]
    for need_weights in (False, True):
        out, w = ours(x, x, x, key_padding_mask=kpm, need_weights=need_weights)
        assert torch.allclose(out, fused_torch, atol=ATOL) and not torch.isnan(out).any()
    assert torch.all(w == 0)
    # torch's own explicit path gives NaN here: the difference we document in lesson 06
    assert torch.isnan(theirs(x, x, x, key_padding_mask=kpm)[0]).all()


def test_training_mode_dropout_and_state_dict_round_trip():
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(8, 2, dropout=0.5)
    ours = MultiHeadAttention.from_torch(theirs)
    assert ours.training and ours.dropout == 0.5
    assert set(ours.state_dict()) == set(theirs.state_dict())
    x = randn(5, 2, 8)
    out_train = ours(x, x, x)[0]
    assert not torch.allclose(out_train, ours.eval()(x, x, x)[0])  # dropout acts in training mode only
    back = nn.MultiheadAttention(8, 2, dropout=0.5).eval()
    back.load_state_dict(ours.state_dict())
    assert_same(back(x, x, x)[0], ours(x, x, x)[0])


def test_gradients_match_torch():
    theirs, ours = make_pair(dict(batch_first=True))
    x1 = randn(2, 5, 8, seed=4).requires_grad_(True)
    x2 = x1.detach().clone().requires_grad_(True)
    theirs(x1, x1, x1, attn_mask=~causal_mask(5))[0].square().sum().backward()
    ours(x2, x2, x2, attn_mask=~causal_mask(5))[0].square().sum().backward()
    assert torch.allclose(x1.grad, x2.grad, atol=1e-5)
    assert torch.allclose(theirs.in_proj_weight.grad, ours.in_proj_weight.grad, atol=1e-5)


def test_default_initialisation_looks_like_torchs():
    torch.manual_seed(0)
    ours = MultiHeadAttention(64, 4)
    theirs = nn.MultiheadAttention(64, 4)
    for name, p in theirs.named_parameters():
        mine = dict(ours.named_parameters())[name]
        assert mine.shape == p.shape
        assert mine.std().item() == pytest.approx(p.std().item(), rel=0.2, abs=1e-6)


def test_runs_on_the_meta_device():
    # (tests/test_layering.py also checks that every tensor constructor says device=)
    for config in ({}, {"add_zero_attn": True, "add_bias_kv": True}):
        mha = MultiHeadAttention(8, 2, batch_first=True, device="meta", **config)
        x = torch.empty(2, 5, 8, device="meta")
        mask = ~causal_mask(5, device="meta")
        kpm = torch.zeros(2, 5, dtype=torch.bool, device="meta")
        for need_weights in (True, False):
            out, w = mha(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=need_weights)
            assert out.device.type == "meta" and out.shape == (2, 5, 8)
    q = torch.empty(2, 5, 4, device="meta")
    out, w = scaled_dot_product_attention(q, q, q, mask=causal_mask(5, device="meta"))
    assert out.device.type == "meta" and w.shape == (2, 5, 5)
    assert padding_mask(torch.tensor([2, 3], device="meta"), 4).device.type == "meta"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(embed_dim=10, num_heads=3), "divisible by num_heads"),
        (dict(embed_dim=0, num_heads=1), "embed_dim must be a positive int"),
        (dict(embed_dim=8, num_heads=0), "num_heads must be a positive int"),
        (dict(embed_dim=8, num_heads=2, dropout=1.0), "dropout must be in"),
    ],
)
def test_mha_constructor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(**kwargs)


def test_mha_forward_errors_name_the_argument():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(5, 3, 8)
    with pytest.raises(ValueError, match=r"query must have 8 features"):
        mha(torch.randn(5, 3, 6), x, x)
    with pytest.raises(ValueError, match="all be 3-D"):
        mha(x, x[:, 0], x)
    with pytest.raises(ValueError, match="share the batch size"):
        mha(x, torch.randn(5, 2, 8), torch.randn(5, 2, 8)[:, :1])
    with pytest.raises(ValueError, match=re.escape("attn_mask must have shape (L, S) = (5, 5)")):
        mha(x, x, x, attn_mask=torch.zeros(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=re.escape("key_padding_mask must have shape (N, S) = (3, 5)")):
        mha(x, x, x, key_padding_mask=torch.zeros(5, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="attn_mask must be bool"):
        mha(x, x, x, attn_mask=torch.zeros(5, 5, dtype=torch.long))
    with pytest.raises(TypeError, match="module must be a torch.nn.MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(2, 2))


def test_attention_heatmap_greys_out_masked_cells_and_checks_its_input():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.notebook.viz import attention_heatmap

    weights = masked_softmax(QUIZ, causal_mask(4))
    ax = attention_heatmap(weights, keys=list("abcd"), mask=causal_mask(4), title="masked")
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("-inf") == 6 and "0.50" in texts and ax.get_title() == "masked"
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    with pytest.raises(ValueError, match="weights must be a 2-D"):
        attention_heatmap(weights[0])
    with pytest.raises(ValueError, match="keys has 3 labels"):
        attention_heatmap(weights, keys=list("abc"))
    with pytest.raises(ValueError, match="mask must be a boolean matrix"):
        attention_heatmap(weights, mask=causal_mask(3))
    plt.close("all")
