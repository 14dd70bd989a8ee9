"""The transformer language model of lesson 07: embeddings, blocks, GPT.

The pieces, in the order of the lectures (Fitzgibbon, CS224N, Galerne, UKP Lab):

- token embeddings: a row lookup ``E[x]``, the same as one-hot(x) @ E;
- positions, because self-attention alone ignores order: learned (an ``nn.Embedding``, GPT's
  choice) or sinusoidal (:func:`sinusoidal_positions`, Vaswani et al.'s interleaved sin/cos);
- multi-head self-attention, masked in a decoder (:class:`course_lib.attention.MultiHeadAttention`);
- the position-wise feed-forward layer ``FFN(x) = W_2 GELU(W_1 x + b_1) + b_2``, d_ff = 4 d_model
  (the UKP lecture writes ReLU; GPT uses GELU, a smooth ReLU);
- residual connections and layer norm ("Add & Norm"), after each sub-layer (post-norm, the
  2017 paper) or before it (pre-norm, GPT-2 and later):

      post-norm:  x = LN(x + Sublayer(x))        pre-norm:  x = x + Sublayer(LN(x))

- :class:`GPT`, a decoder-only language model: a stack of masked :class:`SelfAttentionBlock`.

Decoding (sampling, beam search) and the character data are in :mod:`course_lib.lm`; the
encoder-decoder with cross-attention is in :mod:`course_lib.encoder_decoder`.
The lecture's names: d_model (C), n_heads (H), d_k = d_model / n_heads, d_ff. The sub-layers
keep the attribute names of ``torch.nn.TransformerEncoderLayer`` (``self_attn``, ``linear1``,
``linear2``, ``norm1``, ``norm2``), so torch's layers load into ours and the tests compare the two.
Shapes in comments: B batch, T time (sequence length), C = d_model channels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import _validate as check
from course_lib import checkpoint
from course_lib.attention import MultiHeadAttention, causal_mask
from course_lib.train import evaluating, next_token_loss

__all__ = ["sinusoidal_positions", "LayerNorm", "SelfAttentionBlock", "GPTConfig", "GPT"]


def sinusoidal_positions(T: int, d: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """(T, d) sinusoidal position encodings of Vaswani et al. (2017), interleaved:

    PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).

    Each pair of channels is a clock turning at its own frequency, from one turn every 2 pi
    positions (i = 0) down to one every 10000 * 2 pi. (Galerne's slides put cos first in each
    pair; Fitzgibbon's use sin(t * range(D)); lesson 07 compares the three.)
    """
    check.positive_int("T", T)
    check.positive_int("d", d)
    if d % 2:
        raise ValueError(f"d must be even (channels come in sin/cos pairs), got {d}")
    pos = torch.arange(T, device=device, dtype=dtype)[:, None]  # (T, 1)
    two_i = torch.arange(0, d, 2, device=device, dtype=dtype)  # (d/2,): 2i
    angle = pos / 10000 ** (two_i / d)  # (T, d/2)
    pe = torch.empty(T, d, device=device, dtype=dtype)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


class LayerNorm(nn.Module):
    """Layer norm over the last dim, written out; a drop-in for ``nn.LayerNorm(C)`` (Galerne).

    y = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, with mu and sigma^2 the mean and the
    (biased) variance of the C features of each token: every token is normalised on its own,
    unlike batch norm, so it works the same for any batch size and sequence length.
    """

    def __init__(self, normalized_shape: int, eps: float = 1e-5, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (check.positive_int("normalized_shape", normalized_shape),)
        self.eps = check.number("eps", eps, 0.0, open_low=True)
        self.weight = nn.Parameter(torch.ones(normalized_shape, device=device, dtype=dtype))  # gamma
        self.bias = nn.Parameter(torch.zeros(normalized_shape, device=device, dtype=dtype)) if bias else None  # beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1:] != self.normalized_shape:
            raise ValueError(
                f"x must have {self.normalized_shape[0]} features in its last dim, got shape {tuple(x.shape)}"
            )
        mu = x.mean(dim=-1, keepdim=True)  # (..., 1)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # (..., 1): biased, as torch's LayerNorm
        y = (x - mu) / torch.sqrt(var + self.eps)
        y = y * self.weight
        return y + self.bias if self.bias is not None else y

    def extra_repr(self) -> str:
        return f"{self.normalized_shape[0]}, eps={self.eps}"


def check_block_sizes(d_model, n_heads, d_ff, dropout) -> int:
    """The sizes of a block, checked once where it is built; returns d_ff (None: 4 d_model)."""
    check.positive_int("d_model", d_model)
    check.positive_int("n_heads", n_heads)
    d_ff = check.positive_int("d_ff", 4 * d_model if d_ff is None else d_ff)
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
    if check.number("dropout", dropout, 0.0, 1.0) == 1.0:
        raise ValueError("dropout must be in [0, 1), got 1.0")
    return d_ff


def check_x(x, d_model: int, name: str = "x") -> None:
    """A clear error unless ``x`` is a (B, T, d_model) tensor (a shape check: cheap)."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d_model:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name} must be a tensor of shape (B, T, {d_model}) (batch first), got {shape}")


class SelfAttentionBlock(nn.Module):
    """One transformer block: self-attention, then the FFN, each inside Add & Norm (CS224N, UKP).

    ``causal=True`` masks the future (position t attends to positions <= t): the block of a
    decoder-only GPT. ``causal=False`` lets every token see every token: an encoder (BERT) block.

    ``norm_first=True``  (pre-norm, GPT-2):            x = x + SA(LN(x)); x = x + FFN(LN(x)).
    ``norm_first=False`` (post-norm, the 2017 paper): x = LN(x + SA(x)); x = LN(x + FFN(x)).
    Same parameters and results as ``nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout,
    activation="gelu", batch_first=True, norm_first=norm_first)`` (with a causal src_mask if causal).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int | None = None,
        dropout: float = 0.0,
        norm_first: bool = True,
        bias: bool = True,
        causal: bool = True,
    ):
        super().__init__()
        d_ff = check_block_sizes(d_model, n_heads, d_ff, dropout)
        self.d_model, self.norm_first = d_model, check.boolean("norm_first", norm_first)
        self.causal = check.boolean("causal", causal)
        bias = check.boolean("bias", bias)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, bias=bias, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)  # W_1
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)  # W_2
        self.dropout = nn.Dropout(dropout)  # inside the FFN
        self.norm1, self.norm2 = LayerNorm(d_model, bias=bias), LayerNorm(d_model, bias=bias)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.attn_weights = None  # (B, H, T, T) of the last forward with keep_weights=True

    def self_attention(self, x: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """SA(x): (B, T, C) -> (B, T, C), masked when the block is causal."""
        mask = ~causal_mask(x.shape[1], device=x.device) if self.causal else None  # True = may NOT attend
        out, weights = self.self_attn(
            x, x, x, attn_mask=mask, need_weights=keep_weights, average_attn_weights=False, is_causal=self.causal
        )
        self.attn_weights = weights.detach() if keep_weights else None
        return self.dropout1(out)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """FFN(x) = W_2 GELU(W_1 x + b_1) + b_2, at every position: (B, T, C) -> (B, T, d_ff) -> (B, T, C)."""
        return self.dropout2(self.linear2(self.dropout(F.gelu(self.linear1(x)))))

    def forward(self, x: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """x: (B, T, C) -> (B, T, C). ``keep_weights`` stores the attention weights in ``attn_weights``."""
        check_x(x, self.d_model)
        if self.norm_first:
            x = x + self.self_attention(self.norm1(x), keep_weights)  # (B, T, C)
            x = x + self.feed_forward(self.norm2(x))
        else:
            x = self.norm1(x + self.self_attention(x, keep_weights))
            x = self.norm2(x + self.feed_forward(x))
        return x


@dataclass
class GPTConfig:
    """Size and options of a :class:`GPT`, in the lecture's names."""

    vocab_size: int
    block_size: int = 128  # the longest context, T_max
    n_layers: int = 4
    n_heads: int = 4
    d_model: int = 128  # C
    d_ff: int | None = None  # None: 4 * d_model (UKP Lab)
    dropout: float = 0.0
    positions: str = "learned"  # or "sinusoidal" (fixed, not trained)
    norm_first: bool = True  # pre-norm (GPT-2); False: post-norm (the 2017 paper)
    bias: bool = True

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layers"):
            check.positive_int(name, getattr(self, name))
        self.d_ff = check_block_sizes(self.d_model, self.n_heads, self.d_ff, self.dropout)
        check.one_of("positions", self.positions, ("learned", "sinusoidal"))
        check.boolean("norm_first", self.norm_first)
        check.boolean("bias", self.bias)

    @property
    def d_k(self) -> int:
        """The size of one head's queries, keys and values: d_model / n_heads."""
        return self.d_model // self.n_heads


class GPT(nn.Module):
    """A decoder-only transformer language model (Fitzgibbon: a stack of masked self-attention
    blocks on token + position embeddings, trained to predict the next token).

    forward(idx (B, T) token ids, targets (B, T) or None) -> (logits (B, T, vocab), loss or None),
    loss = mean cross-entropy of every next-token prediction (nats).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
        self.config = c = config
        self.wte = nn.Embedding(c.vocab_size, c.d_model)  # token embeddings E: row x is E[x] = one_hot(x) @ E
        if c.positions == "learned":
            self.wpe = nn.Embedding(c.block_size, c.d_model)
        else:  # fixed: a buffer, never trained
            self.register_buffer("pe", sinusoidal_positions(c.block_size, c.d_model), persistent=False)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            SelfAttentionBlock(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first, c.bias, causal=True)
            for _ in range(c.n_layers)
        )
        # Pre-norm leaves the residual stream unnormalised, so normalise once more at the end.
        self.ln_f = LayerNorm(c.d_model, bias=c.bias) if c.norm_first else nn.Identity()
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):  # GPT-2's: small normal weights, zero biases
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    @property
    def fused(self) -> bool:
        """True: attention uses torch's fused kernel; False: the explicit softmax(q k^T / sqrt(d_k)) v."""
        return all(b.self_attn.fused for b in self.blocks)

    @fused.setter
    def fused(self, value: bool):
        for b in self.blocks:
            b.self_attn.fused = bool(value)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    @classmethod
    def load(cls, path, vocab=None, device="cpu") -> tuple[GPT, checkpoint.Checkpoint]:
        """(model, header) from a checkpoint written by scripts/train_gpt.py (course_lib.checkpoint:
        safetensors, no pickle). With ``vocab`` (a Vocab), its tokens and ids must be the checkpoint's."""
        return checkpoint.load(
            path,
            build=lambda config: cls(GPTConfig(**config)),
            kind="gpt",
            vocab=None if vocab is None else vocab.itos,
            device=device,
        )

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        """Token plus position embeddings: (B, T) ids -> (B, T, C). The model's boundary: ids are checked here."""
        check.token_ids("idx", idx, self.config.vocab_size)
        T = idx.shape[1]
        if T > self.config.block_size:
            raise ValueError(
                f"idx has length T={T}, more than block_size={self.config.block_size}: "
                "crop the context to its last block_size tokens"
            )
        tok = self.wte(idx)  # (B, T, C)
        pos = self.wpe(torch.arange(T, device=idx.device)) if self.config.positions == "learned" else self.pe[:T]
        return self.drop(tok + pos)  # (B, T, C) + (T, C) broadcast over the batch

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, keep_weights: bool = False):
        x = self.embed(idx)  # (B, T, C)
        for block in self.blocks:
            x = block(x, keep_weights=keep_weights)  # (B, T, C)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab_size)
        if targets is None:
            return logits, None
        return logits, next_token_loss(logits, idx, targets)

    def attention_weights(self, idx: torch.Tensor) -> torch.Tensor:
        """(n_layers, B, n_heads, T, T): how much each query position attends to each key position."""
        with evaluating(self):
            self(idx, keep_weights=True)
        return torch.stack([b.attn_weights for b in self.blocks])
