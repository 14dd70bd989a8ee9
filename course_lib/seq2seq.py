"""Encoder-decoder RNNs, with and without attention (lesson 05).

The lecture's equations (Penn CIS 7000, Mayur Naik; Bahdanau et al. 2015), for decoding step i::

    h_1^e .. h_n^e = GRU_enc(x_1 .. x_n)              the encoder's hidden states
    h_0^d          = h_n^e                             the decoder starts from the last one
    c_i            = h_n^e                             without attention: one context for every step
    c_i            = sum_j alpha_ij h_j^e              with attention: a context per step, where
    alpha_ij       = softmax_j(score(h_{i-1}^d, h_j^e))
    h_i^d          = GRUCell([y_{i-1}; c_i], h_{i-1}^d)
    y_hat_i        = softmax(W_out [h_i^d; c_i])

The decoder's queries attend to the encoder's states: **cross-attention** (CS224N), as opposed
to the self-attention of lesson 06 and lesson 07's GPT, where queries, keys and values come from one
sequence (lesson 07b's transformer encoder-decoder has cross-attention too).

The scores, with s = h_{i-1}^d and h = h_j^e:

    "dot"       s . h                     (the dot-product attention of the CS224N and Penn notes)
    "scaled"    s . h / sqrt(d)           (Vaswani et al., the transformer's: UKP and Galerne's lectures)
    "bilinear"  s^T W h                   (Luong's "general": "h W h" in the Penn notes)
    "additive"  v^T tanh(W_q s + W_k h)   (Bahdanau's original; no lecture writes it out)

Training uses teacher forcing (the decoder reads the true previous character);
:meth:`Seq2Seq.greedy_decode` feeds back its own most likely character instead.
Token ids come from a :class:`course_lib.corpora.Vocab` such as :func:`course_lib.dates.build_vocab`'s;
the ids of its PAD, BOS and EOS are part of the config (:meth:`Seq2SeqConfig.for_vocab`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import checkpoint, dates
from course_lib._validate import boolean, one_of, positive_int, token_ids
from course_lib.attention import padding_mask
from course_lib.corpora import BOS, EOS, PAD, Vocab
from course_lib.train import evaluating

__all__ = [
    "ATTENTIONS",
    "Seq2SeqConfig",
    "Seq2Seq",
    "DotScore",
    "BilinearScore",
    "AdditiveScore",
    "attend",
    "encode_pairs",
    "trim",
    "seq2seq_loss",
    "translate",
    "exact_match_by_length",
    "save_checkpoint",
    "load_checkpoint",
]

ATTENTIONS = ("none", "dot", "scaled", "bilinear", "additive")
KIND = "seq2seq"  # the checkpoint kind (course_lib.checkpoint)


class DotScore(nn.Module):
    """score(s, h_j) = s . h_j, divided by sqrt(d) when ``scaled``: no parameters."""

    def __init__(self, scaled: bool = False):
        super().__init__()
        self.scaled = boolean("scaled", scaled)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        # query (B, d), keys (B, T, d) -> scores (B, T)
        # (elementwise then sum: on the CPU, a batched matrix-vector bmm is slow, above all backwards)
        scores = (keys * query.unsqueeze(1)).sum(-1)
        return scores / math.sqrt(query.shape[-1]) if self.scaled else scores


class BilinearScore(nn.Module):
    """score(s, h_j) = s^T W h_j: a learned similarity between two spaces."""

    def __init__(self, query_size: int, key_size: int, device=None):
        super().__init__()
        self.W = nn.Parameter(torch.empty(query_size, key_size, device=device))
        nn.init.xavier_uniform_(self.W)

    def precompute(self, keys: torch.Tensor) -> torch.Tensor:
        return keys @ self.W.T  # (B, T, d_q): W h_j, the same at every decoding step

    def forward(self, query: torch.Tensor, keys: torch.Tensor, projected: torch.Tensor | None = None) -> torch.Tensor:
        projected = self.precompute(keys) if projected is None else projected
        return (projected * query.unsqueeze(1)).sum(-1)  # (B, T): s . (W h_j)


class AdditiveScore(nn.Module):
    """score(s, h_j) = v^T tanh(W_q s + W_k h_j): Bahdanau's one-hidden-layer scorer."""

    def __init__(self, query_size: int, key_size: int, attention_size: int, device=None):
        super().__init__()
        self.W_q = nn.Linear(query_size, attention_size, bias=False, device=device)
        self.W_k = nn.Linear(key_size, attention_size, bias=False, device=device)
        self.v = nn.Linear(attention_size, 1, bias=False, device=device)

    def precompute(self, keys: torch.Tensor) -> torch.Tensor:
        return self.W_k(keys)  # (B, T, a): W_k h_j, the same at every decoding step

    def forward(self, query: torch.Tensor, keys: torch.Tensor, projected: torch.Tensor | None = None) -> torch.Tensor:
        projected = self.precompute(keys) if projected is None else projected
        return self.v(torch.tanh(self.W_q(query).unsqueeze(1) + projected)).squeeze(-1)  # (B, T)


def attend(scores: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None):
    """alpha = softmax(scores) over the keys (masked ones get 0), context = sum_j alpha_j values_j.

    scores (B, T), values (B, T, d), mask (B, T) bool True at real positions -> (context (B, d), alpha (B, T)).
    """
    if mask is not None:
        if mask.shape != scores.shape or mask.dtype != torch.bool:
            raise ValueError(
                f"mask must be a bool tensor shaped like the scores {tuple(scores.shape)}, "
                f"True at real positions; got {mask.dtype} {tuple(mask.shape)}"
            )
        scores = scores.masked_fill(~mask, float("-inf"))  # padding gets weight exp(-inf) = 0
    weights = torch.softmax(scores, dim=-1)  # every sequence has a real key, so no row is all -inf
    context = (weights.unsqueeze(-1) * values).sum(1)  # (B, T, 1) * (B, T, d), summed over T -> (B, d)
    return context, weights


@dataclass
class Seq2SeqConfig:
    vocab_size: int
    attention: str = "additive"  # one of ATTENTIONS
    embed_dim: int = 32
    hidden_size: int = 128
    attention_size: int = 64  # only for "additive"
    pad_id: int = 0  # the ids of the vocabulary's PAD, BOS and EOS (dates.build_vocab puts them first)
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self):
        one_of("attention", self.attention, ATTENTIONS)
        for name in ("vocab_size", "embed_dim", "hidden_size", "attention_size"):
            positive_int(name, getattr(self, name))
        specials = (self.pad_id, self.bos_id, self.eos_id)
        if len(set(specials)) != 3 or not all(isinstance(i, int) and 0 <= i < self.vocab_size for i in specials):
            raise ValueError(
                f"vocab_size must count the 3 special ids too, and pad_id, bos_id, eos_id must be distinct ids "
                f"in [0, vocab_size); got vocab_size={self.vocab_size}, ids {specials}"
            )

    @classmethod
    def for_vocab(cls, vocab: Vocab, **options) -> Seq2SeqConfig:
        """The config of a model for ``vocab``: its size and the ids of its PAD, BOS and EOS."""
        missing = [t for t in (PAD, BOS, EOS) if t not in vocab]
        if missing:
            raise ValueError(f"vocab must hold the special tokens {PAD}, {BOS}, {EOS}; it lacks {missing}")
        ids = {"pad_id": vocab.stoi[PAD], "bos_id": vocab.stoi[BOS], "eos_id": vocab.stoi[EOS]}
        return cls(len(vocab), **options, **ids)


class Seq2Seq(nn.Module):
    """A GRU encoder and a GRU decoder, with or without attention (see the module docstring)."""

    def __init__(self, config: Seq2SeqConfig, device=None):
        super().__init__()
        self.config = config
        E, H = config.embed_dim, config.hidden_size
        self.src_embed = nn.Embedding(config.vocab_size, E, padding_idx=config.pad_id, device=device)
        self.tgt_embed = nn.Embedding(config.vocab_size, E, padding_idx=config.pad_id, device=device)
        self.encoder = nn.GRU(E, H, batch_first=True, device=device)
        self.decoder = nn.GRUCell(E + H, H, device=device)  # input: [y_{i-1}; c_i]
        self.out = nn.Linear(2 * H, config.vocab_size, device=device)  # W_out [h_i^d; c_i]
        if config.attention in ("dot", "scaled"):
            self.score = DotScore(scaled=config.attention == "scaled")
        elif config.attention == "bilinear":
            self.score = BilinearScore(H, H, device=device)
        elif config.attention == "additive":
            self.score = AdditiveScore(H, H, config.attention_size, device=device)
        else:
            self.score = None

    @property
    def attention(self) -> str:
        return self.config.attention

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor):
        """Encoder states (B, T, H), the last real one h_n^e (B, H) of each sequence, and the padding mask (B, T)."""
        token_ids("src", src, self.config.vocab_size)
        lengths = torch.as_tensor(src_lengths, device=src.device)
        if lengths.shape != src.shape[:1]:
            raise ValueError(
                f"src_lengths must have one length per sequence, shape ({src.shape[0]},), got {tuple(lengths.shape)}"
            )
        B, T = src.shape
        if lengths.device.type != "meta" and B and (lengths.min() < 1 or lengths.max() > T):
            raise ValueError(f"src_lengths must lie in [1, T={T}] (each sequence holds a real token), got {lengths}")
        states, _ = self.encoder(self.src_embed(src))  # (B, T, H); padding comes after the real tokens
        last = states[torch.arange(B, device=src.device), lengths - 1]  # h_n^e at each sequence's own length
        return states, last, padding_mask(lengths, T, device=src.device)

    def context(self, query, states, mask, last, projected=None):
        """c_i and alpha_i for the decoder state ``query`` = h_{i-1}^d (B, H), given the encoder's
        ``states`` (B, T, H), their padding ``mask`` (B, T) and ``last`` = h_n^e (B, H).
        ``projected`` is the score's key-side work, done once per sentence (see :meth:`start`)."""
        if self.score is None:
            return last, None  # the bottleneck: the same vector at every step
        if projected is None:
            scores = self.score(query, states)
        else:
            scores = self.score(query, states, projected)
        return attend(scores, states, mask)  # c_i = sum_j alpha_ij h_j^e

    def step(self, y_embedded, hidden, states, mask, last, projected=None):
        """One decoding step: h_{i-1}^d -> (h_i^d, c_i, alpha_i), given the embedded previous character."""
        context, weights = self.context(hidden, states, mask, last, projected)
        hidden = self.decoder(torch.cat([y_embedded, context], dim=-1), hidden)
        return hidden, context, weights

    def start(self, src, src_lengths):
        """Encode once per sentence: (states, last, mask, projected) for :meth:`step`."""
        states, last, mask = self.encode(src, src_lengths)
        projected = self.score.precompute(states) if hasattr(self.score, "precompute") else None
        return states, last, mask, projected

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor):
        """Teacher forcing: ``tgt_in`` (B, T_out) is BOS + the target. Returns logits (B, T_out, V) and
        the attention weights (B, T_out, T_in) (None without attention)."""
        if not isinstance(tgt_in, torch.Tensor) or tgt_in.dim() != 2 or tgt_in.shape[0] != src.shape[0]:
            raise ValueError(
                f"tgt_in must be a (B, T_out) tensor of ids with B = {src.shape[0]} like src, got "
                f"{tuple(tgt_in.shape) if isinstance(tgt_in, torch.Tensor) else type(tgt_in).__name__}"
            )
        token_ids("tgt_in", tgt_in, self.config.vocab_size)
        states, last, mask, projected = self.start(src, src_lengths)
        embedded = self.tgt_embed(tgt_in)  # (B, T_out, E): teacher forcing, all known in advance
        hidden = last  # h_0^d = h_n^e
        outputs, weights = [], []
        for i in range(tgt_in.shape[1]):
            hidden, context, alpha = self.step(embedded[:, i], hidden, states, mask, last, projected)
            outputs.append(torch.cat([hidden, context], dim=-1))
            weights.append(alpha)
        logits = self.out(torch.stack(outputs, dim=1))  # W_out [h_i^d; c_i] for every step at once
        return logits, (None if self.score is None else torch.stack(weights, dim=1))

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int = 100):
        """Feed back the most likely character until every sequence has emitted EOS (or ``max_len``).

        Returns ids (B, T_out) (EOS included; after EOS, PAD) and weights (B, T_out, T_in) or None.
        """
        positive_int("max_len", max_len)
        states, last, mask, projected = self.start(src, src_lengths)
        B = src.shape[0]
        hidden = last
        y = torch.full((B,), self.config.bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        ids, weights = [], []
        for _ in range(max_len):
            hidden, context, alpha = self.step(self.tgt_embed(y), hidden, states, mask, last, projected)
            logits = self.out(torch.cat([hidden, context], dim=-1))
            y = logits.argmax(-1).masked_fill(done, self.config.pad_id)
            ids.append(y)
            weights.append(alpha)
            done = done | (y == self.config.eos_id)
            if src.device.type != "meta" and bool(done.all()):
                break
        return torch.stack(ids, dim=1), (None if self.score is None else torch.stack(weights, dim=1))


def encode_pairs(sources, targets, vocab: Vocab, device=None):
    """The four tensors a batch is made of: src (B, T_in) with EOS, src_lengths (B,),
    tgt_in (B, T_out) = BOS + target, tgt_out (B, T_out) = target + EOS (all padded with PAD)."""
    if len(sources) != len(targets):
        raise ValueError(f"sources and targets must pair up, got {len(sources)} and {len(targets)}")
    src, src_lengths = dates.batch(vocab, sources, device=device)
    tgt_in, _ = dates.batch(vocab, targets, bos=True, eos=False, device=device)
    tgt_out, _ = dates.batch(vocab, targets, device=device)
    return src, src_lengths.to(src.device), tgt_in, tgt_out


def trim(batch, pad_id: int = 0):
    """Drop the columns that are padding (``pad_id``) in every row of the batch (less work, same loss)."""
    src, src_lengths, tgt_in, tgt_out = batch
    if src.device.type == "meta":  # no values to read: shapes only
        return batch
    T_in, T_out = int(src_lengths.max()), int((tgt_out != pad_id).sum(1).max())
    return src[:, :T_in], src_lengths, tgt_in[:, :T_out], tgt_out[:, :T_out]


def seq2seq_loss(model: Seq2Seq, batch) -> torch.Tensor:
    """Mean cross-entropy per target character (PAD ignored); ``batch`` = (src, src_lengths, tgt_in, tgt_out)."""
    pad_id = model.config.pad_id
    src, src_lengths, tgt_in, tgt_out = trim(batch, pad_id)
    logits, _ = model(src, src_lengths, tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id)


def translate(model: Seq2Seq, sources, vocab: Vocab, batch_size: int = 256, max_len: int | None = None):
    """Greedy translations of a list of strings; returns (strings, weights) with one (T_out, T_in) weight
    matrix per example, cut to its own lengths (None without attention)."""
    positive_int("batch_size", batch_size)
    device = next(model.parameters()).device
    outputs, all_weights = [], []
    with evaluating(model):
        for start in range(0, len(sources), batch_size):
            chunk = list(sources[start : start + batch_size])
            src, lengths = dates.batch(vocab, chunk, device=device)
            ids, weights = model.greedy_decode(src, lengths, max_len=max_len or 2 * src.shape[1] + 10)
            for b in range(len(chunk)):
                text = dates.decode(vocab, ids[b])
                outputs.append(text)
                if weights is not None:
                    all_weights.append(weights[b, : len(text) + 1, : int(lengths[b])].cpu())  # + 1: the EOS step
    return outputs, (all_weights if model.score is not None else None)


def exact_match_by_length(sources, predictions, targets, edges) -> list[tuple[int, int, float, int]]:
    """Exact-match accuracy per bin of source length: [(low, high, accuracy, count)] for low <= len < high."""
    if not len(sources) == len(predictions) == len(targets):
        raise ValueError(
            f"sources, predictions and targets must have the same length, got "
            f"{len(sources)}, {len(predictions)}, {len(targets)}"
        )
    edges = list(edges)
    if len(edges) < 2 or any(a >= b for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must be at least two increasing numbers, got {edges}")
    rows = []
    for low, high in zip(edges, edges[1:]):
        hits = [p == t for s, p, t in zip(sources, predictions, targets) if low <= len(s) < high]
        rows.append((low, high, sum(hits) / len(hits) if hits else float("nan"), len(hits)))
    return rows


def save_checkpoint(model: Seq2Seq, path, vocab: Vocab, info: dict) -> Path:
    """A course_lib.checkpoint file: the weights (float32, as trained), the config, ``vocab`` and ``info``."""
    options = {k: v for k, v in asdict(model.config).items() if k not in ("vocab_size", "pad_id", "bos_id", "eos_id")}
    if Seq2SeqConfig.for_vocab(vocab, **options) != model.config:
        raise ValueError("vocab is not the vocabulary this model was built for (its size or special ids differ)")
    return checkpoint.save(path, model, kind=KIND, config=asdict(model.config), vocab=vocab.itos, info=info)


def load_checkpoint(name: str, device=None) -> tuple[Seq2Seq, checkpoint.Checkpoint, Vocab]:
    """A model trained by scripts/train_seq2seq.py: ``name`` is e.g. "none" or "dot"
    (course_lib/weights/seq2seq_<name>.safetensors) or a path to a .safetensors file.

    Returns (model in eval mode, the checkpoint's header: config, info, ...; its vocabulary)."""
    path = Path(name) if str(name).endswith(".safetensors") else checkpoint.weights_path(f"seq2seq_{name}")
    model, ckpt = checkpoint.load(
        path, build=lambda config: Seq2Seq(Seq2SeqConfig(**config)), kind=KIND, device=device or "cpu"
    )
    return model, ckpt, Vocab.from_itos(ckpt.vocab)
