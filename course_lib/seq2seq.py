"""Encoder-decoder RNNs, with and without attention (lesson 05).

The lecture's equations (seed 002, Bahdanau et al. 2015), for decoding step i::

    h_1^e .. h_n^e = GRU_enc(x_1 .. x_n)              the encoder's hidden states
    h_0^d          = h_n^e                             the decoder starts from the last one
    c_i            = h_n^e                             without attention: one context for every step
    c_i            = sum_j alpha_ij h_j^e              with attention: a context per step, where
    alpha_ij       = softmax_j(score(h_{i-1}^d, h_j^e))
    h_i^d          = GRUCell([y_{i-1}; c_i], h_{i-1}^d)
    y_hat_i        = softmax(W_out [h_i^d; c_i])

The scores (CS224N's "attention variants", seed 001), with s = h_{i-1}^d and h = h_j^e:

    "dot"       s . h                     (seed 002's dot-product attention)
    "scaled"    s . h / sqrt(d)           (Vaswani et al.; course_lib.attention's path)
    "bilinear"  s^T W h                   (Luong's "general": "h W h" in seed 002)
    "additive"  v^T tanh(W_q s + W_k h)   (Bahdanau's original)

Training uses teacher forcing (the decoder reads the true previous character);
:meth:`Seq2Seq.greedy_decode` feeds back its own most likely character instead.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.attention import padding_mask, scaled_dot_product_attention
from course_lib.train import check_token_ids

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
    "DATA_DIR",
]

ATTENTIONS = ("none", "dot", "scaled", "bilinear", "additive")
PAD, BOS, EOS = 0, 1, 2  # as in course_lib.dates.Vocab
DATA_DIR = Path(__file__).resolve().parent / "weights"


class DotScore(nn.Module):
    """score(s, h_j) = s . h_j, divided by sqrt(d) when ``scaled``: no parameters."""

    def __init__(self, scaled: bool = False):
        super().__init__()
        self.scaled = scaled

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

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        for name in ("vocab_size", "embed_dim", "hidden_size", "attention_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.vocab_size <= EOS:
            raise ValueError(f"vocab_size must count the 3 special ids (PAD, BOS, EOS) too, got {self.vocab_size}")


class Seq2Seq(nn.Module):
    """A GRU encoder and a GRU decoder, with or without attention (see the module docstring)."""

    def __init__(self, config: Seq2SeqConfig, device=None):
        super().__init__()
        self.config = config
        E, H = config.embed_dim, config.hidden_size
        self.src_embed = nn.Embedding(config.vocab_size, E, padding_idx=PAD, device=device)
        self.tgt_embed = nn.Embedding(config.vocab_size, E, padding_idx=PAD, device=device)
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
        check_token_ids(src, "src")
        lengths = torch.as_tensor(src_lengths, device=src.device)
        if lengths.shape != src.shape[:1]:
            raise ValueError(
                f"src_lengths must have one length per sequence, shape ({src.shape[0]},), got {tuple(lengths.shape)}"
            )
        B, T = src.shape
        states, _ = self.encoder(self.src_embed(src))  # (B, T, H); padding comes after the real tokens
        last = states[torch.arange(B, device=src.device), lengths - 1]  # h_n^e at each sequence's own length
        return states, last, padding_mask(lengths, T, device=src.device)

    def _context(self, query, states, projected, mask, last):
        """c_i and alpha_i for the decoder state ``query`` = h_{i-1}^d."""
        if self.score is None:
            return last, None  # the bottleneck: the same vector at every step
        if self.attention == "scaled":
            # course_lib.attention's scaled dot-product path: one query (B, 1, H) against the encoder states.
            context, weights = scaled_dot_product_attention(query.unsqueeze(1), states, states, mask=mask.unsqueeze(1))
            return context.squeeze(1), weights.squeeze(1)
        if projected is None:
            scores = self.score(query, states)
        else:
            scores = self.score(query, states, projected)
        return attend(scores, states, mask)

    def _step(self, y_embedded, hidden, states, projected, mask, last):
        """One decoding step: h_{i-1}^d -> (h_i^d, c_i, alpha_i), given the embedded previous character."""
        context, weights = self._context(hidden, states, projected, mask, last)
        hidden = self.decoder(torch.cat([y_embedded, context], dim=-1), hidden)
        return hidden, context, weights

    def _start(self, src, src_lengths):
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
        states, last, mask, projected = self._start(src, src_lengths)
        embedded = self.tgt_embed(tgt_in)  # (B, T_out, E): teacher forcing, all known in advance
        hidden = last  # h_0^d = h_n^e
        outputs, weights = [], []
        for i in range(tgt_in.shape[1]):
            hidden, context, alpha = self._step(embedded[:, i], hidden, states, projected, mask, last)
            outputs.append(torch.cat([hidden, context], dim=-1))
            weights.append(alpha)
        logits = self.out(torch.stack(outputs, dim=1))  # W_out [h_i^d; c_i] for every step at once
        return logits, (None if self.score is None else torch.stack(weights, dim=1))

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int = 100):
        """Feed back the most likely character until every sequence has emitted EOS (or ``max_len``).

        Returns ids (B, T_out) (EOS included; after EOS, PAD) and weights (B, T_out, T_in) or None.
        """
        if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be a positive int, got {max_len!r}")
        states, last, mask, projected = self._start(src, src_lengths)
        B = src.shape[0]
        hidden = last
        y = torch.full((B,), BOS, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        ids, weights = [], []
        for _ in range(max_len):
            hidden, context, alpha = self._step(self.tgt_embed(y), hidden, states, projected, mask, last)
            logits = self.out(torch.cat([hidden, context], dim=-1))
            y = logits.argmax(-1).masked_fill(done, PAD)
            ids.append(y)
            weights.append(alpha)
            done = done | (y == EOS)
            if src.device.type != "meta" and bool(done.all()):
                break
        return torch.stack(ids, dim=1), (None if self.score is None else torch.stack(weights, dim=1))


def encode_pairs(sources, targets, vocab, device=None):
    """The four tensors a batch is made of: src (B, T_in) with EOS, src_lengths (B,),
    tgt_in (B, T_out) = BOS + target, tgt_out (B, T_out) = target + EOS (all padded with PAD)."""
    if len(sources) != len(targets):
        raise ValueError(f"sources and targets must pair up, got {len(sources)} and {len(targets)}")
    src, src_lengths = vocab.batch(sources, device=device)
    tgt_in, _ = vocab.batch(targets, bos=True, eos=False, device=device)
    tgt_out, _ = vocab.batch(targets, device=device)
    return src, src_lengths.to(src.device), tgt_in, tgt_out


def trim(batch):
    """Drop the columns that are padding in every row of the batch (less work, same loss)."""
    src, src_lengths, tgt_in, tgt_out = batch
    if src.device.type == "meta":  # no values to read: shapes only
        return batch
    T_in, T_out = int(src_lengths.max()), int((tgt_out != PAD).sum(1).max())
    return src[:, :T_in], src_lengths, tgt_in[:, :T_out], tgt_out[:, :T_out]


def seq2seq_loss(model: Seq2Seq, batch) -> torch.Tensor:
    """Mean cross-entropy per target character (PAD ignored); ``batch`` = (src, src_lengths, tgt_in, tgt_out)."""
    src, src_lengths, tgt_in, tgt_out = trim(batch)
    logits, _ = model(src, src_lengths, tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)


@torch.no_grad()
def translate(model: Seq2Seq, sources, vocab, batch_size: int = 256, max_len: int | None = None):
    """Greedy translations of a list of strings; returns (strings, weights) with one (T_out, T_in) weight
    matrix per example, cut to its own lengths (None without attention)."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    outputs, all_weights = [], []
    for start in range(0, len(sources), batch_size):
        chunk = list(sources[start : start + batch_size])
        src, lengths = vocab.batch(chunk, device=device)
        ids, weights = model.greedy_decode(src, lengths, max_len=max_len or 2 * src.shape[1] + 10)
        for b in range(len(chunk)):
            text = vocab.decode(ids[b])
            outputs.append(text)
            if weights is not None:
                all_weights.append(weights[b, : len(text) + 1, : int(lengths[b])].cpu())  # + 1: the EOS step
    model.train(was_training)
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


def save_checkpoint(model: Seq2Seq, path, info: dict) -> None:
    """Weights (a state dict of tensors) in ``path`` and the config plus ``info`` as JSON beside it."""
    path = Path(path)
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, path)
    path.with_suffix(".json").write_text(json.dumps({"config": asdict(model.config), **info}, indent=2) + "\n")


def load_checkpoint(name: str, device=None) -> tuple[Seq2Seq, dict]:
    """A model trained by scripts/train_seq2seq.py: ``name`` is e.g. "none" or "additive"
    (course_lib/weights/seq2seq_<name>.pt) or a path to a .pt file. Returns (model in eval mode, info)."""
    path = Path(name) if str(name).endswith(".pt") else DATA_DIR / f"seq2seq_{name}.pt"
    if not path.exists():
        known = sorted(p.stem.removeprefix("seq2seq_") for p in DATA_DIR.glob("seq2seq_*.pt"))
        raise FileNotFoundError(f"no checkpoint {path}; known names: {known} (train one with scripts/train_seq2seq.py)")
    info = json.loads(path.with_suffix(".json").read_text())
    model = Seq2Seq(Seq2SeqConfig(**info["config"]), device=device)
    model.load_state_dict(torch.load(path, map_location=device or "cpu", weights_only=True))
    return model.eval(), info
