"""course_lib.transformer against PyTorch: nn.LayerNorm, nn.TransformerEncoderLayer,
nn.TransformerDecoderLayer and nn.MultiheadAttention are the oracles; hypothesis for properties."""

import dataclasses
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib.attention import MultiHeadAttention
from course_lib.encoder_decoder import CrossAttentionBlock, Seq2SeqTransformer, reversal_task
from course_lib.lm import char_vocab, encode_stream, evaluate_lm
from course_lib.transformer import GPT, GPTConfig, LayerNorm, SelfAttentionBlock, sinusoidal_positions

ATOL = 1e-5
CHECKPOINT = Path(__file__).resolve().parents[1] / "course_lib" / "weights" / "gpt_sotu_char.safetensors"


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def small_gpt(seed=0, **kw):
    torch.manual_seed(seed)
    config = dict(vocab_size=11, block_size=16, n_layers=2, n_heads=2, d_model=16)
    config.update(kw)
    return GPT(GPTConfig(**config)).eval()


# --- positions ------------------------------------------------------------------------------------


def test_sinusoidal_positions_by_the_formula():
    T, d = 7, 6
    pe = sinusoidal_positions(T, d)
    assert pe.shape == (T, d)
    for pos in range(T):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    assert pe[0].tolist() == [0.0, 1.0] * (d // 2)  # position 0: sin 0 = 0, cos 0 = 1


@pytest.mark.parametrize("T,d,message", [(0, 4, "T must be"), (4, 5, "d must be even"), (4, 0, "d must be")])
def test_sinusoidal_positions_bad_input(T, d, message):
    with pytest.raises(ValueError, match=message):
        sinusoidal_positions(T, d)


# --- layer norm -----------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), C=st.integers(2, 12), seed=st.integers(0, 999))
def test_layer_norm_equals_torch_values_and_gradients(shape, C, seed):
    ref = nn.LayerNorm(C)
    nn.init.normal_(ref.weight, generator=torch.Generator().manual_seed(seed))
    nn.init.normal_(ref.bias, generator=torch.Generator().manual_seed(seed + 1))
    ours = LayerNorm(C)
    ours.load_state_dict(ref.state_dict())
    # float64: with two features almost equal, sigma^2 is tiny and float32 gradients differ by rounding alone
    ours, ref = ours.double(), ref.double()
    x = (3 * randn(*shape, C, seed=seed) + 1).double().requires_grad_()
    x2 = x.detach().clone().requires_grad_()
    torch.testing.assert_close(ours(x), ref(x2), atol=ATOL, rtol=1e-5)
    g = randn(*shape, C, seed=seed + 2).double()
    ours(x).backward(g)
    ref(x2).backward(g)
    torch.testing.assert_close(x.grad, x2.grad, atol=1e-4, rtol=1e-4)


def test_layer_norm_rejects_the_wrong_feature_size():
    with pytest.raises(ValueError, match="x must have 8 features"):
        LayerNorm(8)(torch.randn(2, 4))


# --- blocks against torch's layers ----------------------------------------------------------------


def torch_encoder_layer(C, H, d_ff, norm_first):
    return nn.TransformerEncoderLayer(
        C, H, d_ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    ).eval()


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("fused", [True, False])
def test_gpt_block_equals_torch_encoder_layer_with_a_causal_mask(norm_first, fused):
    torch.manual_seed(1)
    ref = torch_encoder_layer(24, 4, 40, norm_first)
    ours = SelfAttentionBlock(24, 4, 40, norm_first=norm_first).eval()
    ours.load_state_dict(ref.state_dict())
    ours.self_attn.fused = fused
    x = randn(3, 9, 24)
    mask = nn.Transformer.generate_square_subsequent_mask(9)
    torch.testing.assert_close(ours(x), ref(x, src_mask=mask, is_causal=True), atol=ATOL, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_block_equals_torch_encoder_layer_without_mask(norm_first):
    torch.manual_seed(2)
    ref = torch_encoder_layer(16, 2, 64, norm_first)
    ours = SelfAttentionBlock(16, 2, norm_first=norm_first, causal=False).eval()  # d_ff defaults to 4 d = 64
    ours.load_state_dict(ref.state_dict())
    x = randn(2, 6, 16)
    torch.testing.assert_close(ours(x), ref(x), atol=ATOL, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_block_equals_torch_decoder_layer(norm_first):
    torch.manual_seed(3)
    ref = nn.TransformerDecoderLayer(
        16, 4, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    ).eval()
    ours = CrossAttentionBlock(16, 4, 32, norm_first=norm_first).eval()
    ours.load_state_dict(ref.state_dict())
    x, memory = randn(2, 5, 16, seed=1), randn(2, 7, 16, seed=2)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    got = ours(x, memory, keep_weights=True)
    torch.testing.assert_close(got, ref(x, memory, tgt_mask=mask, tgt_is_causal=True), atol=ATOL, rtol=1e-5)
    assert ours.cross_weights.shape == (2, 4, 5, 7)  # (B, H, T_target, T_source)
    torch.testing.assert_close(ours.cross_weights.sum(-1), torch.ones(2, 4, 5))


def test_block_attention_is_multi_head_attention_equal_to_torchs():
    torch.manual_seed(4)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    block = SelfAttentionBlock(16, 4, causal=False).eval()
    block.self_attn.load_state_dict(ref.state_dict())
    assert isinstance(block.self_attn, MultiHeadAttention)
    x = randn(2, 5, 16)
    out, w = block.self_attn(x, x, x, average_attn_weights=False)
    ref_out, ref_w = ref(x, x, x, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=ATOL, rtol=1e-5)
    torch.testing.assert_close(w, ref_w, atol=ATOL, rtol=1e-5)


def test_block_gradients_equal_torchs():
    torch.manual_seed(5)
    ref = torch_encoder_layer(8, 2, 16, True)
    ours = SelfAttentionBlock(8, 2, 16)
    ours.load_state_dict(ref.state_dict())
    x = randn(2, 4, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    ours(x).square().sum().backward()
    ref(x, src_mask=mask).square().sum().backward()
    ref_grads = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, ref_grads[name].grad, atol=1e-4, rtol=1e-4, msg=name)


def test_self_attention_without_positions_is_permutation_equivariant():
    torch.manual_seed(6)
    block = SelfAttentionBlock(16, 4, causal=False).eval()
    x = randn(1, 8, 16)
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(block(x[:, perm]), block(x)[:, perm], atol=ATOL, rtol=1e-5)


# --- the GPT --------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    T=st.integers(2, 16),
    t=st.integers(0, 15),
    seed=st.integers(0, 10_000),
    fused=st.booleans(),
    positions=st.sampled_from(["learned", "sinusoidal"]),
)
def test_changing_a_future_token_never_changes_earlier_outputs(T, t, seed, fused, positions):
    t = t % T
    model = small_gpt(seed % 7, positions=positions)
    model.fused = fused
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, 11, (2, T), generator=g)
    changed = idx.clone()
    changed[:, t] = (idx[:, t] + 1 + torch.randint(0, 10, (2,), generator=g)) % 11  # a different token
    a, _ = model(idx)
    b, _ = model(changed)
    torch.testing.assert_close(a[:, :t], b[:, :t], atol=1e-6, rtol=0)
    assert not torch.allclose(a[:, t:], b[:, t:])  # ... while the present and future do see it


def test_gpt_loss_is_the_cross_entropy_of_the_next_token():
    model = small_gpt()
    idx = torch.randint(0, 11, (3, 10), generator=torch.Generator().manual_seed(0))
    targets = torch.roll(idx, -1, dims=1)
    logits, loss = model(idx, targets)
    logp = torch.log_softmax(logits, -1)
    by_hand = -sum(logp[b, t, targets[b, t]] for b in range(3) for t in range(10)) / 30
    assert loss.item() == pytest.approx(by_hand.item(), abs=1e-5)
    assert logits.shape == (3, 10, 11)


def test_explicit_and_fused_paths_agree_and_attention_weights_are_causal():
    model = small_gpt(n_layers=3)
    idx = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(1))
    model.fused = True
    fused, _ = model(idx)
    model.fused = False
    assert not model.fused
    explicit, _ = model(idx)
    torch.testing.assert_close(fused, explicit, atol=ATOL, rtol=1e-5)
    w = model.attention_weights(idx)
    assert w.shape == (3, 2, 2, 12, 12)  # (n_layers, B, n_heads, T, T)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 2, 2, 12))
    assert torch.all(w.triu(1) == 0)


def test_post_norm_gpt_has_no_final_norm_and_still_runs():
    model = small_gpt(norm_first=False)
    assert isinstance(model.ln_f, nn.Identity)
    assert model(torch.zeros(1, 3, dtype=torch.long))[0].shape == (1, 3, 11)


def test_gpt_runs_on_the_meta_device():
    with torch.device("meta"):
        for positions in ("learned", "sinusoidal"):
            model = GPT(GPTConfig(vocab_size=50, block_size=32, n_layers=2, n_heads=4, d_model=32, positions=positions))
            for fused in (True, False):
                model.fused = fused
                idx = torch.zeros(4, 32, dtype=torch.long)
                logits, loss = model(idx, idx)
                assert logits.device.type == "meta" and logits.shape == (4, 32, 50) and loss.shape == ()
        s2s = Seq2SeqTransformer(12, d_model=16, n_heads=2, n_layers=1, max_len=8)
        src = torch.zeros(3, 8, dtype=torch.long)
        assert s2s(src, src[:, :5]).shape == (3, 5, 12)


def test_gpt_config_and_input_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"d_model \(30\) must be divisible by n_heads \(4\)"):
        GPTConfig(vocab_size=5, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="positions must be"):
        GPTConfig(vocab_size=5, positions="rotary")
    with pytest.raises(ValueError, match="vocab_size must be a positive int"):
        GPTConfig(vocab_size=0)
    with pytest.raises(TypeError, match="config must be a GPTConfig"):
        GPT({"vocab_size": 5})
    model = small_gpt()
    with pytest.raises(ValueError, match="more than block_size=16"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"idx must be a \(B, T\) tensor of token ids"):
        model(torch.zeros(17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"idx must be a \(B, T\) tensor of token ids"):
        model(torch.zeros(1, 4))
    with pytest.raises(ValueError, match="targets must have the shape of idx"):
        model(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"x must be a tensor of shape \(B, T, 8\)"):
        SelfAttentionBlock(8, 2)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by n_heads \(4\)"):
        SelfAttentionBlock(10, 4)


# --- the encoder-decoder ------------------------------------------------------------------------


def test_reversal_task():
    src, tgt_in, tgt = reversal_task(4, length=5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(tgt, src.flip(1))
    assert torch.equal(tgt_in[:, 0], torch.zeros(4, dtype=torch.long))
    assert torch.equal(tgt_in[:, 1:], tgt[:, :-1])
    assert src.min() >= 1


def test_seq2seq_learns_to_reverse_in_a_few_steps():
    torch.manual_seed(0)
    model = Seq2SeqTransformer(11, d_model=32, n_heads=2, n_layers=1, max_len=6)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(300):
        src, tgt_in, tgt = reversal_task(64, length=5, generator=g)
        loss = F.cross_entropy(model(src, tgt_in).flatten(0, 1), tgt.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    src, _, tgt = reversal_task(200, length=5, generator=g)
    accuracy = (model.eval().greedy(src, bos=0, length=5) == tgt).float().mean().item()
    assert accuracy > 0.9


# --- the checkpoint -------------------------------------------------------------------------------


@pytest.mark.skipif(not CHECKPOINT.exists(), reason="no checkpoint trained yet (scripts/train_gpt.py)")
def test_checkpoint_loads_weights_only_and_reproduces_its_validation_loss():
    from course_lib.corpora import load_sotu

    assert CHECKPOINT.stat().st_size < 5e6
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    model, ckpt = GPT.load(CHECKPOINT, vocab)  # the notebook rebuilds the same vocabulary from the same split
    head = encode_stream(corpus.val, vocab)[: ckpt.info["val_head_tokens"] + 1]
    assert evaluate_lm(model, head) == pytest.approx(ckpt.info["val_head_loss"], abs=2e-3)
    assert ckpt.info["val_loss"] < math.log(len(vocab))  # far better than uniform: it was trained


@pytest.mark.skipif(not CHECKPOINT.exists(), reason="no checkpoint trained yet (scripts/train_gpt.py)")
def test_checkpoint_beats_the_best_character_ngram_on_validation_text():
    """Lesson 07's goal, against lesson 01's Kneser-Ney 6-gram (itself tested against nltk) on the
    same validation sentences and the same predicted tokens (each character and one end per sentence)."""
    from course_lib.corpora import load_sotu
    from course_lib.ngram import NGramLM

    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    model, _ = GPT.load(CHECKPOINT, vocab)
    head = corpus.val[:60]
    ngram = NGramLM(6, smoothing="kneser-ney").fit(corpus.train)
    stream = encode_stream(head, vocab)
    assert len(stream) - 1 == sum(len(s) + 1 for s in head)  # the n-gram's tokens: characters + </s>
    assert math.exp(evaluate_lm(model, stream)) < ngram.perplexity(head)


def test_gpt_load_round_trips_and_refuses_another_vocabulary(tmp_path):
    from course_lib import checkpoint
    from course_lib.corpora import Vocab

    model = small_gpt()
    vocab = Vocab([list("abcdefgh")], min_count=1, specials=("<UNK>", "\n"))
    path = tmp_path / "gpt.safetensors"
    config = dataclasses.asdict(model.config)
    checkpoint.save(path, model, kind="gpt", config=config, vocab=vocab.itos, info={"steps": 3}, dtype=torch.float16)
    loaded, ckpt = GPT.load(path, vocab)
    assert ckpt.info["steps"] == 3 and loaded.config == model.config
    idx = torch.randint(0, 11, (2, 5))
    torch.testing.assert_close(loaded.eval()(idx)[0], model(idx)[0], rtol=0, atol=5e-3)  # float16 weights
    with pytest.raises(ValueError, match="vocab differs from the checkpoint's"):
        GPT.load(path, Vocab([list("xyz")], min_count=1, specials=("<UNK>", "\n")))


def test_the_shipped_checkpoint_header_uses_the_lecture_names():
    from course_lib import checkpoint

    header = checkpoint.read(CHECKPOINT)
    assert header.kind == "gpt" and {"d_model", "n_heads", "n_layers", "d_ff"} <= set(header.config)
    assert len(header.vocab) == header.config["vocab_size"]


@pytest.mark.parametrize(
    "option, value, error, message",
    [
        ("bias", "False", TypeError, "bias must be True or False"),
        ("norm_first", 0, TypeError, "norm_first must be True or False"),
        ("dropout", float("nan"), ValueError, "dropout must be a number"),
        ("dropout", "0.1", ValueError, "dropout must be a number"),
        ("dropout", 1.0, ValueError, r"dropout must be in \[0, 1\)"),
        ("d_model", "64", ValueError, "d_model must be a positive integer"),
        ("n_heads", 2.0, ValueError, "n_heads must be a positive integer"),
    ],
)
def test_gpt_config_refuses_strings_nan_and_non_booleans(option, value, error, message):
    with pytest.raises(error, match=message):
        GPTConfig(**{"vocab_size": 5, "d_model": 8, "n_heads": 2, option: value})


def test_token_ids_outside_the_vocabulary_are_refused_before_the_embedding():
    model = small_gpt()  # vocab_size 11
    with pytest.raises(ValueError, match=r"idx holds token id 11, outside the vocabulary \[0, 11\)"):
        model(torch.tensor([[1, 11]]))
    with pytest.raises(ValueError, match="idx holds token id -1"):
        model(torch.tensor([[-1, 2]]))
    s2s = Seq2SeqTransformer(12, d_model=16, n_heads=2, n_layers=1, max_len=8)
    with pytest.raises(ValueError, match="tgt_in holds token id 12"):
        s2s(torch.zeros(1, 3, dtype=torch.long), torch.tensor([[0, 12]]))


# --- the build-up (course_lib.buildup) ------------------------------------------------------------


def test_buildup_head_is_torchs_causal_scaled_dot_product_attention():
    from course_lib.buildup import Head

    torch.manual_seed(7)
    head = Head(12, 4)
    x = randn(2, 6, 12)
    q, k, v = head.query(x), head.key(x), head.value(x)
    torch.testing.assert_close(head(x), F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=ATOL, rtol=1e-5)


@pytest.mark.parametrize("fused", [True, False])
def test_buildup_last_step_is_the_gpt_with_the_same_parameters(fused):
    from course_lib.buildup import STEPS, build_step, to_gpt

    torch.manual_seed(8)
    model = build_step("+ LayerNorm", 13, block_size=10, d_model=16)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    gpt = to_gpt(model).eval()
    gpt.fused = fused
    assert gpt.num_params() == sum(p.numel() for p in model.parameters())
    assert (gpt.config.n_layers, gpt.config.n_heads) == (
        STEPS["+ LayerNorm"]["n_layers"],
        STEPS["+ LayerNorm"]["n_heads"],
    )
    idx = torch.randint(0, 13, (3, 10), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(gpt(idx)[0], model(idx)[0], atol=1e-5, rtol=1e-5)
    with pytest.raises(TypeError, match="must be the '\\+ LayerNorm' step"):
        to_gpt(build_step("+ residual", 13, block_size=10, d_model=16))


def test_buildup_to_gpt_builds_the_gpt_where_the_step_is():
    # lesson 07 compares the two models' logits on the same ids: both must be on one device (here meta,
    # where a GPT left on the CPU cannot take the step's meta tensors)
    from course_lib.buildup import build_step, to_gpt

    gpt = to_gpt(build_step("+ LayerNorm", 13, block_size=10, d_model=16).to("meta"))
    assert {p.device.type for p in gpt.parameters()} == {"meta"}
    assert gpt(torch.zeros(2, 10, dtype=torch.long, device="meta"))[0].shape == (2, 10, 13)


def test_every_buildup_step_is_a_causal_language_model():
    from course_lib.buildup import STEPS, build_step

    for name in STEPS:
        torch.manual_seed(9)
        model = build_step(name, 11, block_size=8, d_model=16).eval()
        idx = torch.randint(0, 11, (2, 8), generator=torch.Generator().manual_seed(1))
        changed = idx.clone()
        changed[:, 5] = (idx[:, 5] + 1) % 11
        logits, loss = model(idx, torch.roll(idx, -1, 1))
        assert logits.shape == (2, 8, 11) and loss.shape == ()
        torch.testing.assert_close(model(changed)[0][:, :5], logits[:, :5], atol=1e-6, rtol=0, msg=name)
    with pytest.raises(ValueError, match="name must be one of"):
        build_step("+ scale", 11)


# --- the findings over seeds (scripts/train_buildup.py) -------------------------------------------

WEIGHTS = Path(__file__).resolve().parents[1] / "course_lib" / "weights"


def _findings_script():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "train_buildup.py"
    spec = importlib.util.spec_from_file_location("train_buildup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_spread(v, n_seeds):
    import statistics

    assert len(v["seeds"]) == n_seeds
    finite = [s for s in v["seeds"] if math.isfinite(s)]
    assert v["mean"] == pytest.approx(statistics.fmean(finite))
    assert v["sd"] == pytest.approx(statistics.stdev(finite) if len(finite) > 1 else 0.0)
    assert v["min"] <= v["mean"] <= v["max"]


def test_findings_script_in_its_tiny_setting_writes_every_table_over_the_seeds(tmp_path):
    import json

    from course_lib.buildup import STEPS

    _findings_script().main(["--tiny", "--seeds", "0", "1", "--out-dir", str(tmp_path)])
    buildup = json.loads((tmp_path / "gpt_buildup_sotu_char.json").read_text())
    assert list(buildup["steps"]) == list(STEPS) and buildup["budget"]["seeds"] == [0, 1]
    for step in buildup["steps"].values():
        _assert_spread(step["val_loss"], 2)
        assert len(step["curve"]["step"]) == len(step["curve"]["val_loss_mean"])
    findings = json.loads((tmp_path / "gpt_findings_sotu_char.json").read_text())
    for setting in findings["norm"]["settings"].values():
        assert set(setting["runs"]) == {"pre-norm", "post-norm"}
        for run in setting["runs"].values():
            _assert_spread(run["val_loss"], 2)
            assert len(run["stuck_or_diverged"]) == 2
    for model in findings["lstm"]["models"].values():
        _assert_spread(model["val_loss"], 2)


def test_shipped_findings_have_three_seeds_and_the_bigram_reproduces_its_recorded_loss():
    import json

    from course_lib import set_seed
    from course_lib.buildup import build_step
    from course_lib.corpora import load_sotu
    from course_lib.lm import lm_batches
    from course_lib.train import fit

    buildup = json.loads((WEIGHTS / "gpt_buildup_sotu_char.json").read_text())
    findings = json.loads((WEIGHTS / "gpt_findings_sotu_char.json").read_text())
    assert len(buildup["budget"]["seeds"]) >= 3
    for step in buildup["steps"].values():
        _assert_spread(step["val_loss"], len(buildup["budget"]["seeds"]))
    for setting in findings["norm"]["settings"].values():
        for run in setting["runs"].values():
            _assert_spread(run["val_loss"], len(findings["norm"]["budget"]["seeds"]))
    # the cheapest step, retrained from seed 0 with the recorded budget, lands on its recorded loss
    b = buildup["budget"]
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    train, val = encode_stream(corpus.train, vocab), encode_stream(corpus.val, vocab)[: b["val_tokens"] + 1]
    set_seed(b["seeds"][0])
    model = build_step("bigram", len(vocab), block_size=b["block_size"], d_model=b["d_model"])
    batches = lm_batches(
        train, b["block_size"], b["batch_size"], b["steps"], generator=torch.Generator().manual_seed(b["seeds"][0])
    )
    opt = torch.optim.AdamW(model.parameters(), lr=b["lr"], weight_decay=0.01)
    fit(model, lambda m, batch: m(*batch)[1], opt, batches, clip_grad_norm=1.0, progress=False)
    got = evaluate_lm(model, val, block_size=b["block_size"])
    assert got == pytest.approx(buildup["steps"]["bigram"]["val_loss"]["seeds"][0], abs=0.02)


@pytest.mark.parametrize("experiment", ["norm", "lstm"])
def test_findings_table_prints_what_the_file_holds(experiment):
    """course_lib.buildup.findings_table (lessons 07 and 07b): the record is the file's, and every
    row of the table shows the file's mean and sd of each setting, and the budget's seeds and steps."""
    import json

    from course_lib.buildup import FINDINGS, findings_table

    raw = json.loads(FINDINGS.read_text())[experiment]
    record, text = findings_table(experiment)
    assert record == raw
    lines = text.splitlines()
    assert f"{raw['steps']} steps per run from seeds {', '.join(map(str, raw['budget']['seeds']))}" in lines[0]
    if experiment == "norm":
        expected = [
            (f"{s}: {v['n_layers']} layers, lr {v['lr']:g}", name, r)
            for s, v in raw["settings"].items() for name, r in v["runs"].items()
        ]  # fmt: skip
    else:
        expected = [(name, None, r) for name, r in raw["models"].items()]
    rows = lines[-len(expected) :]
    assert len(lines) == 4 + len(expected)  # two budget lines, the header, the rule, one line per row
    for line, (first, block, r) in zip(rows, expected):
        cells = line.split()
        assert line.startswith(first) and (block is None or block in cells)
        assert f"{r['val_loss']['mean']:.3f}" in cells and f"{r['val_loss']['sd']:.3f}" in cells
        if experiment == "norm":
            assert f"{r['train_loss_last20']['mean']:.3f}" in cells
            assert f"{sum(r['stuck_or_diverged'])} of {len(r['stuck_or_diverged'])}" in line
        else:
            assert str(r["params"]) in cells and f"{r['cpu_seconds']['mean']:,.3f}" in cells
    with pytest.raises(ValueError, match="experiment"):
        findings_table("buildup")


# --- lesson 07's n-gram baseline: the text every model is scored on, sentence by sentence -----------


def test_val_head_is_the_shortest_run_of_first_sentences_reaching_n_chars():
    from course_lib.buildup import val_head

    sentences = [list("ab"), list("cde"), list("f"), list("gh")]  # 3, 4, 2, 3 symbols with their end
    assert val_head(sentences, 7) == sentences[:2]  # 3 + 4 = 7 reaches 7
    assert val_head(sentences, 8) == sentences[:3]
    assert val_head(sentences, 100) == sentences  # fewer characters than asked: every sentence
    with pytest.raises(ValueError, match="n_chars"):
        val_head(sentences, 0)


def test_per_sentence_loss_equals_the_stream_loss_for_a_model_of_the_previous_token_only():
    """A bigram sees only the previous token, and in the stream each sentence's first token follows
    the separator just as it does alone: the two scorings must agree. A GPT that reads across the
    boundary (context from the sentence before) must not."""
    from course_lib.buildup import build_step, per_sentence_loss

    vocab = char_vocab([list("abcdef")])
    g = torch.Generator().manual_seed(0)
    sentences = [
        [vocab.itos[i] for i in torch.randint(2, len(vocab), (n,), generator=g).tolist()] for n in (5, 12, 3, 9)
    ]
    stream = encode_stream(sentences, vocab)
    torch.manual_seed(0)
    bigram = build_step("bigram", len(vocab))
    with torch.no_grad():
        for p in bigram.parameters():
            p.normal_()
    assert per_sentence_loss(bigram, sentences, vocab, block_size=8) == pytest.approx(
        evaluate_lm(bigram, stream, block_size=8), rel=1e-6
    )
    gpt = GPT(GPTConfig(vocab_size=len(vocab), block_size=16, n_layers=1, n_heads=2, d_model=16))
    alone = per_sentence_loss(gpt, sentences, vocab, block_size=16)
    assert alone != pytest.approx(evaluate_lm(gpt, stream, block_size=16, stride=1), rel=1e-4)
    # by hand: each sentence scored on its own stream (separator, tokens, separator), weighted by its tokens
    by_hand = [(len(s) + 1, evaluate_lm(gpt, encode_stream([s], vocab), block_size=len(s) + 1)) for s in sentences]
    assert alone == pytest.approx(sum(n * l for n, l in by_hand) / sum(n for n, _ in by_hand), rel=1e-6)


def test_shipped_ngram_orders_reproduce_a_refitted_order():
    import json

    from course_lib.buildup import val_head
    from course_lib.corpora import load_sotu
    from course_lib.ngram import NGramLM

    record = json.loads((WEIGHTS / "ngram_orders_sotu_char.json").read_text())
    assert [int(n) for n in record["orders"]] == list(range(1, 11))
    corpus = load_sotu(level="char")
    lm = NGramLM(2, smoothing="kneser-ney").fit(corpus.train)
    assert lm.perplexity(corpus.val) == pytest.approx(record["orders"]["2"]["val_perplexity"], rel=1e-9)
    assert lm.perplexity(val_head(corpus.val)) == pytest.approx(record["orders"]["2"]["head_perplexity"], rel=1e-9)
