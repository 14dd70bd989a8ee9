"""Lesson 05 entries."""

LESSON = "05"

ADD_RIGHT = """
import torch


def additive_scores(query, keys, W_q, W_k, v):
    return torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T) @ v
"""

DECODE_RIGHT = """
import math

import torch


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    lengths = lengths.to(states.device)
    h = states[torch.arange(B, device=states.device), lengths - 1]
    pad = torch.arange(T_in, device=states.device)[None, :] >= lengths[:, None]
    all_logits, all_weights = [], []
    for i in range(tgt_in.shape[1]):
        y = model.tgt_embed(tgt_in[:, i])
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        c = (a[:, :, None] * states).sum(1)
        h = model.decoder(torch.cat([y, c], dim=1), h)
        all_logits.append(model.out(torch.cat([h, c], dim=1)))
        all_weights.append(a)
    return torch.stack(all_logits, 1), torch.stack(all_weights, 1)
"""

ALIGN_RIGHT = """
import torch

from course_lib.seq2seq import encode_pairs


def alignment(model, source, target, vocab):
    device = next(model.parameters()).device
    src, src_lengths, tgt_in, tgt_out = encode_pairs([source], [target], vocab, device=device)
    with torch.no_grad():
        _, weights = model(src, src_lengths, tgt_in)
    return weights[0, : len(target) + 1, : len(source) + 1]
"""

RIGHT = {"5.1": ADD_RIGHT, "5.2": DECODE_RIGHT, "5.3": ALIGN_RIGHT}
PREREQ = {"5.3": ["5.2"]}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="05-5.1-right", ex="5.1", kind="right", desc="broadcast", code=ADD_RIGHT),
    dict(
        id="05-5.1-m-no-tanh",
        ex="5.1",
        kind="mistake",
        desc="tanh forgotten",
        code=sub(
            ADD_RIGHT,
            "torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T)",
            "((query @ W_q.T)[:, None, :] + keys @ W_k.T)",
        ),
    ),
    dict(
        id="05-5.1-m-W-not-transposed",
        ex="5.1",
        kind="mistake",
        desc="keys @ W_k (no transpose; works only when d_k == a)",
        code=sub(ADD_RIGHT, "keys @ W_k.T", "keys @ W_k"),
    ),
    dict(
        id="05-5.1-m-broadcast-time",
        ex="5.1",
        kind="mistake",
        desc="query projection broadcast on the wrong axis ([:, :, None]) then sum",
        code="""
import torch


def additive_scores(query, keys, W_q, W_k, v):
    q = query @ W_q.T  # (B, a)
    k = keys @ W_k.T  # (B, T, a)
    return torch.tanh(q.unsqueeze(0).transpose(0, 1).expand_as(k.transpose(0, 1)).transpose(0, 1) + k) @ v if False else torch.tanh(q[None] + k.transpose(0, 1)).transpose(0, 1) @ v if q.shape[0] == k.shape[1] else torch.tanh(q[:, None, :] + k) @ v.flip(0)
""",
    ),
    dict(
        id="05-5.1-m-softmaxed",
        ex="5.1",
        kind="mistake",
        desc="returns softmax of the scores (text: softmax comes after)",
        code=sub(
            ADD_RIGHT,
            "return torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T) @ v",
            "return torch.softmax(torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T) @ v, dim=1)",
        ),
    ),
    dict(
        id="05-5.1-b-courselib",
        ex="5.1",
        kind="borrowed",
        desc="course_lib.seq2seq.AdditiveScore with my weights copied in",
        code="""
import torch
from course_lib import seq2seq


def additive_scores(query, keys, W_q, W_k, v):
    cls = getattr(seq2seq, "Additive" + "Score")
    try:
        m = cls(query.shape[1], keys.shape[2], W_q.shape[0])
    except TypeError:
        m = cls(query.shape[1], W_q.shape[0])
    m = m.to(query.dtype)
    with torch.no_grad():
        for name, p in m.named_parameters():
            for mine in (W_q, W_k, v):
                if p.shape == mine.shape:
                    p.copy_(mine)
    return m(query, keys)
""",
    ),
    dict(id="05-5.2-right", ex="5.2", kind="right", desc="loop with teacher forcing", code=DECODE_RIGHT),
    dict(
        id="05-5.2-m-h0-last-padded",
        ex="5.2",
        kind="mistake",
        desc="h0 = states[:, -1] (last padded position, not the last real one)",
        code=sub(DECODE_RIGHT, "h = states[torch.arange(B, device=states.device), lengths - 1]", "h = states[:, -1]"),
    ),
    dict(
        id="05-5.2-m-no-pad-mask",
        ex="5.2",
        kind="mistake",
        desc="padding not masked",
        code=sub(DECODE_RIGHT, 'e = e.masked_fill(pad, float("-inf"))', "pass"),
    ),
    dict(
        id="05-5.2-m-no-scale",
        ex="5.2",
        kind="mistake",
        desc="no 1/sqrt(H)",
        code=sub(DECODE_RIGHT, " / math.sqrt(H)", ""),
    ),
    dict(
        id="05-5.2-m-query-after-v2",
        ex="5.2",
        kind="mistake",
        desc="attention queried with h_i (after the GRU step) instead of h_{i-1}",
        code=sub(
            DECODE_RIGHT,
            """        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        c = (a[:, :, None] * states).sum(1)
        h = model.decoder(torch.cat([y, c], dim=1), h)""",
            """        c_prev = c if all_weights else states.new_zeros(B, H)
        h = model.decoder(torch.cat([y, c_prev], dim=1), h)
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        c = (a[:, :, None] * states).sum(1)""",
        ),
    ),
    dict(
        id="05-5.2-m-out-h-only",
        ex="5.2",
        kind="mistake",
        desc="logits from [h; h] ... out on [c; h] (concatenation order swapped)",
        code=sub(DECODE_RIGHT, "model.out(torch.cat([h, c], dim=1))", "model.out(torch.cat([c, h], dim=1))"),
    ),
    dict(
        id="05-5.2-m-softmax-batch",
        ex="5.2",
        kind="mistake",
        desc="softmax over the batch axis (dim=0)",
        code=sub(DECODE_RIGHT, "a = torch.softmax(e, dim=1)", "a = torch.softmax(e, dim=0)"),
    ),
    dict(
        id="05-5.2-b-sdpa",
        ex="5.2",
        kind="borrowed",
        desc="F.scaled_dot_product_attention for the context",
        code=sub(
            DECODE_RIGHT,
            """        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        c = (a[:, :, None] * states).sum(1)""",
            """        c = torch.nn.functional.scaled_dot_product_attention(h[:, None, :], states, states, attn_mask=~pad[:, None, :])[:, 0]
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        a = torch.softmax(e.masked_fill(pad, float("-inf")), dim=1)""",
        ),
    ),
    dict(
        id="05-5.2-b-courselib-attend",
        ex="5.2",
        kind="borrowed",
        desc="course_lib.attention.scaled_dot_product_attention via importlib",
        code=sub(
            DECODE_RIGHT,
            """        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        e = e.masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        c = (a[:, :, None] * states).sum(1)""",
            """        sdpa = __import__("importlib").import_module("course_lib.attention").scaled_dot_product_attention
        c, a = sdpa(h[:, None, :], states, states, mask=~pad[:, None, :])
        c, a = c[:, 0], a[:, 0]""",
        ),
    ),
    dict(id="05-5.3-right", ex="5.3", kind="right", desc="encode_pairs + model", code=ALIGN_RIGHT),
    dict(
        id="05-5.3-m-no-end",
        ex="5.3",
        kind="mistake",
        desc="drops the end row/column (len(target), len(source))",
        code=sub(
            ALIGN_RIGHT, "weights[0, : len(target) + 1, : len(source) + 1]", "weights[0, : len(target), : len(source)]"
        ),
    ),
    dict(
        id="05-5.3-m-transposed",
        ex="5.3",
        kind="mistake",
        desc="returns the transpose (source rows, target columns)",
        code=sub(
            ALIGN_RIGHT,
            "weights[0, : len(target) + 1, : len(source) + 1]",
            "weights[0, : len(target) + 1, : len(source) + 1].T",
        ),
    ),
]
