# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 07 exercises: let's build GPT
#
# Two warm-ups (position encodings, splitting the heads), then the build: you write one head
# of self-attention, multi-head attention, the feed-forward layer, the block and the GPT as
# `nn.Module` classes, train them one piece at a time on real text, and sample from your GPT
# with top-k sampling. Each exercise but the 7.8 experiment is followed by a check: it calls your code on fresh inputs
# (sizes drawn anew every run) and says **passed**, **not implemented yet**, or **failed** with a
# hint about the likely mistake. Replace each `raise NotImplementedError(...)` with your code and
# run the cell below it. The lesson notebook `notebooks/07_transformer.ipynb` explains everything
# used here.
#
# When your notebook is graded, only the answer cells (the ones you edit) are loaded, in a namespace of their own:
# none of the setup cell's names or of any other cell's, nor a file a cell wrote (a `%%writefile` module), is
# there, so import what you use in them. Keep them to imports (a `try:` holding only imports, with
# `except ImportError:`, too), functions (a `lambda` bound to a name too), classes whose bases are plain names,
# names set to literals (numbers, strings, `True`, `False`, `None`, lists, tuples, sets or dicts of these, or
# `float("inf")` on its own) or to a module's attribute (`LOG2 = math.log2`, with `import math` above it in the
# same cell), simple annotations (names, `X[...]`), and a demo under `if __name__ == "__main__":` (not run when
# graded). Decorators: `@staticmethod`, `@classmethod`, `@property` and a property's `.setter`, and a few
# wrappers such as `@functools.lru_cache`, `@functools.cache`, `@dataclasses.dataclass` and `@torch.no_grad()`,
# named through an import above them in the same cell and given literal arguments only. A value computed by a
# call or arithmetic (`LN2 = math.log(2)`, `X = 1 / 3`), a default that is not a literal (a dataclass's
# `field(default_factory=list)` is fine), any other decorator, a test or a `print` at top level, or a `%magic` or `!command` anywhere in the cell fails that
# exercise, and any other exercise that uses a name the cell defines. Put such code inside your function. Your
# functions may start no thread or process and may not use `torch.compile` or `torch.jit` (the grader watches what
# they call).
#
# In every exercise, your functions may call Python's standard library, torch and numpy, and print, display, plot
# (plain labels) or show progress; a check refuses an answer that calls any other installed package, such as
# `pandas`, `sympy` or `nltk` (importing one is fine). 7.3 to 7.7 build on the masked softmax, so numpy's masked
# arrays (`numpy.ma`), `torch.masked` and torch's nested tensors are refused too.

# %%
import course_lib
from course_lib.checks import lesson07 as checks

course_lib.setup(seed=0, threads=1)

# %% [markdown]
# ## Exercise 7.1: sinusoidal position encodings
#
# Self-attention ignores the order of its inputs, so we add to each token embedding a vector
# that depends on its position. The course uses Vaswani et al.'s (2017) convention, as lesson 07
# does (Galerne's slide writes each pair cosine first; lesson 07 shows both), for position $pos$ and
# channel pair $i = 0, \dots, d/2 - 1$:
#
# $$PE_{pos, 2i} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right), \qquad
#   PE_{pos, 2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)$$
#
# Return a float tensor of shape `(T, d)` for positions $0, \dots, T-1$ ($d$ is even).

# %%
# Exercise 7.1: sinusoidal position encodings
import torch


def positional_encoding(T, d):
    """(T, d) tensor: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    ### BEGIN SOLUTION
    pos = torch.arange(T, dtype=torch.float32)[:, None]  # (T, 1)
    two_i = torch.arange(0, d, 2, dtype=torch.float32)  # (d/2,)
    angle = pos / 10000 ** (two_i / d)  # (T, d/2)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
    ### END SOLUTION


# %%
result = checks.check_positional_encoding(positional_encoding)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.2: splitting the heads
#
# Multi-head attention runs $H$ attentions side by side on slices of the $C$ features: head
# $h$ gets features $hD, \dots, (h+1)D - 1$ of every token, with $D = C / H$ (the same
# slices of $W^Q$, $W^K$, $W^V$ as torch's `nn.MultiheadAttention`). Reshape the projected
# queries `x` of shape `(B, T, C)` to `(B, H, T, D)` for any number of heads $H$ = `n_head`
# that divides $C$, so that each head's `(T, D)` matrix can go through one batched
# `q @ k.transpose(-2, -1)`.


# %%
# Exercise 7.2: splitting the heads
def split_heads(x, n_head):
    """(B, T, C) -> (B, H, T, D) with D = C // n_head; head h holds features h*D .. (h+1)*D - 1."""
    ### BEGIN SOLUTION
    B, T, C = x.shape
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, T, H, D) -> (B, H, T, D)
    ### END SOLUTION


# %%
result = checks.check_split_heads(split_heads)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Let's build GPT
#
# Now you write the transformer itself, as `nn.Module` classes, in the order of Karpathy's
# "Let's build GPT": one head of self-attention, several heads, the feed-forward layer, the
# block, the whole GPT; then you train it on the characters of the State of the Union
# addresses (lesson 01's corpus) and measure what each piece buys. Each check builds your class
# with sizes drawn afresh, sets its parameters to random values, runs `forward` and compares
# with the lecture's formulas computed from **your** parameters; so name the parts as asked.
# Shapes: `B` batch, `T` time, `C = d_model`. You may use `nn.Linear`, `nn.Embedding`,
# `nn.LayerNorm`, `torch.softmax`, `torch.tril`, ...; not torch's or course_lib's ready-made
# attention, blocks or GPT (the check refuses them).

# %% [markdown]
# ## Exercise 7.3: one head of self-attention
#
# With $Q = XW^Q$, $K = XW^K$, $V = XW^V$ (each $W$ is `d_model x head_size`, i.e. $d_k$ = `head_size`):
#
# $$\mathrm{head}(X) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right) V, \qquad
#   M_{ij} = 0 \text{ if } j \le i, \; -\infty \text{ if } j > i$$
#
# (the causal mask: query $i$ sees keys $j \le i$). Write `Head(d_model, head_size, block_size)`
# with three projections named `self.key`, `self.query`, `self.value`, each
# `nn.Linear(d_model, head_size, bias=False)`. `forward(x)` takes `x` of shape `(B, T, d_model)`
# with any `T <= block_size` and returns `(B, T, head_size)`.

# %%
# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        ### BEGIN SOLUTION
        self.key = nn.Linear(d_model, head_size, bias=False)  # W^K
        self.query = nn.Linear(d_model, head_size, bias=False)  # W^Q
        self.value = nn.Linear(d_model, head_size, bias=False)  # W^V
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, d_k) each
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)
        scores = scores.masked_fill(~self.tril[:T, :T], float("-inf"))  # query i sees keys j <= i
        weights = torch.softmax(scores, dim=-1)  # each row sums to 1
        return weights @ v  # (B, T, d_k)
        ### END SOLUTION


# %%
result = checks.check_head(Head)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.4: multi-head attention
#
# $H$ heads side by side, each with $d_k = d_{model} / H$, concatenated and projected:
# $\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\, W^O + b^O$.
# Write `MultiHeadAttention(d_model, n_heads, block_size)` with your heads in
# `self.heads` (an `nn.ModuleList` of `n_heads` separate `Head(d_model, d_model // n_heads, block_size)`)
# and $W^O$ in `self.proj = nn.Linear(d_model, d_model)`. `forward(x)`: `(B, T, d_model)` to
# `(B, T, d_model)`.


# %%
# Exercise 7.4: multi-head attention
class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        ### BEGIN SOLUTION
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)  # W^O
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        out = torch.cat([head(x) for head in self.heads], dim=-1)  # (B, T, d_model): heads side by side
        return self.proj(out)
        ### END SOLUTION


# %%
result = checks.check_multi_head(MultiHeadAttention)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# **Your 7.2 and 7.4 compute the same heads.** Your `MultiHeadAttention` holds $H$ separate
# `Head`s, each with its own $d_{model} \times D$ projections. Stack the heads' $W^Q$ into one
# $d_{model} \times d_{model}$ matrix (head $h$ in columns $hD, \dots, (h+1)D - 1$), project once, and
# your `split_heads` hands head $h$ exactly its own queries: this is how torch's
# `nn.MultiheadAttention` and course_lib store the heads, so that one batched matrix product serves
# all of them. The cell checks it with your code (the same holds for the keys and values).

# %%
try:
    mha = MultiHeadAttention(24, 4, 8)
    x = torch.randn(2, 8, 24)
    W_Q = torch.cat([head.query.weight for head in mha.heads])  # (d_model, d_model): (out, in), the heads stacked
    with torch.no_grad():
        together = split_heads(x @ W_Q.T, 4)  # (B, H, T, D): one projection, then split
        separately = torch.stack([head.query(x) for head in mha.heads], dim=1)  # each head on its own
    same = torch.allclose(together, separately, atol=1e-6)  # float32 rounding: one product against H
    print("split_heads of the stacked projection = each head's own queries:", same)
except (NotImplementedError, AttributeError, TypeError) as err:
    print(f"(finish exercises 7.2 to 7.4 first: {type(err).__name__})")

# %% [markdown]
# ## Exercise 7.5: the feed-forward layer
#
# Attention only takes weighted averages of the values; the feed-forward layer adds the
# non-linearity (CS224N, UKP Lab), at every position separately:
# $\mathrm{FFN}(x) = W_2\,\mathrm{ReLU}(W_1 x + b_1) + b_2$ with $d_{ff} = 4\,d_{model}$.
# Write `FeedForward(d_model)` (name its layers as you like; both with their biases; no dropout,
# which Karpathy's video adds: the check compares with this formula).


# %%
# Exercise 7.5: the feed-forward layer
class FeedForward(nn.Module):
    """FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 at every position, d_ff = 4 d_model."""

    def __init__(self, d_model):
        super().__init__()
        ### BEGIN SOLUTION
        self.net = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),  # W_1, b_1
            nn.ReLU(),
            nn.Linear(4 * d_model, d_model),  # W_2, b_2
        )
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.net(x)
        ### END SOLUTION


# %%
result = checks.check_feed_forward(FeedForward)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.6: the transformer block
#
# A pre-norm block (GPT-2 and later; lesson 07 shows post-norm too) normalises the input of each
# sub-layer and adds the sub-layer's output to the residual stream:
#
# $$x \leftarrow x + \mathrm{MultiHead}(\mathrm{LN}_1(x)), \qquad x \leftarrow x + \mathrm{FFN}(\mathrm{LN}_2(x))$$
#
# Write `Block(d_model, n_heads, block_size)` with `self.sa` (your `MultiHeadAttention`),
# `self.ffwd` (your `FeedForward`), `self.ln1` and `self.ln2` (`nn.LayerNorm(d_model)`). Return a
# new tensor: the caller's `x` stays as it was (`x = x + ...`, not `x += ...`).


# %%
# Exercise 7.6: the transformer block
class Block(nn.Module):
    """Pre-norm transformer block: x + SA(LN_1(x)), then x + FFN(LN_2(x))."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        ### BEGIN SOLUTION
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        x = x + self.sa(self.ln1(x))  # communication: tokens read each other
        x = x + self.ffwd(self.ln2(x))  # computation: each token on its own
        return x
        ### END SOLUTION


# %%
result = checks.check_block(Block)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.7: the GPT
#
# Token embeddings plus learned position embeddings, `n_layers` blocks, a final layer norm and a
# linear layer to the logits of the next token:
#
# * `self.token_embedding = nn.Embedding(vocab_size, d_model)`,
#   `self.position_embedding = nn.Embedding(block_size, d_model)`;
# * `self.blocks`: `n_layers` of your `Block` in an `nn.Sequential` (or `nn.ModuleList`);
# * `self.ln_f = nn.LayerNorm(d_model)`, `self.lm_head = nn.Linear(d_model, vocab_size)` (its bias is
#   your choice: nanoGPT's has none, `bias=False`; either passes).
#
# `forward(idx, targets=None)` takes token ids `idx` of shape `(B, T)`, `T <= block_size`, and
# returns `(logits, loss)`: logits `(B, T, vocab_size)`, and the mean cross-entropy of the
# logits against `targets` (`(B, T)`: the next token at every position, already shifted by
# the batcher), or `None` without targets. `F.cross_entropy` wants `(N, V)` logits and `(N,)` targets.

# %%
# Exercise 7.7: the GPT
import torch.nn.functional as F


class GPT(nn.Module):
    """A decoder-only transformer: embeddings + positions, n_layers blocks, final LN, logits."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        ### BEGIN SOLUTION
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        ### END SOLUTION

    def forward(self, idx, targets=None):
        ### BEGIN SOLUTION
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))  # (B, T, C)
        logits = self.lm_head(self.ln_f(self.blocks(x)))  # (B, T, V)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        ### END SOLUTION


# %%
result = checks.check_gpt(GPT)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 7.8: the build-up, trained live with your modules (experiment)
#
# Your classes, one idea added at a time, each model trained with the same budget (same seed,
# same batches, AdamW) on the training characters and scored on the first validation
# characters. Every step after the bigram has the same depth (`N_LAYERS` layers), so each step
# adds exactly one idea:
#
# 1. **bigram**: the logits of the next character are a row of a $V \times V$ table;
# 2. **+ self-attention**: embeddings and positions, then `N_LAYERS` layers of your `Head` ($d_k = d_{model}$);
# 3. **+ multi-head**: your `MultiHeadAttention`, 4 heads;
# 4. **+ feed-forward**: your `FeedForward` after each attention layer;
# 5. **+ residual**: $x + \mathrm{SA}(x)$, $x + \mathrm{FFN}(x)$;
# 6. **+ layer norm**: your `GPT` (pre-norm blocks and a final layer norm).
#
# The budget is small so that the notebook runs in about a minute: the numbers are **this
# run's** (one seed); the table after it is the course's reference, over 3 seeds of a longer run
# (both budgets are printed with it).

# %%
from course_lib.corpora import load_sotu
from course_lib.lm import char_vocab, encode_stream, evaluate_lm, lm_batches
from course_lib.notebook import viz
from course_lib.train import fit

corpus = load_sotu(level="char")
vocab = char_vocab(corpus.train)
train_stream = encode_stream(corpus.train, vocab)
val_stream = encode_stream(corpus.val, vocab)[:5001]  # the first 5,000 predicted validation characters
V, D_MODEL, BLOCK, N_LAYERS, STEPS, BATCH = len(vocab), 32, 32, 2, 150, 16


class Bigram(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.table(idx)  # (B, T, V)
        return logits, None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())


class Residual(nn.Module):
    """Your attention and feed-forward with residual connections, no layer norm."""

    def __init__(self):
        super().__init__()
        self.sa, self.ffwd = MultiHeadAttention(D_MODEL, 4, BLOCK), FeedForward(D_MODEL)

    def forward(self, x):
        x = x + self.sa(x)
        return x + self.ffwd(x)


class Stack(nn.Module):
    """Embeddings + positions, N_LAYERS layers from make_layer(), the logits (no final norm)."""

    def __init__(self, make_layer):
        super().__init__()
        self.token_embedding, self.position_embedding = nn.Embedding(V, D_MODEL), nn.Embedding(BLOCK, D_MODEL)
        self.layers = nn.Sequential(*(make_layer() for _ in range(N_LAYERS)))
        self.lm_head = nn.Linear(D_MODEL, V)

    def forward(self, idx, targets=None):
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(idx.shape[1], device=idx.device))
        logits = self.lm_head(self.layers(x))
        return logits, None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())


build_up = {
    "bigram": lambda: Bigram(V),
    "+ self-attention": lambda: Stack(lambda: Head(D_MODEL, D_MODEL, BLOCK)),
    "+ multi-head": lambda: Stack(lambda: MultiHeadAttention(D_MODEL, 4, BLOCK)),
    "+ feed-forward": lambda: Stack(lambda: nn.Sequential(MultiHeadAttention(D_MODEL, 4, BLOCK), FeedForward(D_MODEL))),
    "+ residual": lambda: Stack(Residual),
    "+ layer norm": lambda: GPT(V, D_MODEL, 4, N_LAYERS, BLOCK),
}
SEED = 0  # question 3 of exercise 7.8: set 1, then run this cell and the table's cell again
live = {}
try:
    for name, make in build_up.items():
        torch.manual_seed(SEED)
        model = make()
        history = fit(
            model,
            lambda m, batch: m(*batch)[1],
            torch.optim.AdamW(model.parameters(), lr=3e-3),
            lm_batches(train_stream, BLOCK, BATCH, STEPS, generator=torch.Generator().manual_seed(SEED)),
            desc=name,
        )
        live[name] = {"model": model, "history": history, "val": evaluate_lm(model, val_stream, block_size=BLOCK)}
except NotImplementedError:
    print("(finish exercises 7.3 to 7.7 to train the build-up)")

# %%
import json

from course_lib import checkpoint

reference = json.loads((checkpoint.WEIGHTS_DIR / "gpt_buildup_sotu_char.json").read_text())
ref_steps = list(reference["steps"].values())
rows = []
for k, name in enumerate(build_up):
    r = ref_steps[k]["val_loss"]
    ours = live[name]["val"] if name in live else float("nan")
    rows.append([name, ours, r["mean"], r["sd"]])
print(f"this run: {STEPS} steps of {BATCH} x {BLOCK} characters, d_model = {D_MODEL}; reference: "
      f"{reference['budget']['steps']} steps of {reference['budget']['batch_size']} x {reference['budget']['block_size']}, "
      f"d_model = {reference['budget']['d_model']}, seeds {reference['budget']['seeds']}")  # fmt: skip
ref_chars = reference["budget"]["steps"] * reference["budget"]["batch_size"] * reference["budget"]["block_size"]
print(
    f"the reference saw {ref_chars / (STEPS * BATCH * BLOCK):.1f}x as many training characters per step of the build-up"
)
print(viz.table(rows, header=["step", f"this run (seed {SEED}): val loss", "reference: mean", "reference: sd"], floatfmt="{:.3f}"))
if live:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for k, (name, run) in enumerate(live.items()):
        ax.plot(
            run["history"].step, run["history"].smoothed_loss(10), label=name, linestyle=["-", "--", ":", "-."][k % 4]
        )
    ax.set(xlabel="training step", ylabel="training loss (nats/char, smoothed)", ylim=(0, None))
    ax.legend(title="build-up step")
    viz.show(
        "Training loss of the six build-up steps trained live with your modules: "
        + ", ".join(f"{n} ends at {live[n]['val']:.2f} on validation" for n in live)
    )

# %% [markdown]
# **Read the table** and answer below, from the numbers printed above (the lesson 07 notebook
# discusses each):
#
# 1. Which step gives the largest drop in this run, and in the reference? Does the short run
#    rank the steps the same way as the longer one?
# 2. In the reference, adding the feed-forward layer **without** residual connections: does it
#    help or hurt, by more than the spread over seeds? Lesson 07 draws the unigram line (a model
#    that ignores the context): where do the steps without residual connections end, against
#    it? Lesson 07 gives the reason residual connections help (the identity path, in its pre-norm
#    paragraph): which rows of the two tables show that effect, and by how much, against the spread?
# 3. Copy this run's column, then set `SEED = 1` at the top of the build-up cell and run it and
#    the table's cell again (about a minute; the table shows the latest run only): which
#    differences between steps are larger than the change from one seed to the next?
#
# ### BEGIN SOLUTION
# A good answer quotes the two tables rather than expectations. (1) Take the largest difference
# between consecutive rows of each table; a short run leaves the bigram's V x V table far from
# trained, which can make its gap to the next step larger than in the reference. (2) In the
# reference, + feed-forward ends higher than multi-head, but within about two sds of it (multi-head's
# three seeds spread widely), so it is not a finding; and one head, multi-head and + feed-forward all
# end at or near the unigram line: in this budget they learned little more than how frequent each
# character is. The identity path shows where + residual is the first step clearly below the
# unigram line: quote its drop from + feed-forward in both tables and compare it with the sds. (3) Only the differences larger than the seed-to-seed change of the
# same step are worth stating.
# ### END SOLUTION
#
# Your GPT, trained above, writes text. Sampling needs one more piece: exercise 7.9.

# %% [markdown]
# ## Exercise 7.9: top-k sampling
#
# To generate text we sample the next token from $p = \mathrm{softmax}(\text{logits} / T)$
# (temperature $T$). Top-$k$ sampling first removes every token but the $k$ most likely, so
# the long tail of unlikely tokens can never be drawn. Return the distribution to sample from:
# a tensor of shape `(V,)` that is zero outside the $k$ largest logits and sums to 1. A logit
# equal to the $k$-th largest is kept too (keep every logit $\ge$ the $k$-th largest, as
# nanoGPT does), so ties can leave more than $k$ tokens. Leave `logits` unchanged.
# (`torch.multinomial(probs, 1)` would then draw from it.)

# %%
# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """(V,) probabilities: softmax(logits / temperature) restricted to the k largest logits."""
    ### BEGIN SOLUTION
    z = logits / temperature
    kth = torch.topk(z, k).values[-1]  # the k-th largest
    z = z.masked_fill(z < kth, float("-inf"))  # exp(-inf) = 0 outside the top k
    return torch.softmax(z, dim=-1)
    ### END SOLUTION


# %%
result = checks.check_top_k_probs(top_k_probs)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your GPT writes
#
# Generation is autoregressive: read the context, sample the next character from your
# `top_k_probs` of the last position's logits, append it, repeat (the context cropped to the
# last `block_size` characters). The GPT of the build-up's last step, after its short training:


# %%
def sample(model, prompt, n_new, k=5, temperature=0.8, seed=0):
    g = torch.Generator().manual_seed(seed)
    idx = torch.tensor([vocab.encode(list(prompt))])
    model.eval()
    with torch.no_grad():
        for _ in range(n_new):
            logits, _ = model(idx[:, -BLOCK:])  # (1, T, V)
            p = top_k_probs(logits[0, -1], k, temperature)  # the next character's distribution
            idx = torch.cat([idx, torch.multinomial(p, 1, generator=g)[None]], dim=1)
    return "".join(vocab.decode(idx[0].tolist()))


try:
    print(sample(live["+ layer norm"]["model"], "the congress ", 200))
except (NotImplementedError, KeyError):
    print("(finish exercises 7.3 to 7.7 and 7.9 to sample from your GPT)")

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="07"))
