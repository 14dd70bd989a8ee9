"""The transformer, built up from its parts (lesson 07).

The pieces, in the order of the lecture (seeds 000, 001, 003, 004):

- token embeddings: a row lookup ``E[x]``, the same as one-hot(x) @ E;
- positions, because self-attention alone ignores order: sinusoidal
  (:func:`sinusoidal_positions`, ``PE[pos, 2i] = sin(pos / 10000^(2i/d))``,
  ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d))``) or learned (an ``nn.Embedding``);
- multi-head self-attention, with the causal mask in a decoder
  (:class:`course_lib.attention.MultiHeadAttention`, reused here);
- the position-wise feed-forward layer ``FFN(x) = W_2 GELU(W_1 x + b_1) + b_2``, d_ff = 4 d;
- residual connections and layer norm ("Add & Norm"), either after each sub-layer
  (post-norm, the original transformer) or before it (pre-norm, GPT-2 and later):

      post-norm:  x = LN(x + Sublayer(x))        pre-norm:  x = x + Sublayer(LN(x))

- :class:`GPT`, a decoder-only language model (a stack of :class:`Block`), trained to
  predict the next token; :func:`generate` and :func:`beam_search` decode from it;
- :class:`EncoderBlock`, :class:`DecoderBlock` (with cross-attention) and
  :class:`Seq2SeqTransformer`, the encoder-decoder of the original paper.

The blocks use the parameter names of ``torch.nn.TransformerEncoderLayer`` /
``TransformerDecoderLayer`` (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``,
``norm1`` ...), so torch's layers load into ours and tests compare the two.
Shapes in comments: B batch, T time (sequence length), C = d_model channels, H heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.attention import MultiHeadAttention, causal_mask
from course_lib.corpora import UNK, Vocab
from course_lib.train import check_token_ids, next_token_loss

__all__ = [
    "sinusoidal_positions",
    "LayerNorm",
    "FeedForward",
    "Block",
    "EncoderBlock",
    "DecoderBlock",
    "GPTConfig",
    "GPT",
    "sample_next",
    "generate",
    "beam_search",
    "Seq2SeqTransformer",
    "reversal_task",
    "SEP",
    "char_vocab",
    "encode_stream",
    "lm_batches",
    "evaluate_lm",
]


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def sinusoidal_positions(T: int, d: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """(T, d) sinusoidal position encodings of Vaswani et al. (2017), seeds 000 and 003.

    PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d)):
    each pair of channels is a clock turning at its own frequency, from one turn every
    2 pi positions (i = 0) down to one every 10000 * 2 pi.
    """
    _positive_int("T", T)
    _positive_int("d", d)
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
    """Layer norm over the last dim, written out; a drop-in for ``nn.LayerNorm(C)`` (seed 003).

    y = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, with mu and sigma^2 the mean and the
    (biased) variance of the C features of each token: every token is normalised on its own,
    unlike batch norm, so it works the same for any batch size and sequence length.
    """

    def __init__(self, normalized_shape: int, eps: float = 1e-5, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (_positive_int("normalized_shape", normalized_shape),)
        self.eps = eps
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


class FeedForward(nn.Module):
    """The position-wise feed-forward layer: FFN(x) = W_2 GELU(W_1 x + b_1) + b_2 (seed 004: d_ff = 4 d).

    Attention only mixes (weighted averages of) values; this layer adds the non-linearity,
    applied to every position separately.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)  # W_1
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)  # W_2
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.gelu(self.linear1(x))))  # (B, T, C) -> (B, T, d_ff) -> (B, T, C)


def _check_block_args(d_model, nhead, dim_feedforward, dropout):
    _positive_int("d_model", d_model)
    _positive_int("nhead", nhead)
    _positive_int("dim_feedforward", dim_feedforward)
    if d_model % nhead:
        raise ValueError(f"d_model ({d_model}) must be divisible by nhead ({nhead})")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")


def _init_sublayers(block, d_model, nhead, dim_feedforward, dropout, norm_first, bias, n_norms, cross_attention=False):
    """The layers of an encoder or decoder block, with torch's names (so torch's weights load):
    self_attn, [multihead_attn,] linear1 and linear2 (the FFN's W_1, W_2), norm1..n, dropout1..n."""
    dim_feedforward = dim_feedforward or 4 * d_model
    _check_block_args(d_model, nhead, dim_feedforward, dropout)
    block.d_model, block.norm_first = d_model, norm_first
    block.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=True)
    if cross_attention:
        block.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=True)
    block.linear1 = nn.Linear(d_model, dim_feedforward, bias=bias)  # W_1
    block.linear2 = nn.Linear(dim_feedforward, d_model, bias=bias)  # W_2
    block.dropout = nn.Dropout(dropout)  # inside the FFN
    for i in range(1, n_norms + 1):  # one Add & Norm (and dropout) per sub-layer
        setattr(block, f"norm{i}", LayerNorm(d_model, bias=bias))
        setattr(block, f"dropout{i}", nn.Dropout(dropout))


def _check_x(x, d_model, name="x"):
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d_model:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name} must be a tensor of shape (B, T, {d_model}) (batch first), got {shape}")


class EncoderBlock(nn.Module):
    """One encoder layer: self-attention over the whole sequence (no mask), then the FFN, each
    wrapped in a residual connection and a layer norm (seeds 001, 004).

    ``norm_first=False`` (post-norm, the 2017 paper): x = LN(x + SA(x)); x = LN(x + FFN(x)).
    ``norm_first=True``  (pre-norm, GPT-2):            x = x + SA(LN(x)); x = x + FFN(LN(x)).
    Same parameters and results as ``nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
    dropout, activation="gelu", batch_first=True, norm_first=norm_first)``.
    """

    causal = False

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int | None = None,
        dropout: float = 0.0,
        norm_first: bool = True,
        bias: bool = True,
    ):
        super().__init__()
        _init_sublayers(self, d_model, nhead, dim_feedforward, dropout, norm_first, bias, n_norms=2)
        self.attn_weights = None  # (B, H, T, T) of the last forward with keep_weights=True

    def _self_attention(self, x, keep_weights: bool):
        T = x.shape[1]
        mask = ~causal_mask(T, device=x.device) if self.causal else None  # MultiHeadAttention: True = NOT allowed
        out, weights = self.self_attn(
            x, x, x, attn_mask=mask, need_weights=keep_weights, average_attn_weights=False, is_causal=self.causal
        )
        self.attn_weights = weights.detach() if keep_weights else None
        return self.dropout1(out)

    def _feed_forward(self, x):
        return self.dropout2(self.linear2(self.dropout(F.gelu(self.linear1(x)))))  # FFN(x) = W_2 GELU(W_1 x)

    def forward(self, x: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """x: (B, T, C) -> (B, T, C). ``keep_weights`` stores the attention weights in ``attn_weights``."""
        _check_x(x, self.d_model)
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), keep_weights)  # (B, T, C)
            x = x + self._feed_forward(self.norm2(x))
        else:
            x = self.norm1(x + self._self_attention(x, keep_weights))
            x = self.norm2(x + self._feed_forward(x))
        return x


class Block(EncoderBlock):
    """A decoder-only (GPT) block: masked self-attention, so position t sees only positions <= t.

    Same as :class:`EncoderBlock` with the causal mask; equal to ``nn.TransformerEncoderLayer``
    called with ``src_mask=nn.Transformer.generate_square_subsequent_mask(T)``.
    """

    causal = True


class DecoderBlock(nn.Module):
    """One decoder layer of an encoder-decoder: masked self-attention, cross-attention to the
    encoder's output (``memory``: queries from the decoder, keys and values from the encoder),
    then the FFN; Add & Norm around each. Same parameters and results as
    ``nn.TransformerDecoderLayer(..., activation="gelu", batch_first=True)`` with a causal tgt_mask.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int | None = None,
        dropout: float = 0.0,
        norm_first: bool = True,
        bias: bool = True,
    ):
        super().__init__()
        _init_sublayers(
            self, d_model, nhead, dim_feedforward, dropout, norm_first, bias, n_norms=3, cross_attention=True
        )
        self.cross_weights = None  # (B, H, T_target, T_source) of the last forward with keep_weights=True

    def _self_attention(self, x):
        mask = ~causal_mask(x.shape[1], device=x.device)  # True = NOT allowed: the future
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)[0])

    def _cross_attention(self, x, memory, keep_weights):
        out, weights = self.multihead_attn(x, memory, memory, need_weights=keep_weights, average_attn_weights=False)
        self.cross_weights = weights.detach() if keep_weights else None
        return self.dropout2(out)

    def _feed_forward(self, x):
        return self.dropout3(self.linear2(self.dropout(F.gelu(self.linear1(x)))))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """x: (B, T, C) target so far, memory: (B, S, C) encoder output -> (B, T, C)."""
        _check_x(x, self.d_model)
        _check_x(memory, self.d_model, "memory")
        if memory.shape[0] != x.shape[0]:
            raise ValueError(f"memory must have the batch size of x ({x.shape[0]}), got {memory.shape[0]}")
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x))
            x = x + self._cross_attention(self.norm2(x), memory, keep_weights)
            x = x + self._feed_forward(self.norm3(x))
        else:
            x = self.norm1(x + self._self_attention(x))
            x = self.norm2(x + self._cross_attention(x, memory, keep_weights))
            x = self.norm3(x + self._feed_forward(x))
        return x


@dataclass
class GPTConfig:
    """Size and options of a :class:`GPT` (nanoGPT's names)."""

    vocab_size: int
    block_size: int = 128  # the longest context, T_max
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128  # d_model, C
    d_ff: int | None = None  # None: 4 * n_embd (seed 004)
    dropout: float = 0.0
    positions: str = "learned"  # or "sinusoidal" (fixed, not trained)
    norm_first: bool = True  # pre-norm (GPT-2); False: post-norm (the 2017 paper)
    bias: bool = True

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            _positive_int(name, getattr(self, name))
        if self.d_ff is None:
            self.d_ff = 4 * self.n_embd
        _positive_int("d_ff", self.d_ff)
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.positions not in ("learned", "sinusoidal"):
            raise ValueError(f"positions must be 'learned' or 'sinusoidal', got {self.positions!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


class GPT(nn.Module):
    """A decoder-only transformer language model (seed 000: a stack of masked self-attention
    blocks on token + position embeddings, trained to predict the next token).

    forward(idx (B, T) token ids, targets (B, T) or None) -> (logits (B, T, vocab), loss or None),
    loss = mean cross-entropy of every next-token prediction (nats).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
        self.config = c = config
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)  # token embeddings E: row x is E[x] = one_hot(x) @ E
        if c.positions == "learned":
            self.wpe = nn.Embedding(c.block_size, c.n_embd)
        else:  # fixed: a buffer, saved with the weights but never trained
            self.register_buffer("pe", sinusoidal_positions(c.block_size, c.n_embd), persistent=False)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            Block(c.n_embd, c.n_head, c.d_ff, c.dropout, c.norm_first, c.bias) for _ in range(c.n_layer)
        )
        # Pre-norm leaves the residual stream unnormalised, so normalise once more at the end.
        self.ln_f = LayerNorm(c.n_embd, bias=c.bias) if c.norm_first else nn.Identity()
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):  # GPT-2's: small normal weights, zero biases
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    @property
    def fused(self) -> bool:
        """True: attention uses torch's fused kernel; False: the explicit softmax(q k^T / sqrt(d)) v."""
        return all(b.self_attn.fused for b in self.blocks)

    @fused.setter
    def fused(self, value: bool):
        for b in self.blocks:
            b.self_attn.fused = bool(value)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    @classmethod
    def load(cls, path, vocab: Vocab | None = None) -> tuple[GPT, dict]:
        """(model, checkpoint) from a file of scripts/train_gpt.py: a dict with "config", "vocab",
        "state_dict" (float16) and numbers, read with ``weights_only=True`` (no pickled code runs).
        With ``vocab``, the checkpoint's characters and ids must be the same."""
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        if vocab is not None and ckpt["vocab"] != vocab.itos:
            raise ValueError(f"{path} was trained with another vocabulary than the one given")
        model = cls(GPTConfig(**ckpt["config"]))
        model.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
        return model, ckpt

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        """Token plus position embeddings: (B, T) ids -> (B, T, C)."""
        check_token_ids(idx, "idx")
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

    @torch.no_grad()
    def attention_weights(self, idx: torch.Tensor) -> torch.Tensor:
        """(n_layer, B, n_head, T, T): how much each query position attends to each key position."""
        was_training = self.training
        self.eval()
        self(idx, keep_weights=True)
        self.train(was_training)
        return torch.stack([b.attn_weights for b in self.blocks])


def sample_next(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Draw the next token from (B, V) logits: (B,) ids.

    temperature 0 is greedy (arg-max); otherwise p = softmax(logits / temperature), with
    every token outside the k most likely ones set to probability 0 when top_k is given.
    """
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        raise ValueError(f"logits must be a (B, V) tensor, got {getattr(logits, 'shape', type(logits).__name__)}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive int or None, got {top_k!r}")
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]  # (B, 1): the k-th largest logit
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _check_prompt(idx):
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype != torch.long or idx.shape[1] < 1:
        raise ValueError(
            f"idx must be a (B, T) tensor of token ids with T >= 1, got "
            f"{(tuple(idx.shape), idx.dtype) if isinstance(idx, torch.Tensor) else type(idx).__name__}"
        )


@torch.no_grad()
def generate(
    model: GPT,
    idx: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Autoregressive decoding (seed 004): append one sampled token at a time, feeding the output
    back in. Returns (B, T + max_new_tokens). ``temperature=0`` is greedy decoding."""
    _check_prompt(idx)
    _positive_int("max_new_tokens", max_new_tokens)
    was_training = model.training
    model.eval()
    for _ in range(max_new_tokens):
        context = idx[:, -model.config.block_size :]  # the model sees at most block_size tokens
        logits, _ = model(context)
        idx = torch.cat([idx, sample_next(logits[:, -1], temperature, top_k, generator)[:, None]], dim=1)
    model.train(was_training)
    return idx


@torch.no_grad()
def beam_search(model: GPT, idx: torch.Tensor, max_new_tokens: int, beam_width: int = 4) -> tuple[torch.Tensor, float]:
    """Beam search (seed 000): keep the ``beam_width`` continuations with the highest total
    log-probability, extend each by every token, keep the best again. ``idx`` is one prompt
    (1, T); returns the best sequence (1, T + max_new_tokens) and its log-probability (nats)."""
    _check_prompt(idx)
    if idx.shape[0] != 1:
        raise ValueError(f"beam_search decodes one prompt at a time: idx must be (1, T), got {tuple(idx.shape)}")
    _positive_int("max_new_tokens", max_new_tokens)
    _positive_int("beam_width", beam_width)
    was_training = model.training
    model.eval()
    beams = idx  # (K, T): the live hypotheses
    scores = torch.zeros(1, device=idx.device)  # (K,): log P(continuation | prompt)
    for _ in range(max_new_tokens):
        logits, _ = model(beams[:, -model.config.block_size :])
        logp = torch.log_softmax(logits[:, -1], dim=-1)  # (K, V)
        total = (scores[:, None] + logp).flatten()  # (K * V,): every hypothesis extended by every token
        scores, flat = torch.topk(total, min(beam_width, total.numel()))
        V = logp.shape[-1]
        beams = torch.cat([beams[flat // V], (flat % V)[:, None]], dim=1)
    model.train(was_training)
    return beams[:1], scores[0].item()


class Seq2SeqTransformer(nn.Module):
    """A small encoder-decoder transformer (seed 001): the encoder reads the source with full
    (unmasked) self-attention, the decoder writes the target with masked self-attention and
    cross-attention to the encoder's output. Sinusoidal positions, shared token embeddings.

    forward(src (B, S), tgt_in (B, T)) -> logits (B, T, vocab_size).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 64,
        nhead: int = 4,
        num_layers: int = 2,
        max_len: int = 64,
        dropout: float = 0.0,
    ):
        super().__init__()
        _positive_int("vocab_size", vocab_size)
        self.d_model, self.max_len = d_model, _positive_int("max_len", max_len)
        self.embed = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model), persistent=False)
        self.encoder = nn.ModuleList(EncoderBlock(d_model, nhead, dropout=dropout) for _ in range(num_layers))
        self.decoder = nn.ModuleList(DecoderBlock(d_model, nhead, dropout=dropout) for _ in range(num_layers))
        self.enc_norm, self.dec_norm = LayerNorm(d_model), LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)

    def _embed(self, ids, name):
        check_token_ids(ids, name)
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
        for _ in range(length):
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
    _positive_int("n", n)
    _positive_int("length", length)
    _positive_int("n_symbols", n_symbols)
    src = torch.randint(1, n_symbols + 1, (n, length), generator=generator, device="cpu")  # cpu: then moved
    tgt = src.flip(1)
    tgt_in = torch.cat([torch.zeros(n, 1, dtype=torch.long, device="cpu"), tgt[:, :-1]], dim=1)
    return src.to(device), tgt_in.to(device), tgt.to(device)


# ---------------------------------------------------------------------------------------------
# Character-level language modelling on a corpus of sentences (lesson 01's split).
# ---------------------------------------------------------------------------------------------
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


def lm_batches(
    stream: torch.Tensor, block_size: int, batch_size: int, steps: int, generator: torch.Generator | None = None
):
    """For ``train.fit``: a function yielding ``steps`` batches (x, y) of random windows, each
    (batch_size, block_size), with y = x shifted by one token (the next token to predict)."""
    for name, value in (("block_size", block_size), ("batch_size", batch_size), ("steps", steps)):
        _positive_int(name, value)
    if not isinstance(stream, torch.Tensor) or stream.dim() != 1:
        raise ValueError(f"stream must be a 1-D tensor of ids, got {getattr(stream, 'shape', type(stream).__name__)}")
    if len(stream) <= block_size:
        raise ValueError(f"stream has {len(stream)} tokens, it needs more than block_size={block_size}")
    offsets = torch.arange(block_size, device=stream.device)

    def epoch():
        for _ in range(steps):
            starts = torch.randint(len(stream) - block_size, (batch_size, 1), generator=generator, device="cpu").to(
                stream.device
            )  # cpu: the generator lives there
            yield stream[starts + offsets], stream[starts + offsets + 1]  # (B, T), (B, T)

    return epoch


@torch.no_grad()
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
    _positive_int("block_size", block_size)
    _positive_int("batch_size", batch_size)
    stride = block_size if stride is None else _positive_int("stride", stride)
    if stride > block_size:
        raise ValueError(f"stride must be at most block_size={block_size} (or tokens are skipped), got {stride}")
    was_training = model.training
    model.eval()
    n = len(stream) - 1  # predicted tokens
    T = min(block_size, n)
    starts = list(range(0, n - T + 1, stride))
    if starts[-1] + T < n:  # a last window, aligned with the end of the stream
        starts.append(n - T)
    offsets = torch.arange(T, device=stream.device)
    total, scored = 0.0, 0  # the targets stream[1 : scored + 1] are counted
    for i in range(0, len(starts), batch_size):
        batch = torch.tensor(starts[i : i + batch_size], device=stream.device)[:, None]  # (b, 1)
        logits, _ = model(stream[batch + offsets])  # (b, T, V)
        nll = F.cross_entropy(logits.flatten(0, 1), stream[batch + offsets + 1].flatten(), reduction="none").view(
            len(batch), T
        )
        for row, start in enumerate(starts[i : i + batch_size]):
            total += nll[row, max(scored - start, 0) :].sum().item()  # skip what earlier windows scored
            scored = start + T
    model.train(was_training)
    return total / n
