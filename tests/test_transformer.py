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
from course_lib.corpora import UNK
from course_lib.transformer import (
    GPT,
    SEP,
    Block,
    DecoderBlock,
    EncoderBlock,
    GPTConfig,
    LayerNorm,
    Seq2SeqTransformer,
    beam_search,
    char_vocab,
    encode_stream,
    evaluate_lm,
    generate,
    lm_batches,
    reversal_task,
    sample_next,
    sinusoidal_positions,
)

ATOL = 1e-5
CHECKPOINT = Path(__file__).resolve().parents[1] / "course_lib" / "weights" / "gpt_sotu_char.pt"


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def small_gpt(seed=0, **kw):
    torch.manual_seed(seed)
    config = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16)
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
    x = (3 * randn(*shape, C, seed=seed) + 1).requires_grad_()
    x2 = x.detach().clone().requires_grad_()
    torch.testing.assert_close(ours(x), ref(x2), atol=ATOL, rtol=1e-5)
    g = randn(*shape, C, seed=seed + 2)
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
    ours = Block(24, 4, 40, norm_first=norm_first).eval()
    ours.load_state_dict(ref.state_dict())
    ours.self_attn.fused = fused
    x = randn(3, 9, 24)
    mask = nn.Transformer.generate_square_subsequent_mask(9)
    torch.testing.assert_close(ours(x), ref(x, src_mask=mask, is_causal=True), atol=ATOL, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_block_equals_torch_encoder_layer_without_mask(norm_first):
    torch.manual_seed(2)
    ref = torch_encoder_layer(16, 2, 64, norm_first)
    ours = EncoderBlock(16, 2, norm_first=norm_first).eval()  # d_ff defaults to 4 d = 64
    ours.load_state_dict(ref.state_dict())
    x = randn(2, 6, 16)
    torch.testing.assert_close(ours(x), ref(x), atol=ATOL, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_block_equals_torch_decoder_layer(norm_first):
    torch.manual_seed(3)
    ref = nn.TransformerDecoderLayer(
        16, 4, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    ).eval()
    ours = DecoderBlock(16, 4, 32, norm_first=norm_first).eval()
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
    block = EncoderBlock(16, 4).eval()
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
    ours = Block(8, 2, 16)
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
    block = EncoderBlock(16, 4).eval()
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
    model = small_gpt(n_layer=3)
    idx = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(1))
    model.fused = True
    fused, _ = model(idx)
    model.fused = False
    assert not model.fused
    explicit, _ = model(idx)
    torch.testing.assert_close(fused, explicit, atol=ATOL, rtol=1e-5)
    w = model.attention_weights(idx)
    assert w.shape == (3, 2, 2, 12, 12)  # (n_layer, B, n_head, T, T)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 2, 2, 12))
    assert torch.all(w.triu(1) == 0)


def test_post_norm_gpt_has_no_final_norm_and_still_runs():
    model = small_gpt(norm_first=False)
    assert isinstance(model.ln_f, nn.Identity)
    assert model(torch.zeros(1, 3, dtype=torch.long))[0].shape == (1, 3, 11)


def test_gpt_runs_on_the_meta_device():
    with torch.device("meta"):
        for positions in ("learned", "sinusoidal"):
            model = GPT(GPTConfig(vocab_size=50, block_size=32, n_layer=2, n_head=4, n_embd=32, positions=positions))
            for fused in (True, False):
                model.fused = fused
                idx = torch.zeros(4, 32, dtype=torch.long)
                logits, loss = model(idx, idx)
                assert logits.device.type == "meta" and logits.shape == (4, 32, 50) and loss.shape == ()
        s2s = Seq2SeqTransformer(12, d_model=16, nhead=2, num_layers=1, max_len=8)
        src = torch.zeros(3, 8, dtype=torch.long)
        assert s2s(src, src[:, :5]).shape == (3, 5, 12)


def test_gpt_config_and_input_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"n_embd \(30\) must be divisible by n_head \(4\)"):
        GPTConfig(vocab_size=5, n_embd=30, n_head=4)
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
        Block(8, 2)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by nhead \(4\)"):
        Block(10, 4)


# --- decoding -------------------------------------------------------------------------------------


def test_sample_next_greedy_top_k_and_bad_input():
    logits = torch.tensor([[0.0, 3.0, 1.0, 2.0], [5.0, 0.0, 0.0, 0.0]])
    assert sample_next(logits, temperature=0).tolist() == [1, 0]
    assert sample_next(logits, top_k=1).tolist() == [1, 0]
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        sample_next(logits, temperature=-1)
    with pytest.raises(ValueError, match="top_k must be a positive int"):
        sample_next(logits, top_k=0)
    with pytest.raises(ValueError, match=r"logits must be a \(B, V\) tensor"):
        sample_next(logits[0])


@settings(max_examples=20, deadline=None)
@given(V=st.integers(2, 12), k=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_top_k_never_samples_outside_the_k_most_likely(V, k, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(64, V, generator=g)
    ids = sample_next(logits, temperature=1.3, top_k=k, generator=g)
    top = torch.topk(logits, min(k, V), dim=-1).indices
    assert all(i in row for i, row in zip(ids.tolist(), top.tolist()))


def test_sampling_frequencies_follow_softmax_of_logits_over_temperature():
    logits = torch.tensor([[1.0, 0.0, -1.0, 0.5]])
    g = torch.Generator().manual_seed(0)
    n = 20_000
    draws = sample_next(logits.expand(n, 4), temperature=2.0, generator=g)
    freq = torch.bincount(draws, minlength=4).float() / n
    p = torch.softmax(logits[0] / 2.0, -1)
    assert torch.allclose(freq, p, atol=0.015)  # about 4 standard errors


def sequence_logprob(model, seq, prompt_len):
    logp = torch.log_softmax(model(seq)[0], -1)
    return sum(logp[0, t - 1, seq[0, t]].item() for t in range(prompt_len, seq.shape[1]))


def test_greedy_generation_and_beam_search_with_width_one_agree():
    model = small_gpt(3)
    prompt = torch.tensor([[1, 2, 3]])
    greedy = generate(model, prompt, 6, temperature=0)
    beam, score = beam_search(model, prompt, 6, beam_width=1)
    assert torch.equal(greedy, beam)
    assert score == pytest.approx(sequence_logprob(model, beam, 3), abs=1e-4)


def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy():
    for seed in range(5):
        model = small_gpt(seed)
        prompt = torch.tensor([[seed % 11]])
        greedy = generate(model, prompt, 5, temperature=0)
        beam, score = beam_search(model, prompt, 5, beam_width=4)
        assert score == pytest.approx(sequence_logprob(model, beam, 1), abs=1e-4)  # the score is what it says
        assert score >= sequence_logprob(model, greedy, 1) - 1e-5


def test_generation_crops_the_context_and_checks_its_input():
    model = small_gpt()
    out = generate(model, torch.zeros(2, 15, dtype=torch.long), 5, generator=torch.Generator().manual_seed(0))
    assert out.shape == (2, 20)
    assert torch.equal(out[:, :15], torch.zeros(2, 15, dtype=torch.long))
    with pytest.raises(ValueError, match="beam_search decodes one prompt at a time"):
        beam_search(model, torch.zeros(2, 3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="max_new_tokens must be a positive int"):
        generate(model, torch.zeros(1, 3, dtype=torch.long), 0)


# --- data and evaluation --------------------------------------------------------------------------


def test_char_stream_separates_sentences_like_the_ngram_padding():
    vocab = char_vocab([list("ab"), list("ba c")])
    assert vocab.itos[:2] == [UNK, SEP]
    stream = encode_stream([list("ab"), list("cz")], vocab)  # 'z' was never seen: <UNK>
    assert vocab.decode(stream.tolist()) == [SEP, "a", "b", SEP, "c", UNK, SEP]
    # predicted tokens: every character plus one end-of-sentence per sentence, as NGramLM counts them
    assert len(stream) - 1 == (2 + 1) + (2 + 1)


def test_lm_batches_targets_are_the_inputs_shifted_by_one():
    stream = torch.arange(100)
    batches = list(
        lm_batches(stream, block_size=8, batch_size=5, steps=3, generator=torch.Generator().manual_seed(0))()
    )
    assert len(batches) == 3
    for x, y in batches:
        assert x.shape == y.shape == (5, 8)
        assert torch.equal(y, x + 1)  # stream[i] = i
    with pytest.raises(ValueError, match="needs more than block_size"):
        lm_batches(torch.arange(8), 8, 2, 1)


def _nll_by_hand(model, stream, windows):
    """Sum of -log p(stream[j + 1] | stream[start:j + 1]) for each (start, first j, last j) window."""
    total = 0.0
    for start, first, last in windows:
        logp = torch.log_softmax(model(stream[start : last + 1][None])[0][0], -1)
        total -= sum(logp[j - start, stream[j + 1]].item() for j in range(first, last + 1))
    return total


def test_evaluate_lm_is_the_mean_next_token_nll_of_the_stream():
    model = small_gpt(block_size=4)
    stream = torch.randint(0, 11, (11,), generator=torch.Generator().manual_seed(0))  # 10 tokens to predict
    # consecutive blocks [0:4], [4:8], then a last window [6:10] aligned with the end that scores only 8 and 9
    expected = _nll_by_hand(model, stream, [(0, 0, 3), (4, 4, 7), (6, 8, 9)]) / 10
    assert evaluate_lm(model, stream, batch_size=1) == pytest.approx(expected, abs=1e-5)
    assert evaluate_lm(model, stream, batch_size=3) == pytest.approx(expected, abs=1e-5)
    # a sliding window of stride 2: every window after the first scores its last 2 tokens only
    sliding = _nll_by_hand(model, stream, [(0, 0, 3), (2, 4, 5), (4, 6, 7), (6, 8, 9)]) / 10
    assert evaluate_lm(model, stream, batch_size=2, stride=2) == pytest.approx(sliding, abs=1e-5)
    # a stream shorter than the context: one window
    assert evaluate_lm(model, stream[:3]) == pytest.approx(_nll_by_hand(model, stream, [(0, 0, 1)]) / 2, abs=1e-5)


def test_evaluate_lm_serves_any_language_model_and_checks_its_arguments():
    from course_lib.rnn import RNNLanguageModel

    torch.manual_seed(0)
    lstm = RNNLanguageModel(11, 4, 8)
    stream = torch.randint(0, 11, (9,), generator=torch.Generator().manual_seed(1))
    assert evaluate_lm(lstm, stream, block_size=8) == pytest.approx(
        _nll_by_hand(lstm, stream, [(0, 0, 7)]) / 8, abs=1e-5
    )
    with pytest.raises(ValueError, match="block_size is needed"):
        evaluate_lm(lstm, stream)
    with pytest.raises(ValueError, match="stride must be at most block_size=4"):
        evaluate_lm(small_gpt(block_size=4), stream, stride=5)
    with pytest.raises(ValueError, match="stride must be a positive int"):
        evaluate_lm(small_gpt(block_size=4), stream, stride=0)


def test_reversal_task():
    src, tgt_in, tgt = reversal_task(4, length=5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(tgt, src.flip(1))
    assert torch.equal(tgt_in[:, 0], torch.zeros(4, dtype=torch.long))
    assert torch.equal(tgt_in[:, 1:], tgt[:, :-1])
    assert src.min() >= 1


def test_seq2seq_learns_to_reverse_in_a_few_steps():
    torch.manual_seed(0)
    model = Seq2SeqTransformer(11, d_model=32, nhead=2, num_layers=1, max_len=6)
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
    head = encode_stream(corpus.val, vocab)[: ckpt["val_head_tokens"] + 1]
    assert evaluate_lm(model, head) == pytest.approx(ckpt["val_head_loss"], abs=2e-3)
    assert ckpt["val_loss"] < math.log(len(vocab))  # far better than uniform: it was trained


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
    from course_lib.corpora import Vocab

    model = small_gpt()
    vocab = Vocab([list("abcdefgh")], min_count=1, specials=("<UNK>", "\n"))
    path = tmp_path / "gpt.pt"
    torch.save(
        {
            "config": dataclasses.asdict(model.config),
            "vocab": list(vocab.itos),
            "state_dict": {k: v.half() for k, v in model.state_dict().items()},
            "steps": 3,
        },
        path,
    )
    loaded, ckpt = GPT.load(path, vocab)
    assert ckpt["steps"] == 3 and loaded.config == model.config
    idx = torch.randint(0, 11, (2, 5))
    torch.testing.assert_close(loaded.eval()(idx)[0], model(idx)[0], rtol=0, atol=5e-3)  # float16 weights
    with pytest.raises(ValueError, match="another vocabulary"):
        GPT.load(path, Vocab([list("xyz")], min_count=1, specials=("<UNK>", "\n")))
