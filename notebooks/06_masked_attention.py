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
# # Lesson 06: masked self-attention, and the lecture's quiz
#
# **Learning goals.** After this lesson you can
# 1. explain why a decoder's **self-attention** (queries, keys and values from the same
#    sequence, unlike lesson 05's **cross-attention** from the decoder to the encoder, as CS224N
#    names them) must not attend to the future, and mask it by setting the scores
#    $e_{i,j}$, $j > i$, to $-\infty$ *before* the softmax;
# 2. compute any masked attention weight $\alpha_{i,j}$ by hand, starting with the quiz of the
#    UKP Lab transformer lecture, and say why each tempting wrong answer is wrong;
# 3. tell right masking from wrong masking (zeroing after the softmax, masking with 0,
#    a transposed mask) and know what happens to a row where everything is masked;
# 4. say what causal and padding masks each hide and why a decoder needs both, and read the
#    two opposite boolean conventions of PyTorch (`F.scaled_dot_product_attention`: True = may
#    attend; `nn.MultiheadAttention`: True = may *not* attend).
#
# In the exercises (`exercises/06_masked_attention.ipynb`) you combine the two masks yourself:
# first by hand on the quiz's matrix with a padded token, then in code for a padded batch, and
# you test what leaks.
#
# Positions count from 1, as in the UKP Lab lecture: query $i$ and key $j$ run over $1, \dots, n$.
# In Python, $\alpha_{i,j}$ is `weights[i - 1, j - 1]`.

# %%
import math
import random

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import course_lib
from course_lib.attention import (
    MultiHeadAttention,
    causal_mask,
    decoder_mask,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)
from course_lib.notebook import quiz, viz

device = course_lib.setup(seed=0)  # (this lesson's matrices are tiny: it runs on the CPU)


def weight_map(weights, mask=None, ax=None, title="", keys=None, queries=None, annotate=True, rows=None):
    """An attention heatmap on the same colour scale as every other in this lesson, 0 to 1. Masked
    cells (grey) are labelled 0, the weight they get: -inf was their score, not their weight.
    `rows` (Python indices) limits the labels to those rows, all of them by default."""
    ax = viz.attention_heatmap(weights, keys=keys, queries=queries, mask=mask, ax=ax, title=title, annotate=False)
    ax.images[0].set_clim(0.0, 1.0)  # one scale for all maps (the colour bar follows)
    if annotate:
        w = np.asarray(weights, dtype=float)
        for (i, j), value in np.ndenumerate(w):
            if rows is not None and i not in rows:
                continue
            masked = mask is not None and not bool(mask[i, j])
            color = "#555555" if masked else ("white" if value < 0.6 else "black")
            ax.text(j, i, "0" if masked else f"{value:.2f}", ha="center", va="center", fontsize=8, color=color)
    return ax


# %% [markdown]
# ## 1. Masked self-attention
#
# The UKP Lab lecture's self-attention (row vectors), for a sequence $\mathbf{x}_1, \dots, \mathbf{x}_n$:
#
# $$\mathbf{q}_i = \mathbf{x}_i \mathbf{W}^Q, \quad \mathbf{k}_i = \mathbf{x}_i \mathbf{W}^K, \quad
#   \mathbf{v}_i = \mathbf{x}_i \mathbf{W}^V, \qquad
#   e_{i,j} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{d_k}}, \qquad
#   \alpha_i = \operatorname{softmax}(\mathbf{e}_i), \qquad
#   \mathbf{h}_i = \sum_{j=1}^{n} \alpha_{i,j} \mathbf{v}_j$$
#
# A decoder generates text left to right, so while it is trained to predict token $i + 1$,
# position $i$ must not see tokens $i + 1, \dots, n$: "we can't attend to the future text for
# the decoder" (UKP Lab). CS224N gives the reason: a model trained with the future in view
# would rely on information it does not have when it generates. Recomputing attention over a
# growing set of keys at every step would be slow, so (CS224N again) all the scores are
# computed at once and the future is masked. **Masked self-attention** computes the scores as
# usual, then makes every future score minus infinity, so that its weight
# $e^{-\infty} / Z = 0$. The UKP Lab lecture *sets* these scores to $-\infty$, and CS224N *adds*
# $-\infty$ to them: both give the same result, since a finite score plus $-\infty$ is $-\infty$.
#
# $$e_{i,j} = -\infty \quad \text{for } j > i$$
#
# Query $i$ keeps keys $j \le i$, itself included. Fitzgibbon's notes write it differently: "at
# time $t$ the model only attends to positions $< t$". Read with $t$ as the token being predicted
# (his model predicts $\mathbf{x}_T$ from $\mathbf{x}_1, \dots, \mathbf{x}_{T-1}$), the
# positions $< t$ are the query's own and those before it: the same mask as here. Read with $t$
# as the query's own position, it would also mask the diagonal and leave row 1 with no key at
# all (section 3 shows what that does). This lesson follows the UKP Lab lecture and CS224N.
#
# The code below follows the equations with the same names, on a short random sequence,
# and checks that the library's `scaled_dot_product_attention` (the explicit
# path, which also returns the weights) agrees with it and with PyTorch's fused attention.

# %%
n, d_model, d_k = 5, 8, 4
X = torch.randn(n, d_model)  # row i is x_i
W_Q, W_K, W_V = torch.randn(d_model, d_k), torch.randn(d_model, d_k), torch.randn(d_model, d_k)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # q_i = x_i W^Q, ...: (n, d_k)
e = Q @ K.T / math.sqrt(d_k)  # e[i-1, j-1] = q_i . k_j / sqrt(d_k)
future = torch.arange(1, n + 1)[None, :] > torch.arange(1, n + 1)[:, None]  # True where j > i
e_masked = e.masked_fill(future, float("-inf"))
alpha = torch.softmax(e_masked, dim=-1)  # alpha_i = softmax(e_i), row by row
H = alpha @ V  # h_i = sum_j alpha_ij v_j

H_lib, alpha_lib = scaled_dot_product_attention(Q, K, V, mask=causal_mask(n))
assert torch.equal(causal_mask(n), ~future)  # the library's mask is True where attending is allowed
assert torch.allclose(alpha, alpha_lib) and torch.allclose(H, H_lib, atol=1e-6)
assert torch.allclose(H, F.scaled_dot_product_attention(Q, K, V, is_causal=True), atol=1e-5)
assert torch.all(alpha[future] == 0) and torch.allclose(alpha.sum(-1), torch.ones(n))
print("masked scores e (row i = query i):\n", e_masked.numpy().round(2))
print("weights alpha:\n", alpha.numpy().round(3))

# %% [markdown]
# Every row sums to 1, and everything above the diagonal is exactly 0. Row 1 has a single
# allowed key, itself, so its weight is 1 whatever the scores.

# %% [markdown]
# ## 2. The quiz
#
# The lecture's quiz (UKP Lab): the matrix below holds the scaled scores
# $e_{i,j} = \mathbf{q}_i \cdot \mathbf{k}_j / \sqrt{d_k}$ for $1 \le i, j \le n$ with $n = 4$.
# What is $\alpha_{2,2}$ in masked attention? **Answer in the widget before you read on.** The
# quiz cell's code is collapsed (in JupyterLab, the bar or the dots at its left open it): it holds
# every option's feedback, so open it only after you have answered. Every option, right or
# wrong, explains itself. Without widgets (plain Python), answer with
# `lecture_quiz.check("A")`, with your letter in place of A.

# %% jupyter={"source_hidden": true}
E = torch.tensor(
    [[1, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]], dtype=torch.float64
)  # the lecture's matrix, E[i-1, j-1] = e_ij
n = E.shape[0]
e_ = math.e
options = {"A": "0", "B": "0.5", "C": "e / (2e + e⁻¹ + 1)", "D": "1"}
option_values = {"A": 0.0, "B": 0.5, "C": e_ / (2 * e_ + e_**-1 + 1), "D": 1.0}  # the same four, as numbers

masked_weights = masked_softmax(E, causal_mask(n))
unmasked_weights = masked_softmax(E)
answer = next(label for label, value in option_values.items() if math.isclose(value, masked_weights[1, 1].item()))
row2 = E[1].tolist()
feedback = {
    "A": "0 is the weight of a masked key, e.g. α(2,3). Tempting if you think the mask hides the current token too, "
    "but it hides only the future j > i: query 2 attends to keys 1 and 2.",
    "B": f"Row 2 is {row2}. The mask keeps e(2,1) = {row2[0]:g} and e(2,2) = {row2[1]:g} and sets the future to -inf; "
    f"two equal scores share the weight: e^1 / (e^1 + e^1) = {masked_weights[1, 1].item():g}.",
    "C": f"Tempting: this is α(2,2) without the mask, the softmax of the whole row 2, "
    f"e^1 / (e^1 + e^1 + e^-1 + e^0) = {unmasked_weights[1, 1].item():.4f}. Masked attention first sets "
    f"e(2,3) and e(2,4) to -inf, so they drop out of the denominator.",
    "D": f"Tempting because the first token always puts weight {masked_weights[0, 0].item():g} on itself (it sees "
    f"nothing else), or if you think a token attends only to itself. Token 2 also sees token 1, with an equal score.",
}
matrix_text = "\n".join("    " + "  ".join(f"{x:3.0f}" for x in row) for row in E.tolist())
lecture_quiz = quiz.MultipleChoice(
    f"The matrix holds q_i · k_j / √d_k for 1 ≤ i, j ≤ 4 (row i, column j):\n\n{matrix_text}\n\n"
    "What is α(2,2), the weight of query 2 on key 2, in masked attention?",
    options,
    answer=answer,
    feedback=feedback,
    key="lecture quiz: alpha_22",
)
lecture_quiz.show()

# %% [markdown]
# ### The answer, computed
#
# Row $i = 2$ of the matrix, masked: the keys $j \le 2$ keep their scores, the keys $j > 2$
# get $-\infty$; then the softmax. The cell computes $\alpha_{2,2}$ from the matrix, finds
# the option it equals, and checks what the options' feedback claims.
# It prints the answer, and draws the weights, only once you have answered the quiz above (run it
# again after answering); the checks run either way.

# %%
alpha_22 = masked_weights[2 - 1, 2 - 1].item()  # 1-based alpha_{2,2} -> Python [1, 1]
answered = lecture_quiz.tries > 0
if answered:
    print(f"masked row 2:   e_2 = {E[1].tolist()} -> {E[1].masked_fill(~causal_mask(n)[1], float('-inf')).tolist()}")
    print(f"alpha_2 = {masked_weights[1].numpy().round(4).tolist()}")
    print(f"alpha_22 = {alpha_22}  -> option ({answer}) {options[answer]}")
    for label, value in option_values.items():
        print(f"  ({label}) {options[label]:<20} = {value:.4f}")
else:
    print("Answer the quiz above first (widget, or lecture_quiz.check(...)), then run this cell and the next again.")
assert math.isclose(alpha_22, option_values[answer])
assert sum(math.isclose(alpha_22, v) for v in option_values.values()) == 1  # exactly one option is right
assert math.isclose(unmasked_weights[1, 1].item(), option_values["C"])  # C is alpha_22 without the mask
assert masked_weights[0, 0].item() == 1.0  # D is alpha_11, the first token's weight on itself
assert masked_weights[1, 2].item() == 0.0  # A is a masked weight
# Counting from 0 by mistake would ask for Python's [2, 2], alpha_{3,3}: a number that is none of the options
# (not printed: exercise 6.2 asks you for alpha_{3,3} by hand).
zero_based = masked_weights[2, 2].item()
if answered:
    print("with 0-based indices by mistake: Python's [2, 2] is alpha_33, which is none of the options")
assert not any(math.isclose(zero_based, v) for v in option_values.values())

# %% [markdown]
# The whole matrix of weights, without and with the mask, on one colour scale (0 to 1). Masked
# cells are grey: their score was $-\infty$ before the softmax, so their weight is exactly 0.
# The masked map labels only rows 1 and 2: exercise 6.2 asks for weights of rows 3 and 4 by hand.

# %%
if answered:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    weight_map(unmasked_weights, ax=axes[0], title="without the mask (option C's mistake)")
    weight_map(masked_weights, mask=causal_mask(n), ax=axes[1], title="masked self-attention", rows=[0, 1])
    plt.tight_layout()
    viz.show(
        "Two 4 by 4 heatmaps of the quiz's attention weights on one colour scale from 0 to 1, rows are queries i, "
        f"columns keys j. Left, without the mask: alpha_22 = {unmasked_weights[1, 1].item():.2f}. Right, masked: "
        f"the cells above the diagonal are grey (weight 0) and alpha_22 = {masked_weights[1, 1].item():.2f}."
    )
    assert all(ax.images[0].get_clim() == (0.0, 1.0) for ax in axes)
    assert not any(t.get_text() == "-inf" for ax in axes for t in ax.texts)
else:
    print("(the heatmaps of the quiz's weights appear here once you have answered the quiz)")

# %% [markdown]
# ## 3. Masking done right, and done wrong
#
# Six ways to hide the future, applied to a new $4 \times 4$ matrix of scores `S` (not the quiz's: its
# rows 2 and 3 are what you work out by hand in exercise 6.2); the table shows row 3, whose future key
# has the row's largest score. Only some of the ways give a distribution over the allowed keys:
#
# 1. **$-\infty$ before the softmax** (the way of the UKP Lab lecture and CS224N);
# 2. **zero the future after the softmax**, and stop there;
# 3. zero the future after the softmax, then **renormalise** the row to sum 1;
# 4. set the future scores to **0** instead of $-\infty$;
# 5. a **large finite negative** number such as $-10^9$ instead of $-\infty$;
# 6. $-\infty$ before the softmax, but with a **transposed mask** (`triu` instead of `tril`:
#    $j \ge i$ allowed instead of $j \le i$).

# %%
S = torch.tensor([[2, -1, 0, 1], [0, 2, 1, -1], [1, -2, 0, 2], [-1, 1, 2, 0]], dtype=torch.float64)  # S[i-1, j-1]
allowed = causal_mask(n)
unmasked = torch.softmax(S, dim=-1)
ways = {
    "1. -inf before the softmax": torch.softmax(S.masked_fill(~allowed, float("-inf")), dim=-1),
    "2. zero after, no renormalising": unmasked * allowed,
    "3. zero after, renormalised": (unmasked * allowed) / (unmasked * allowed).sum(-1, keepdim=True),
    "4. score 0 instead of -inf": torch.softmax(S.masked_fill(~allowed, 0.0), dim=-1),
    "5. -1e9 instead of -inf": torch.softmax(S.masked_fill(~allowed, -1e9), dim=-1),
    "6. transposed mask": torch.softmax(S.masked_fill(~allowed.T, float("-inf")), dim=-1),
}
right = ways["1. -inf before the softmax"]
rows = [
    [name]
    + [f"{w:.3f}" for w in weights[2].tolist()]
    + [f"{weights[2].sum().item():.3f}", "yes" if torch.allclose(weights, right) else "NO"]
    for name, weights in ways.items()
]
print(viz.table(rows, header=["row 3 of S", "α(3,1)", "α(3,2)", "α(3,3)", "α(3,4)", "sum", "right?  (whole matrix)"]))
kept = ways["2. zero after, no renormalising"].sum(-1)  # way 2: the mass each row keeps
print("way 2, mass kept by rows 1 to 4:", [round(m, 3) for m in kept.tolist()])
assert torch.all(kept[:-1] < 1) and math.isclose(kept[-1].item(), 1.0)  # only the last row has no future

assert torch.allclose(ways["3. zero after, renormalised"], right)  # the same: softmax restricted to the kept keys
assert torch.allclose(ways["5. -1e9 instead of -inf"], right)  # the same here (e^-1e9 underflows to 0)
assert not torch.allclose(
    ways["2. zero after, no renormalising"].sum(-1), torch.ones(n, dtype=S.dtype)
)  # rows no longer sum to 1
assert not torch.allclose(ways["4. score 0 instead of -inf"], right)  # the future still gets weight e^0 / Z
assert torch.all(ways["4. score 0 instead of -inf"][~allowed] > 0)  # ... so it leaks
transposed = ways["6. transposed mask"]
assert torch.all(transposed[~allowed.T] == 0) and torch.all(transposed[~allowed] > 0)  # no past, all the future
assert torch.equal(transposed[0], unmasked[0]) and transposed[-1, -1] == 1.0  # query 1 sees all, query n itself

# %% [markdown]
# * Way 3 equals way 1: $\frac{e^{e_{i,j}} / Z}{\sum_{j' \le i} e^{e_{i,j'}} / Z}$ is the softmax
#   over the allowed keys. It costs a second pass, and it needs the full softmax first.
# * Way 2 is a **bug**: the weights are the right ones times the mass the row kept,
#   $\sum_{j \le i} e^{e_{i,j}} / Z$, below 1 in every row but the last (which has no future),
#   so $\mathbf{h}_i$ shrinks by that factor. Early positions have the most future keys, so
#   they usually lose the most, but how much depends on their scores: the rows of `S` keep
#   the fractions printed above.
# * Way 4 is a **bug that leaks the future**: a score of 0 is not "nothing", $e^0 = 1$.
# * Way 5 avoids $-\infty$ in the code. With scores of ordinary size, as here, it differs from
#   $-\infty$ only when a whole row is masked, the next topic. (In float16, $-10^9$ is out of range:
#   `masked_fill` on a float16 tensor refuses it with an overflow error, and converting it to
#   float16 gives $-\infty$ itself.)
# * Way 6 is a **bug that sees the future and hides the past**: query $i$ attends to keys
#   $i, \dots, n$: the first query sees every key, the last one only itself.
#
# ### A row where everything is masked
#
# With padding (below), a query can end up with no key at all to attend to. Then the
# softmax of a row of $-\infty$ is $0/0$:

# %%
empty_row = torch.full((4,), float("-inf"))
print("softmax(-inf, ..., -inf) =", torch.softmax(empty_row, dim=0).tolist())
print("softmax(-1e9, ..., -1e9) =", torch.softmax(torch.full((4,), -1e9), dim=0).tolist())
assert torch.isnan(torch.softmax(empty_row, dim=0)).all()  # NaN, which then spreads to everything it touches
assert torch.allclose(torch.softmax(torch.full((4,), -1e9), dim=0), torch.full((4,), 0.25))  # uniform: attends to all

q = k = v = torch.randn(1, 3, 4)
nothing = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])  # query 2 sees nothing
torch_out = F.scaled_dot_product_attention(q, k, v, attn_mask=nothing)
ours_out, ours_w = scaled_dot_product_attention(q, k, v, mask=nothing)
print(f"torch {torch.__version__}, F.scaled_dot_product_attention, output of query 2:", torch_out[0, 1].tolist())
print("course_lib, weights and output of query 2: ", ours_w[0, 1].tolist(), ours_out[0, 1].tolist())
assert torch.all(torch_out[0, 1] == 0) and torch.allclose(ours_out, torch_out, atol=1e-6)

torch.manual_seed(0)
torch_mha = nn.MultiheadAttention(4, 2, batch_first=True).eval()
all_padding = torch.ones(1, 3, dtype=torch.bool)  # nn.MultiheadAttention: True = padding, may NOT attend
with_weights = torch_mha(q, q, q, key_padding_mask=all_padding)[0]
fused = torch_mha(q, q, q, key_padding_mask=all_padding, need_weights=False)[0]
print("nn.MultiheadAttention, need_weights=True: ", with_weights[0, 0].tolist())
print("nn.MultiheadAttention, need_weights=False:", fused[0, 0].tolist())
assert torch.isnan(with_weights).all() and not torch.isnan(fused).any()

# %% [markdown]
# Three behaviours for the same question: a plain softmax gives NaN; a large finite number
# gives a uniform row, i.e. the query attends to exactly the keys it was told to ignore; and
# in the torch pinned here (its version is printed), `F.scaled_dot_product_attention` returns output
# 0 for that query (it does not return weights), as `course_lib.attention` does with weights 0 and
# output 0, a "safe softmax". That 0 is not a fixed rule of the operation: torch chose it in release
# 2.5 (2024; pytorch pull request 131060 gives the reasons); before that, its math path returned NaN
# for such a row, and other libraries and backends have differed (NaN, or a uniform row). Code that must not depend on the version keeps such
# rows out, as below. Even
# `nn.MultiheadAttention` disagrees with itself (the two lines printed are its outputs): NaN
# when you ask for the weights, and when you do not, an attention output of 0 passed through its
# output projection, which gives its output bias (zeros here, as in every freshly built module; a
# trained one has learned a bias). How
# libraries keep out of trouble:
#
# * a causal row is never empty: the diagonal is always allowed, so mask only the future
#   and **never the current token**;
# * pad on the right and mask padded **keys**; the outputs at padded **query** positions are
#   computed but ignored by the loss (`ignore_index`), so their value does not matter as long
#   as it is not NaN;
# * use a safe softmax (or $-10^9$ where a uniform row is harmless).
#
# ## 4. Causal masks and padding masks
#
# A batch holds sentences of different lengths, padded to the same length $T$. The padding
# mask hides the padded keys; the causal mask hides the future; a decoder needs both: a key
# may be attended only where *both* masks allow it. `course_lib.attention.decoder_mask` builds
# that combined mask (you write your own in exercise 6.3); below it is drawn.

# %%
sentences = [["A", "boy", "is", "eating", "an", "apple", "."], ["Thinking", "Machines"]]
T = max(len(s) for s in sentences)
tokens = [s + ["<pad>"] * (T - len(s)) for s in sentences]
lengths = [len(s) for s in sentences]
keep_keys = padding_mask(lengths, T)  # (B, T): True at real tokens
both = decoder_mask(lengths, T)  # (B, T, T): not the future, and a real key
print("padding mask (B, T):\n", keep_keys.int().numpy())
assert torch.equal(both[0], causal_mask(T))  # the full-length sentence needs only the causal mask
assert both[1, :, lengths[1] :].any().item() is False  # nobody attends to padding

torch.manual_seed(1)
# Small inputs: with large ones, q_i . k_i dominates every row (each token attends almost only to
# itself) and the panels below could not show what leaks where.
x = 0.3 * torch.randn(2, T, 8)
weights_causal = scaled_dot_product_attention(x, x, x, mask=causal_mask(T))[1]
weights_padding = scaled_dot_product_attention(x, x, x, mask=keep_keys[:, None, :])[1]
weights_both = scaled_dot_product_attention(x, x, x, mask=both)[1]
fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
panels = [
    (weights_causal[1], causal_mask(T), "causal mask only"),
    (weights_padding[1], keep_keys[1][None, :].expand(T, T), "padding mask only"),
    (weights_both[1], both[1], "causal AND padding"),
]
for ax, (w, m, title) in zip(axes, panels):
    weight_map(w, mask=m, keys=tokens[1], queries=tokens[1], ax=ax, title=title)
plt.tight_layout()
future_leak = weights_padding[1, 0, 1].item()  # "Thinking" (query 1) attends to "Machines" (key 2, its future)
pad_to_pad = weights_causal[1, lengths[1] :, lengths[1] :].sum(-1).min().item()
viz.show(
    "Three heatmaps of the attention weights of the padded sentence 'Thinking Machines' on one colour scale "
    "from 0 to 1 (rows queries, columns keys, grey = masked): with the causal mask only, the padded queries "
    f"put at least {pad_to_pad:.2f} of their weight on padding; with the padding mask only, 'Thinking' puts "
    f"{future_leak:.2f} on its future 'Machines'; with both, neither leak."
)
print(f"padding mask only: 'Thinking' puts weight {future_leak:.2f} on its future 'Machines'")
print(f"causal mask only: each padded query puts at least {pad_to_pad:.2f} of its weight on padding")

# %% [markdown]
# With the causal mask alone, the real tokens of "Thinking Machines" never see the padding
# (it lies in their future), but the padded *queries* attend to padding. With the padding
# mask alone, every query sees all the real tokens, its future ones included: here
# "Thinking" sees "Machines" (the padded queries have no real token in their future, and in
# the full-length sentence every query but the last would see its future). With both, no
# query sees the future or a padded key; the padded queries still get an output, which the
# loss ignores.
#
# ### The two boolean conventions of PyTorch
#
# `F.scaled_dot_product_attention` (and this course's `causal_mask`) use **True = may attend**.
# `nn.MultiheadAttention`'s `attn_mask` and `key_padding_mask` use **True = may NOT attend**.
# Passing one where the other is expected silently inverts the mask. `course_lib`'s
# `MultiHeadAttention` is a drop-in for `nn.MultiheadAttention`, so it follows *its*
# convention; below it gives the same outputs and weights, for a causal mask with padding.

# %%
torch.set_grad_enabled(False)  # no training in this lesson: outputs without gradients
torch.manual_seed(2)
theirs = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True).eval()
ours = MultiHeadAttention.from_torch(theirs)
blocked = ~causal_mask(T)  # nn.MultiheadAttention's convention: True = may NOT attend
padded = ~keep_keys
out_theirs, w_theirs = theirs(x, x, x, attn_mask=blocked, key_padding_mask=padded)
out_ours, w_ours = ours(x, x, x, attn_mask=blocked, key_padding_mask=padded)
print(
    "largest difference, outputs:",
    (out_theirs - out_ours).abs().max().item(),
    " weights:",
    (w_theirs - w_ours).abs().max().item(),
)
assert torch.allclose(out_theirs[0], out_ours[0], atol=1e-5) and torch.allclose(w_theirs, w_ours, atol=1e-5)
wrong_convention = ours(x, x, x, attn_mask=causal_mask(T))[1][0]  # F.sdpa's convention given to the module
print("with the inverted mask, query 1 of sentence 1 attends to:", [round(w, 2) for w in wrong_convention[0].tolist()])
assert torch.all(wrong_convention.tril() == 0)  # now every query sees only the future...
assert (
    torch.allclose(wrong_convention[:-1].sum(-1), torch.ones(T - 1)) and wrong_convention[-1].sum() == 0
)  # ...the last nothing

# %% [markdown]
# ### The mask never leaks the future
#
# The test that matters: change a token, and no output *before* it may change.

# %%
changed = x.clone()
position = 4  # 1-based: change token 4 of sentence 1
changed[0, position - 1] += 10.0
before, _ = ours(x, x, x, attn_mask=blocked)
after, _ = ours(changed, changed, changed, attn_mask=blocked)
moved = (before - after).abs().amax(dim=-1)[0]
print("how much each output of sentence 1 moved:", [round(m, 3) for m in moved.tolist()])
assert torch.all(moved[: position - 1] == 0) and torch.all(moved[position - 1 :] > 0)
unmasked_after, _ = ours(changed, changed, changed)
assert (ours(x, x, x)[0] - unmasked_after)[0, : position - 1].abs().max() > 0  # without the mask it leaks

# %% [markdown]
# ## 5. Your turn: generated quizzes
#
# Each question is the lecture's quiz with a new $4 \times 4$ matrix of small integer scores
# (so ties are common) and a random allowed entry $(i, j)$, $j \le i$; now and then (one time in
# five when $i < 4$) a masked one, $j > i$. Type a number (a fraction such as `1/3` works) and
# press **Check**; **New question** draws another. Your first answer to each question counts in
# the running score. A known mistake (no mask, masked diagonal, $i$ and $j$ swapped, counting
# from 0) gets its own hint. Without widgets, answer with `practice.check(0.25)` (your number)
# and draw another with `practice.next()`.


# %%
def make_variant(rng, n=4):
    """A random quiz: integer scores in -2..2, a random (i, j), 1-based; its answer and its tempting mistakes."""
    scores = torch.tensor([[rng.randint(-2, 2) for _ in range(n)] for _ in range(n)], dtype=torch.float64)
    i = rng.randint(1, n)
    future = i < n and rng.random() < 0.2  # most questions ask for an allowed weight, some for a masked one
    j = rng.randint(i + 1, n) if future else rng.randint(1, i)
    weights = masked_softmax(scores, causal_mask(n))
    mistakes = {
        "That is the weight without the mask: the keys j > i must drop out of the softmax.": masked_softmax(scores)[
            i - 1, j - 1
        ].item(),
        "You swapped i and j: i is the query (the row), j is the key (the column).": weights[j - 1, i - 1].item(),
        "Only the future j > i is masked: the diagonal j = i stays.": masked_softmax(scores, causal_mask(n).tril(-1))[
            i - 1, j - 1
        ].item(),
    }
    if i < n and j < n:
        mistakes["Count from 1, as the lecture does: that is the entry one row and one column further."] = weights[
            i, j
        ].item()
    rows = "\n".join("    " + "  ".join(f"{x:3.0f}" for x in row) for row in scores.tolist())
    why = (
        "j > i: the future is masked, its weight is exactly 0."
        if j > i
        else f"Row {i} keeps the scores {scores[i - 1, :i].tolist()} (keys 1..{i}); softmax of those, entry {j}."
    )
    return quiz.NumericQuestion(
        f"Scores e_ij (row i, column j):\n\n{rows}\n\nWhat is α_{i},{j} in masked attention?",
        weights[i - 1, j - 1].item(),
        tol=1e-3,
        mistakes=mistakes,
        explanation=why,
        key=f"variant alpha_{i}{j}",
    )


practice = quiz.Practice(make_variant, seed=0)
practice.show()

# %% [markdown]
# What the generator produces, checked on 100 variants: weights in $[0, 1]$, exactly 0 for
# $j > i$, and how many questions have $j > i$, beside how many are expected ($3/4 \cdot 1/5$
# of them). Then, on a hand-made matrix rather than the variants: tied allowed scores share
# the weight equally. Last, it prints one variant with its answer: answer the practice
# questions above before you run it.

# %%
rng = random.Random(1)
variants = [make_variant(rng) for _ in range(100)]
future_ones = [v for v in variants if int(v.key[-2]) < int(v.key[-1])]  # key ends with "alpha_ij"
expected = len(variants) * (3 / 4) * 0.2  # P(i < 4) * P(masked | i < 4)
print(f"{len(variants)} variants, {len(future_ones)} of them with j > i (answer 0); expected {expected:.0f}")
assert all(0.0 <= v.answer <= 1.0 for v in variants)
# How many have j > i depends on the seed (binomial(100, 0.15)): printed above, not asserted.
assert all(v.answer == 0.0 for v in future_ones)  # every masked one has weight 0, whatever the seed
assert all(v.answer > 0.0 for v in variants if v not in future_ones)  # every allowed one more than 0
tie = torch.tensor([[1.0, -2, 0, 0], [2, 2, 1, 1], [0, 0, 0, 2], [1, 1, 1, 1]])
assert torch.allclose(masked_softmax(tie, causal_mask(4))[3], torch.full((4,), 0.25))  # four ties: 1/4 each
assert torch.allclose(masked_softmax(tie, causal_mask(4))[1, :2], torch.tensor([0.5, 0.5]))  # the quiz's case
example = variants[0]
print(example.question)
print("answer:", round(example.answer, 4), "|", example.explanation)

# %% [markdown]
# ## 6. Explore: one row at a time
#
# Pick a query $i$ and see its scores, which of them the mask removes, and the weights that
# come out, with and without the mask. The explorer starts on a random matrix; matrix 0 is the
# lecture's (its row 2 is the quiz's answer and its row 3 holds one of exercise 6.2's: answer the quiz
# and do the exercise first).


# %%
def show_row(matrix, i, masked):
    scores = (
        E if matrix == 0 else torch.randint(-2, 3, (4, 4), generator=torch.Generator().manual_seed(matrix)).double()
    )
    weights = masked_softmax(scores, causal_mask(4) if masked else None)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    weight_map(
        weights,
        mask=causal_mask(4) if masked else None,
        ax=axes[0],
        title=f"matrix {matrix}, {'masked' if masked else 'unmasked'}",
    )
    axes[0].axhline(i - 1 - 0.5, color="white", linestyle="--")
    axes[0].axhline(i - 1 + 0.5, color="white", linestyle="--")
    keys = list(range(1, 5))
    axes[1].bar(keys, weights[i - 1].numpy(), color=["C0" if (j <= i or not masked) else "lightgrey" for j in keys])
    axes[1].set_xticks(keys)
    axes[1].set_ylim(0, 1)
    axes[1].set_xlabel("key j")
    axes[1].set_ylabel(f"α_{i},j")
    axes[1].set_title(f"query i = {i}: scores {scores[i - 1].tolist()}")
    plt.tight_layout()
    viz.show(
        f"Left: heatmap of the {'masked' if masked else 'unmasked'} weights of matrix {matrix} on a 0 to 1 scale, "
        f"row {i} marked by dashed lines. Right: bar chart of row {i}'s weights over the keys 1 to 4: "
        + ", ".join(f"{w:.2f}" for w in weights[i - 1].tolist())
        + "."
    )


explorer = viz.interactive(
    show_row,
    matrix=widgets.IntSlider(value=1, min=0, max=20, description="matrix"),  # not the quiz's matrix
    i=widgets.IntSlider(value=3, min=1, max=4, description="query i"),
    masked=widgets.Checkbox(value=True, description="mask the future"),
)

# %% [markdown]
# ## What to try
#
# * In the explorer, check that masking never changes row $i$'s ranking of the keys it may
#   see (why not?), and find a matrix where $\alpha_{i,i}$ is the largest weight only after
#   masking. Why can masking never lower an allowed weight?
# * Replace $-\infty$ by $-10^9$ and then by $-10$ in section 3: from which value on does the
#   future get a visible weight?
# * Pad on the left instead of the right (`["<pad>", "<pad>", "Thinking", "Machines"]`) and
#   build the masks: which rows of the causal-and-padding mask are now empty, and what does
#   `scaled_dot_product_attention` return for them?
# * Give `MultiHeadAttention` `causal_mask(T)` as its `attn_mask` (the wrong convention) and
#   rerun the leak test.
# * Then do the exercises: `exercises/06_masked_attention.ipynb`.
