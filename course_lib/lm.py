"""Language models on text: character data, evaluation and decoding (lessons 04 and 07).

- data: :func:`char_vocab`, :func:`encode_stream` (sentences to one stream of ids, each sentence
  ended by ``SEP``, as lesson 01's n-grams count ``</s>``) and :func:`lm_batches` (random windows);
- evaluation: :func:`evaluate_lm`, the mean next-token negative log-likelihood of a stream;
- decoding: :func:`sample_next` (temperature, top-k), :func:`generate` (autoregressive) and
  :func:`beam_search` (Fitzgibbon).

Every function works with any model ``model(idx) -> (logits, loss)``: the GPT of
:mod:`course_lib.transformer` and the RNN language model of :mod:`course_lib.rnn`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import _validate as check
from course_lib.corpora import UNK, Vocab
from course_lib.train import evaluating

__all__ = ["SEP", "char_vocab", "encode_stream", "lm_batches", "evaluate_lm", "sample_next", "generate", "beam_search"]

SEP = "\n"  # ends every sentence (the n-gram's </s>) and starts the next (its <s>)


def char_vocab(sentences) -> Vocab:
    """Every character of the training sentences, plus ``<UNK>`` (id 0) and ``SEP`` (id 1)."""
    return Vocab(sentences, min_count=1, specials=(UNK, SEP))


def encode_stream(sentences, vocab: Vocab, device=None) -> torch.Tensor:
    """One long 1-D tensor of ids: SEP s_1 SEP s_2 SEP ... s_n SEP.

    The model predicts every token after the first, i.e. each character of each sentence and
    one SEP per sentence: the same tokens as lesson 01's n-gram perplexity (the characters
    plus ``</s>``), so the two perplexities are comparable.
    """
    if SEP not in vocab:
        raise ValueError(f"vocab must contain the separator {SEP!r} (use char_vocab)")
    sep = vocab.stoi[SEP]
    ids = [sep]
    for sentence in sentences:
        ids.extend(vocab.encode(sentence))
        ids.append(sep)
    return torch.tensor(ids, dtype=torch.long, device=device)


def _on_model_device(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """``ids`` on the device of ``model``'s parameters (a no-op when they already share it): a prompt or
    a stream built on the CPU may be given to a model on the GPU."""
    param = next(model.parameters(), None)
    return ids if param is None else ids.to(param.device)


def lm_batches(
    stream: torch.Tensor, block_size: int, batch_size: int, steps: int, generator: torch.Generator | None = None
):
    """For ``train.fit``: a function yielding ``steps`` batches (x, y) of random windows, each
    (batch_size, block_size), with y = x shifted by one token (the next token to predict)."""
    for name, value in (("block_size", block_size), ("batch_size", batch_size), ("steps", steps)):
        check.positive_int(name, value)
    if not isinstance(stream, torch.Tensor) or stream.dim() != 1:
        raise ValueError(f"stream must be a 1-D tensor of ids, got {getattr(stream, 'shape', type(stream).__name__)}")
    if len(stream) <= block_size:
        raise ValueError(f"stream has {len(stream)} tokens, it needs more than block_size={block_size}")
    offsets = torch.arange(block_size, device=stream.device)

    def epoch():
        for _ in range(steps):
            # drawn on the CPU, where the generator lives, then moved
            starts = torch.randint(len(stream) - block_size, (batch_size, 1), generator=generator, device="cpu")
            starts = starts.to(stream.device)
            yield stream[starts + offsets], stream[starts + offsets + 1]  # (B, T), (B, T)

    return epoch


def evaluate_lm(
    model: nn.Module,
    stream: torch.Tensor,
    batch_size: int = 64,
    block_size: int | None = None,
    stride: int | None = None,
) -> float:
    """Mean negative log-likelihood (nats) of every token of ``stream`` after the first; e^result
    is the perplexity. Works for any model with ``model(idx) -> (logits, _)`` (GPT, RNN LM).

    The model reads windows of ``block_size`` tokens (default: the GPT's ``config.block_size``)
    starting every ``stride`` tokens, and each token is scored once, by the first window that
    predicts it. ``stride = block_size`` (the default) cuts the stream into consecutive blocks,
    as in nanoGPT's evaluation: the first tokens of a block see almost no context. A smaller
    stride (a sliding window) gives every token scored after the first window at least
    ``block_size - stride`` tokens of context, at ``block_size / stride`` times the cost.
    """
    if not isinstance(stream, torch.Tensor) or stream.dim() != 1 or len(stream) < 2:
        raise ValueError(f"stream must be a 1-D tensor of at least 2 ids, got {getattr(stream, 'shape', stream)}")
    if block_size is None:
        if not hasattr(model, "config"):
            raise ValueError("block_size is needed for a model without a config.block_size (e.g. an RNN LM)")
        block_size = model.config.block_size
    check.positive_int("block_size", block_size)
    check.positive_int("batch_size", batch_size)
    stride = block_size if stride is None else check.positive_int("stride", stride)
    if stride > block_size:
        raise ValueError(f"stride must be at most block_size={block_size} (or tokens are skipped), got {stride}")
    stream = _on_model_device(model, stream)
    n = len(stream) - 1  # predicted tokens
    T = min(block_size, n)
    starts = list(range(0, n - T + 1, stride))
    if starts[-1] + T < n:  # a last window, aligned with the end of the stream
        starts.append(n - T)
    offsets = torch.arange(T, device=stream.device)
    total, scored = 0.0, 0  # the targets stream[1 : scored + 1] are counted
    with evaluating(model):
        for i in range(0, len(starts), batch_size):
            batch = torch.tensor(starts[i : i + batch_size], device=stream.device)[:, None]  # (b, 1)
            logits, _ = model(stream[batch + offsets])  # (b, T, V)
            targets = stream[batch + offsets + 1]  # (b, T)
            nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none").view(len(batch), T)
            for row, start in enumerate(starts[i : i + batch_size]):
                total += nll[row, max(scored - start, 0) :].sum().item()  # skip what earlier windows scored
                scored = start + T
    return total / n


def sample_next(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Draw the next token from (B, V) logits: (B,) ids.

    temperature 0 is greedy (arg-max); otherwise p = softmax(logits / temperature), with
    every token outside the k most likely ones set to probability 0 when top_k is given.
    """
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        raise ValueError(f"logits must be a (B, V) tensor, got {getattr(logits, 'shape', type(logits).__name__)}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    if top_k is not None:
        check.positive_int("top_k", top_k)
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]  # (B, 1): the k-th largest logit
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)  # (B, V)
    if generator is not None and generator.device != probs.device and probs.device.type != "meta":
        # a generator draws only on its own device (the course's seeded ones live on the CPU): draw
        # there, then bring the ids back to the logits' device
        return torch.multinomial(probs.to(generator.device), 1, generator=generator).squeeze(-1).to(probs.device)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _check_prompt(idx):
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype != torch.long or idx.shape[1] < 1:
        raise ValueError(
            f"idx must be a (B, T) tensor of token ids with T >= 1, got "
            f"{(tuple(idx.shape), idx.dtype) if isinstance(idx, torch.Tensor) else type(idx).__name__}"
        )


def generate(
    model: nn.Module,
    idx: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Autoregressive decoding (UKP Lab): append one sampled token at a time, feeding the output
    back in. Returns (B, T + max_new_tokens), on the model's device. ``temperature=0`` is greedy decoding."""
    _check_prompt(idx)
    check.positive_int("max_new_tokens", max_new_tokens)
    idx = _on_model_device(model, idx)
    with evaluating(model):
        for _ in range(max_new_tokens):
            context = idx[:, -model.config.block_size :]  # the model sees at most block_size tokens
            logits, _ = model(context)
            idx = torch.cat([idx, sample_next(logits[:, -1], temperature, top_k, generator)[:, None]], dim=1)
    return idx


def beam_search(
    model: nn.Module, idx: torch.Tensor, max_new_tokens: int, beam_width: int = 4
) -> tuple[torch.Tensor, float]:
    """Beam search (Fitzgibbon): keep the ``beam_width`` continuations with the highest total
    log-probability, extend each by every token, keep the best again. ``idx`` is one prompt
    (1, T); returns the best sequence (1, T + max_new_tokens) and its log-probability (nats)."""
    _check_prompt(idx)
    if idx.shape[0] != 1:
        raise ValueError(f"beam_search decodes one prompt at a time: idx must be (1, T), got {tuple(idx.shape)}")
    check.positive_int("max_new_tokens", max_new_tokens)
    check.positive_int("beam_width", beam_width)
    beams = _on_model_device(model, idx)  # (K, T): the live hypotheses
    scores = torch.zeros(1, device=beams.device)  # (K,): log P(continuation | prompt)
    with evaluating(model):
        for _ in range(max_new_tokens):
            logits, _ = model(beams[:, -model.config.block_size :])
            logp = torch.log_softmax(logits[:, -1], dim=-1)  # (K, V)
            total = (scores[:, None] + logp).flatten()  # (K * V,): every hypothesis extended by every token
            scores, flat = torch.topk(total, min(beam_width, total.numel()))
            V = logp.shape[-1]
            beams = torch.cat([beams[flat // V], (flat % V)[:, None]], dim=1)
    return beams[:1], scores[0].item()
