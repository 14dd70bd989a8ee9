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
# # Lesson 07: the transformer, trained on real text
#
# **Learning goals.** After this lesson you can
# 1. name the pieces of a transformer and what each is for: embeddings, positions (sinusoidal or
#    learned), multi-head self-attention with the causal mask, the feed-forward layer, residual
#    connections and layer norm (pre and post);
# 2. explain the three problems of plain self-attention and their fixes (no order: positions;
#    no non-linearity: the FFN; looking into the future: the mask), and check each in code;
# 3. read what each piece buys in a GPT built up one piece at a time (measured over 3 seeds),
#    against a model with no context;
# 4. train a decoder-only GPT on characters of real text and compare it with lesson 01's n-grams
#    on the same split;
# 5. decode from it: greedy, temperature, top-k and beam search (traced step by step), and read
#    its attention heatmaps;
# 6. show that a shift of position is a rotation of the sinusoidal vectors, and run byte-pair
#    encoding, the sub-word tokenizer of GPT, on the course's text.
#
# The exercises (`exercises/07_transformer.ipynb`) are where you **build** the GPT yourself: one
# head, multi-head attention, the feed-forward layer, the block and the GPT, trained on the same
# text. This notebook uses the course's versions (`course_lib/transformer.py`, on top of lesson
# 05/06's `course_lib/attention.py`) without printing their code, so the exercises stay yours.
# Lesson **07b** goes further: pre- vs post-norm measured, the GPT against an LSTM over seeds,
# the cost of attention, what current LLMs changed (RoPE, ALiBi, RMSNorm, SwiGLU), encoders
# (BERT), encoder-decoders (T5) and cross-attention, pretraining and contextual vectors, and what
# the lectures name but this course leaves out.

# %%
import json
import math
import re
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import course_lib
from course_lib import buildup, checkpoint
from course_lib.attention import MultiHeadAttention, causal_mask
from course_lib.corpora import load_sotu
from course_lib.lm import beam_search, char_vocab, encode_stream, evaluate_lm, generate, lm_batches
from course_lib.ngram import NGramLM
from course_lib.notebook import viz
from course_lib.rnn import RNNLanguageModel
from course_lib.train import evaluating, fit
from course_lib.transformer import GPT, GPTConfig, LayerNorm, SelfAttentionBlock, sinusoidal_positions

device = course_lib.setup(seed=0, threads=1)

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
# ## 2. Order: self-attention without the mask cannot see it
#
# Self-attention computes weighted averages, the same for every order of the inputs (without
# the causal mask; the cell and the note after it show the masked case). Fitzgibbon
# and Galerne call this *permutation-invariant*, the UKP Lab *position-invariant* ("[this, movie,
# is, great] is the same as [is, this, movie, great]"). Precisely, two words apply:
#
# * a layer's **outputs**, one per token, are *permutation-equivariant*: shuffle the input
#   tokens and the outputs come out shuffled the same way, each token's vector unchanged;
# * anything that pools over the tokens (their mean, as a sentence classifier might use) is
#   *permutation-invariant*: it does not change at all.
#
# Either way the order is lost: "dog bites man" and "man bites dog" give every word the same
# vector. We say equivariant for the outputs, as the cell checks on an unmasked block (and
# then, with the same weights, on the causal mask of a decoder):

# %%
block = SelfAttentionBlock(16, 4, causal=False).eval()  # no mask: every token sees every token
tokens = torch.randn(1, 6, 16)
perm = torch.tensor([3, 0, 5, 1, 4, 2])
with torch.no_grad():
    out, out_shuffled = block(tokens), block(tokens[:, perm])
    equivariant = torch.allclose(out_shuffled, out[:, perm], atol=1e-5)  # outputs shuffled alike
    invariant = torch.allclose(out_shuffled.mean(1), out.mean(1), atol=1e-5)  # their mean: unchanged
    pe = sinusoidal_positions(6, 16)
    with_positions = torch.allclose(block(tokens[:, perm] + pe), block(tokens + pe)[:, perm], atol=1e-5)
    block.causal = True  # the same weights with a decoder's causal mask, and no positions
    masked = torch.allclose(block(tokens[:, perm]), block(tokens)[:, perm], atol=1e-5)
    block.causal = False
print("outputs permutation-equivariant:", equivariant, "| mean over tokens permutation-invariant:", invariant)
print("with positions added, still equivariant:", with_positions)
print("with the causal mask (no positions), still equivariant:", masked)
assert equivariant and invariant and not with_positions and not masked

# %% [markdown]
# So the lectures' point is about attention without the mask. The causal mask of a decoder
# (section 3) already breaks the symmetry: the token at position 0 sees only itself, the one at
# position 5 sees six tokens, so a shuffle changes what each one averages over. Haviv et al.
# (2022) trained causal language models with no position vectors at all and found that they
# still learn positional information. Position vectors give the order to every model, masked
# or not, and every GPT in this course adds them.

# %% [markdown]
# The fix is to add a position vector to each token embedding. Two of the lectures write the
# sinusoidal vector out, each its own way, and the paper a third (CS224N's notes name a "sine
# position representation" and the UKP Lab's "position-encoding vectors", neither with a formula):
#
# * Fitzgibbon: $x'_t = x_t + \sin(t \cdot \mathrm{range}(D))$, channel $d$ is $\sin(t\,d)$;
# * Galerne: $p_t = \big(\cos(t / 10000^{2i/k}), \sin(t / 10000^{2i/k})\big)_{i \in [1, k/2]}$, cos first;
# * Vaswani et al. (2017), which this course uses (`sinusoidal_positions`), sin first, pairs interleaved:
#
# $$PE_{pos, 2i} = \sin\!\left(pos / 10000^{2i/d}\right), \qquad PE_{pos, 2i+1} = \cos\!\left(pos / 10000^{2i/d}\right), \quad i = 0, \dots, d/2 - 1$$
#
# Galerne's is Vaswani's with each (sin, cos) pair swapped and $i$ counted from 1 (computed
# below): the same clocks but one at each end (Vaswani's fastest, $i = 0$, and Galerne's slowest,
# $i = k/2$, have no partner), so either works in a model, but a check that compares numbers
# (exercise 7.1) needs one convention, and we pick Vaswani's. GPT learns its position vectors
# instead (`positions="learned"`, an `nn.Embedding` of the positions); both are in `GPTConfig`.

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
print(
    "Galerne's channels 0-61 = Vaswani's channels 2-63, each (sin, cos) pair swapped "
    "(Galerne's last pair, i = k/2, and Vaswani's first, i = 0, have no partner)"
)
print(f"Fitzgibbon's channel 0 is sin(0 * t) = 0 at every position: max |value| {fitzgibbon[:, 0].abs().max():.0f}")
fig, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True, layout="constrained")
for ax, (name, enc) in zip(axes, {"Vaswani (ours)": pe, "Galerne": galerne, "Fitzgibbon": fitzgibbon}.items()):
    image = ax.imshow(enc.T, aspect="auto", cmap="cividis", vmin=-1, vmax=1)  # one colour scale for all three
    ax.set(xlabel="position t", title=name)
axes[0].set_ylabel("channel")
fig.colorbar(image, ax=axes, label="value (one scale, -1 to 1, for all three)")
fig.suptitle(
    "Three ways to write sinusoidal positions: Vaswani's and Galerne's channel pairs are clocks, each with its own period"
)
viz.show(
    "Three heatmaps, channel (rows) against position t (columns), one colour scale from -1 to 1: Vaswani's and "
    "Galerne's show clocks slowing from the top channels down; Fitzgibbon's sin(t d) has no such order"
)

# %% [markdown]
# **Why sines and cosines: a shift is a rotation.** Fitzgibbon: "when later projected via
# $\mathbf{Q}$ and $\mathbf{K}$, the dot product will implicitly capture relative position
# information". Vaswani et al. chose this form because they "hypothesized it would allow the
# model to easily learn to attend by relative positions, since for any fixed offset $k$,
# $PE_{pos+k}$ can be represented as a linear function of $PE_{pos}$". Each (sin, cos) pair of frequency
# $\omega_i = 1/10000^{2i/d}$ is a point on a circle at angle $\omega_i t$, and moving $k$ positions
# turns it by $\omega_i k$, by the angle-sum formulas:
#
# $$\begin{pmatrix} \sin \omega_i (t+k) \\ \cos \omega_i (t+k) \end{pmatrix} =
#   \begin{pmatrix} \cos \omega_i k & \sin \omega_i k \\ -\sin \omega_i k & \cos \omega_i k \end{pmatrix}
#   \begin{pmatrix} \sin \omega_i t \\ \cos \omega_i t \end{pmatrix}$$
#
# So $PE_{t+k} = R_k\,PE_t$ with one block-diagonal rotation $R_k$ that depends on $k$ only, not
# on $t$, and $PE_t \cdot PE_{t+k} = \sum_i \cos \omega_i k$ depends only on the offset. The cell
# checks both at every position. Lesson 07b's RoPE applies such rotations to the queries and keys
# themselves, inside every attention layer, so that each score sees the offset.

# %%
omega = 1 / 10000 ** (torch.arange(0, d_pe, 2, dtype=torch.float64) / d_pe)  # one frequency per pair
pe64 = sinusoidal_positions(n_pos, d_pe, dtype=torch.float64)  # double precision: the check is exact up to rounding


def shift_rotation(k):
    """R_k: block-diagonal, one 2x2 rotation by omega_i k per (sin, cos) pair."""
    R = torch.zeros(d_pe, d_pe, dtype=torch.float64)
    c, s = torch.cos(omega * k), torch.sin(omega * k)
    R[0::2, 0::2], R[0::2, 1::2] = torch.diag(c), torch.diag(s)
    R[1::2, 0::2], R[1::2, 1::2] = torch.diag(-s), torch.diag(c)
    return R


for k in (1, 5, 40):
    R = shift_rotation(k)
    rotated = pe64[:-k] @ R.T  # R_k PE_t for every t at once
    dots = (pe64[:-k] * pe64[k:]).sum(-1)  # PE_t . PE_{t+k} for every t
    print(
        f"k = {k:>2}: largest |R_k PE_t - PE_(t+k)| over t = 0..{n_pos - k - 1}: "
        f"{(rotated - pe64[k:]).abs().max():.1e}; "
        f"PE_t . PE_(t+k) = {dots[0]:.4f} at every t (spread {dots.max() - dots.min():.1e})"
    )
    assert torch.allclose(rotated, pe64[k:], atol=1e-9) and torch.allclose(
        R @ R.T, torch.eye(d_pe, dtype=torch.float64)
    )
    assert torch.allclose(dots, torch.cos(omega * k).sum().expand_as(dots), atol=1e-9)

# %% [markdown]
# **Learned positions have no vector past the longest training context** (CS224N: "we don't know
# anything about sequences longer than $n$"). A learned table has one row per position
# $0, \dots, n-1$, and asking it for row $n$ is an error of the table itself, while the formula
# gives a vector for any position. Whether a model *uses* those new vectors well is another
# question: Press et al. (2022, "Train short, test long") measured that sinusoidal transformers
# also get worse soon past their training length; their ALiBi (lesson 07b) was designed to
# extrapolate. (Our `GPT` refuses any input longer than its `block_size`, whichever positions it
# uses, to stay within what it was trained on.)

# %%
learned_gpt = GPT(GPTConfig(vocab_size=20, block_size=8, n_layers=1, n_heads=2, d_model=16))
print("learned position table:", tuple(learned_gpt.wpe.weight.shape), "(one row per position 0 .. 7)")
try:
    learned_gpt.wpe(torch.tensor([8]))  # the table itself, asked for position 8
    raise AssertionError("a table of 8 rows must have no row 8")
except IndexError as err:
    print("row 8 of the learned table:", type(err).__name__, "-", str(err)[:60])
print("the sinusoidal formula at positions 8 and 1000:", sinusoidal_positions(1001, 16)[[8, 1000], :4].numpy().round(3))

# %% [markdown]
# ## 3. Self-attention, one head and many
#
# One head: $\mathrm{Attention}(Q, K, V) = \mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$ with
# $Q = XW^Q$, $K = XW^K$, $V = XW^V$. The scores are divided by $\sqrt{d_k}$ "to avoid the dot
# product to become too large for larger $d_k$" (UKP Lab; CS224N: "to stop the scores from being
# too large"). Why $\sqrt{d_k}$ exactly is Vaswani et al.'s (2017): a dot product of $d_k$
# independent unit-variance terms has variance $d_k$ (their footnote 4), and they "suspect" that
# such large dot products push the softmax into regions of extremely small gradients (their
# section 3.2.1). (Galerne divides by $\sqrt{k}$ too; Fitzgibbon's scores are not divided, and
# his values are the hidden states themselves, with no $W^V$: lesson 05 shows his form.)
# Multi-head attention (CS224N, "multi-head with matrices") runs $H$ heads
# of $d_k = C/H$ features side by side, head $h$ owning features $h d_k, \dots, (h+1)d_k - 1$, and
# concatenates them before $W^O$. You write both in exercises 7.2 to 7.4; here the course's
# `MultiHeadAttention` is compared with torch's `nn.MultiheadAttention` on the same weights, and
# the variance argument is measured:

# %%
B, T, C, H = 2, 5, 8, 2
torch_mha = nn.MultiheadAttention(C, H, batch_first=True)
ours = MultiHeadAttention.from_torch(torch_mha)
X = torch.randn(B, T, C)
torch_mask = ~causal_mask(T)  # nn.MultiheadAttention: True = NOT allowed
out_ours, alpha = ours(X, X, X, attn_mask=torch_mask, average_attn_weights=False)
assert torch.allclose(out_ours, torch_mha(X, X, X, attn_mask=torch_mask)[0], atol=1e-6)
print("course_lib's MultiHeadAttention = torch's nn.MultiheadAttention; masked weights of head 0:")
print(alpha[0, 0].detach().numpy().round(2))
assert torch.allclose(alpha.sum(-1), torch.ones(B, H, T)) and (alpha.triu(1) == 0).all()  # rows sum to 1, no future

g = torch.Generator().manual_seed(0)
for d_k in (4, 64, 1024):
    q, k = torch.randn(10_000, d_k, generator=g), torch.randn(10_000, d_k, generator=g)
    dots = (q * k).sum(-1)
    print(f"d_k = {d_k:>4}: variance of q.k {dots.var():8.1f}, of q.k / sqrt(d_k) {(dots / math.sqrt(d_k)).var():.2f}")

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
# **Why the feed-forward layer** (UKP Lab: "there are no elementwise nonlinearities in
# self-attention"; CS224N's problem 2, non-linearities). Hold the attention weights fixed: a layer's output is $A\,X W^V$, linear in
# the input $X$. Two such layers give $A_2 (A_1 X W_1) W_2 = (A_2 A_1)\,X\,(W_1 W_2)$: one layer
# again, with the weights $A_2 A_1$ and the value matrix $W_1 W_2$. Stacking only re-averages. The
# cell checks the identity, and that an FFN is not linear (the course's, with GELU, below; you write
# the lecture's, with ReLU, in exercise 7.5): a linear map (or a linear map plus a bias) sends the
# average of two inputs to the average of their outputs, the FFN does not. (Doubling the input
# would not show it for the lecture's FFN: $\mathrm{ReLU}(2z) = 2\,\mathrm{ReLU}(z)$, so without its
# biases it does double its output, and with them any bias alone breaks the doubling.)

# %%
g = torch.Generator().manual_seed(0)
X = torch.randn(6, 8, generator=g)  # 6 tokens, 8 features
A1 = torch.softmax(torch.randn(6, 6, generator=g), -1)  # attention weights of layer 1 (rows sum to 1)
A2 = torch.softmax(torch.randn(6, 6, generator=g), -1)
W1, W2 = torch.randn(8, 8, generator=g), torch.randn(8, 8, generator=g)  # the value matrices
two_layers = A2 @ (A1 @ X @ W1) @ W2
one_layer = (A2 @ A1) @ X @ (W1 @ W2)
print(
    f"two attention layers vs one with A2 A1 and W1 W2: largest difference {(two_layers - one_layer).abs().max():.1e}"
)
assert torch.allclose(two_layers, one_layer, atol=1e-4)
ffn = SelfAttentionBlock(d_model=8, n_heads=2).feed_forward  # the course's FFN: W_2 GELU(W_1 x + b_1) + b_2
Y = torch.randn(6, 8, generator=g)  # a second input
with torch.no_grad():
    attn_gap = (A1 @ ((X + Y) / 2) @ W1 - (A1 @ X @ W1 + A1 @ Y @ W1) / 2).abs().max().item()
    ffn_gap = (ffn((X + Y) / 2) - (ffn(X) + ffn(Y)) / 2).abs().max().item()
print(f"f((X + Y) / 2) - (f(X) + f(Y)) / 2: attention with fixed weights {attn_gap:.1e}; the FFN {ffn_gap:.2f}")
assert attn_gap < 1e-4 < ffn_gap

# %% [markdown]
# (The attention weights themselves depend on $X$ through the softmax, so attention is not
# linear in $X$ overall; but each output is a weighted average of value vectors, and no weighting
# computes, say, $\max(0, x)$ feature by feature. The FFN does, at each position separately.)
#
# The UKP lecture writes, for a token's row vector $x_i$,
# $\mathrm{FFN}(x_i) = \mathrm{ReLU}(x_i W_1 + b_1)\,W_2 + b_2$ with $W_1 \in \mathbb{R}^{d \times d_{ff}}$ and
# $d_{ff} = 4\,d$ (2048 = 4 x 512 in the paper; torch's `nn.Linear` stores $W_1^\top$, the (out, in)
# shape printed below). **The course's GPT uses GELU instead of
# ReLU**, as GPT-2 and BERT do: $\mathrm{GELU}(z) = z\,\Phi(z)$ is a smooth ReLU that lets small
# negative values through; exercise 7.5 follows the lecture (ReLU).
# **Layer norm** normalises each token over its $C$ features,
# $\mathrm{LN}(x) = \gamma \odot (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$, and
# **residual connections** add each sub-layer's output to its input. Two orders:
#
# * post-norm (the 2017 paper, and the UKP Lab's "Add & Norm"): $x = \mathrm{LN}(x + \mathrm{Sublayer}(x))$;
# * pre-norm (GPT-2 and later): $x = x + \mathrm{Sublayer}(\mathrm{LN}(x))$. Fitzgibbon's layered model
#   has this order too: it normalises the hidden state before the attention, and the layer adds
#   its output to an unnormalised $x_t^{l-1}$.

# %%
ffn_block = SelfAttentionBlock(d_model=64, n_heads=4)  # d_ff defaults to 4 * d_model
print("W_1:", tuple(ffn_block.linear1.weight.shape), " W_2:", tuple(ffn_block.linear2.weight.shape), "(out, in)")
assert ffn_block.linear1.out_features == 4 * 64 == ffn_block.linear2.in_features  # d_ff = 4 d_model
ffn_params = sum(p.numel() for m in (ffn_block.linear1, ffn_block.linear2) for p in m.parameters())
print(f"FFN parameters: {ffn_params:,} of the block's {sum(p.numel() for p in ffn_block.parameters()):,}")
z = torch.linspace(-3, 3, 7)
print(
    viz.table(
        [[f"{v:.1f}", F.relu(v).item(), F.gelu(v).item()] for v in z], header=["z", "ReLU", "GELU"], floatfmt="{:.3f}"
    )
)
assert F.gelu(torch.tensor(-1.0)) < 0 == F.relu(torch.tensor(-1.0))  # GELU lets a little through below 0
ln, torch_ln = LayerNorm(16), nn.LayerNorm(16)
h = 3 * torch.randn(4, 7, 16) + 2
assert torch.allclose(ln(h), torch_ln(h), atol=1e-5)
print(
    f"LayerNorm = torch's; per token: mean {ln(h).mean(-1).abs().max().item():.1e}, std {ln(h).std(-1, unbiased=False).mean().item():.3f}"
)

# %% [markdown]
# Why pre-norm is said to train more easily: in a pre-norm block the residual path
# $x + \dots$ is an identity from the input to the output, so gradients reach the lower layers
# undamped; in post-norm the gradient on its way to a lower layer passes through every layer norm
# between that layer and the output. Xiong et al. (2020) show that post-norm's gradients near the
# output are large at initialisation, so post-norm needs a learning-rate warm-up, without which
# their models ended far behind. (This comparison is not in the lectures; Galerne's LLM table only
# shows that most recent LLMs use pre-norm.)
# `scripts/train_buildup.py` trained both orders from 3 seeds, without warm-up, in a shallow and a
# deep setting, and (lesson 07b reads these) deep without gradient clipping and twice as deep with
# and without it; `buildup.findings_table` reads its results file and prints the table:

# %%
norm, norm_table = buildup.findings_table("norm")  # the record as the file holds it, and its table
print(norm_table)
print(
    f"(stuck or diverged: a final training loss not finite or above the unigram's loss on the training text, "
    f"{norm['unigram_loss']:.3f} nats/char)"
)


def compare(name_a, a, name_b, b):
    """One sentence on two measured settings (dicts of mean and sd over seeds): which is lower, and
    whether the gap is larger than twice the larger sd (else: within the spread of the seeds)."""
    gap = b["mean"] - a["mean"]
    lower, higher = (name_a, name_b) if gap > 0 else (name_b, name_a)
    clear = abs(gap) > 2 * max(a["sd"], b["sd"])
    return f"{lower} is lower than {higher} by {abs(gap):.3f} nats/char " + (
        "(more than twice the larger sd over seeds)" if clear else "(within the spread of the seeds: no clear winner)"
    )


for setting, v in norm["settings"].items():
    print(
        f"{setting}: "
        + compare("pre-norm", v["runs"]["pre-norm"]["val_loss"], "post-norm", v["runs"]["post-norm"]["val_loss"])
    )
post_ahead = [s for s, v in norm["settings"].items()
              if v["runs"]["post-norm"]["val_loss"]["mean"] < v["runs"]["pre-norm"]["val_loss"]["mean"]]  # fmt: skip
print(f"post-norm has the lower mean in {len(post_ahead)} of {len(norm['settings'])} settings")

# %% [markdown]
# The sentences above are computed from the table, over the seeds, and they go against the
# argument: in these runs post-norm ends lower in every setting, clearly so (more than twice the
# larger sd) at 4 layers with and without clipping and at 8 layers with it. These are small models (the budget line above) trained for a couple
# of hundred steps on a CPU, far from the translation models in which Xiong et al. saw post-norm
# without warm-up fall behind; lesson 07b plots the seeds and reads what the extra settings test.

# %% [markdown]
# ## 5. The GPT, built up one piece at a time
#
# Karpathy's "Let's build GPT" adds one piece at a time and measures the loss after each; you do
# it with your own modules in the exercises. The steps (`course_lib.buildup.STEPS`), each keeping
# what the step before had, and every step after the bigram at the same depth
# (`buildup.N_LAYERS` layers), so that each step adds one idea and no step changes the depth:
#
# 1. **bigram**: the next character's logits are a row of a $V \times V$ table (the current
#    character is its only context);
# 2. **one head**: token + position embeddings, layers of one head of causal self-attention
#    ($d_k = d_{model}$), a linear layer to the logits;
# 3. **multi-head**: 4 heads of $d_k = d_{model}/4$, concatenated, then $W^O$;
# 4. **+ feed-forward**: the FFN after each attention ($d_{ff} = 4\,d_{model}$);
# 5. **+ residual**: $x + \mathrm{SA}(x)$, $x + \mathrm{FFN}(x)$;
# 6. **+ LayerNorm**: pre-norm, $x + \mathrm{SA}(\mathrm{LN}(x))$, and a final LN: this is `GPT`.
#
# The last step *is* the course's `GPT`: copied into a `GPT` (`buildup.to_gpt`), it gives the same logits.

# %%
torch.manual_seed(0)
last_step = buildup.build_step("+ LayerNorm", 30, block_size=32, d_model=64)
with torch.no_grad():
    for p in last_step.parameters():
        p.add_(0.3 * torch.randn_like(p))  # move away from the initialisation, so the check is not trivial
as_gpt = buildup.to_gpt(last_step)
ids = torch.randint(0, 30, (3, 32))
with torch.no_grad():
    gap = (last_step(ids)[0] - as_gpt(ids)[0]).abs().max().item()
print(
    f"{as_gpt.config.n_layers} layers, same parameters ({as_gpt.num_params():,}); largest logit difference: {gap:.1e}"
)
assert gap < 1e-4 and as_gpt.num_params() == sum(p.numel() for p in last_step.parameters())

# %% [markdown]
# `scripts/train_buildup.py` trained every step with the same budget from 3 seeds (per seed:
# the same batches and initial seed for every step; AdamW, the budget printed below) and measured
# the validation loss on the first validation characters. Too long for this notebook; its table
# follows, with two baselines computed here on the same validation characters from counts of the
# training characters (one added to every count, so no character gets probability 0):
#
# * the **unigram** $P(c)$, no context at all: a model that has learned only how frequent each
#   character is sits at this line;
# * the **counted bigram** $P(c_t \mid c_{t-1})$: what a table of the previous character reaches
#   when its entries are counted rather than learned; the bigram *row* is the same table learned
#   by gradient descent in the budget.

# %%
corpus = load_sotu(level="char")
vocab = char_vocab(corpus.train)
train_stream, val_stream = encode_stream(corpus.train, vocab), encode_stream(corpus.val, vocab)
record = json.loads((checkpoint.WEIGHTS_DIR / "gpt_buildup_sotu_char.json").read_text())
budget, steps = record["budget"], record["steps"]
names = list(steps)
V_chars, scored = len(vocab), val_stream[: budget["val_tokens"] + 1]  # the characters the script scored
unigram_counts = torch.bincount(train_stream[1:], minlength=V_chars).double() + 1
bigram_counts = torch.bincount(train_stream[:-1] * V_chars + train_stream[1:], minlength=V_chars**2)
bigram_counts = bigram_counts.double().view(V_chars, V_chars) + 1  # row: previous character, column: next
unigram_loss = -(unigram_counts / unigram_counts.sum()).log()[scored[1:]].mean().item()
bigram_loss = -(bigram_counts / bigram_counts.sum(1, keepdim=True)).log()[scored[:-1], scored[1:]].mean().item()
print("budget per step:", budget)
print(f"the counted baselines: {len(train_stream) - 1:,} training symbols counted, {len(scored) - 1:,} scored")
print(
    viz.table(
        [
            ["counted unigram (no context)", "-", unigram_loss, "-", "-", "-", math.exp(unigram_loss)],
            ["counted bigram (previous char)", "-", bigram_loss, "-", "-", "-", math.exp(bigram_loss)],
        ]
        + [
            [
                n,
                r["params"],
                r["val_loss"]["mean"],
                r["val_loss"]["sd"],
                r["val_loss"]["min"],
                r["val_loss"]["max"],
                math.exp(r["val_loss"]["mean"]),
            ]
            for n, r in steps.items()
        ],  # fmt: skip
        header=["step", "parameters", "val loss: mean", "sd", "min", "max", "perplexity (of the mean)"],
        floatfmt="{:,.3f}",
    )
)
val_of = {n: steps[n]["val_loss"] for n in names}
fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
for y, n in enumerate(names):
    curve = steps[n]["curve"]
    ax.plot(val_of[n]["seeds"], [y] * len(val_of[n]["seeds"]), "o", color="0.55", markersize=5)
    ax.annotate("", xy=(curve["val_loss_mean"][-1], y), xytext=(curve["val_loss_mean"][0], y),
                arrowprops=dict(arrowstyle="->", color="0.3"))  # fmt: skip
    ax.plot(curve["val_loss_mean"][0], y, "D", mfc="white", mec="black", markersize=7)
    ax.plot(val_of[n]["mean"], y, "D", color="black", markersize=7)
ax.axvline(unigram_loss, color="#0072B2", linestyle="--", label=f"counted unigram, no context ({unigram_loss:.2f})")
ax.axvline(bigram_loss, color="#D55E00", linestyle=":", label=f"counted bigram, previous character ({bigram_loss:.2f})")
ax.plot([], [], "D", mfc="white", mec="black", label=f"mean at step {steps[names[0]]['curve']['step'][0]}")
ax.plot([], [], "D", color="black", label=f"mean at step {budget['steps']} (grey dots: each seed)")
ax.set_yticks(range(len(names)), names)
ax.invert_yaxis()
ax.set(xlabel="validation loss (nats/char), lower is better", title="Each build-up step, same budget, 3 seeds")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside the axes: it hides no row
viz.show(
    "Dot chart, one row per build-up step: the mean validation loss at the first measurement (hollow) and at the end "
    "(filled), each seed as a grey dot, with the counted unigram and bigram as vertical lines: "
    + ", ".join(f"{n} {val_of[n]['mean']:.2f}" for n in names)
    + f"; unigram {unigram_loss:.2f}, counted bigram {bigram_loss:.2f}"
)
for n in names:
    v, below = val_of[n], sum(s < unigram_loss for s in val_of[n]["seeds"])
    gap = unigram_loss - v["mean"]
    verdict = "clearly below it" if gap > 2 * v["sd"] else "clearly above it" if -gap > 2 * v["sd"] else "on it"
    print(
        f"{n:>15}: {below} of {len(v['seeds'])} seeds below the unigram; mean {abs(gap):.3f} "
        f"{'below' if gap > 0 else 'above'} it ({verdict}, against twice its sd {2 * v['sd']:.3f}); "
        f"{'below' if v['mean'] < bigram_loss else 'above'} the counted bigram"
    )

# %% [markdown]
# How to read it: the lines above compare each step with the baselines, over the seeds (they are
# computed from the table, so they hold for the numbers shown).
#
# * **bigram**: ends *above* the unigram, far above the counted bigram, a table of the same
#   size. The row measures how slowly a $V \times V$ table learns from a random start in this
#   many steps, not what one character of context is worth: that is the gap between the two
#   vertical lines (the counted unigram and the counted bigram).
# * **one head**, **multi-head** and **+ feed-forward**: at or near the unigram line (read the
#   seeds: one multi-head seed sits on it, two are below). In this budget these models have
#   learned how frequent each character is and little of the context attention gives them. How
#   much adding the residual path changes that, against the spread over seeds, is exercise 7.8's
#   question.
# * **+ residual** is the first step clearly below the unigram, just above the counted bigram;
#   **+ LayerNorm** (the course's `GPT`) ends well below the counted bigram, whose table of the
#   previous character rests on millions of training characters (printed above): it must use
#   more context than that one character.
#
# The budget is short: the loss of most steps is still falling between the two measurements
# (the arrows point from the first to the last; read their lengths in the figure), so the
# table ranks what each step learns in this many steps, not what it could reach. The exercises
# train the same steps with your modules on a smaller budget: compare your ranking with this one.
# %% [markdown]
# ## 6. A GPT on characters of real text
#
# `GPT` stacks `n_layers` pre-norm blocks with masked self-attention on token + position
# embeddings, and a final layer norm and linear layer give the logits of the next character.
# Training is self-supervised (Fitzgibbon: "the training label comes from the data itself"); here
# every position of every window predicts the next character, with the cross-entropy loss. The
# text is one long stream: each sentence is followed by a newline, which plays the part of the
# n-gram's `</s>`, so the model predicts
# exactly the tokens that lesson 01's perplexity counts, here on characters (every character
# plus one end of sentence per sentence).
#
# The baseline: lesson 01's n-gram models (`NGramLM`), fitted here on characters (lesson 01
# itself reports words), with Kneser-Ney smoothing. Which order is best? Higher orders see more
# context but meet more contexts never seen in training; the perplexity falls with the order until
# that second effect wins. `scripts/ngram_orders.py` fitted every order from 1 to 10 (the highest
# an `NGramLM` of this vocabulary allows) on the training sentences and scored each on the whole
# validation split; together they take more CPU time than this notebook's time budget can spare
# beside its training (the file's last column, summed under the table), so we read its file and
# refit order 3 here to check it.

# %%
print(corpus.summary())
print(
    f"{len(vocab)} symbols (characters, <UNK> and the sentence separator); streams of {len(train_stream):,} training "
    f"and {len(val_stream):,} validation symbols (the characters, a separator after every sentence and one before "
    "the first)"
)


def lm_loss(model, batch):
    return model(*batch)[1]


orders = json.loads((checkpoint.WEIGHTS_DIR / "ngram_orders_sotu_char.json").read_text())["orders"]
ngram_val = {int(n): r["val_perplexity"] for n, r in orders.items()}
ngram_head = {int(n): r["head_perplexity"] for n, r in orders.items()}
check_order = 3
refit = NGramLM(check_order, smoothing="kneser-ney").fit(corpus.train).perplexity(corpus.val)
print(f"order {check_order} refitted here: {refit:.4f} (the file: {ngram_val[check_order]:.4f})")
assert math.isclose(refit, ngram_val[check_order], rel_tol=1e-9)
best_order = min(ngram_val, key=ngram_val.get)
print(viz.table([[n, p, math.log(p), orders[str(n)]["cpu_seconds"]] for n, p in ngram_val.items()],
                header=["order", "val perplexity", "nats/char", "CPU s (fit and score)"], floatfmt="{:.3f}"))  # fmt: skip
print(f"all orders together: {sum(r['cpu_seconds'] for r in orders.values()):.0f} CPU seconds")
turned = best_order < max(ngram_val)
print(
    f"best: order {best_order}; "
    + (
        f"the perplexity turns: order {best_order + 1} is worse by {ngram_val[best_order + 1] - ngram_val[best_order]:.3f}"
        if turned
        else f"the curve had not turned at order {best_order}, the highest fitted"
    )
)

# %% [markdown]
# Now a small GPT, trained live for a fixed time budget (`max_seconds` keeps the notebook in its
# budget on a slow machine): 2 layers, 4 heads, $C = 64$, context 64 characters. The plot shows
# the training loss as a running mean over the last 25 steps: it lags behind the loss of the step
# itself, and the bend where the window fills (at step 25) comes from the smoothing, not from the
# training.

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
ax.set_ylim(0, None)
viz.show(
    f"Training loss of the live GPT against the step, smoothed: from {history.smoothed_loss(25)[0]:.2f} "
    f"to {history.smoothed_loss(25)[-1]:.2f} nats/char in {len(history.step)} steps"
)
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
# Every model on the same validation text. Evaluating the checkpoint on the whole validation
# split (over a million characters, counted above) takes minutes on a CPU (the cell times the
# first sentences and scales up, for the machine it runs on: its first line), so the live
# comparison uses the first validation sentences (about 20,000 characters), scored by every
# model on exactly the same predicted characters.
#
# **The same conditions.** The n-gram reads each sentence on its own: its context is the last
# $n - 1$ characters *of the sentence*, padded with `<s>` at its start. The GPT, fed one stream,
# reads across sentence boundaries: the end of one sentence is context for the next. So the
# checkpoint is scored both ways: each sentence on its own, as the n-gram reads it (a separator,
# then the sentence; windows of `block_size` every `stride` = 64 characters, so past the first
# window each character sees at least 64 characters of its sentence), and as one stream (the same windows
# across sentences). The live models are scored as one stream. The last column is the whole
# validation split: the n-gram's from the file above, the checkpoint's as its training script
# measured it (one stream, before the few live steps, in consecutive windows of 128, where the
# first characters of each window see little context: the row of that name shows what this costs).

# %%
head_sentences = buildup.val_head(corpus.val)  # the first sentences reaching 20,000 characters
stride = 64  # a window of block_size characters every 64: past the first, each sees >= block_size - 64 before it
head_stream = encode_stream(head_sentences, vocab)
n_head_tokens = len(head_stream) - 1
start = time.perf_counter()
blocks_loss = evaluate_lm(gpt, head_stream)  # consecutive windows of block_size, as the training script
blocks_seconds = time.perf_counter() - start
scale = (len(val_stream) - 1) / n_head_tokens
print(
    f"in this run, the checkpoint scored these {n_head_tokens:,} characters in consecutive windows in "
    f"{blocks_seconds:.1f} s; the whole validation split is {scale:.0f} times as long: about "
    f"{blocks_seconds * scale / 60:.1f} minutes, twice that with windows every {stride} characters"
)
best_ngram_name = f"Kneser-Ney {best_order}-gram (lesson 01), each sentence on its own"
alone_name, stream_name = "GPT checkpoint, each sentence on its own", "GPT checkpoint, one stream"
blocks_name = "GPT checkpoint, one stream, consecutive windows of 128"
rows = {
    best_ngram_name: (math.log(ngram_head[best_order]), math.log(ngram_val[best_order])),
    alone_name: (buildup.per_sentence_loss(gpt, head_sentences, vocab, gpt.config.block_size, stride), math.nan),
    stream_name: (evaluate_lm(gpt, head_stream, stride=stride), math.nan),
    blocks_name: (blocks_loss, ckpt.info["val_loss"]),  # consecutive windows, as the script
    "GPT, trained live, one stream": (evaluate_lm(live, head_stream), math.nan),
    "character LSTM (lessons 03/04), trained live, one stream": (
        evaluate_lm(char_lstm, head_stream, block_size=64),
        math.nan,
    ),
}
table = [
    [name, head, math.exp(head), math.exp(full) if not math.isnan(full) else "-"] for name, (head, full) in rows.items()
]
print(f"\nfirst {len(head_sentences)} validation sentences = {n_head_tokens:,} predicted characters\n")
print(
    viz.table(
        table, header=["model", "loss (nats/char)", "perplexity", "perplexity, whole val split"], floatfmt="{:.3f}"
    )
)
ngram_ppl, alone_ppl, stream_ppl = (math.exp(rows[k][0]) for k in (best_ngram_name, alone_name, stream_name))
print(
    f"same conditions (each sentence on its own), in this run: checkpoint GPT {alone_ppl:.3f} vs best n-gram "
    f"{ngram_ppl:.3f}: {'the checkpoint is lower' if alone_ppl < ngram_ppl else 'the n-gram is lower'}"
)
across = stream_ppl / alone_ppl - 1  # the relative change from reading across sentences
print(
    f"reading across sentences changes the checkpoint's perplexity from {alone_ppl:.3f} to {stream_ppl:.3f} "
    + (
        f"({across:+.1%}: too small a change to read as help or harm from one checkpoint on one text)"
        if abs(across) < 0.01
        else f"({across:+.1%}: the earlier sentences {'help' if across < 0 else 'do not help'} it, in this run)"
    )
)
print(
    f"whole split, not the same conditions: best n-gram {ngram_val[best_order]:.3f}, checkpoint "
    f"{math.exp(ckpt.info['val_loss']):.3f} in consecutive windows, which on the first sentences cost it "
    f"{math.exp(rows[blocks_name][0]) - stream_ppl:+.3f} against windows every {stride} characters"
)
live_gpt, live_lstm = rows["GPT, trained live, one stream"][0], rows[list(rows)[-1]][0]
print(
    f"same live budget, in this run: {'the LSTM' if live_lstm < live_gpt else 'the GPT'} is ahead "
    f"(LSTM {math.exp(live_lstm):.3f}, GPT {math.exp(live_gpt):.3f})"
)
lstm_runs, lstm_table = buildup.findings_table("lstm")  # scripts/train_buildup.py, over seeds
print("\nthe GPT against the LSTM over seeds, an equal number of steps:\n" + lstm_table)
(gpt_name, gpt_run), (lstm_name, lstm_run) = lstm_runs["models"].items()
print(compare("the GPT", gpt_run["val_loss"], "the LSTM", lstm_run["val_loss"]))

# %% [markdown]
# How to read the table: the n-gram predicts from the last few characters only; the GPT sees
# up to `block_size` of them and learns which matter, but it has to learn everything, even that
# the most recent characters matter most, and that takes far more training than fifteen seconds:
# the checkpoint, a larger GPT trained far longer, shows what size and training buy together.
# The comparison with the n-gram to quote is the one under the same conditions (each sentence on
# its own), on the first sentences; it is one checkpoint and one text, no seeds. Two caveats, in
# opposite directions. The n-gram's curve had not turned at order 10, the highest an `NGramLM` of
# this vocabulary can count (its n-gram keys must stay below $2^{63}$): a higher order might be
# lower still, so the gap to the *best* n-gram may be smaller than the one shown. And the
# whole-split column is not a like-for-like comparison: there the checkpoint was scored in
# consecutive windows, which cost it the amount printed above on the first sentences.
# Between the live GPT and the live LSTM the line above is one run; the table over seeds is the
# one to quote, for its own setting (an equal number of steps, not an equal time, and windows and
# batches smaller than the live ones: its first line). The lectures' case for the transformer is
# about scale (long contexts, parallel hardware, large data), which this CPU-sized comparison
# does not reach; lesson 07b measures the cost side.
# %% [markdown]
# ## 7. Decoding: greedy, temperature, top-k, beam search
#
# Generation is autoregressive: predict, append, repeat. How to pick the next token:
#
# * **greedy**: the most likely one (temperature 0); the same text every time, and over long
#   outputs prone to loops that repeat a phrase (Holtzman et al. 2020 measured this for greedy and
#   beam search);
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
# **Beam search, step by step** (Fitzgibbon: "the most probable sequences are explored"). Keep
# the $k$ partial continuations with the highest total log-probability
# $\log P(y_1 \dots y_t \mid \text{prompt}) = \sum_s \log P(y_s \mid \text{prompt}, y_{<s})$; at each
# step extend every one of them by every character and keep the best $k$ again. Three steps with
# $k = 3$, every kept hypothesis and its score:

# %%
beam_width, n_steps = 3, 3
beams, scores = prompt.clone(), torch.zeros(1)
with evaluating(gpt):
    for step in range(n_steps):
        logp = torch.log_softmax(gpt(beams[:, -gpt.config.block_size :])[0][:, -1], -1)  # (k, V)
        total = (scores[:, None] + logp).flatten()  # every hypothesis extended by every character
        scores, flat = torch.topk(total, beam_width)
        parents, chars = flat // logp.shape[-1], flat % logp.shape[-1]
        beams = torch.cat([beams[parents], chars[:, None]], dim=1)
        kept = [f"{decode_ids(b[prompt.shape[1] :].tolist())!r} {s:.2f}" for b, s in zip(beams, scores.tolist())]
        print(
            f"step {step + 1}: from {len(logp)} hypothesis(es) x {logp.shape[-1]} characters, keep: " + ", ".join(kept)
        )
best, best_score = beam_search(gpt, prompt, n_steps, beam_width=beam_width)
assert torch.equal(best, beams[:1]) and abs(best_score - scores[0].item()) < 1e-4  # = course_lib.lm.beam_search
with torch.no_grad(), evaluating(gpt):
    g_ids = outputs["greedy"][0]
    greedy_score = sum(
        torch.log_softmax(gpt(g_ids[None, : prompt.shape[1] + s])[0][0, -1], -1)[g_ids[prompt.shape[1] + s]].item()
        for s in range(n_steps)
    )
print(
    f"log-probability of the first {n_steps} characters: beam search's best {best_score:.3f}, greedy's {greedy_score:.3f}"
)

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
labels = ["⏎" if vocab.itos[i] == "\n" else repr(vocab.itos[i]) for i in shown.tolist()]  # ⏎: the newline
ax.set_xticks(np.arange(12) + 0.4 - width / 2, labels)
ax.set(
    xlabel="next character (the 12 most likely; ⏎ ends the sentence); in each group, bars left to right: T = "
    + ", ".join(map(str, temperatures)),
    ylabel="probability",
    title="softmax(logits / T)",
)
ax.legend()
viz.show(
    "Bars of the probability of the 12 most likely next characters, one bar per temperature: "
    + ", ".join(f"T = {T}: entropy {e:.2f} nats" for T, e in zip(temperatures, entropies))
)
print("entropy (nats) per temperature:", {t_: round(float(e_), 3) for t_, e_ in zip(temperatures, entropies)})
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
    fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight (one scale, 0 to 1, for all maps)")
    viz.show(
        f"Grid of {L} x {Hh} attention heatmaps (layers by heads) for the text {text!r}: query character "
        "(rows) against key character (columns), weights from 0 to 1 on one colour scale, zero above the diagonal"
    )
    return weights


grid = viz.interactive(attention_grid, text=widgets.Text(value="the state of the union", description="text"))

# %% [markdown]
# How to read it: a bright first sub-diagonal is a head that looks at the previous character,
# a bright diagonal one that looks at the current character, a bright first column one that
# rests on the start, and a bright band further below the diagonal one that looks further back.
# We measure, for each head, the average weight of the queries on the previous character, on
# themselves and on the first position (every query but the first, which can only look at
# itself), against what a head spreading its weight uniformly over $j \le i$ would put on any
# one of them:

# %%
heads_ids = encode_text("the state of the union")
heads_w = gpt.attention_weights(heads_ids)[:, 0]  # (n_layers, n_heads, T, T)
T_h = heads_w.shape[-1]
uniform_prev = float(np.mean([1 / (i + 1) for i in range(1, T_h)]))  # a uniform head's weight on j = i - 1
head_rows = []
for l in range(heads_w.shape[0]):
    for h in range(heads_w.shape[1]):
        w = heads_w[l, h]  # (T, T); every mean below is over the queries 1 .. T-1 (query 0 sees only itself)
        head_rows.append([f"layer {l + 1}, head {h + 1}", w.diagonal(-1).mean().item(), w.diagonal()[1:].mean().item(),
                     w[1:, 0].mean().item()])  # fmt: skip
print(
    viz.table(head_rows, header=["head", "on previous char", "on itself", "on the first position"], floatfmt="{:.2f}")
)
best_prev = max(head_rows, key=lambda r: r[1])
print(f"{best_prev[0]} puts {best_prev[1]:.2f} on the previous character (a uniform head: {uniform_prev:.2f})")

# %% [markdown]
# ## 9. Tokens: characters, words, subwords
#
# This course's GPT reads characters and lesson 01's n-grams read words. Real GPTs and BERT read
# neither: Galerne's lecture lists the tokenizers, word-level (word2vec), **WordPiece** (BERT) and
# **BPE**, byte-pair encoding (GPT), which builds sub-words "by grouping frequent character pairs".
# Characters give short vocabularies but long sequences (attention's cost grows as $T^2$); words
# give short sequences but a huge vocabulary and unknown words (`<UNK>`). Sub-words sit between:
# frequent words become one token, rare ones split into pieces that were seen.
#
# BPE's training (Sennrich et al. 2016): start from characters, with a marker `</w>` at the end of
# each word, count every adjacent pair of symbols over the corpus, merge the most frequent pair
# into one new symbol, and repeat. A new word is split into characters and the learned merges are
# applied in the order they were learned. Here, 100 merges learned on the words of the first
# 1,500 training sentences of our corpus (a real tokenizer learns tens of thousands):

# %%
from collections import Counter


def apply_merge(symbols, pair):
    """symbols with every adjacent occurrence of pair (a, b), left to right, replaced by ab."""
    out, i = [], 0
    while i < len(symbols):
        if symbols[i : i + 2] == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def bpe_merges(word_counts, n_merges):
    """BPE training: from characters (and </w>), merge the most frequent adjacent pair n_merges times."""
    words = {tuple(w) + ("</w>",): c for w, c in word_counts.items()}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for symbols, c in words.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += c
        best = max(pairs, key=pairs.get)  # the most frequent pair (the first counted, on a tie)
        merges.append((best, pairs[best]))
        words = {apply_merge(symbols, best): c for symbols, c in words.items()}
    return merges


def bpe_tokenize(word, merges):
    symbols = tuple(word) + ("</w>",)
    for pair, _ in merges:  # in the order they were learned
        symbols = apply_merge(symbols, pair)
    return list(symbols)


def words_of(sentence):  # letters in runs, every other non-space character on its own
    return re.findall(r"[a-z]+|[^a-z\s]", "".join(sentence))


n_sentences, n_merges = 1500, 100
word_counts = Counter(w for s in corpus.train[:n_sentences] for w in words_of(s))
merges = bpe_merges(word_counts, n_merges)
print(f"{n_merges} merges learned on {sum(word_counts.values()):,} words ({len(word_counts):,} distinct) "
      f"of the first {n_sentences:,} training sentences")  # fmt: skip
print("the first 12 merges (pair, its count):", ", ".join(f"{a}+{b} ({c:,})" for (a, b), c in merges[:12]))
sentence = corpus.val[3]
tokens = [t for w in words_of(sentence) for t in bpe_tokenize(w, merges)]
print("\n" + "".join(sentence))
print(" | ".join(tokens))
print(
    f"\n{len(sentence)} characters, {len(words_of(sentence))} words, {len(tokens)} BPE tokens after "
    f"{len(merges)} merges (a vocabulary of the characters plus {len(merges)} new symbols)"
)
assert "".join(tokens).replace("</w>", "") == "".join(words_of(sentence))  # nothing lost: the pieces spell the words

# %% [markdown]
# The first merges join the commonest endings and short words (`e</w>`, `th`, `the</w>`); words
# seen often become one token, rarer ones stay in pieces. GPT-2 runs BPE on bytes rather than
# characters (so no input is ever unknown) with a vocabulary of 50,257 (Radford et al. 2019).
# **WordPiece** (BERT, a vocabulary of 30,000, Devlin et al. 2019) builds its vocabulary the same
# way, merge by merge, but picks the merge that most raises the likelihood of the training data
# rather than the most frequent pair (Schuster and Nakajima 2012; Wu et al. 2016, whose WordPiece
# BERT uses); a word's later pieces are written with `##` (`play ##ing`).
# The course stays with characters, so that every model fits a CPU and the n-gram comparison is
# over the same symbols; a GPT on BPE tokens has a larger embedding table and shorter sequences,
# and its loss per token is not comparable with a loss per character.

# %% [markdown]
# ## What to try
#
# * Train the live GPT with `positions="sinusoidal"`: does the loss change?
# * Train it without the causal mask (set `block.causal = False` for every `block` in
#   `live.blocks`): what happens to the training loss, and why is it a lie?
# * Change the seed in the first cell (and the `torch.manual_seed(0)` before the live GPT and the
#   LSTM, which set their own) and run everything again: which numbers move (the tables over
#   seeds are read from files, so they cannot), and does the line on the live GPT and LSTM
#   still read the same?
# * From the course folder, run
#   `python scripts/train_buildup.py --experiment buildup --steps 3000 --out-dir my_buildup` (without
#   `--out-dir` the script stops rather than overwrite the course's results file): do the gaps
#   between steps grow or shrink with a longer budget?
# * Raise `max_seconds`, or, from the course folder, run
#   `python scripts/train_gpt.py --minutes 60 --out notebooks/my_gpt.safetensors` (without `--out` the
#   script stops rather than overwrite the course's checkpoint) and load it here with
#   `GPT.load("my_gpt.safetensors", vocab)`: how long until the GPT beats the n-gram?
# * In the beam-search trace, try `beam_width = 1` (greedy) and 10: when do the kept
#   hypotheses stop sharing a prefix?
# * Type texts into the attention explorer: which heads look at the previous character,
#   which at the start of the word?
# * Then build it yourself: `exercises/07_transformer.ipynb`; and go further: lesson 07b.

# %% [markdown]
# ## Closing note
#
# The numbers of this run, from the cells above:

# %%
print(
    f"best character n-gram fitted (Kneser-Ney {best_order}-gram, "
    f"{'the curve turns after it' if turned else 'the highest order fitted: the curve had not turned'}): validation perplexity "
    f"{ngram_val[best_order]:.3f} per character"
)
print(
    f"GPT trained live for {history.seconds:.0f} s: {math.exp(rows['GPT, trained live, one stream'][0]):.3f} on the "
    f"first {n_head_tokens:,} validation characters; the character LSTM, same time: {math.exp(live_lstm):.3f}"
)
print(
    f"GPT checkpoint there (after the few live steps): {alone_ppl:.3f} with each sentence on its own (the n-gram: "
    f"{ngram_ppl:.3f}), {stream_ppl:.3f} as one stream; {math.exp(ckpt.info['val_loss']):.3f} on the whole "
    f"validation split in consecutive windows (as shipped, before them; the n-gram: {ngram_val[best_order]:.3f})"
)
print("build-up, validation loss (mean over seeds) per step:", {n: round(v["mean"], 3) for n, v in val_of.items()})
