"""The encoder-decoder transformer of the 2017 paper, with cross-attention (lesson 07, CS224N).

The encoder reads the source with unmasked self-attention (:class:`SelfAttentionBlock` with
``causal=False``); each decoder block (:class:`CrossAttentionBlock`) has masked self-attention
over the target so far, then **cross-attention**: queries from the decoder, keys and values
from the encoder's output. :func:`reversal_task` is a toy translation task to train it on.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import _validate as check
from course_lib.attention import MultiHeadAttention, causal_mask
from course_lib.transformer import LayerNorm, SelfAttentionBlock, check_block_sizes, check_x, sinusoidal_positions

__all__ = ["CrossAttentionBlock", "Seq2SeqTransformer", "reversal_task"]


class CrossAttentionBlock(nn.Module):
    """One decoder block of an encoder-decoder: masked self-attention, cross-attention to the
    encoder's output (``memory``), then the FFN; Add & Norm around each. Same parameters and
    results as ``nn.TransformerDecoderLayer(..., activation="gelu", batch_first=True)`` with a causal tgt_mask.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int | None = None,
        dropout: float = 0.0,
        norm_first: bool = True,
        bias: bool = True,
    ):
        super().__init__()
        d_ff = check_block_sizes(d_model, n_heads, d_ff, dropout)
        self.d_model, self.norm_first = d_model, check.boolean("norm_first", norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias, batch_first=True)
        self.multihead_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)  # W_1
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)  # W_2
        self.dropout = nn.Dropout(dropout)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, bias=bias) for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = (nn.Dropout(dropout) for _ in range(3))
        self.cross_weights = None  # (B, H, T_target, T_source) of the last forward with keep_weights=True

    def self_attention(self, x):
        mask = ~causal_mask(x.shape[1], device=x.device)  # True = may NOT attend: the future
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)[0])

    def cross_attention(self, x, memory, keep_weights=False):
        """Queries from the decoder's x (B, T, C), keys and values from the encoder's memory (B, S, C)."""
        out, weights = self.multihead_attn(x, memory, memory, need_weights=keep_weights, average_attn_weights=False)
        self.cross_weights = weights.detach() if keep_weights else None
        return self.dropout2(out)

    def feed_forward(self, x):
        return self.dropout3(self.linear2(self.dropout(F.gelu(self.linear1(x)))))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """x: (B, T, C) target so far, memory: (B, S, C) encoder output -> (B, T, C)."""
        check_x(x, self.d_model)
        check_x(memory, self.d_model, "memory")
        if memory.shape[0] != x.shape[0]:
            raise ValueError(f"memory must have the batch size of x ({x.shape[0]}), got {memory.shape[0]}")
        if self.norm_first:
            x = x + self.self_attention(self.norm1(x))
            x = x + self.cross_attention(self.norm2(x), memory, keep_weights)
            x = x + self.feed_forward(self.norm3(x))
        else:
            x = self.norm1(x + self.self_attention(x))
            x = self.norm2(x + self.cross_attention(x, memory, keep_weights))
            x = self.norm3(x + self.feed_forward(x))
        return x


class Seq2SeqTransformer(nn.Module):
    """A small encoder-decoder transformer (CS224N): the encoder reads the source with full
    (unmasked) self-attention, the decoder writes the target with masked self-attention and
    cross-attention to the encoder's output. Sinusoidal positions, shared token embeddings.

    forward(src (B, S), tgt_in (B, T)) -> logits (B, T, vocab_size).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 2,
        max_len: int = 64,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.vocab_size = check.positive_int("vocab_size", vocab_size)
        self.d_model, self.max_len = d_model, check.positive_int("max_len", max_len)
        check.positive_int("n_layers", n_layers)
        self.embed = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model), persistent=False)
        self.encoder = nn.ModuleList(
            SelfAttentionBlock(d_model, n_heads, dropout=dropout, causal=False) for _ in range(n_layers)
        )
        self.decoder = nn.ModuleList(CrossAttentionBlock(d_model, n_heads, dropout=dropout) for _ in range(n_layers))
        self.enc_norm, self.dec_norm = LayerNorm(d_model), LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)

    def _embed(self, ids, name):
        check.token_ids(name, ids, self.vocab_size)
        if ids.shape[1] > self.max_len:
            raise ValueError(f"{name} has length {ids.shape[1]}, more than max_len={self.max_len}")
        return self.embed(ids) * math.sqrt(self.d_model) + self.pe[: ids.shape[1]]  # (B, T, C)

    def encode(self, src: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        x = self._embed(src, "src")
        for block in self.encoder:
            x = block(x, keep_weights=keep_weights)
        return self.enc_norm(x)  # memory: (B, S, C)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        x = self._embed(tgt_in, "tgt_in")
        for block in self.decoder:
            x = block(x, memory, keep_weights=keep_weights)
        return self.out(self.dec_norm(x))  # (B, T, vocab_size)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        if src.shape[0] != tgt_in.shape[0]:
            raise ValueError(f"src and tgt_in must have the same batch size, got {src.shape[0]} and {tgt_in.shape[0]}")
        return self.decode(tgt_in, self.encode(src, keep_weights), keep_weights)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, bos: int, length: int) -> torch.Tensor:
        """Greedy autoregressive decoding of ``length`` tokens after ``bos``: (B, length)."""
        memory = self.encode(src)
        out = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
        for _ in range(check.positive_int("length", length)):
            next_id = self.decode(out, memory)[:, -1].argmax(-1)
            out = torch.cat([out, next_id[:, None]], dim=1)
        return out[:, 1:]


def reversal_task(n: int, length: int = 8, n_symbols: int = 10, generator: torch.Generator | None = None, device=None):
    """A tiny translation task for the encoder-decoder: write the source backwards.

    Tokens 0 (BOS, starts the decoder's input) and 1..n_symbols (the symbols). Returns
    ``src`` (n, length), ``tgt_in`` (n, length) = BOS + target[:-1] (teacher forcing) and
    ``tgt`` (n, length) = the reversed source. The right alignment is the anti-diagonal, which
    cross-attention has to find on its own.
    """
    check.positive_int("n", n)
    check.positive_int("length", length)
    check.positive_int("n_symbols", n_symbols)
    src = torch.randint(1, n_symbols + 1, (n, length), generator=generator, device="cpu")  # the generator's; then moved
    tgt = src.flip(1)
    tgt_in = torch.cat([torch.zeros(n, 1, dtype=torch.long, device="cpu"), tgt[:, :-1]], dim=1)
    return src.to(device), tgt_in.to(device), tgt.to(device)
