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
# # Lesson 02: backprop by hand, from a softmax to a neural language model
#
# **Learning goals.** After this lesson you can
# 1. write the chain rule as a product of Jacobians and work the lecture's example
#    ($z = Wx$, softmax, cross-entropy) down to $\partial L / \partial W = (\hat{y} - y)\,x^T$;
# 2. give the backward pass of a linear layer, softmax, cross-entropy, tanh / sigmoid / ReLU and
#    an embedding lookup, and explain why softmax and cross-entropy are computed together;
# 3. check any gradient against `torch.autograd` and finite differences, and read the report;
# 4. train the feedforward language model of Bengio et al. (2003) with hand-written gradients
#    on lesson 01's corpus, put its perplexity next to the n-grams', and mix the two, as
#    Bengio et al. mixed theirs with a trigram;
# 5. then, in the exercises, write that model's whole backward pass yourself ("backprop ninja")
#    and train it with your own gradients.
#
# The blocks used here are in `course_lib.backprop` and the language model in `course_lib.fflm`;
# no autograd is used to train, autograd is only the referee. Going further, notebook
# `02b_bptt` takes the gradient of a recurrent network through time (vanishing and exploding
# gradients, an RNN language model trained with teacher forcing); lesson 03 does not need it.

# %%
import math
import time

import ipywidgets as widgets
import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

import course_lib
from course_lib import backprop as bp
from course_lib import checkpoint, fflm
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
# (The lecture's slide labels this product "by chain rule of probability". It is the chain rule
# of calculus, for the derivative of composed functions, not lesson 01's chain rule of probability,
# which factorises the probability of a sequence into next-word predictions.)
#
# * `dL_dyhat` $= \left[-\frac{y_1}{\hat{y}_1}\ \ -\frac{y_2}{\hat{y}_2}\ \ -\frac{y_3}{\hat{y}_3}\right]$, a $1 \times 3$ row;
# * `dyhat_dz`: $\hat{y}_i(1 - \hat{y}_i)$ on the diagonal and $-\hat{y}_i \hat{y}_j$ off it ($3 \times 3$);
# * `dz_dW`: $3 \times 6$, with $W$ flattened row by row ($W_{11}, W_{12}, W_{21}, \dots$), so row $j$
#   holds $x_1, x_2$ in the two columns of $W$'s row $j$.
#
# Their product is $1 \times 6$, and the lecture multiplies it out to
# $[(\hat{y}_1 - y_1)x_1\ \ (\hat{y}_1 - y_1)x_2\ \ (\hat{y}_2 - y_2)x_1\ \ \dots\ \ (\hat{y}_3 - y_3)x_2]$.
# Those are the entries of $(\hat{y} - y)\,x^T$ read row by row: reshaped to $3 \times 2$, the product
# is that outer product (the short form is ours; the lecture stops at the row).
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
# gradients of the inputs and parameters (the fused cross-entropy, where the backward pass
# starts, takes the logits and the targets instead). With a batch of B examples in the **rows** of `x`
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
# *exact* (bit for bit), *close* (within `torch.allclose`'s tolerance, `rtol=1e-5`, `atol=1e-8`),
# or *WRONG*, with the largest absolute and relative differences. Everything is in float64,
# where rounding errors are about $10^{-16}$, far inside that tolerance: read the *max |diff|*
# column to see how close.

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
# row several times instead of adding (you will meet this in exercise 2.2).
#
# Why the lookup is a layer at all: Fitzgibbon's lectures and the Penn lecture write a word
# as a one-hot vector $x$ (a 1 at the word's id, 0 elsewhere) multiplied by the embedding
# matrix (Fitzgibbon adds that gradients propagate through the indexing operation; the UKP Lab
# lecture, instead, calls one-hot vectors a poor first option and brings
# in the embedding matrix as the remedy, without writing the product). With one example per
# row, `one_hot(ids) @ E` picks row `ids` of `E`: the lookup *is* that product, computed
# without the zeros. So its gradient is the product's gradient,
# $dE = \mathrm{one\_hot}^T\, de$, whose rows add up the $de$ of every use of a word.

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
# one_hot @ E is the row lookup, and one_hot^T @ de is the accumulated gradient
X = bp.one_hot(ids.reshape(-1), V, dtype=E.dtype)  # (4, V): one row per lookup
print("one_hot(ids) =\n", X.numpy())
assert torch.equal(X @ E, E[ids.reshape(-1)])  # the product picks rows of E
assert torch.allclose(X.T @ upstream["e"].reshape(-1, d), dE)  # and its gradient adds them up

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
# and is trained by SGD on $-\log \hat{y}_{w_t}$. The lecture's $E$ is $d \times |V|$ and multiplies a
# one-hot column $x$; our `E` is its transpose, $|V| \times d$ with one row per word (the shape
# Fitzgibbon gives his embedding matrix $A_0$), looked up as in section 2 (`one_hot(ids) @ E`).
# We add the biases $b$ and $c$ ($h = \tanh(We + b)$, $z = Uh + c$; Bengio et al. have them
# too) and take $\sigma = \tanh$.
# `FeedForwardLM.loss_and_grads` is its whole backward pass, from the loss down to $E$, made of
# the blocks above (with the fused cross-entropy step written inline, to share one softmax);
# writing it yourself is exercise 2.2 ("backprop ninja"), so we use it here without opening it.
#
# The data are lesson 01's: same corpus, same split, same vocabulary (`NGramLM`'s with
# `unk_cutoff=2`; the count printed below is one more than lesson 01's $|V|$ because
# `word_to_id` also gives `<s>` an id, as context, so the network's softmax has an output for
# `<s>` too, which is never a target), and `ngram_windows` pads every sentence exactly as `NGramLM` does (3 `<s>` as
# context, one `</s>` to predict), so the network predicts exactly the words that the n-gram
# models' perplexity scores. Its context is 3 words, like a 4-gram model's.

# %%
corpus = load_sotu(level="word")
t0 = time.time()
kn4 = NGramLM(4, smoothing="kneser-ney", unk_cutoff=2).fit(corpus.train)
vocab = kn4.word_to_id
windows = {split: bp.ngram_windows(corpus[split], vocab, order=4) for split in ("train", "val", "test")}
for split, w in windows.items():
    print(f"{split:5s}: {len(w):9,d} windows (3 context words + the word to predict)")
print(
    f"vocabulary: {len(vocab):,} ids = lesson 01's |V| = {kn4.vocab_size:,} (unk_cutoff=2) + 1 for <s>   "
    f"[{time.time() - t0:.1f} s]"
)
assert len(vocab) == kn4.vocab_size + 1  # <s> has an id (context) but is never predicted
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
# all the words of the vocabulary, which is most of the cost: every step does three matrix
# products of batch $\times$ 64 $\times$ V multiply-adds each for the (V, 64) output layer $U$, one
# forward ($z = hU^T$) and two backward ($dh = dz\,U$, $dU = dz^T h$). We train live
# for a short while with Adam (Kingma and Ba, 2015; not in the Penn lecture, which uses plain SGD;
# Galerne's lecture trains its RNN with `torch.optim.Adam` in its code, without describing it):
# the SGD update with the gradient replaced by its running average and each step divided by a
# running root-mean-square of the gradient. We chose it as a common default and do not compare
# it with SGD here ("What to try" below suggests that run). We plot the training loss.

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

# %%
smooth = np.convolve(losses, np.ones(10) / 10, mode="valid")
ax = viz.line_plot(
    range(10, STEPS + 1),  # each point is the mean of the 10 steps ending at it
    {"training loss (moving average of 10 steps)": smooth},
    xlabel="step (end of each 10-step window)",
    ylabel="cross-entropy (nats)",
    marker="None",  # a line without markers
    title="Feedforward LM trained with hand-written gradients",
)
ax.axhline(math.log(len(vocab)), color="gray", ls=":", label="ln V (uniform guess)")
ax.set_ylim(0, None)
ax.legend()
viz.show(
    f"Training loss of the feedforward LM over {STEPS} steps (moving average of 10), from {smooth[0]:.2f} to "
    f"{smooth[-1]:.2f} nats; it starts {'above' if smooth[0] > math.log(len(vocab)) else 'below'} and ends "
    f"{'above' if smooth[-1] > math.log(len(vocab)) else 'below'} the dotted line ln V = "
    f"{math.log(len(vocab)):.2f} of a uniform guess."
)
live_val = model.perplexity(windows["val"][:20_000])
print(
    f"after {train_seconds:.0f} s of training: validation perplexity {live_val:.0f} (first 20,000 validation windows)"
)

# %% [markdown]
# This short run (the time is printed above) is far from enough: the next cell puts its validation
# perplexity next to that of a longer-trained checkpoint of the same model, on the same 20,000
# validation windows. `scripts/train_fflm.py` trains
# the same model with the same code (the same `loss_and_grads`, the same `Adam`, there with a
# learning rate that decays along a cosine; still no autograd) for longer and saves the
# parameters with the best validation perplexity with `course_lib.checkpoint` (float16
# safetensors, with the config and the vocabulary). We load it and compute its test perplexity
# here, on the same test 4-grams as lesson 01's models.
#
# ### Lesson 01's table, with the neural model and the mixture
#
# Bengio et al. (2003) compared their network with n-gram models on two corpora. On the Brown
# corpus (800,000 training words, a vocabulary of 16,383), every network they report had, alone,
# a lower test perplexity than every n-gram model: 268 to 310 against 312 to 340 (their
# Table 1). **Mixed** with an interpolated trigram,
#
# $$P_{mix}(w \mid h) = \lambda\, P_{FF}(w \mid h) + (1 - \lambda)\, P_{n\text{-gram}}(w \mid h)$$
#
# with $\lambda = 0.5$, every network did better still (the same network went from 276 alone to
# 252 mixed), which they read as a sign that the two make their errors in different places.
# Their headline numbers compare the network that was best on validation data, one of these
# mixtures, with the best n-gram: 252 against 312 on Brown (the n-gram's perplexity is about 24%
# higher) and 109 against 117 on AP News (the paper says about 8%; for AP News it reports only
# the mixed network). We mix with the Kneser-Ney 4-gram and tune $\lambda$ on validation words
# (never on test) instead of fixing it at 0.5, and score the mixture on the test set. Lesson 01's
# Kneser-Ney numbers are recomputed here (orders 1 to 4, same split, same vocabulary), with the
# standard count: every order scores the same words, each sentence's words and one `</s>`, so
# the columns compare; the neural model has 3 words of context, so its column is the 4-gram's.

# %%
trained, ckpt = checkpoint.load(
    checkpoint.weights_path("fflm_sotu"),
    build=lambda config: fflm.FeedForwardLM(**config),
    kind="fflm",
    vocab=kn4.vocab,
)
print("loaded", ckpt.path.name, trained, "\nrecorded by scripts/train_fflm.py:", ckpt.info)
ckpt_val = trained.perplexity(windows["val"][:20_000])
print(
    f"validation perplexity on the first 20,000 validation windows: this checkpoint {ckpt_val:.0f}, "
    f"the {train_seconds:.0f} s run above {live_val:.0f}"
)
assert ckpt_val < live_val
p_ff_test = trained.log_probs(windows["test"], progress=lambda it: tqdm(it, desc="FF LM on the test set")).exp()
ff_test = math.exp(-float(p_ff_test.log().double().mean()))

test_ppl = {
    n: kn4.perplexity(corpus.test)
    if n == 4
    else NGramLM(n, "kneser-ney", unk_cutoff=2).fit(corpus.train).perplexity(corpus.test)
    for n in tqdm([1, 2, 3, 4], desc="Kneser-Ney")
}
val_part = corpus.val[:1000]  # the first 1,000 validation sentences, to keep this cell fast
p_ff_val = trained.log_probs(bp.ngram_windows(val_part, vocab, order=4)).exp()
weight = fflm.tune_mixture_weight(p_ff_val, kn4.probs(val_part))
p_kn_test = kn4.probs(corpus.test)
mix_test = fflm.mixture_perplexity(p_ff_test, p_kn_test, weight)
print(f"mixture weight lambda = {weight:.2f} (tuned on {len(p_ff_val):,} validation words)")
rows = [["Kneser-Ney"] + [test_ppl[n] for n in [1, 2, 3, 4]]]
rows.append(["feedforward LM (3 words)", "", "", "", ff_test])
rows.append([f"mixture {weight:.2f} FF + {1 - weight:.2f} KN", "", "", "", mix_test])
print(viz.table(rows, header=["test perplexity", "1-gram", "2-gram", "3-gram", "4-gram"]))
assert math.isclose(math.exp(-np.mean(np.log(p_kn_test))), test_ppl[4], rel_tol=1e-9)  # the same 4-grams
assert math.isclose(ff_test, ckpt.info["test_perplexity"], rel_tol=1e-4)  # what train_fflm.py recorded

# %% [markdown]
# What this run shows, next to the paper (each sentence below is printed from the numbers):

# %%
best_n = min(test_ppl, key=test_ppl.get)
best_kn = test_ppl[best_n]
n_params = sum(p.numel() for p in trained.params.values())
n_grams = {j: kn4.distinct_ngrams(j) for j in [1, 2, 3, 4]}
stored = sum(n_grams.values())


def compare(a, b):
    return f"{abs(1 - a / b):.1%} {'lower' if a < b else 'higher'}"


print(
    f"* Alone, the network's test perplexity is {ff_test:.1f}: {compare(ff_test, test_ppl[1])} than the unigram's "
    f"{test_ppl[1]:.1f}, {compare(ff_test, test_ppl[2])} than the Kneser-Ney bigram's {test_ppl[2]:.1f}, and "
    f"{compare(ff_test, best_kn)} than the best Kneser-Ney model's ({best_n}-gram) {best_kn:.1f}."
)
print(
    f"* Mixed with the Kneser-Ney 4-gram (lambda = {weight:.2f}), it reaches {mix_test:.1f}: "
    f"{compare(mix_test, best_kn)} than the best Kneser-Ney model and {compare(mix_test, ff_test)} than the network alone."
)
print(
    f"* Size: the network has {n_params:,} parameters; the Kneser-Ney 4-gram stores {stored:,} distinct n-grams "
    f"of orders 1 to 4 ({n_grams[4]:,} of them 4-grams), each with its count: the network is "
    f"{'smaller' if n_params < stored else 'larger'} by a factor {max(n_params, stored) / min(n_params, stored):.1f}."
)
below_both = mix_test < min(ff_test, test_ppl[4])
print(
    f"* The mixture is {'below both of its parts' if below_both else 'not below both of its parts'} in this run "
    f"(network {ff_test:.1f}, Kneser-Ney 4-gram {test_ppl[4]:.1f}, mixture {mix_test:.1f})."
)
print(f"* The checkpoint: d = {trained.d}, H = {trained.hidden}, one seed; {ckpt.info.get('note', '')}.")

# %% [markdown]
# This is one small run, not a replication of the paper. Where the printout differs from the
# paper, these are likely reasons (we have not tested which of them matters). Training: ours
# trained for well under an hour on a shared CPU, with Adam, no weight decay, one setting
# and one seed; Bengio et al. ran SGD with weight decay until it appeared to converge (10 to 20
# passes over Brown, with early stopping), 5 passes over AP News in about three weeks on 40
# CPUs, and reported ten models on Brown (networks alone and the same networks mixed with the
# trigram), from which validation data picked one. Data: the State of
# the Union addresses, not Brown or AP News, with another vocabulary. Size is not the obvious
# difference: their Brown networks had 50 or 100 hidden units (or none) and 30 or 60 features
# per word, ours the $H$ and $d$ printed above. The design differs in two ways: most of their
# networks also had direct connections from the word features to the output layer, which ours
# lacks (a network with no hidden units predicts through those connections alone), and their
# networks read 2 or 4 previous words (orders $n$ = 3 and 5 in their Table 1), ours 3. Why
# mixing can help: Bengio et al. only say that the two make their errors in different places; a
# plausible reading (ours, not measured here) is that the network generalises between similar
# words through its embeddings while the n-gram model remembers exact phrases. The printout says
# whether the mixture is below both of its parts here. Whether the network alone catches up with
# more size and training time is not shown here; "What to try" below has the command to find out.
#
# ### What the feedforward model fixes, and what it leaves (the Penn lecture's list)
#
# The Penn lecture lists what the feedforward LM improves over n-grams: **no sparsity problem** (an
# n-gram never seen in training still gets a probability, through the embeddings of its words) and **no need to
# store every n-gram seen** (its size is the weight matrices'; the printout above compares them).
# And the problems it leaves: the **fixed window is too small** and can never be large enough (a word
# before the window cannot change the prediction); **W grows with the window** ($H \times n d$); and
# each input position is multiplied by **different weights** in $W$ (no symmetry in how the inputs are
# processed): what $W$ learns about a word in one slot does not carry over to the others (only the
# embedding $E$ is shared). The cell shows each on the trained network.

# %%
test_w = windows["test"][:20_000]
unseen = torch.tensor([kn4.count(tuple(kn4.vocab[i] for i in row)) == 0 for row in test_w.tolist()])
ff_logp = trained.log_probs(test_w[unseen])
print(
    f"{float(unseen.float().mean()):.1%} of the first {len(test_w):,} test 4-grams never occur in training (MLE gives "
    f"them probability 0); the network gives each a probability > 0 (smallest {float(ff_logp.exp().min()):.1e})"
)
assert bool(torch.isfinite(ff_logp).all())
d_w, h_w = trained.d, trained.hidden
for n_ctx in (3, 10, 30):
    print(f"window of {n_ctx:2d} words: W has H x n d = {h_w} x {n_ctx * d_w} = {h_w * n_ctx * d_w:,} weights")
longer = torch.cat([torch.tensor([[vocab["the"]]]), windows["test"][:1]], dim=1)  # one more word of context
try:
    trained.log_probs(longer)
    raise AssertionError("a window longer than the model's should be refused")
except ValueError as err:
    print(f"a 4-word context: {err}")  # the input layer has room for n = 3 words, no more
W_slices = trained.params["W"].reshape(h_w, trained.context, d_w)
print(
    "position-specific weights: max |W[:, slot 1] - W[:, slot 3]| = "
    f"{float((W_slices[:, 0] - W_slices[:, 2]).abs().max()):.2f} (the same word meets different weights in each slot)"
)

# %% [markdown]
# A recurrent network (notebook 02b, then lessons 03 and 04) answers these: it reads any length
# with the same weights at every step, so its size does not grow with the context. Its own
# costs, in the lecture's list, are a step-by-step computation that cannot be parallelised over
# time and, in practice, difficulty reaching information from many steps back; 02b shows why.
#
# ## What to try
#
# * In section 1, set $x = 0$: what is the gradient, and why? Then, with $x \neq 0$ again, take one
#   gradient step $W \leftarrow W - \eta\, \partial L / \partial W$ by hand: by how much does each
#   logit $z_i = W_i x$ change (in terms of $\hat{y}_i - y_i$, $\eta$ and $x$), and why does that
#   lower the loss for a small $\eta$?
# * Replace `tanh` by `relu` or `sigmoid` in the feedforward LM (`activation="relu"`): rerun the
#   gradient check, then the training. Which learns fastest in 150 steps (in this run; try three
#   seeds before you conclude)?
# * Train with plain SGD instead of Adam (after exercise 2.3, where you write that update yourself).
#   What learning rate works, and how far does the loss get in the same number of steps?
# * From the course folder, run `python scripts/train_fflm.py --minutes 60 --out notebooks/my_fflm.safetensors`
#   (or with a larger `--hidden`; without `--out` the script stops rather than overwrite the course's
#   checkpoint), load it above with `"my_fflm.safetensors"` in place of `checkpoint.weights_path("fflm_sotu")`
#   and put the new model in the table. Does it overtake the Kneser-Ney 4-gram alone? How does the
#   tuned mixture weight move as the network improves?
# * Then do the exercises, `exercises/02_backprop.ipynb`, and go further with `notebooks/02b_bptt.ipynb`.
