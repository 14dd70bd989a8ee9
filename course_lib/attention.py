"""Scaled dot-product attention, masks, and multi-head attention (lessons 05, 06 and 07).

The lecture's equations (UKP Lab's transformer lecture), for query i and key j::

    e_ij     = q_i . k_j / sqrt(d_k)           the scaled dot product ("scores")
    e_ij     = -inf   where j may not be seen   masked self-attention: the future j > i
    alpha_i  = softmax(e_i)                     a distribution over the keys
    h_i      = sum_j alpha_ij v_j               the weighted average of the values

In matrix form: ``Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V``.

Mask conventions (the source of many bugs, see lesson 06):

- :func:`scaled_dot_product_attention` and :func:`causal_mask` follow
  ``torch.nn.functional.scaled_dot_product_attention``: a boolean mask is **True where
  attending is allowed**; a float mask is **added** to the scores (0 or -inf).
- :class:`MultiHeadAttention` is a drop-in for ``torch.nn.MultiheadAttention`` and so
  follows *its* convention: a boolean ``attn_mask`` or ``key_padding_mask`` is **True where
  attending is NOT allowed**.

A query that may attend to nothing (a fully masked row) gets weights 0 and output 0, as in
torch's fused attention (a plain softmax of a row of -inf would give NaN).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib._validate import boolean, number, positive_int

__all__ = [
    "causal_mask",
    "padding_mask",
    "decoder_mask",
    "masked_softmax",
    "scaled_dot_product_attention",
    "MultiHeadAttention",
]


def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) boolean mask, True where query i may attend to key j, i.e. j <= i (lesson 06)."""
    positive_int("T", T)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, T: int, device=None) -> torch.Tensor:
    """(B, T) boolean mask, True at the real tokens: position t of sequence b is real when t < lengths[b].

    Broadcast it over the queries as ``mask[:, None, :]`` (B, 1, T) to mask padded keys.
    """
    lengths = torch.as_tensor(lengths, device=device)
    if lengths.dim() != 1 or lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise ValueError(f"lengths must be a 1-D sequence of ints, got {tuple(lengths.shape)} {lengths.dtype}")
    positive_int("T", T)
    # (values cannot be read on the meta device, where tests check shapes and devices only)
    if lengths.numel() and lengths.device.type != "meta" and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(f"lengths must lie in [0, T={T}], got {lengths.tolist()}")
    return torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]


def decoder_mask(lengths, T: int, device=None) -> torch.Tensor:
    """(B, T, T) boolean mask of a decoder's self-attention over a right-padded batch (lesson 06):
    True where query i of sequence b may attend to key j, i.e. key j is not in the future (j <= i)
    and is a real token (j < lengths[b]). Both masks must allow it.
    """
    keys = padding_mask(lengths, T, device=device)  # (B, T): the real keys
    return causal_mask(T, device=keys.device)[None, :, :] & keys[:, None, :]


def _check_mask(mask: torch.Tensor, scores_shape: torch.Size, name: str = "mask") -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor (bool: True = may attend; float: added to the scores), "
            f"got {type(mask).__name__}"
        )
    if mask.dtype != torch.bool and not mask.dtype.is_floating_point:
        raise TypeError(f"{name} must be bool (True = may attend) or float (added to the scores), got {mask.dtype}")
    # A 1-D mask would be broadcast along the keys of every row: almost always a mistake.
    if mask.dim() < 2 or mask.dim() > len(scores_shape):
        raise ValueError(
            f"{name} must have between 2 and {len(scores_shape)} dims, (..., T_q, T_k) = "
            f"(..., {scores_shape[-2]}, {scores_shape[-1]}), got shape {tuple(mask.shape)}"
        )
    for got, want in zip(reversed(mask.shape), reversed(scores_shape)):
        if got not in (1, want):
            raise ValueError(
                f"{name} of shape {tuple(mask.shape)} does not fit the scores of shape "
                f"{tuple(scores_shape)} (..., T_q, T_k): each dim must match or be 1"
            )


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """softmax over the last axis after masking: bool mask True = keep, float mask = added.

    Masked scores become -inf, so exp(-inf) = 0 and the kept weights still sum to 1.
    A row with every key masked gets weights 0 (not NaN), as in torch's fused attention.
    """
    if mask is not None:
        _check_mask(mask, scores.shape)
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
    # A fully masked row would be softmax(-inf, ..., -inf) = 0/0 = NaN: compute it on zeros, then zero it.
    empty = (scores == float("-inf")).all(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1)
    return weights.masked_fill(empty, 0.0)


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None, dropout_p: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The explicit path: ``softmax(q k^T / sqrt(d_k) masked) v``; returns ``(output, weights)``.

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v) -> output (..., T_q, d_v),
    weights (..., T_q, T_k). ``mask`` as in ``F.scaled_dot_product_attention``'s ``attn_mask``:
    bool True where query i may attend to key j, or float added to the scores; it may omit
    leading dims or have size-1 dims (e.g. (T_q, T_k) for every batch, (B, 1, 1, T_k) for padding).
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point or t.dim() < 2:
            raise TypeError(
                f"{name} must be a floating-point tensor of shape (..., T, d), got "
                f"{type(t).__name__ if not isinstance(t, torch.Tensor) else (tuple(t.shape), t.dtype)}"
            )
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ValueError(
            f"q, k and v must have the same leading (batch, head) dims, got q {tuple(q.shape)}, "
            f"k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dim d_k (their dot product), got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same length T_k (one value per key), got {k.shape[-2]} and {v.shape[-2]}"
        )
    if number("dropout_p", dropout_p, 0.0, 1.0) == 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k): e_ij = q_i . k_j / sqrt(d_k)
    weights = masked_softmax(scores, mask)  # alpha_i = softmax(e_i), each row sums to 1
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ v, weights  # h_i = sum_j alpha_ij v_j


class MultiHeadAttention(nn.Module):
    """Multi-head attention, a drop-in for ``torch.nn.MultiheadAttention`` (lessons 05 and 07).

    Same constructor, parameter names (so ``load_state_dict`` works both ways), forward
    signature, masks (bool True = NOT allowed, as in torch's module), shapes and return
    values. Each head h projects the inputs with its slice of W^Q, W^K, W^V (d_head =
    embed_dim / num_heads), attends, and the heads are concatenated and projected by W^O.

    Two paths that agree within 1e-5: the explicit one (:func:`scaled_dot_product_attention`,
    used whenever the weights are asked for, ``need_weights=True``, or when ``fused`` is False)
    and torch's fused ``F.scaled_dot_product_attention`` (``need_weights=False``).
    """

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        positive_int("embed_dim", embed_dim)
        positive_int("num_heads", num_heads)
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        if number("dropout", dropout, 0.0, 1.0) == 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        for name, flag in (("bias", bias), ("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn)):
            boolean(name, flag)
        boolean("batch_first", batch_first)
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first = batch_first
        self.add_zero_attn = add_zero_attn
        self.fused = True  # set to False to force the explicit path everywhere (for teaching or benchmarks)
        # Same parameter names and shapes as torch.nn.MultiheadAttention.
        if self._qkv_same_embed_dim:
            self.in_proj_weight = nn.Parameter(
                torch.empty(3 * embed_dim, embed_dim, device=device, dtype=dtype)
            )  # [W^Q; W^K; W^V]
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = nn.Parameter(torch.empty(embed_dim, embed_dim, device=device, dtype=dtype))
            self.k_proj_weight = nn.Parameter(torch.empty(embed_dim, self.kdim, device=device, dtype=dtype))
            self.v_proj_weight = nn.Parameter(torch.empty(embed_dim, self.vdim, device=device, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)  # W^O
        if add_bias_kv:
            self.bias_k = nn.Parameter(torch.empty(1, 1, embed_dim, device=device, dtype=dtype))
            self.bias_v = nn.Parameter(torch.empty(1, 1, embed_dim, device=device, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        # torch's initialisation: Xavier-uniform projections, zero biases.
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                nn.init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            nn.init.zeros_(self.in_proj_bias)
            nn.init.zeros_(self.out_proj.bias)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                nn.init.xavier_normal_(b)

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of a ``torch.nn.MultiheadAttention`` with the same weights, configuration and mode."""
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {type(module).__name__}")
        p = next(module.parameters())
        ours = cls(
            module.embed_dim,
            module.num_heads,
            dropout=module.dropout,
            bias=module.in_proj_bias is not None,
            add_bias_kv=module.bias_k is not None,
            add_zero_attn=module.add_zero_attn,
            kdim=module.kdim,
            vdim=module.vdim,
            batch_first=module.batch_first,
            device=p.device,
            dtype=p.dtype,
        )
        ours.load_state_dict(module.state_dict())
        return ours.train(module.training)

    def extra_repr(self) -> str:
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
            f"dropout={self.dropout}, batch_first={self.batch_first}"
        )

    def _projections(self):
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = self.in_proj_weight.split(E)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.split(E)
        return (w_q, b_q), (w_k, b_k), (w_v, b_v)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        """Shapes as in torch: query (L, N, E) (batch_first: (N, L, E); unbatched: (L, E)),
        key (S, N, kdim), value (S, N, vdim). ``attn_mask`` (L, S) or (N * num_heads, L, S),
        ``key_padding_mask`` (N, S): bool True = may NOT attend, or float added to the scores.

        Returns ``(attn_output, attn_output_weights)``: output like query, weights (N, L, S)
        averaged over heads, (N, num_heads, L, S) if not ``average_attn_weights``, or None if
        not ``need_weights``.
        """
        query, key, value, batched = _batch_first(self, query, key, value)
        B, L, _ = query.shape  # (B, L, E)
        S = key.shape[1]
        if is_causal and attn_mask is None:
            raise ValueError(
                "is_causal=True is only a hint, as in torch: also pass attn_mask, e.g. "
                "~causal_mask(L) (True = may NOT attend) or nn.Transformer.generate_square_subsequent_mask(L)"
            )
        # torch's module trusts the is_causal hint on its fused path and ignores attn_mask; so do we,
        # and then no mask is built at all.
        fused_causal = self.fused and not need_weights and is_causal and key_padding_mask is None
        H, D = self.num_heads, self.head_dim
        mask = None if fused_causal else _merged_mask(attn_mask, key_padding_mask, B, H, L, S, batched, query.dtype)

        (w_q, b_q), (w_k, b_k), (w_v, b_v) = self._projections()
        q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)  # (B, T, E)
        if self.bias_k is not None:  # one extra learned key and value that every query may attend to
            k = torch.cat([k, self.bias_k.expand(B, 1, -1)], dim=1)
            v = torch.cat([v, self.bias_v.expand(B, 1, -1)], dim=1)
            mask = _allow_one_more_key(mask)
        q = q.view(B, L, H, D).transpose(1, 2)  # (B, H, L, D): head h gets features h*D .. (h+1)*D - 1
        k = k.view(B, k.shape[1], H, D).transpose(1, 2)  # (B, H, S, D)
        v = v.view(B, v.shape[1], H, D).transpose(1, 2)  # (B, H, S, D)
        if self.add_zero_attn:  # one extra all-zero key and value per head
            zeros = torch.zeros(B, H, 1, D, dtype=k.dtype, device=k.device)
            k, v = torch.cat([k, zeros], dim=2), torch.cat([v, zeros], dim=2)
            mask = _allow_one_more_key(mask)
        dropout_p = self.dropout if self.training else 0.0

        weights = None
        if need_weights or not self.fused:
            out, weights = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=dropout_p)  # (B, H, L, D)
        elif fused_causal:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        out = out.transpose(1, 2).reshape(B, L, self.embed_dim)  # concatenate the heads: (B, L, E)
        out = self.out_proj(out)  # W^O

        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)  # (B, L, S)
        if not self.batch_first:
            out = out.transpose(0, 1)  # (L, B, E)
        if not batched:
            out = out.squeeze(1 if not self.batch_first else 0)
            weights = None if weights is None else weights.squeeze(0)
        return out, (weights if need_weights else None)


def _batch_first(mha, query, key, value):
    """Check the inputs and return them as (B, T, features), and whether they were batched."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point:
            raise TypeError(
                f"{name} must be a floating-point tensor, got "
                f"{type(t).__name__ if not isinstance(t, torch.Tensor) else t.dtype}"
            )
    if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
        raise ValueError(
            "query, key and value must all be 3-D (batched) or all 2-D (unbatched), got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    elif not mha.batch_first:
        query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
    layout = "(N, L, E)" if mha.batch_first else "(L, N, E)"
    for name, t, dim in (("query", query, mha.embed_dim), ("key", key, mha.kdim), ("value", value, mha.vdim)):
        if t.shape[-1] != dim:
            raise ValueError(f"{name} must have {dim} features in its last dim {layout}, got shape {tuple(t.shape)}")
    if query.shape[0] != key.shape[0] or key.shape[:2] != value.shape[:2]:
        raise ValueError(
            f"query, key and value must share the batch size, and key and value the length: layout "
            f"{layout if batched else '(L, E)'}, got query {tuple(query.shape)}, "
            f"key {tuple(key.shape)}, value {tuple(value.shape)} (batch first)"
        )
    return query, key, value, batched


def _merged_mask(attn_mask, key_padding_mask, B, H, L, S, batched, dtype):
    """Both masks merged into one for the scores (B or 1, H or 1, L, S), in F.scaled_dot_product_attention's
    convention: bool True = may attend, or float added to the scores; None when there is no mask.
    Views and broadcasting only: nothing of size (B, H, L, S) is built."""
    merged = None
    if attn_mask is not None:
        merged = _as_sdpa_mask(attn_mask, "attn_mask", dtype)
        if merged.shape == (L, S):
            merged = merged.view(1, 1, L, S)
        elif merged.shape == (B * H, L, S):
            merged = merged.view(B, H, L, S)
        else:
            raise ValueError(
                f"attn_mask must have shape (L, S) = ({L}, {S}) or (N * num_heads, L, S) = "
                f"({B * H}, {L}, {S}), got {tuple(attn_mask.shape)}"
            )
    if key_padding_mask is not None:
        padding = _as_sdpa_mask(key_padding_mask, "key_padding_mask", dtype)
        want = (B, S) if batched else (S,)
        if tuple(padding.shape) != want:
            raise ValueError(
                f"key_padding_mask must have shape {'(N, S)' if batched else '(S,)'} = {want}, "
                f"got {tuple(key_padding_mask.shape)}"
            )
        padding = padding.view(B, 1, 1, S)
        if merged is None:
            merged = padding
        elif merged.dtype == torch.bool and padding.dtype == torch.bool:
            merged = merged & padding  # allowed only where both allow
        else:
            merged = _additive(merged, dtype) + _additive(padding, dtype)
    return merged


def _as_sdpa_mask(mask, name, dtype):
    """torch.nn.MultiheadAttention's convention -> F.scaled_dot_product_attention's: a bool mask is
    inverted (True = may NOT attend -> True = may attend), a float mask is added to the scores as it is."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(mask).__name__}")
    if mask.dtype == torch.bool:
        return ~mask
    if not mask.dtype.is_floating_point:
        raise TypeError(f"{name} must be bool (True = may NOT attend) or float (added to the scores), got {mask.dtype}")
    return mask.to(dtype)


def _additive(mask, dtype):
    """A bool mask (True = may attend) as a float one: 0 where allowed, -inf elsewhere."""
    if mask.dtype != torch.bool:
        return mask
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))


def _allow_one_more_key(mask):
    """The mask with one more key (add_bias_kv, add_zero_attn) that every query may attend to."""
    if mask is None:
        return None
    return F.pad(mask, (0, 1), value=True if mask.dtype == torch.bool else 0.0)
