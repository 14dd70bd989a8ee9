"""The GPT built up one piece at a time, as in Karpathy's "Let's build GPT" (lesson 07).

Each step adds one idea to the one before and is trained with the same budget by
``scripts/train_buildup.py``; lesson 07 shows every class here and its validation loss:

    bigram -> one self-attention head -> multi-head -> + feed-forward
           -> + residual connections -> + LayerNorm (= course_lib.transformer.GPT)

Every step after the bigram has the same depth (``N_LAYERS`` layers), so each step adds exactly
one idea and a change of loss is not confounded with a change of depth.

The attention is written per head, as on the lectures' slides (each head its own W^Q, W^K,
W^V of d_model x d_k); :func:`to_gpt` packs those matrices into the fused layout of
:class:`course_lib.attention.MultiHeadAttention`, and the last step gives the same logits as
:class:`course_lib.transformer.GPT` with the same parameters (the lesson asserts it).
:func:`findings_table` reads the script's other results file (pre- vs post-norm, the GPT
against an LSTM, over seeds) and prints its tables for lessons 07 and 07b.
Shapes: B batch, T time, C = d_model, V vocabulary.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import _validate as check
from course_lib import checkpoint
from course_lib._text import table
from course_lib.attention import causal_mask
from course_lib.lm import encode_stream, evaluate_lm
from course_lib.train import next_token_loss
from course_lib.transformer import GPT, GPTConfig, LayerNorm

__all__ = [
    "N_LAYERS",
    "STEPS",
    "Bigram",
    "Head",
    "MultiHead",
    "FeedForward",
    "Block",
    "BuildUpLM",
    "build_step",
    "to_gpt",
    "FINDINGS",
    "findings_table",
    "val_head",
    "per_sentence_loss",
]

FINDINGS = checkpoint.WEIGHTS_DIR / "gpt_findings_sotu_char.json"  # written by scripts/train_buildup.py
N_LAYERS = 2  # every step after the bigram: the same depth, so one idea changes per step
# name -> what the step has (every step keeps what the steps before it added)
STEPS = {
    "bigram": {},
    "one head": dict(n_heads=1, n_layers=N_LAYERS),
    "multi-head": dict(n_heads=4, n_layers=N_LAYERS),
    "+ feed-forward": dict(n_heads=4, n_layers=N_LAYERS, feed_forward=True),
    "+ residual": dict(n_heads=4, n_layers=N_LAYERS, feed_forward=True, residual=True),
    "+ LayerNorm": dict(n_heads=4, n_layers=N_LAYERS, feed_forward=True, residual=True, layer_norm=True),
}


class Bigram(nn.Module):
    """Step 0: the next character's logits are a row of a V x V table, looked up by the current one."""

    def __init__(self, vocab_size: int):
        super().__init__()
        self.table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.table(idx)  # (B, T, V)
        return logits, None if targets is None else next_token_loss(logits, idx, targets)


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k) + mask) V, Q = X W^Q, K = X W^K, V = X W^V."""

    def __init__(self, d_model: int, d_k: int):
        super().__init__()
        self.query = nn.Linear(d_model, d_k)  # W^Q
        self.key = nn.Linear(d_model, d_k)  # W^K
        self.value = nn.Linear(d_model, d_k)  # W^V

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, d_k) each
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)
        scores = scores.masked_fill(~causal_mask(x.shape[1], device=x.device), float("-inf"))  # no peeking ahead
        return torch.softmax(scores, dim=-1) @ v  # (B, T, d_k)


class MultiHead(nn.Module):
    """n_heads heads side by side (d_k = d_model / n_heads each), concatenated, then W^O."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)  # W^O

    def forward(self, x):
        return self.proj(torch.cat([head(x) for head in self.heads], dim=-1))  # (B, T, C)


class FeedForward(nn.Module):
    """FFN(x) = W_2 GELU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model (UKP Lab, with GELU for ReLU)."""

    def __init__(self, d_model: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, 4 * d_model)  # W_1
        self.linear2 = nn.Linear(4 * d_model, d_model)  # W_2

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Block(nn.Module):
    """Attention, then (optionally) the FFN; with ``residual`` each adds to its input (x + f(x)),
    with ``layer_norm`` each reads a normalised copy (pre-norm: x + f(LN(x)))."""

    def __init__(self, d_model, n_heads, feed_forward=False, residual=False, layer_norm=False):
        super().__init__()
        self.attn = MultiHead(d_model, n_heads) if n_heads > 1 else Head(d_model, d_model)
        self.ffn = FeedForward(d_model) if feed_forward else None
        self.ln1 = LayerNorm(d_model) if layer_norm else nn.Identity()
        self.ln2 = LayerNorm(d_model) if layer_norm and feed_forward else nn.Identity()
        self.residual = residual

    def forward(self, x):
        x = x + self.attn(self.ln1(x)) if self.residual else self.attn(self.ln1(x))
        if self.ffn is not None:
            x = x + self.ffn(self.ln2(x)) if self.residual else self.ffn(self.ln2(x))
        return x


class BuildUpLM(nn.Module):
    """Token + learned position embeddings, ``n_layers`` blocks, (a final LayerNorm,) the logits."""

    def __init__(self, vocab_size, block_size, d_model, n_heads, n_layers, feed_forward=False, residual=False,
                 layer_norm=False):  # fmt: skip
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)  # E
        self.wpe = nn.Embedding(block_size, d_model)  # learned positions
        self.blocks = nn.Sequential(
            *(Block(d_model, n_heads, feed_forward, residual, layer_norm) for _ in range(n_layers))
        )
        self.ln_f = LayerNorm(d_model) if layer_norm else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))  # (B, T, C)
        logits = self.lm_head(self.ln_f(self.blocks(x)))  # (B, T, V)
        return logits, None if targets is None else next_token_loss(logits, idx, targets)


def build_step(name: str, vocab_size: int, block_size: int = 64, d_model: int = 64) -> nn.Module:
    """The model of build-up step ``name`` (a key of :data:`STEPS`), GPT-2's initialisation."""
    check.one_of("name", name, tuple(STEPS))
    check.positive_int("vocab_size", vocab_size)
    if name == "bigram":
        return Bigram(vocab_size)
    model = BuildUpLM(vocab_size, check.positive_int("block_size", block_size), d_model, **STEPS[name])
    model.apply(GPT._init_weights)
    return model


def to_gpt(model: BuildUpLM) -> GPT:
    """The last step's parameters in a :class:`course_lib.transformer.GPT`: the per-head W^Q, W^K,
    W^V are stacked into ``in_proj_weight`` (all queries, then all keys, then all values)."""
    if not isinstance(model, BuildUpLM) or not isinstance(model.ln_f, LayerNorm):
        raise TypeError("model must be the '+ LayerNorm' step (a BuildUpLM with layer_norm=True)")
    block_size, d_model = model.wpe.weight.shape
    first = model.blocks[0]
    config = GPTConfig(
        vocab_size=model.wte.weight.shape[0],
        block_size=block_size,
        n_layers=len(model.blocks),
        n_heads=len(first.attn.heads),
        d_model=d_model,
    )
    state = {"wte.weight": model.wte.weight, "wpe.weight": model.wpe.weight, "lm_head.weight": model.lm_head.weight}
    state |= {f"ln_f.{k}": v for k, v in model.ln_f.state_dict().items()}
    for i, block in enumerate(model.blocks):
        heads = block.attn.heads
        for kind in ("weight", "bias"):
            per_head = [getattr(getattr(h, part), kind) for part in ("query", "key", "value") for h in heads]
            state[f"blocks.{i}.self_attn.in_proj_{kind}"] = torch.cat(per_head)
            state[f"blocks.{i}.self_attn.out_proj.{kind}"] = getattr(block.attn.proj, kind)
            state[f"blocks.{i}.linear1.{kind}"] = getattr(block.ffn.linear1, kind)
            state[f"blocks.{i}.linear2.{kind}"] = getattr(block.ffn.linear2, kind)
            state[f"blocks.{i}.norm1.{kind}"] = getattr(block.ln1, kind)
            state[f"blocks.{i}.norm2.{kind}"] = getattr(block.ln2, kind)
    gpt = GPT(config).to(model.wte.weight.device)  # where the step's model is (a GPU, when it trained there)
    gpt.load_state_dict({k: v.detach().clone() for k, v in state.items()})
    return gpt


def val_head(sentences, n_chars: int = 20_000) -> list:
    """The first sentences whose characters, one end of sentence each, reach ``n_chars``: the text
    on which lesson 07 scores every model (the n-grams, ``scripts/ngram_orders.py``, and the GPTs)."""
    check.positive_int("n_chars", n_chars)
    head, total = [], 0
    for sentence in sentences:
        head.append(sentence)
        total += len(sentence) + 1
        if total >= n_chars:
            break
    return head


def per_sentence_loss(model: nn.Module, sentences, vocab, block_size: int, stride: int | None = None) -> float:
    """Mean negative log-likelihood (nats per token) with every sentence read on its own, as an
    n-gram reads it: a separator, the sentence's tokens, and a separator to predict (its ``</s>``),
    nothing of the sentences before. Within a sentence the model reads windows of ``block_size``
    tokens every ``stride`` (``course_lib.lm.evaluate_lm``)."""
    total, count = 0.0, 0
    for sentence in sentences:
        stream = encode_stream([sentence], vocab)  # separator, tokens, separator
        n = len(stream) - 1
        total += n * evaluate_lm(model, stream, block_size=min(block_size, n), stride=min(stride or block_size, n))
        count += n
    return total / count


def findings_table(experiment: str, path: str | Path = FINDINGS) -> tuple[dict, str]:
    """One experiment of the findings file of ``scripts/train_buildup.py``, and its table over the seeds.

    ``experiment`` is ``"norm"`` (pre- vs post-norm GPTs: one row per setting and block) or
    ``"lstm"`` (the GPT against the character LSTM: one row per model). Returns the experiment's
    record exactly as the file holds it, and the text to print: two lines with the budget (steps,
    seeds, batch and context), then the table (validation loss: mean and sd over the seeds).
    Lessons 07 and 07b print the same tables with it.
    """
    check.one_of("experiment", experiment, ("norm", "lstm"))
    record = json.loads(Path(path).read_text())[experiment]
    b = record["budget"]
    budget = (
        f"{record['steps']} steps per run from seeds {', '.join(map(str, b['seeds']))} (the same batches per seed: "
        f"{b['batch_size']} windows of {b['block_size']} characters), AdamW, gradients clipped at norm 1"
        f"{' (unless the setting says no clipping)' if experiment == 'norm' else ''};\n"
        f"validation loss on the first {b['val_tokens']:,} validation characters"
    )
    if experiment == "norm":
        budget += f"; d_model {b['d_model']}, 4 heads, no warm-up"  # the script's GPTConfig for these runs
        rows = [
            [f"{s}: {v['n_layers']} layers, lr {v['lr']:g}", name, r["train_loss_last20"]["mean"],
             r["val_loss"]["mean"], r["val_loss"]["sd"],
             f"{sum(r['stuck_or_diverged'])} of {len(r['stuck_or_diverged'])}"]
            for s, v in record["settings"].items() for name, r in v["runs"].items()
        ]  # fmt: skip
        header = ["setting", "block", "train loss (last 20)", "val loss: mean", "sd", "stuck/diverged"]
        return record, budget + "\n" + table(rows, header=header, floatfmt="{:.3f}")
    rows = [
        [name, r["params"], r["val_loss"]["mean"], r["val_loss"]["sd"], r["cpu_seconds"]["mean"]]
        for name, r in record["models"].items()
    ]
    header = ["model", "parameters", "val loss: mean", "sd", "CPU s: mean"]
    return record, budget + "\n" + table(rows, header=header, floatfmt="{:,.3f}")
