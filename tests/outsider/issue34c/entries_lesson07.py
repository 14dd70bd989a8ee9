"""Lesson 07 entries."""

LESSON = "07"

PE_RIGHT = """
import torch


def positional_encoding(T, d):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float32)
    angle = pos / 10000 ** (i2 / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
"""

SPLIT_RIGHT = """
def split_heads(x, n_head):
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)
"""

HEAD_RIGHT = """
import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k, q, v = self.key(x), self.query(x), self.value(x)
        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        w = torch.softmax(w, dim=-1)
        return w @ v
"""

MHA_RIGHT = """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))
"""

FF_RIGHT = """
class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        return self.net(x)
"""

BLOCK_RIGHT = """
class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x
"""

GPT_RIGHT = """
import torch.nn.functional as F


class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))
        x = self.ln_f(self.blocks(x))
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return logits, loss
"""

TOPK_RIGHT = """
import torch


def top_k_probs(logits, k, temperature=1.0):
    scaled = logits / temperature
    kth = torch.topk(scaled, k).values[-1]
    scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)
"""

RIGHT = {
    "7.1": PE_RIGHT,
    "7.2": SPLIT_RIGHT,
    "7.3": HEAD_RIGHT,
    "7.4": MHA_RIGHT,
    "7.5": FF_RIGHT,
    "7.6": BLOCK_RIGHT,
    "7.7": GPT_RIGHT,
    "7.9": TOPK_RIGHT,
}
PREREQ = {"7.4": ["7.3"], "7.5": ["7.3"], "7.6": ["7.3", "7.4", "7.5"], "7.7": ["7.3", "7.4", "7.5", "7.6"]}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="07-7.1-right", ex="7.1", kind="right", desc="sin even, cos odd", code=PE_RIGHT),
    dict(
        id="07-7.1-m-cos-first",
        ex="7.1",
        kind="mistake",
        desc="cosine on even channels (Galerne's order)",
        code=sub(
            sub(PE_RIGHT, "pe[:, 0::2] = torch.sin(angle)", "pe[:, 0::2] = torch.cos(angle)"),
            "pe[:, 1::2] = torch.cos(angle)",
            "pe[:, 1::2] = torch.sin(angle)",
        ),
    ),
    dict(
        id="07-7.1-m-exponent-i",
        ex="7.1",
        kind="mistake",
        desc="exponent i/d instead of 2i/d",
        code=sub(PE_RIGHT, "angle = pos / 10000 ** (i2 / d)", "angle = pos / 10000 ** (i2 / 2 / d)"),
    ),
    dict(
        id="07-7.1-m-pos-from-1",
        ex="7.1",
        kind="mistake",
        desc="positions 1..T instead of 0..T-1",
        code=sub(PE_RIGHT, "torch.arange(T, dtype=torch.float32)", "torch.arange(1, T + 1, dtype=torch.float32)"),
    ),
    dict(
        id="07-7.1-m-blocks",
        ex="7.1",
        kind="mistake",
        desc="sin in the first half, cos in the second half (concatenated, not interleaved)",
        code=sub(
            sub(PE_RIGHT, "pe[:, 0::2] = torch.sin(angle)", "pe[:, : d // 2] = torch.sin(angle)"),
            "pe[:, 1::2] = torch.cos(angle)",
            "pe[:, d // 2 :] = torch.cos(angle)",
        ),
    ),
    dict(
        id="07-7.1-b-courselib",
        ex="7.1",
        kind="borrowed",
        desc="course_lib.transformer.sinusoidal_positions",
        code="""
from course_lib.transformer import sinusoidal_positions


def positional_encoding(T, d):
    try:
        return sinusoidal_positions(T, d)
    except TypeError:
        return sinusoidal_positions(T, d, 10000)
""",
    ),
    dict(id="07-7.2-right", ex="7.2", kind="right", desc="view + transpose", code=SPLIT_RIGHT),
    dict(
        id="07-7.2-m-view-no-transpose",
        ex="7.2",
        kind="mistake",
        desc="x.view(B, n_head, T, D) directly (no transpose: mixes tokens and heads)",
        code=sub(
            SPLIT_RIGHT, "x.view(B, T, n_head, C // n_head).transpose(1, 2)", "x.reshape(B, n_head, T, C // n_head)"
        ),
    ),
    dict(
        id="07-7.2-m-D-then-H",
        ex="7.2",
        kind="mistake",
        desc="view(B, T, D, H).permute(0, 3, 1, 2): strided heads instead of contiguous slices",
        code=sub(
            SPLIT_RIGHT,
            "x.view(B, T, n_head, C // n_head).transpose(1, 2)",
            "x.view(B, T, C // n_head, n_head).permute(0, 3, 1, 2)",
        ),
    ),
    dict(
        id="07-7.2-m-inplace",
        ex="7.2",
        kind="mistake",
        desc="divides x in place by 1 then a scaling left in: x.mul_(1/sqrt(D)) (pre-scaling queries, edits input)",
        code=sub(SPLIT_RIGHT, "    return x.view", "    x.mul_((C // n_head) ** -0.5)\n    return x.view"),
    ),
    dict(id="07-7.3-right", ex="7.3", kind="right", desc="Karpathy's head", code=HEAD_RIGHT),
    dict(
        id="07-7.3-m-bias",
        ex="7.3",
        kind="mistake",
        desc="nn.Linear projections keep their default bias",
        code=HEAD_RIGHT.replace(", bias=False)", ")"),
    ),
    dict(
        id="07-7.3-m-scale-dmodel",
        ex="7.3",
        kind="mistake",
        desc="scales by sqrt(d_model) (C) instead of sqrt(head_size)",
        code=sub(HEAD_RIGHT, "math.sqrt(k.shape[-1])", "math.sqrt(C)"),
    ),
    dict(
        id="07-7.3-m-no-scale",
        ex="7.3",
        kind="mistake",
        desc="no 1/sqrt(d_k) at all",
        code=sub(HEAD_RIGHT, " / math.sqrt(k.shape[-1])", ""),
    ),
    dict(
        id="07-7.3-m-mask-upper",
        ex="7.3",
        kind="mistake",
        desc="masks the past (triu) instead of the future",
        code=sub(
            HEAD_RIGHT,
            "torch.tril(torch.ones(block_size, block_size))",
            "torch.triu(torch.ones(block_size, block_size))",
        ),
    ),
    dict(
        id="07-7.3-m-mask-full-block",
        ex="7.3",
        kind="mistake",
        desc="mask not cut to T: uses self.tril[:T, :T] only when T == block_size else no mask",
        code=sub(
            HEAD_RIGHT,
            'w = w.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            'if T == self.tril.shape[0]:\n            w = w.masked_fill(self.tril == 0, float("-inf"))',
        ),
    ),
    dict(
        id="07-7.3-m-softmax-dim1",
        ex="7.3",
        kind="mistake",
        desc="softmax over the queries (dim=1) instead of the keys",
        code=sub(HEAD_RIGHT, "w = torch.softmax(w, dim=-1)", "w = torch.softmax(w, dim=1)"),
    ),
    dict(
        id="07-7.3-m-q-k-swapped",
        ex="7.3",
        kind="mistake",
        desc="scores k @ q^T (query and key roles swapped)",
        code=sub(HEAD_RIGHT, "w = q @ k.transpose(-2, -1)", "w = k @ q.transpose(-2, -1)"),
    ),
    dict(
        id="07-7.3-b-sdpa",
        ex="7.3",
        kind="borrowed",
        desc="F.scaled_dot_product_attention(is_causal=True)",
        code=sub(
            HEAD_RIGHT,
            """        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
            """        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
        ),
    ),
    dict(
        id="07-7.3-b-sdpa-aten",
        ex="7.3",
        kind="borrowed",
        desc="torch.ops.aten._scaled_dot_product_attention_math reached by string",
        code=sub(
            HEAD_RIGHT,
            """        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
            """        op = getattr(torch.ops.aten, "_scaled_dot_product_" + "attention_math")
        return op(q, k, v, None, 0.0, True)[0]
        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
        ),
    ),
    dict(
        id="07-7.3-b-courselib-sdpa",
        ex="7.3",
        kind="borrowed",
        desc="course_lib.attention.scaled_dot_product_attention + causal_mask via sys.modules",
        code=sub(
            HEAD_RIGHT,
            """        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
            """        import sys
        import course_lib.attention  # noqa: F401
        att = sys.modules["course_lib.attention"]
        return att.scaled_dot_product_attention(q, k, v, mask=att.causal_mask(T))[0]
        w = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])""",
        ),
    ),
    dict(id="07-7.4-right", ex="7.4", kind="right", desc="ModuleList + proj", code=MHA_RIGHT),
    dict(
        id="07-7.4-m-no-proj-bias",
        ex="7.4",
        kind="mistake",
        desc="proj = nn.Linear(d_model, d_model, bias=False) (text has b^O)",
        code=sub(
            MHA_RIGHT, "self.proj = nn.Linear(d_model, d_model)", "self.proj = nn.Linear(d_model, d_model, bias=False)"
        ),
    ),
    dict(
        id="07-7.4-m-swap-heads-size",
        ex="7.4",
        kind="mistake",
        desc="Head(d_model, n_heads, ...) repeated d_model // n_heads times (heads and head size swapped)",
        code=sub(
            MHA_RIGHT,
            "[Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)]",
            "[Head(d_model, n_heads, block_size) for _ in range(d_model // n_heads)]",
        ),
    ),
    dict(
        id="07-7.4-m-no-proj",
        ex="7.4",
        kind="mistake",
        desc="proj defined but not applied in forward",
        code=sub(
            MHA_RIGHT,
            "return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))",
            "return torch.cat([h(x) for h in self.heads], dim=-1)",
        ),
    ),
    dict(
        id="07-7.4-m-same-head",
        ex="7.4",
        kind="mistake",
        desc="one Head object repeated n_heads times (shared weights)",
        code=sub(
            MHA_RIGHT,
            "nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])",
            "nn.ModuleList([Head(d_model, d_model // n_heads, block_size)] * n_heads)",
        ),
    ),
    dict(
        id="07-7.4-m-cat-dim1",
        ex="7.4",
        kind="mistake",
        desc="heads concatenated on the time axis then reshaped",
        code=sub(
            MHA_RIGHT,
            "return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))",
            "return self.proj(torch.cat([h(x) for h in self.heads], dim=1).reshape(x.shape))",
        ),
    ),
    dict(
        id="07-7.4-b-nn-mha",
        ex="7.4",
        kind="borrowed",
        desc="torch.nn.MultiheadAttention with a causal mask alongside self.heads",
        code="""
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)
        self.mha = nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True)

    def forward(self, x):
        T = x.shape[1]
        # same weights as my heads, put into torch's layout
        w = torch.cat([torch.cat([h.query.weight for h in self.heads]), torch.cat([h.key.weight for h in self.heads]),
                       torch.cat([h.value.weight for h in self.heads])])
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        out, _ = torch.nn.functional.multi_head_attention_forward(
            x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), x.shape[-1], len(self.heads), w, None, None, None,
            False, 0.0, self.proj.weight, self.proj.bias, attn_mask=mask, need_weights=False)
        return out.transpose(0, 1)
""",
    ),
    dict(
        id="07-7.4-b-courselib-mha-forward",
        ex="7.4",
        kind="borrowed",
        desc="heads computed by course_lib.transformer.MultiHeadAttention built from my weights (via getattr on the module)",
        code="""
import course_lib


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)
        self._cfg = (d_model, n_heads, block_size)

    def forward(self, x):
        lib = getattr(getattr(course_lib, "transformer"), "MultiHeadAttention")
        try:
            m = lib(*self._cfg)
        except TypeError:
            m = lib(self._cfg[0], self._cfg[1])
        sd = {}
        for name, p in m.named_parameters():
            sd[name] = p
        names = list(sd)
        # best effort: copy the projection; if layouts differ this borrowed answer just fails
        with torch.no_grad():
            for name, p in m.named_parameters():
                if p.shape == self.proj.weight.shape and "proj" in name and name.endswith("weight"):
                    p.copy_(self.proj.weight)
                if p.shape == self.proj.bias.shape and "proj" in name and name.endswith("bias"):
                    p.copy_(self.proj.bias)
                if p.shape[0] == 3 * self._cfg[0] and name.endswith("weight"):
                    p.copy_(torch.cat([torch.cat([getattr(h, a).weight for h in self.heads]) for a in ("query", "key", "value")]))
        m = m.to(x.dtype)
        out = m(x)
        return out[0] if isinstance(out, tuple) else out
""",
    ),
    dict(id="07-7.5-right", ex="7.5", kind="right", desc="Sequential", code=FF_RIGHT),
    dict(
        id="07-7.5-right-raw-xW",
        ex="7.5",
        kind="right",
        desc="raw parameters in the x @ W1 layout ('name its layers as you like')",
        code="""
class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        k1, k2 = d_model ** -0.5, (4 * d_model) ** -0.5
        self.W1 = nn.Parameter(torch.empty(d_model, 4 * d_model).uniform_(-k1, k1))
        self.b1 = nn.Parameter(torch.zeros(4 * d_model))
        self.W2 = nn.Parameter(torch.empty(4 * d_model, d_model).uniform_(-k2, k2))
        self.b2 = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return torch.relu(x @ self.W1 + self.b1) @ self.W2 + self.b2
""",
    ),
    dict(
        id="07-7.5-m-dff-dmodel",
        ex="7.5",
        kind="mistake",
        desc="d_ff = d_model (forgot the 4x)",
        code=FF_RIGHT.replace("4 * d_model", "d_model"),
    ),
    dict(
        id="07-7.5-m-no-bias2",
        ex="7.5",
        kind="mistake",
        desc="second layer bias=False",
        code=sub(FF_RIGHT, "nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model, bias=False))"),
    ),
    dict(
        id="07-7.5-m-relu-after",
        ex="7.5",
        kind="mistake",
        desc="ReLU after the second layer too",
        code=sub(FF_RIGHT, "nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.ReLU())"),
    ),
    dict(
        id="07-7.5-m-dropout",
        ex="7.5",
        kind="mistake",
        desc="Karpathy's Dropout(0.2) kept",
        code=sub(FF_RIGHT, "nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.Dropout(0.2))"),
    ),
    dict(
        id="07-7.5-m-gelu",
        ex="7.5",
        kind="mistake",
        desc="GELU instead of ReLU",
        code=sub(FF_RIGHT, "nn.ReLU()", "nn.GELU()"),
    ),
    dict(id="07-7.6-right", ex="7.6", kind="right", desc="pre-norm", code=BLOCK_RIGHT),
    dict(
        id="07-7.6-m-postnorm",
        ex="7.6",
        kind="mistake",
        desc="post-norm: x = LN(x + SA(x))",
        code=sub(
            sub(BLOCK_RIGHT, "x = x + self.sa(self.ln1(x))", "x = self.ln1(x + self.sa(x))"),
            "x = x + self.ffwd(self.ln2(x))",
            "x = self.ln2(x + self.ffwd(x))",
        ),
    ),
    dict(
        id="07-7.6-m-inplace",
        ex="7.6",
        kind="mistake",
        desc="x += ... (edits the caller's x)",
        code=sub(
            sub(BLOCK_RIGHT, "x = x + self.sa(self.ln1(x))", "x += self.sa(self.ln1(x))"),
            "x = x + self.ffwd(self.ln2(x))",
            "x += self.ffwd(self.ln2(x))",
        ),
    ),
    dict(
        id="07-7.6-m-same-ln",
        ex="7.6",
        kind="mistake",
        desc="ln1 used for both sub-layers",
        code=sub(BLOCK_RIGHT, "self.ffwd(self.ln2(x))", "self.ffwd(self.ln1(x))"),
    ),
    dict(
        id="07-7.6-m-residual-from-ln",
        ex="7.6",
        kind="mistake",
        desc="residual added to the normalised x: h = ln1(x); x = h + sa(h)",
        code=sub(BLOCK_RIGHT, "x = x + self.sa(self.ln1(x))", "h = self.ln1(x)\n        x = h + self.sa(h)"),
    ),
    dict(
        id="07-7.6-b-torch-layer",
        ex="7.6",
        kind="borrowed",
        desc="nn.TransformerEncoderLayer(norm_first=True) in forward",
        code=sub(
            BLOCK_RIGHT,
            "        x = x + self.sa(self.ln1(x))\n        x = x + self.ffwd(self.ln2(x))\n        return x",
            "        T = x.shape[1]\n        layer = nn.TransformerEncoderLayer(x.shape[-1], len(self.sa.heads), 4 * x.shape[-1], dropout=0.0, activation='relu', batch_first=True, norm_first=True).to(x.dtype)\n        return layer(x, src_mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)",
        ),
    ),
    dict(
        id="07-7.6-b-courselib-block",
        ex="7.6",
        kind="borrowed",
        desc="forward copied from course_lib.transformer.SelfAttentionBlock",
        code=sub(
            BLOCK_RIGHT,
            "    def forward(self, x):",
            "    forward = __import__('course_lib.transformer', fromlist=['x']).SelfAttentionBlock.forward\n\n    def _mine(self, x):",
        ),
    ),
    dict(id="07-7.7-right", ex="7.7", kind="right", desc="nanoGPT-like", code=GPT_RIGHT),
    dict(
        id="07-7.7-m-pos-vocab",
        ex="7.7",
        kind="mistake",
        desc="position table of vocab_size rows",
        code=sub(GPT_RIGHT, "nn.Embedding(block_size, d_model)", "nn.Embedding(vocab_size, d_model)"),
    ),
    dict(
        id="07-7.7-m-pos-of-tokens",
        ex="7.7",
        kind="mistake",
        desc="position embedding looked up with idx (token ids) instead of arange(T)",
        code=sub(
            sub(
                GPT_RIGHT,
                "self.position_embedding(torch.arange(T, device=idx.device))",
                "self.position_embedding(idx % self.position_embedding.num_embeddings)",
            ),
            "",
            "",
        ),
    ),
    dict(
        id="07-7.7-m-no-lnf",
        ex="7.7",
        kind="mistake",
        desc="final layer norm defined but skipped",
        code=sub(GPT_RIGHT, "x = self.ln_f(self.blocks(x))", "x = self.blocks(x)"),
    ),
    dict(
        id="07-7.7-m-loss-shift",
        ex="7.7",
        kind="mistake",
        desc="shifts the targets again (logits[:, :-1] vs targets[:, 1:])",
        code=sub(
            GPT_RIGHT,
            "loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))",
            "loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), targets[:, 1:].reshape(-1))",
        ),
    ),
    dict(
        id="07-7.7-m-loss-transpose",
        ex="7.7",
        kind="mistake",
        desc="logits.transpose(1,2) reshaped wrongly: view(-1, V) of (B, V, T)",
        code=sub(GPT_RIGHT, "logits.reshape(B * T, -1)", "logits.transpose(1, 2).reshape(B * T, -1)"),
    ),
    dict(
        id="07-7.7-m-loss-sum",
        ex="7.7",
        kind="mistake",
        desc="cross-entropy summed, not mean",
        code=sub(GPT_RIGHT, "targets.reshape(B * T))", "targets.reshape(B * T), reduction='sum')"),
    ),
    dict(
        id="07-7.7-b-courselib-gpt",
        ex="7.7",
        kind="borrowed",
        desc="delegates forward to course_lib.transformer.GPT (weights loaded from mine)",
        code=GPT_RIGHT
        + """

_mine_forward = GPT.forward


def _borrowed_forward(self, idx, targets=None):
    import course_lib.transformer as tr
    return tr.GPT.forward(self, idx, targets)


GPT.forward = _borrowed_forward
""",
    ),
    dict(id="07-7.9-right", ex="7.9", kind="right", desc="topk threshold", code=TOPK_RIGHT),
    dict(
        id="07-7.9-m-strict-ties",
        ex="7.9",
        kind="mistake",
        desc="scatter of exactly k indices (ties beyond k dropped)",
        code="""
import torch


def top_k_probs(logits, k, temperature=1.0):
    scaled = logits / temperature
    idx = torch.topk(scaled, k).indices
    kept = torch.full_like(scaled, float("-inf"))
    kept[idx] = scaled[idx]
    return torch.softmax(kept, dim=-1)
""",
    ),
    dict(
        id="07-7.9-m-temp-after",
        ex="7.9",
        kind="mistake",
        desc="temperature applied by multiplying",
        code=sub(TOPK_RIGHT, "scaled = logits / temperature", "scaled = logits * temperature"),
    ),
    dict(
        id="07-7.9-m-inplace",
        ex="7.9",
        kind="mistake",
        desc="masks logits in place (edits input)",
        code=sub(TOPK_RIGHT, "scaled = logits / temperature", "logits.div_(temperature)\n    scaled = logits"),
    ),
    dict(
        id="07-7.9-m-softmax-all-then-zero",
        ex="7.9",
        kind="mistake",
        desc="softmax over all logits then zero the tail without renormalising",
        code="""
import torch


def top_k_probs(logits, k, temperature=1.0):
    p = torch.softmax(logits / temperature, dim=-1)
    kth = torch.topk(logits, k).values[-1]
    return torch.where(logits >= kth, p, torch.zeros_like(p))
""",
    ),
]
