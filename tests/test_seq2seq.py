"""course_lib.seq2seq: scores, weights and contexts against hand-written formulas and torch's
attention; padding never leaks; teacher forcing agrees with greedy decoding; checkpoints load."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import checkpoint
from course_lib.corpora import Vocab
from course_lib.dates import build_vocab, make_pairs
from course_lib.seq2seq import (
    ATTENTIONS,
    AdditiveScore,
    BilinearScore,
    DotScore,
    Seq2Seq,
    Seq2SeqConfig,
    attend,
    encode_pairs,
    exact_match_by_length,
    load_checkpoint,
    save_checkpoint,
    seq2seq_loss,
    translate,
)


@pytest.fixture(autouse=True)
def float64():
    """Tight comparisons in double precision; the default comes back after each test."""
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


def small(attention, vocab_size=11, seed=0):
    torch.manual_seed(seed)
    return Seq2Seq(
        Seq2SeqConfig(vocab_size, attention=attention, embed_dim=5, hidden_size=6, attention_size=4)
    ).double()


def random_batch(B=3, T_in=7, T_out=5, V=11, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T_in + 1, (B,), generator=g)
    lengths[0] = T_in
    src = torch.randint(3, V, (B, T_in), generator=g)
    src[torch.arange(T_in)[None, :] >= lengths[:, None]] = 0  # PAD after each length
    tgt_in = torch.randint(3, V, (B, T_out), generator=g)
    tgt_in[:, 0] = 1  # BOS
    return src, lengths, tgt_in


def test_dot_and_scaled_scores_by_hand():
    q = torch.randn(2, 4)
    K = torch.randn(2, 3, 4)
    expected = torch.tensor([[sum(q[b, d] * K[b, j, d] for d in range(4)) for j in range(3)] for b in range(2)])
    torch.testing.assert_close(DotScore()(q, K), expected)
    torch.testing.assert_close(DotScore(scaled=True)(q, K), expected / 2)  # sqrt(4) = 2


def test_bilinear_and_additive_scores_by_hand():
    q, K = torch.randn(2, 4), torch.randn(2, 3, 5)
    bilinear = BilinearScore(4, 5).double()
    expected = torch.stack([torch.stack([q[b] @ bilinear.W @ K[b, j] for j in range(3)]) for b in range(2)])
    torch.testing.assert_close(bilinear(q, K), expected)
    additive = AdditiveScore(4, 5, 6).double()
    Wq, Wk, v = additive.W_q.weight, additive.W_k.weight, additive.v.weight[0]
    expected = torch.stack(
        [torch.stack([v @ torch.tanh(Wq @ q[b] + Wk @ K[b, j]) for j in range(3)]) for b in range(2)]
    )
    torch.testing.assert_close(additive(q, K), expected)


@given(st.integers(1, 4), st.integers(1, 9), st.integers(1, 6), st.integers(0, 1000))
@settings(max_examples=40, deadline=None)
def test_attend_is_a_masked_softmax_then_a_weighted_average(B, T, d, seed):
    g = torch.Generator().manual_seed(seed)
    scores, values = torch.randn(B, T, generator=g), torch.randn(B, T, d, generator=g)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    context, weights = attend(scores, values, mask)
    for b in range(B):
        n = int(lengths[b])
        alpha = torch.softmax(scores[b, :n], dim=0)  # the oracle: softmax over the real keys only
        torch.testing.assert_close(weights[b, :n], alpha)
        assert (weights[b, n:] == 0).all()
        torch.testing.assert_close(context[b], (alpha[:, None] * values[b, :n]).sum(0))


def test_attend_gradients_match_finite_differences():
    scores = torch.randn(2, 5, requires_grad=True)
    values = torch.randn(2, 5, 3, requires_grad=True)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    assert torch.autograd.gradcheck(lambda s, v: attend(s, v, mask), (scores, values))


def test_scaled_attention_agrees_with_torchs_fused_attention():
    model = small("scaled")
    states, query = torch.randn(3, 7, 6), torch.randn(3, 6)
    mask = torch.tensor([[True] * 7, [True] * 3 + [False] * 4, [True] + [False] * 6])
    context, weights = model.context(query, states, mask, None)
    expected = F.scaled_dot_product_attention(query[:, None], states, states, attn_mask=mask[:, None])[:, 0]
    torch.testing.assert_close(context, expected)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3))


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_padding_never_changes_a_sequences_translation(attention):
    """A sequence batched with longer ones gets exactly the logits it gets alone (no leak from PAD)."""
    model = small(attention)
    src, lengths, tgt_in = random_batch()
    logits, weights = model(src, lengths, tgt_in)
    for b in range(len(src)):
        n = int(lengths[b])
        alone, alone_weights = model(src[b : b + 1, :n], lengths[b : b + 1], tgt_in[b : b + 1])
        torch.testing.assert_close(logits[b], alone[0])
        if weights is not None:
            torch.testing.assert_close(weights[b, :, :n], alone_weights[0])
            assert (weights[b, :, n:] == 0).all()
            torch.testing.assert_close(weights[b].sum(-1), torch.ones(tgt_in.shape[1]))


def test_the_encoder_is_torchs_gru_and_the_bottleneck_is_its_last_real_state():
    model = small("none")
    src, lengths, _ = random_batch()
    states, last, mask = model.encode(src, lengths)
    for b in range(len(src)):
        n = int(lengths[b])
        out, h_n = model.encoder(model.src_embed(src[b, :n]))  # the oracle: nn.GRU on the unpadded sequence
        torch.testing.assert_close(last[b], h_n[0])
        torch.testing.assert_close(states[b, :n], out)
    assert mask.tolist() == (torch.arange(src.shape[1])[None, :] < lengths[:, None]).tolist()


def test_without_attention_only_the_last_encoder_state_reaches_the_decoder():
    model = small("none")
    src, lengths, tgt_in = random_batch(B=1)
    states, last, mask = model.encode(src, lengths)
    logits, weights = model(src, lengths, tgt_in)
    assert weights is None
    # Changing the first source token changes the output only through h_n^e.
    src2 = src.clone()
    src2[0, 0] = 3 if src[0, 0] != 3 else 4
    _, last2, _ = model.encode(src2, lengths)
    assert not torch.allclose(last, last2)
    assert not torch.allclose(model(src2, lengths, tgt_in)[0], logits)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_greedy_decoding_is_teacher_forcing_on_its_own_outputs(attention):
    model = small(attention)
    src, lengths, _ = random_batch()
    ids, weights = model.greedy_decode(src, lengths, max_len=6)
    tgt_in = torch.cat([torch.ones(len(src), 1, dtype=torch.long), ids[:, :-1].clamp(min=0)], dim=1)
    logits, forced_weights = model(src, lengths, tgt_in)
    for b in range(len(src)):
        steps = ids.shape[1]
        eos = (ids[b] == 2).nonzero()
        steps = int(eos[0]) + 1 if len(eos) else steps  # after EOS the decoder emits PAD, not its argmax
        assert logits[b, :steps].argmax(-1).tolist() == ids[b, :steps].tolist()
        if weights is not None:
            torch.testing.assert_close(weights[b, :steps], forced_weights[b, :steps])


def test_the_loss_is_cross_entropy_over_real_target_characters():
    model = small("additive")
    src, lengths, tgt_in = random_batch()
    tgt_out = torch.cat([tgt_in[:, 1:], torch.full((3, 1), 2)], dim=1)
    tgt_out[1, 3:] = 0  # padding at the end of the second target
    logits, _ = model(src, lengths, tgt_in)
    terms = [-torch.log_softmax(logits[b, t], -1)[tgt_out[b, t]] for b in range(3) for t in range(5) if tgt_out[b, t]]
    torch.testing.assert_close(seq2seq_loss(model, (src, lengths, tgt_in, tgt_out)), torch.stack(terms).mean())


def test_a_model_learns_to_translate_a_few_dates():
    torch.set_default_dtype(torch.float32)  # (speed; the fixture restores the default)
    torch.manual_seed(0)
    vocab = build_vocab()
    pairs = make_pairs(4, n_dates=1)
    batch = encode_pairs(pairs.sources, pairs.targets, vocab)
    model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention="dot", embed_dim=8, hidden_size=16))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    first = seq2seq_loss(model, batch).item()
    for _ in range(20):
        loss = seq2seq_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.5 * first and first > math.log(len(vocab)) * 0.8


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_forward_and_decoding_run_on_the_meta_device(attention):
    model = Seq2Seq(Seq2SeqConfig(20, attention=attention), device="meta")
    src = torch.zeros(3, 7, dtype=torch.long, device="meta")
    lengths = torch.full((3,), 7, dtype=torch.long, device="meta")
    tgt = torch.zeros(3, 5, dtype=torch.long, device="meta")
    logits, weights = model(src, lengths, tgt)
    assert logits.shape == (3, 5, 20) and logits.device.type == "meta"
    assert weights is None if attention == "none" else weights.shape == (3, 5, 7)
    assert seq2seq_loss(model, (src, lengths, tgt, tgt)).device.type == "meta"
    ids, _ = model.greedy_decode(src, lengths, max_len=4)
    assert ids.shape == (3, 4) and ids.device.type == "meta"


def test_exact_match_by_length_by_hand():
    rows = exact_match_by_length(
        ["ab", "abc", "abcdef", "abcdefg"], ["x", "y", "z", "w"], ["x", "n", "z", "z"], [0, 3, 10]
    )
    assert rows == [(0, 3, 1.0, 1), (3, 10, 1 / 3, 3)]


def test_save_and_load_round_trip(tmp_path, monkeypatch):
    vocab = build_vocab()
    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention="bilinear", embed_dim=5, hidden_size=6))
    save_checkpoint(model, tmp_path / "m.safetensors", vocab, {"note": 1})
    loaded, ckpt, loaded_vocab = load_checkpoint(str(tmp_path / "m.safetensors"))
    assert ckpt.info["note"] == 1 and ckpt.config["attention"] == "bilinear"
    assert loaded_vocab.itos == vocab.itos and ckpt.kind == "seq2seq"
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), name
    # weights only: a plain dict of tensors (safetensors), loadable without trusting pickled code
    from safetensors.torch import load_file

    assert all(isinstance(v, torch.Tensor) for v in load_file(str(tmp_path / "m.safetensors")).values())
    with pytest.raises(ValueError, match="vocab is not the vocabulary"):
        save_checkpoint(small("dot").float(), tmp_path / "n.safetensors", vocab, {})


@pytest.mark.parametrize("name", ["none", "dot"])
def test_the_shipped_checkpoints_reproduce_their_recorded_accuracy(name):
    model, ckpt, vocab = load_checkpoint(name)
    info = ckpt.info
    assert checkpoint.weights_path(f"seq2seq_{name}").stat().st_size < 4e6
    task = info["task"]
    assert vocab.itos == build_vocab((task["source_locale"], task["target_locale"]), task["format"]).itos
    test = make_pairs(info["check_n"], "test", **info["task"])
    predictions, _ = translate(model, test.sources, vocab)
    exact = sum(p == t for p, t in zip(predictions, test.targets)) / len(test)
    assert abs(exact - info["test_exact"]) <= 0.01, (exact, info["test_exact"])


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: Seq2SeqConfig(10, attention="luong"), "attention must be one of"),
        (lambda: Seq2SeqConfig(2), "vocab_size must count the 3 special ids"),
        (lambda: Seq2SeqConfig(10, pad_id=1), "pad_id, bos_id, eos_id must be distinct"),
        (lambda: Seq2SeqConfig(10, hidden_size=0), "hidden_size must be a positive int"),
        (
            lambda: small("dot")(torch.full((2, 3), 11), torch.tensor([3, 3]), torch.ones(2, 2, dtype=torch.long)),
            "src holds token id 11, outside the vocabulary \\[0, 11\\)",
        ),
        (
            lambda: small("dot")(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 3]), torch.full((2, 2), -1)),
            "tgt_in holds token id -1, outside the vocabulary",
        ),
        (
            lambda: small("dot")(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 0]), torch.ones(2, 2).long()),
            "src_lengths must lie in \\[1, T=3\\]",
        ),
        (
            lambda: small("dot")(torch.zeros(2, 3), torch.tensor([3, 3]), torch.ones(2, 2, dtype=torch.long)),
            "src must be a \\(B, T\\) tensor of token ids",
        ),
        (
            lambda: small("dot")(
                torch.ones(2, 3, dtype=torch.long), torch.tensor([3]), torch.ones(2, 2, dtype=torch.long)
            ),
            "src_lengths must have one length per sequence",
        ),
        (
            lambda: small("dot")(
                torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 3]), torch.ones(3, 2, dtype=torch.long)
            ),
            "tgt_in must be a \\(B, T_out\\) tensor",
        ),
        (
            lambda: small("dot").greedy_decode(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 3]), max_len=0),
            "max_len must be a positive int",
        ),
        (
            lambda: attend(torch.zeros(2, 3), torch.zeros(2, 3, 4), torch.ones(2, 4, dtype=torch.bool)),
            "mask must be a bool",
        ),
        (lambda: exact_match_by_length(["a"], ["a", "b"], ["a"], [0, 5]), "same length"),
        (lambda: exact_match_by_length(["a"], ["a"], ["a"], [5, 0]), "increasing"),
        (lambda: load_checkpoint("nonexistent"), "no shipped checkpoint named 'seq2seq_nonexistent'; known"),
        (lambda: Seq2SeqConfig.for_vocab(Vocab.from_itos(["a", "b", "c"])), "vocab must hold the special"),
    ],
)
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises((ValueError, TypeError, FileNotFoundError), match=words):
        call()
