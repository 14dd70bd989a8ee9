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
# # Lesson 02: backprop by hand, from a softmax to a neural language model and through time
#
# **Learning goals.** After this lesson you can
# 1. write the chain rule as a product of Jacobians and work the lecture's example
#    ($z = Wx$, softmax, cross-entropy) down to $\partial L / \partial W = (\hat{y} - y)\,x^T$;
# 2. write the backward pass of a linear layer, softmax, cross-entropy, tanh / sigmoid / ReLU and
#    an embedding lookup, and explain why softmax and cross-entropy are computed together;
# 3. check any gradient against `torch.autograd` and finite differences, and read the report;
# 4. train the feedforward language model of Bengio et al. (2003) with your own gradients
#    on lesson 01's corpus, put its perplexity next to the n-grams', and mix the two as
#    Bengio et al. did;
# 5. backpropagate through time in an Elman RNN, say what truncation cuts, and *see* gradients
#    vanish or explode with the spectral radius of $W_{hh}$.
#
# Everything here is in `course_lib.backprop` (the blocks), `course_lib.fflm` (the language
# model) and `course_lib.bptt` (through time); read them, every function is a few lines. No
# autograd is used to train; autograd is only the referee.

# %%
import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

import course_lib
from course_lib import backprop as bp
from course_lib import bptt, checkpoint, fflm
from course_lib.corpora import load_sotu
from course_lib.ngram import NGramLM
from course_lib.notebook import viz

course_lib.setup(seed=0)
torch.set_default_dtype(torch.float64)  # float64 for gradient checks; the language model below picks float32

# %% [markdown]
# ## 1. The lecture's example, Jacobian by Jacobian
#
# The Penn CIS 7000 lecture (Mayur Naik) works this network by hand:
#
# $$z = W x, \qquad \hat{y} = \mathrm{softmax}(z), \qquad L = -\sum_{i=1}^{3} y_i \log \hat{y}_i$$
#
# with $W$ of shape $3 \times 2$, $x$ of size 2 and $y$ the one-hot vector of the true class.
# The chain rule multiplies three Jacobians:
#
# $$\frac{\partial L}{\partial W} = \frac{\partial L}{\partial \hat{y}} \cdot \frac{\partial \hat{y}}{\partial z} \cdot \frac{\partial z}{\partial W}$$
#
# * `dL_dyhat` $= \left[-\frac{y_1}{\hat{y}_1}\ \ -\frac{y_2}{\hat{y}_2}\ \ -\frac{y_3}{\hat{y}_3}\right]$, a $1 \times 3$ row;
# * `dyhat_dz`: $\hat{y}_i(1 - \hat{y}_i)$ on the diagonal and $-\hat{y}_i \hat{y}_j$ off it ($3 \times 3$);
# * `dz_dW`: $3 \times 6$, with $W$ flattened row by row ($W_{11}, W_{12}, W_{21}, \dots$), so row $j$
#   holds $x_1, x_2$ in the two columns of $W$'s row $j$.
#
# Their product is $1 \times 6$ and the lecture simplifies it to $(\hat{y} - y)\,x^T$ (reshaped to $3 \times 2$).
# The lecture gives no numbers; the $W$ and $x$ below are ours.

# %%
W = torch.tensor([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
x = torch.tensor([1.0, 2.0])
target = 1  # the true class is the second one: y = [0, 1, 0]

r = bp.seed_example(W, x, target)
torch.set_printoptions(precision=4, sci_mode=False)
for name in ["z", "y_hat", "y", "L", "dL_dyhat", "dyhat_dz", "dz_dW", "dL_dW", "formula"]:
    print(f"{name} =\n{r[name]}\n")

# The product of Jacobians is (y_hat - y) x^T ...
assert torch.allclose(r["dL_dW"].reshape(3, 2), r["formula"])
# ... which is what autograd gets ...
W_leaf = W.clone().requires_grad_()
F.cross_entropy((W_leaf @ x)[None], torch.tensor([target])).backward()
assert torch.allclose(W_leaf.grad, r["formula"])
# ... and what finite differences measure: (L(W + eps) - L(W - eps)) / (2 eps), entry by entry.
numeric = bp.numerical_gradient(lambda W: F.cross_entropy((W @ x)[None], torch.tensor([target])), W)
print("hand-written vs autograd:    ", bp.compare_gradients({"W": r["formula"]}, {"W": W_leaf.grad})["W"].status)
print("hand-written vs finite diff: ", f"max |diff| = {(numeric - r['formula']).abs().max():.1e}")
assert torch.allclose(numeric, r["formula"], atol=1e-8)

# %% [markdown]
# Row $i$ of the gradient is $(\hat{y}_i - y_i)\,x^T$: every row is a multiple of $x^T$, and the
# multiplier $\hat{y}_i - y_i$ is negative for the true class only (its logit should go up) and
# positive for the others. So the true class's row points along $-x$ and the others along $+x$:
# with $x > 0$, as above, it is the only row with negative entries; move $x_1$ or $x_2$ below 0
# and the signs of that column flip in every row. Play with the numbers: move $x$, change the
# true class, draw a random $W$ (0 keeps ours).


# %%
def show_example(x1, x2, true_class, w_seed):
    W = (
        torch.randn(3, 2, generator=torch.Generator().manual_seed(w_seed))
        if w_seed
        else torch.tensor([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
    )
    r = bp.seed_example(W, torch.tensor([x1, x2]), true_class)
    print(f"W = {W.tolist()}")
    print(f"y_hat = {np.round(r['y_hat'].numpy(), 4)}   y = {r['y'].numpy()}   L = {float(r['L']):.4f}")
    print(f"dL/dy_hat (1x3) = {np.round(r['dL_dyhat'].numpy(), 4)}")
    print(f"dy_hat/dz (3x3) =\n{np.round(r['dyhat_dz'].numpy(), 4)}")
    print(f"dz/dW (3x6) =\n{np.round(r['dz_dW'].numpy(), 4)}")
    print(f"product (1x6) = {np.round(r['dL_dW'].numpy(), 4)}")
    print(f"(y_hat - y) x^T =\n{np.round(r['formula'].numpy(), 4)}")
    assert torch.allclose(r["dL_dW"].reshape(3, 2), r["formula"])
    multiplier = r["y_hat"] - r["y"]  # row i of the gradient is multiplier[i] * x^T
    print(f"y_hat - y = {np.round(multiplier.numpy(), 4)}: negative for the true class only")
    assert multiplier[true_class] < 0 and all(multiplier[i] > 0 for i in range(3) if i != true_class)


explorer = viz.interactive(
    show_example,
    x1=widgets.FloatSlider(value=1.0, min=-3, max=3, step=0.1, description="x1"),
    x2=widgets.FloatSlider(value=2.0, min=-3, max=3, step=0.1, description="x2"),
    true_class=widgets.Dropdown(options=[0, 1, 2], value=1, description="true class"),
    w_seed=widgets.IntSlider(value=0, min=0, max=20, description="random W (0: ours)"),
)

# %% [markdown]
# ## 2. The building blocks, each with its backward pass
#
# A network is a composition of a few layers. For each, `course_lib.backprop` has a forward
# and a hand-written backward that takes $\partial L / \partial(\text{output})$ and returns the
# gradients of the inputs and parameters. With a batch of B examples in the **rows** of `x`
# (as `torch.nn` does), the lecture's $z = Wx$ becomes `z = x @ W.T + b`:
#
# | layer | forward | backward |
# | --- | --- | --- |
# | linear | $z = x W^T + b$ | $dx = dz\,W$, $dW = dz^T x$, $db = \sum_b dz_b$ |
# | tanh | $h = \tanh(a)$ | $da = dh \odot (1 - h^2)$ |
# | sigmoid | $h = \sigma(a)$ | $da = dh \odot h (1 - h)$ |
# | ReLU | $h = \max(a, 0)$ | $da = dh \odot [a > 0]$ |
# | softmax | $\hat{y} = \mathrm{softmax}(z)$ | $dz = \hat{y} \odot (d\hat{y} - \langle d\hat{y}, \hat{y} \rangle)$ (the Jacobian product, without building the $K \times K$ matrix) |
# | cross-entropy (fused) | $L = \frac{1}{B}\sum_b -\log \mathrm{softmax}(z_b)_{t_b}$ | $dz = (\hat{y} - y) / B$ |
# | embedding | $e = E[\text{ids}]$ | $dE$ = zeros, then add each $de$ to the row it came from |
#
# `compare_gradients` puts a hand-written gradient next to autograd's and says, per tensor,
# *exact* (bit for bit), *close* (within rounding), or *WRONG*, with the largest absolute and
# relative differences. Everything is in float64, where rounding errors are about $10^{-16}$.

# %%
gen = torch.Generator().manual_seed(0)
B, n_in, n_out, V, d = 4, 3, 5, 6, 2
xb, Wb, bb = (
    torch.randn(B, n_in, generator=gen),
    torch.randn(n_out, n_in, generator=gen),
    torch.randn(n_out, generator=gen),
)
targets = torch.tensor([0, 4, 4, 2])
ids = torch.tensor([[1, 3], [1, 1]])  # word 1 is used three times
E = torch.randn(V, d, generator=gen)
upstream = {"z": torch.randn(B, n_out, generator=gen), "e": torch.randn(2, 2, d, generator=gen)}

reports = {}
# linear: the loss is <dz, z>, so dL/dz = dz
dx, dW, db = bp.linear_backward(upstream["z"], xb, Wb)
reports["linear"] = bp.compare_gradients(
    {"x": dx, "W": dW, "b": db},
    bp.autograd_gradients(
        lambda x, W, b: (bp.linear_forward(x, W, b) * upstream["z"]).sum(), {"x": xb, "W": Wb, "b": bb}
    ),
)
for kind in ["tanh", "sigmoid", "relu"]:
    a = xb @ Wb.T
    h = bp.activation_forward(a, kind)
    reports[kind] = bp.compare_gradients(
        {"a": bp.activation_backward(upstream["z"], a, h, kind)},
        bp.autograd_gradients(lambda a: (bp.activation_forward(a, kind) * upstream["z"]).sum(), {"a": a}),
    )
z = xb @ Wb.T
y_hat = bp.softmax(z)
reports["softmax"] = bp.compare_gradients(
    {"z": bp.softmax_backward(upstream["z"], y_hat)},
    bp.autograd_gradients(lambda z: (torch.softmax(z, 1) * upstream["z"]).sum(), {"z": z}),
)
reports["cross-entropy"] = bp.compare_gradients(
    {"z": bp.cross_entropy_backward(z, targets)}, bp.autograd_gradients(lambda z: F.cross_entropy(z, targets), {"z": z})
)
reports["embedding"] = bp.compare_gradients(
    {"E": bp.embedding_backward(upstream["e"], ids, V)},
    bp.autograd_gradients(lambda E: (F.embedding(ids, E) * upstream["e"]).sum(), {"E": E}),
)
for layer, report in reports.items():
    print(f"== {layer}\n{report}\n")
assert all(report.ok for report in reports.values())

# %% [markdown]
# Two things to notice in the embedding gradient: rows of words that were not looked up are
# zero (the gradient only flows into the rows that were used), and word 1, looked up three
# times, gets the **sum** of its three gradients. Writing `dE[ids] = de`, or even
# `dE[ids] += de`, keeps only one of them, because indexing with repeated ids writes the same
# row several times instead of adding (exercise 2.4).

# %%
dE = bp.embedding_backward(upstream["e"], ids, V)
rows_used = sorted(set(ids.flatten().tolist()))
print("rows used:", rows_used, "  non-zero rows of dE:", torch.nonzero(dE.abs().sum(1)).flatten().tolist())
print("dE[1]                  =", dE[1].numpy())
print("sum of word 1's three de =", upstream["e"][ids == 1].sum(0).numpy())
assert torch.equal(torch.nonzero(dE.abs().sum(1)).flatten(), torch.tensor(rows_used))
assert torch.allclose(dE[1], upstream["e"][ids == 1].sum(0))
wrong = torch.zeros(V, d)
wrong[ids.flatten()] += upstream["e"].reshape(-1, d)
print("dE[ids] += de gives     =", wrong[1].numpy(), " (only one of the three)")
assert not torch.allclose(wrong[1], dE[1])

# %% [markdown]
# ### Why softmax and cross-entropy are fused
#
# Computed separately, $\hat{y} = \mathrm{softmax}(z)$ can round to exactly 0 for a class whose
# logit is far below the others, and then $-\log \hat{y}_t = \infty$ and the lecture's
# $\partial L / \partial \hat{y}_t = -y_t / \hat{y}_t$ divides by zero. Fused, the loss is
# $\log \sum_k e^{z_k - m} + m - z_t$ (with $m = \max z$), which never takes the log of a
# rounded-away probability, and its gradient $\hat{y} - y$ never divides. Even when the true
# class is the likely one, the unfused backward computes $-y_j / \hat{y}_j = 0 / 0$ for the
# classes whose probability rounded to 0, and the NaN spreads. The two agree wherever both are
# finite (the tests check this).

# %%
z_big = torch.tensor([[1000.0, 0.0, -1000.0]])
y_big = bp.softmax(z_big)
print("logits z =", z_big.tolist(), "  softmax(z) =", y_big.tolist())
for t in [0, 2]:
    t = torch.tensor([t])
    unfused_grad = bp.softmax_backward(bp.cross_entropy_from_probs_backward(y_big, t), y_big)
    print(
        f"true class {int(t)}: L unfused = {float(bp.cross_entropy_from_probs(y_big, t)) + 0.0:g}, "
        f"fused = {float(bp.cross_entropy(z_big, t)) + 0.0:g};  "
        f"dL/dz unfused = {unfused_grad.tolist()}, fused = {(bp.cross_entropy_backward(z_big, t) + 0.0).tolist()}"
    )
assert torch.isnan(bp.softmax_backward(bp.cross_entropy_from_probs_backward(y_big, torch.tensor([0])), y_big)).any()
assert math.isinf(float(bp.cross_entropy_from_probs(bp.softmax(z_big), torch.tensor([2]))))
assert float(bp.cross_entropy(z_big, torch.tensor([2]))) == 2000.0

# %% [markdown]
# ## 3. The feedforward neural language model (Bengio et al., 2003)
#
# The Penn lecture's model predicts $w_t$ from the three previous words:
#
# $$e = [E x_{t-3}; E x_{t-2}; E x_{t-1}], \qquad h = \sigma(W e), \qquad z = U h, \qquad \hat{y} = \mathrm{softmax}(z)$$
#
# and is trained by SGD on $-\log \hat{y}_{w_t}$. We add the biases $b$ and $c$
# ($h = \tanh(We + b)$, $z = Uh + c$; Bengio et al. have them too) and take $\sigma = \tanh$.
# `FeedForwardLM.loss_and_grads` is the whole backward pass, chaining the blocks above from
# the loss down to $E$:
#
# ```
# dz = (y_hat - y) / B                       # fused cross-entropy
# dh, dU, dc = linear_backward(dz, h, U)
# da = activation_backward(dh, a, h)         # tanh: dh * (1 - h^2)
# de, dW, db = linear_backward(da, e, W)
# dE = embedding_backward(de split into the 3 words, contexts)
# ```
#
# The data are lesson 01's: same corpus, same split, same vocabulary (`NGramLM`'s with
# `unk_cutoff=2`), and `ngram_windows` pads every sentence exactly as `NGramLM` does, so the
# network predicts exactly the 4-grams that the n-gram models' perplexity scores. Its context
# is 3 words, like a 4-gram model's.

# %%
corpus = load_sotu(level="word")
t0 = time.time()
kn4 = NGramLM(4, smoothing="kneser-ney", unk_cutoff=2).fit(corpus.train)
vocab = kn4.word_to_id
windows = {split: bp.ngram_windows(corpus[split], vocab, order=4) for split in ("train", "val", "test")}
for split, w in windows.items():
    print(f"{split:5s}: {len(w):9,d} windows (3 context words + the word to predict)")
print(f"vocabulary: {len(vocab):,} words (lesson 01's, unk_cutoff=2)   [{time.time() - t0:.1f} s]")
# the network sees exactly the n-grams the 4-gram model is scored on
assert [tuple(kn4.vocab[i] for i in row) for row in windows["test"][:2000].tolist()] == kn4.ngrams(corpus.test[:60])[
    :2000
]
print("first test window:", [kn4.vocab[i] for i in windows["test"][0].tolist()])

# %% [markdown]
# Before training anything, check the whole hand-written backward pass against autograd on a
# small copy of the model in float64 (3 words of context, a 40-word vocabulary, a batch with a
# repeated word):

# %%
small = bp.FeedForwardLM(vocab_size=40, context=3, d=4, hidden=6, seed=1, dtype=torch.float64)
contexts, next_words = torch.tensor([[1, 2, 3], [3, 3, 7], [0, 1, 39]]), torch.tensor([5, 3, 3])
loss, grads = small.loss_and_grads(contexts, next_words)
reference = bp.autograd_gradients(lambda **p: small.loss(**p, contexts=contexts, targets=next_words), small.params)
report = bp.compare_gradients(grads, reference)
print(report)
assert report.ok

# %% [markdown]
# Now the real one, in float32: 32-dimensional embeddings, 64 hidden units, and a softmax over
# all the words of the vocabulary, which is most of the cost: every step multiplies a
# (batch, 64) matrix by the (64, V) output layer, forward and twice backward. We train live
# for a short while with Adam (the lecture's SGD update, with each step divided by a running
# average of the gradient's size, which suits the rarely-updated embedding rows) and plot the
# training loss.

# %%
D_EMB, HIDDEN, BATCH, STEPS = 32, 64, 256, 150
model = bp.FeedForwardLM(len(vocab), context=3, d=D_EMB, hidden=HIDDEN, seed=0, dtype=torch.float32)
print(model)
optimizer = bp.Adam(model.params, lr=3e-3)
train = windows["train"]
order = torch.randperm(len(train), generator=torch.Generator().manual_seed(0))
losses = []
t0 = time.time()
for step in tqdm(range(STEPS), desc="training (hand-written gradients)"):
    batch = train[order[step * BATCH : (step + 1) * BATCH]]
    loss, grads = model.loss_and_grads(batch[:, :-1], batch[:, -1])
    optimizer.step(grads)
    losses.append(loss)
train_seconds = time.time() - t0
print(
    f"{STEPS} steps of {BATCH} windows ({STEPS * BATCH:,} words, {STEPS * BATCH / len(train):.1%} of one pass) "
    f"in {train_seconds:.1f} s"
)
print(
    f"loss: first step {losses[0]:.2f} nats (ln V = {math.log(len(vocab)):.2f}: a uniform guess), last 20 steps {np.mean(losses[-20:]):.2f}"
)
assert abs(losses[0] - math.log(len(vocab))) < 1.0  # a fresh model is close to uniform
assert np.mean(losses[-20:]) < losses[0] - 2  # it learns

# %%
smooth = np.convolve(losses, np.ones(10) / 10, mode="valid")
ax = viz.line_plot(
    range(len(smooth)),
    {"training loss (moving average of 10 steps)": smooth},
    xlabel="step",
    ylabel="cross-entropy (nats)",
    marker="",
    title="Feedforward LM trained with hand-written gradients",
)
ax.axhline(math.log(len(vocab)), color="gray", ls=":", label="ln V (uniform guess)")
ax.legend()
plt.show()
live_val = model.perplexity(windows["val"][:20_000])
print(
    f"after {train_seconds:.0f} s of training: validation perplexity {live_val:.0f} (first 20,000 validation windows)"
)

# %% [markdown]
# This short run (the time is printed above) is far from enough. `scripts/train_fflm.py` trains
# the same model with the same code (the same `loss_and_grads`, the same `Adam`; still no
# autograd) for longer and saves the parameters with the best validation perplexity with
# `course_lib.checkpoint` (float16 safetensors, with the config and the vocabulary). We load it
# and compute its test perplexity here, on the same test 4-grams as lesson 01's models.
#
# ### Lesson 01's table, with the neural model and the mixture
#
# Bengio et al.'s headline result was not the network alone: **mixed** with an n-gram model,
#
# $$P_{mix}(w \mid h) = \lambda\, P_{FF}(w \mid h) + (1 - \lambda)\, P_{KN}(w \mid h),$$
#
# it beat the best n-gram model, because the two make different mistakes. We tune $\lambda$ on
# validation 4-grams (never on test) and score the mixture on the test set. Lesson 01's
# Kneser-Ney numbers are recomputed here (orders 1 to 4, same split, same vocabulary). Mind one
# detail: an order-$n$ model is scored on the $n$-grams of sentences padded with $n-1$ `</s>`,
# so from the trigram on it also "predicts" `</s>` after `</s>`, which is nearly free.
# Comparisons are fairest within a column of equal order; the neural model has 3 words of
# context, so its column is the 4-gram's.

# %%
trained, ckpt = checkpoint.load(
    checkpoint.weights_path("fflm_sotu"),
    build=lambda config: fflm.FeedForwardLM(**config),
    kind="fflm",
    vocab=kn4.vocab,
)
print("loaded", ckpt.path.name, trained, "\nrecorded by scripts/train_fflm.py:", ckpt.info)
p_ff_test = trained.log_probs(windows["test"], progress=lambda it: tqdm(it, desc="FF LM on the test set")).exp()
ff_test = math.exp(-float(p_ff_test.log().double().mean()))

test_ppl = {
    n: kn4.perplexity(corpus.test)
    if n == 4
    else NGramLM(n, "kneser-ney", unk_cutoff=2).fit(corpus.train).perplexity(corpus.test)
    for n in tqdm([1, 2, 3, 4], desc="Kneser-Ney")
}
val_part = corpus.val[:1000]  # the first 1,000 validation sentences: enough to choose one number
p_ff_val = trained.log_probs(bp.ngram_windows(val_part, vocab, order=4)).exp()
weight = fflm.tune_mixture_weight(p_ff_val, kn4.probs(val_part))
p_kn_test = kn4.probs(corpus.test)
mix_test = fflm.mixture_perplexity(p_ff_test, p_kn_test, weight)
print(f"mixture weight lambda = {weight:.2f} (tuned on {len(p_ff_val):,} validation 4-grams)")
rows = [["Kneser-Ney"] + [test_ppl[n] for n in [1, 2, 3, 4]]]
rows.append(["feedforward LM (3 words)", "", "", "", ff_test])
rows.append([f"mixture {weight:.2f} FF + {1 - weight:.2f} KN", "", "", "", mix_test])
print(viz.table(rows, header=["test perplexity", "1-gram", "2-gram", "3-gram", "4-gram"]))
assert math.isclose(math.exp(-np.mean(np.log(p_kn_test))), test_ppl[4], rel_tol=1e-9)  # the same 4-grams

# %% [markdown]
# What the table says (the cell below checks each claim):
#
# * The neural model is far better than the unigram model: three words of context, learned.
# * Alone, it loses to Kneser-Ney: it is worse than even the Kneser-Ney bigram. Bengio et al.
#   trained for weeks; our checkpoint trained for 20 minutes on a shared 2-core CPU.
# * Mixed with the Kneser-Ney 4-gram, it beats every Kneser-Ney model of the table: Bengio et
#   al.'s result, reproduced. The network generalises between similar words through its
#   embeddings, the n-gram remembers exact phrases; each covers some of the other's mistakes.
# * It is not smaller than the n-gram model: its parameters outnumber the distinct training
#   4-grams, though not all the 1- to 4-grams the 4-gram model stores.

# %%
assert ff_test < test_ppl[1] / 2
assert ff_test > test_ppl[2]  # worse than the Kneser-Ney bigram
assert mix_test < min(test_ppl.values())  # the mixture beats the best Kneser-Ney model
n_params = sum(p.numel() for p in trained.params.values())
n_grams = {j: kn4.distinct_ngrams(j) for j in [1, 2, 3, 4]}
print(
    f"feedforward LM {ff_test:.1f}, Kneser-Ney bigram {test_ppl[2]:.1f}, best Kneser-Ney {min(test_ppl.values()):.1f}, "
    f"mixture {mix_test:.1f} ({1 - mix_test / min(test_ppl.values()):.1%} lower)"
)
print(
    f"sizes: {n_params:,} parameters vs {n_grams[4]:,} distinct training 4-grams "
    f"and {sum(n_grams.values()):,} distinct 1- to 4-grams stored by the 4-gram model"
)
assert n_grams[4] < n_params < sum(n_grams.values())

# %% [markdown]
# ## 4. Backpropagation through time
#
# An Elman RNN, in the notation of Galerne's lecture (the Penn CIS 7000 notes write $U$ for
# $W_{hh}$ and $W$ for $W_{xh}$). Lessons 03 and 04 use it with a ReLU, as Galerne does; here we
# take $\tanh$, whose derivative is at most 1, which keeps section 5's argument simple (the
# slider there also has ReLU):
#
# $$h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h), \qquad t = 1, \dots, T$$
#
# The same weights are used at every step, so their gradient is the **sum** over steps of
# each step's share, and the gradient reaching $h_t$ has two parts: from the loss at step $t$,
# and from $h_{t+1}$, which $h_t$ fed into. BPTT walks $t = T, \dots, 1$ (`bptt_step` is one
# iteration, exercise 2.5):
#
# $$\frac{\partial L}{\partial h_t} = \frac{\partial L_t}{\partial h_t} + \left(\frac{\partial L}{\partial h_{t+1}} \odot (1 - h_{t+1}^2)\right) W_{hh}$$

# %%
T, B_rnn, D_in, H = 12, 3, 4, 5
xs, h0 = torch.randn(T, B_rnn, D_in, generator=gen), torch.zeros(B_rnn, H)
W_xh, W_hh, b_h = torch.randn(H, D_in, generator=gen) * 0.5, torch.randn(H, H, generator=gen) * 0.4, torch.zeros(H)
dhs = torch.randn(T, B_rnn, H, generator=gen)  # dL_t/dh_t: a loss at every step


def autograd_loss(truncate=None):
    def loss(xs, h0, W_xh, W_hh, b_h):
        h, total = h0, 0
        for t in range(T):
            if truncate and t > 0 and t % truncate == 0:
                h = h.detach()  # truncated BPTT, the autograd way: cut the graph every k steps
            h = torch.tanh(xs[t] @ W_xh.T + h @ W_hh.T + b_h)
            total = total + (h * dhs[t]).sum()
        return total

    return loss


hs, cache = bp.rnn_forward(xs, h0, W_xh, W_hh, b_h)
inputs = dict(xs=xs, h0=h0, W_xh=W_xh, W_hh=W_hh, b_h=b_h)
full = bp.rnn_backward(dhs, cache)
report = bp.compare_gradients(full, bp.autograd_gradients(autograd_loss(), inputs))
print("full BPTT vs autograd\n", report, sep="")
assert report.ok
truncated = bp.rnn_backward(dhs, cache, truncate=4)
report_cut = bp.compare_gradients(truncated, bp.autograd_gradients(autograd_loss(truncate=4), inputs))
print("\ntruncated BPTT (chunks of 4 steps) vs autograd with h.detach() every 4 steps\n", report_cut, sep="")
assert report_cut.ok

# %% [markdown]
# ### What truncation cuts
#
# With chunks of $k$ steps, no gradient crosses a chunk boundary: the loss at step $t$ still
# trains the weights through the steps of its own chunk, but cannot teach $h$ anything about
# the steps before. Put a loss at the last step only and look at $\|\partial L / \partial h_t\|$:

# %%
last_only = torch.zeros_like(dhs)
last_only[-1] = dhs[-1]
norms_full = bp.rnn_backward(last_only, cache)["dh_total"].norm(dim=(1, 2))
norms_cut = bp.rnn_backward(last_only, cache, truncate=4)["dh_total"].norm(dim=(1, 2))
print(
    viz.table(
        [[t + 1, float(a), float(b)] for t, (a, b) in enumerate(zip(norms_full, norms_cut))],
        header=["step t", "||dL/dh_t|| full", "truncated (k=4)"],
        floatfmt="{:.2e}",
    )
)
assert (norms_cut[: T - 4] == 0).all() and torch.allclose(norms_cut[T - 4 :], norms_full[T - 4 :])
rel = float((truncated["W_hh"] - full["W_hh"]).norm() / full["W_hh"].norm())
print(f"\nwith a loss at every step, truncation changes dW_hh by {rel:.1%} (relative norm)")

# %% [markdown]
# ### Why truncate at all: memory
#
# The Penn notes give the reason: backpropagating through a whole corpus at once is too
# expensive memory-wise, so in practice BPTT is truncated after about 20 steps. The backward
# pass needs every step's pre-activation $a_t$ and state $h_t$ (the cache), so memory grows
# linearly with the number of steps it goes back. We measure the cache for 20 and 200 steps
# and scale it to lesson 01's training text read as one sequence (a batch of 32 streams,
# 512 hidden units, 512-dimensional inputs, float32; one layer, before any embedding or output
# layer, which would need more):


# %%
def cache_bytes(steps, batch=32, hidden=512, inputs=512):
    xs = torch.zeros(steps, batch, inputs, dtype=torch.float32)
    W_xh, W_hh = torch.zeros(hidden, inputs, dtype=torch.float32), torch.zeros(hidden, hidden, dtype=torch.float32)
    _, c = bptt.rnn_forward(
        xs, torch.zeros(batch, hidden, dtype=torch.float32), W_xh, W_hh, torch.zeros(hidden, dtype=torch.float32)
    )
    return sum(t.numel() * t.element_size() for t in (c.xs, c.a, c.hs))  # what grows with the steps


per_step = cache_bytes(200) / 200
assert cache_bytes(200) == 10 * cache_bytes(20)  # linear in the number of steps
corpus_steps = len(windows["train"]) // 32  # every training word once, 32 streams side by side
print(
    f"cache for 20 steps: {cache_bytes(20) / 2**20:.1f} MiB;  for the whole corpus "
    f"({corpus_steps:,} steps): {per_step * corpus_steps / 2**30:,.0f} GiB"
)
assert corpus_steps / 20 > 1000  # a thousand times the memory of a 20-step chunk

# %% [markdown]
# ## 5. Vanishing and exploding gradients, shown
#
# Going back one step multiplies the gradient by $\mathrm{diag}(\sigma'(a_{t+1}))\, W_{hh}$.
# Over $T - t$ steps that is a product of $T - t$ such matrices. With no activation (linear) and
# $W_{hh} = \rho\, Q$ for an orthogonal $Q$ (so its spectral radius, the largest $|\lambda|$, is
# $\rho$), the norm is exactly $\rho^{T-t}$ times the last one: it vanishes for $\rho < 1$ and
# explodes for $\rho > 1$. A $\tanh$ only makes it smaller ($0 < \tanh' \le 1$), so a tanh RNN
# with $\rho \le 1$ can only vanish. Below: 60 steps, 32 hidden units, a loss at the last step.

# %%
T_long, H_long = 60, 32
g2 = torch.Generator().manual_seed(1)
xs_long = torch.randn(T_long, 1, H_long, generator=g2)
W_in = torch.randn(H_long, H_long, generator=g2) / math.sqrt(H_long)
dL_dhT = torch.zeros(T_long, 1, H_long)
dL_dhT[-1] = torch.randn(1, H_long, generator=g2)
dL_dhT[-1] /= dL_dhT[-1].norm()
print(f"{T_long} steps, {H_long} hidden units, ||dL/dh_T|| = {float(dL_dhT[-1].norm()):.0f}")


def gradient_norms(radius, activation):
    W_hh = bp.scaled_orthogonal(H_long, radius, seed=2)
    _, cache = bp.rnn_forward(xs_long, torch.zeros(1, H_long), W_in, W_hh, torch.zeros(H_long), activation)
    return bp.rnn_backward(dL_dhT, cache)["dh_total"].norm(dim=(1, 2)).numpy()


radii = [0.5, 0.9, 1.0, 1.1, 1.5]
steps = np.arange(1, T_long + 1)
fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
for ax, activation in zip(axes, ["linear", "tanh"]):
    viz.line_plot(
        steps,
        {f"rho = {r}": gradient_norms(r, activation) for r in radii},
        xlabel="step t",
        ylabel="||dL/dh_t||  (log scale)",
        logy=True,
        ax=ax,
        marker="",
        title=f"{activation} RNN, loss at t = {T_long}",
    )
plt.show()

linear = {r: gradient_norms(r, "linear") for r in radii}
tanh = {r: gradient_norms(r, "tanh") for r in radii}
for r in radii:
    print(
        f"rho = {r}: ||dL/dh_1|| = {linear[r][0]:.2e} (linear; rho^{T_long - 1} = {r ** (T_long - 1):.2e}),  {tanh[r][0]:.2e} (tanh)"
    )
    assert np.allclose(linear[r], r ** (T_long - steps), rtol=1e-8)  # exactly rho^(T - t)
    assert np.all(tanh[r] <= linear[r] * (1 + 1e-9))  # tanh' <= 1 only shrinks it
assert linear[1.5][0] > 1e9 and tanh[0.9][0] < 1e-3

# %% [markdown]
# Move the radius and switch the activation. Where does the tanh curve stop following the
# linear one, and why does a large radius not make a tanh RNN explode as much? (Hint: look at
# how saturated the units are, $|h| \approx 1$ means $\tanh' \approx 0$.)


# %%
def explore_radius(radius, activation):
    norms = gradient_norms(radius, activation)
    viz.line_plot(
        steps,
        {f"{activation}, rho = {radius:.2f}": norms, "rho^(T-t)": radius ** (T_long - steps)},
        xlabel="step t",
        ylabel="||dL/dh_t||  (log scale)",
        logy=True,
        marker="",
        title="Gradient reaching each step from a loss at the last step",
    )
    plt.show()
    print(f"||dL/dh_1|| / ||dL/dh_T|| = {norms[0] / norms[-1]:.3e}")


radius_explorer = viz.interactive(
    explore_radius,
    radius=widgets.FloatSlider(value=1.0, min=0.3, max=1.8, step=0.05, description="radius rho"),
    activation=widgets.Dropdown(options=["tanh", "linear", "relu", "sigmoid"], value="tanh", description="activation"),
)

# %% [markdown]
# This is why plain RNNs struggle to learn long-range dependencies, why gradients are clipped,
# and why the LSTM and GRU of lesson 04 add a path along which the gradient is not multiplied by
# $W_{hh}$ at every step. The Penn lecture's example: to fill the blank in the passage below, an
# RNN language model must carry "tickets", the 7th word, to the end. How many steps back is that?

# %%
passage = (
    "When she tried to print her tickets, she found that the printer was out of toner. She went to the "
    "stationery store to buy more toner. It was very overpriced. After installing the toner into the "
    "printer, she finally printed her ____"
)
words = passage.replace(",", "").replace(".", "").split()
first, blank = words.index("tickets"), words.index("____")
print(f'"tickets" is word {first + 1}; the blank is word {blank + 1}: {blank - first} steps later')
assert first + 1 == 7 and 30 <= blank - first <= 40
for r in [0.9, 1.0]:
    print(
        f"tanh RNN of section 5, rho = {r}: the gradient {blank - first} steps back is "
        f"{tanh[r][-1 - (blank - first)] / tanh[r][-1]:.1e} of its size at the blank"
    )
#
# ## What to try
#
# * In section 1, set $x = 0$: what is the gradient, and why? Which row of the gradient gets the
#   negative sign, and what does a gradient step do to that row of $W$?
# * Replace `tanh` by `relu` or `sigmoid` in the feedforward LM (`activation="relu"`): rerun the
#   gradient check, then the training. Which learns fastest in 150 steps?
# * Train with plain SGD instead of Adam: `for k in model.params: model.params[k] -= lr * grads[k]`.
#   What learning rate works, and how far does the loss get in the same number of steps?
# * Run `scripts/train_fflm.py --minutes 60` (or with a larger `--hidden`) and put the new model
#   in the table. Does it overtake the Kneser-Ney 4-gram alone? How does the tuned mixture weight
#   move as the network improves?
# * In section 5, use a random Gaussian $W_{hh}$ scaled to spectral radius $\rho$ instead of an
#   orthogonal one: the norm now drifts from $\rho^{T-t}$. Why? (Compare the largest singular value.)
# * Then do the exercises: `exercises/02_backprop.ipynb`.
