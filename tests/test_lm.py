"""course_lib.lm: character data, evaluation and decoding, with hand-computed oracles
(the next-token log-likelihood summed window by window, softmax(logits / T) frequencies)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.corpora import UNK
from course_lib.lm import SEP, beam_search, char_vocab, encode_stream, evaluate_lm, generate, lm_batches, sample_next
from course_lib.transformer import GPT, GPTConfig


def small_gpt(seed=0, **kw):
    torch.manual_seed(seed)
    config = dict(vocab_size=11, block_size=16, n_layers=2, n_heads=2, d_model=16)
    config.update(kw)
    return GPT(GPTConfig(**config)).eval()


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


def test_decoding_runs_where_the_model_is_given_a_prompt_built_on_the_cpu():
    # The course builds prompts and seeded generators on the CPU; the model may sit on a GPU. On the
    # meta device (shapes and devices, no values) a CPU prompt reaching the model's layers raises, as
    # it does on CUDA; generate must move it and return ids on the model's device.
    model = small_gpt().to("meta")
    prompt = torch.tensor([[1, 2, 3]])
    for kwargs in ({"temperature": 0}, {"top_k": 3, "generator": torch.Generator().manual_seed(0)}):
        out = generate(model, prompt, 4, **kwargs)
        assert out.device.type == "meta" and out.shape == (1, 7), kwargs
    assert prompt.device.type == "cpu"  # the caller's prompt is not moved in place


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
