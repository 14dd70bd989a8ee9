"""Second-round entries for lesson 07 (see entries_extra.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entries_extra import _load, sub  # noqa: E402

_base = _load("07")
LESSON, RIGHT, PREREQ = _base.LESSON, _base.RIGHT, _base.PREREQ
R = RIGHT
ENTRIES = [
    dict(
        id="07x-7.7-m-pos-blocksize-v2",
        ex="7.7",
        kind="mistake",
        desc="positions arange(block_size) without cutting to T (only works when T == block_size)",
        code=sub(
            R["7.7"],
            "self.position_embedding(torch.arange(T, device=idx.device))",
            "self.position_embedding(torch.arange(self.position_embedding.num_embeddings, device=idx.device))",
        ),
    ),
    dict(
        id="07x-7.7-m-pos-blocksize",
        ex="7.7",
        kind="mistake",
        desc="positions arange(block_size) (only works when T == block_size)",
        code=sub(
            sub(
                R["7.7"],
                "self.position_embedding(torch.arange(T, device=idx.device))",
                "self.position_embedding(torch.arange(self.position_embedding.num_embeddings, device=idx.device))[:T]",
            ),
            "",
            "",
        ),
    ),
    dict(
        id="07x-7.3-m-batch-mix",
        ex="7.3",
        kind="mistake",
        desc="scores over the flattened batch (B*T, B*T) with a causal mask: batch rows see earlier batch rows",
        code=sub(
            R["7.3"],
            """        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        w = torch.softmax(w, dim=-1)
        return w @ v""",
            """        qf, kf, vf = q.reshape(B * T, -1), k.reshape(B * T, -1), v.reshape(B * T, -1)
        w = qf @ kf.T / math.sqrt(k.shape[-1])
        w = w.masked_fill(torch.ones(B * T, B * T, device=x.device).tril() == 0, float("-inf"))
        return (torch.softmax(w, dim=-1) @ vf).reshape(B, T, -1)""",
        ),
    ),
    dict(
        id="07x-7.9-m-sorted-probs",
        ex="7.9",
        kind="mistake",
        desc="top-k by sorting the softmax probabilities and cutting by cumulative index k (ties dropped, uses probs)",
        code="""
import torch


def top_k_probs(logits, k, temperature=1.0):
    p = torch.softmax(logits / temperature, dim=-1)
    vals, idx = torch.sort(p, descending=True)
    out = torch.zeros_like(p)
    out[idx[:k]] = vals[:k]
    return out / out.sum()
""",
    ),
    dict(
        id="07x-7.4-b-mha-module-method",
        ex="7.4",
        kind="borrowed",
        desc="a helper method copied from course_lib.attention.MultiHeadAttention's class (not __init__/forward), called from my forward",
        code="""
import course_lib.attention as _att


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    _sdpa = staticmethod(_att.scaled_dot_product_attention)

    def forward(self, x):
        T = x.shape[1]
        outs = []
        for h in self.heads:
            o, _ = self._sdpa(h.query(x), h.key(x), h.value(x), mask=_att.causal_mask(T))
            outs.append(o)
        return self.proj(torch.cat(outs, dim=-1))
""",
    ),
]
