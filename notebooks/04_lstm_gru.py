# %% [markdown]
# # Lesson 04: LSTM vs GRU, from the equations to the evidence
#
# **Learning goals.** After this lesson you can
# 1. write one step of an LSTM from the lecture's equations and one of a GRU in torch's form
#    (section 2 shows where it departs from the lecture's GRU), and show that given the same
#    weights they compute what `torch.nn.LSTM` / `torch.nn.GRU` compute;
# 2. tell the two GRU conventions of the lecture apart, say which one torch uses, and map
#    one onto the other;
# 3. say where the parameters of both cells sit (gate blocks, two biases) and which biases matter;
# 4. measure, not assume: how far back can an Elman network, a GRU and an LSTM carry a
#    symbol, how much gradient reaches the first step, and what the forget-gate bias does;
# 5. read the gates of a trained network as heatmaps;
# 6. hold Jozefowicz et al. (2015) up against our own numbers, and measure what slicing the input
#    inside the loop costs;
# 7. place the gates among their relatives (residual and highway connections), stack layers and
#    run both directions, carry a state across truncated windows, and clip an exploding gradient,
#    each shown on a computed example.
#
# Teacher forcing, what truncated backpropagation through time cuts and the memory it saves are
# lesson 02b's (sections 1 and 3 there); this lesson uses them without deriving them again.
#
# The lecture notes: Bruno Galerne's (after Marc Lelarge's dataflowr course: GRU and LSTM
# equations, colah's LSTM walk-through, the Jozefowicz et al. quote, which the slides spell
# "Josefowicz"), Andrew Fitzgibbon's
# (gating, the cell state as a conveyor belt, the recurrent unit R(h, x), residual and highway
# connections) and Mayur Naik's Penn CIS 7000 notes (stacked and bidirectional RNNs, truncated
# backpropagation through time, vanishing gradients). Gradient clipping is in
# none of the notes: the Penn notes point to Pascanu et al. (2013) for exploding gradients, the
# paper that proposes clipping the gradient's norm, the form used here (Mikolov's 2012 thesis had
# clipped each entry of the gradient).

# %%
import copy
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

import course_lib
from course_lib import memory
from course_lib.notebook import viz
from course_lib.rnn import GRU, LSTM, ElmanCell, GRUCell, RNNLanguageModel, SequenceClassifier, unroll
from course_lib.train import accuracy, fit, make_batches

# One CPU thread: these networks are small, and on a 2-core machine that runs other jobs one thread
# can be faster than two (benchmarks/RESULTS.md, "Torch threads"; measure with threads=2 on yours).
device = course_lib.setup(seed=0, threads=1)

# %% [markdown]
# ## 1. The LSTM: a cell state on a conveyor belt
#
# The Elman network of lesson 03 rewrites its whole state at every step,
# $h_t = \mathrm{ReLU}(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$, so what it knew 20 steps ago has
# been multiplied by $W_{hh}$ (and cut by ReLU) 20 times. The LSTM (Hochreiter and
# Schmidhuber 1997; the forget gate was added by Gers et al. 2000, and Galerne's slides, like
# colah's post and torch, show the cell with it) keeps a **cell state** $c_t$ that runs along
# the sequence like a conveyor belt (Fitzgibbon): at each step a **forget gate** $f_t$ decides how much of it stays, an
# **input gate** $i_t$ how much of a candidate $g_t$ (colah's $\tilde C_t$) is added, and an
# **output gate** $o_t$ how much is shown as $h_t$:
#
# $$\begin{aligned}
# i_t &= \sigma(W_{xi} x_t + W_{hi} h_{t-1} + b_i) &\qquad f_t &= \sigma(W_{xf} x_t + W_{hf} h_{t-1} + b_f)\\
# g_t &= \tanh(W_{xg} x_t + W_{hg} h_{t-1} + b_g) &\qquad o_t &= \sigma(W_{xo} x_t + W_{ho} h_{t-1} + b_o)\\
# c_t &= f_t \odot c_{t-1} + i_t \odot g_t &\qquad h_t &= o_t \odot \tanh(c_t)
# \end{aligned}$$
#
# colah writes $W_f \cdot [h_{t-1}, x_t]$: one matrix on the concatenation, which is
# $W_{hf} h_{t-1} + W_{xf} x_t$ with the matrix cut in two. Fitzgibbon's notes write the same
# update with other names and leave the gates' inputs out: $c' = a_f * c + a_i * \text{candidate}$,
# $h' = a_o * \phi(c')$, so his $a_f, a_i, a_o$ are $f_t, i_t, o_t$, his candidate is $g_t$, and
# his $\phi$, a nonlinearity his notes leave open, is in the place of the $\tanh$ above (careful: in
# his GRU, section 2, $a_f$ and $a_o$ name other gates).
# The three notations agree on the equations; we use torch's gate names $i, f, g, o$ (torch's documentation
# writes the matrices $W_{ii}, W_{hi}$ and two biases $b_{ii} + b_{hi}$ where we write $W_{xi}, W_{hi}$ and, like
# the lectures, one bias $b_i$ per gate; section 3 counts torch's two). `course_lib.rnn.LSTMCell` stacks the
# four blocks in torch's order **i, f, g, o**, so one product `W_xh` serves all gates, and
# names every gate in one method, `gates` (its `step` returns the new state from `gates`, and the
# heatmaps of section 5 read the same method, so the equations are written once). You write this
# cell yourself, as an `nn.Module`, in exercise 4.1 (`exercises/04_lstm_gru.ipynb`); the solutions
# show course_lib's `gates` after the exercises.

# %% [markdown]
# A whole sequence is `LSTM` / `GRU`: the input terms $W_{xh} x_t + b$ for all steps in one
# product, then a loop over the steps for the recurrence. They are drop-ins for torch's
# modules. With torch's weights (`from_torch`), outputs, final states and every gradient agree
# within $10^{-5}$, absolute plus relative as in `torch.allclose(rtol=1e-5, atol=1e-5)`: a gradient
# is a sum over every step and output, so its rounding error grows with its size
# (tests/test_rnn.py and tests/test_lesson04_rnn.py check all of this for batches, several layers and
# length 1). The cell below checks the outputs and the weights' gradients (not the final states) for
# two layers and a batch of 8:

# %%
torch.backends.cudnn.allow_tf32 = False  # TF32 (recent NVIDIA GPUs) keeps 10 mantissa bits: a coarser rounding
for ours_cls, torch_cls in [(LSTM, nn.LSTM), (GRU, nn.GRU)]:
    theirs = torch_cls(5, 16, num_layers=2).to(device)
    ours = ours_cls.from_torch(theirs)
    x = torch.randn(12, 8, 5, device=device)
    out_t, out_o = theirs(x)[0], ours(x)[0]
    out_t.square().sum().backward()
    out_o.square().sum().backward()
    grad_diff = max((a.grad - b.grad).abs().max().item() for a, b in zip(ours.parameters(), theirs.parameters()))
    out_diff = (out_t - out_o).abs().max().item()
    print(f"{ours_cls.__name__}: max |output difference| {out_diff:.1e}, max |gradient difference| {grad_diff:.1e}")
    assert out_diff < 1e-5
    assert all(
        torch.allclose(a.grad, b.grad, rtol=1e-5, atol=1e-5) for a, b in zip(ours.parameters(), theirs.parameters())
    )

# %% [markdown]
# ## 2. The GRU, and its two conventions
#
# The GRU (Cho et al. 2014) has no separate cell state: an **update gate** $z_t$ mixes the old
# state with a candidate, and a **reset gate** $r_t$ decides how much of the old state the
# candidate sees. In torch's form (the one `course_lib.rnn.GRUCell.gates` computes; torch's documentation
# writes $W_{ir}, b_{ir}$ where we write $W_{xr}, b_{xr}$, and likewise for $z$ and $n$):
#
# $$\begin{aligned}
# r_t &= \sigma(W_{xr} x_t + b_{xr} + W_{hr} h_{t-1} + b_{hr}) &\qquad
# z_t &= \sigma(W_{xz} x_t + b_{xz} + W_{hz} h_{t-1} + b_{hz})\\
# n_t &= \tanh\big(W_{xn} x_t + b_{xn} + r_t \odot (W_{hn} h_{t-1} + b_{hn})\big) &\qquad
# h_t &= z_t \odot h_{t-1} + (1 - z_t) \odot n_t
# \end{aligned}$$
#
# Galerne's lecture shows it twice, in two conventions (and calls $z_t$ the *forget gate*; Cho et
# al. and torch call it the update gate):
#
# | convention | lecture slide 1 (and **torch**) | lecture slide 2 (colah) |
# | --- | --- | --- |
# | mix | $h_t = z_t \odot h_{t-1} + (1 - z_t) \odot \bar h_t$ | $h_t = (1 - z_t) \odot h_{t-1} + z_t \odot \tilde h_t$ |
# | $z_t \approx 1$ means | keep the old state | take the new candidate |
#
# Torch (`nn.GRU`, and cuDNN) uses the first: $z_t$ is a *keep* gate. The two are the same
# family of cells: since $\sigma(-a) = 1 - \sigma(a)$, negating the update gate's weights and
# bias turns one into the other. Checked by computation: the gates come from `course_lib`'s
# `GRUCell.gates` (you write torch's GRU step yourself in exercise 4.2, so the lesson does not; the
# next cells write only the parts that differ from it), only the mix is colah's, and the reset is
# placed as torch places it in both (where the reset acts is the next difference, below):

# %%
cell = nn.GRUCell(4, 6).to(device)
x, h = torch.randn(5, 4, device=device), torch.randn(5, 6, device=device)
H6 = cell.hidden_size


def gru_colah(gru_cell, x, h):
    """colah's mix, h_t = (1 - z_t) h_{t-1} + z_t h~_t, on the gates of a course_lib GRUCell."""
    g = gru_cell.gates(gru_cell.input_projection(x), h)  # {"r", "z", "n", "h"}, torch's equations
    return (1 - g["z"]) * h + g["z"] * g["n"]


ours_gru = GRUCell.from_torch(cell)
negated = copy.deepcopy(ours_gru)
with torch.no_grad():
    for weight in (negated.W_xh, negated.W_hh, negated.b_xh, negated.b_hh):
        weight[H6 : 2 * H6].neg_()  # z' = 1 - z: negate the z block (torch's order: r, z, n)
    torch_h = cell(x, h)
    mapped = gru_colah(negated, x, h)
    unmapped = gru_colah(ours_gru, x, h)
print(
    f"colah's mix (reset placed as torch's), z block negated, vs nn.GRUCell: max difference "
    f"{(mapped - torch_h).abs().max():.1e}"
)
print(
    f"colah's mix (reset placed as torch's), torch's weights as they are:    max difference "
    f"{(unmapped - torch_h).abs().max():.1e}"
)
assert torch.allclose(mapped, torch_h, atol=1e-6) and not torch.allclose(unmapped, torch_h, atol=1e-2)

# %% [markdown]
# A second difference hides in the candidate. The lecture's slide 1 resets **before** the
# product, $\bar h_t = \tanh(W_{xh} x_t + W_{hh}(r_t \odot h_{t-1}) + b_h)$ (Cho et al.'s published paper);
# torch resets **after** it, $n_t = \tanh(W_{xn} x_t + b_{xn} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))$
# (cuDNN's form: $W_{hn} h_{t-1}$ no longer depends on $r_t$, so it joins the other gates' product, one
# recurrent matrix product per step for all three blocks; this lesson does not time the two forms).
# These are different functions, and no renaming of weights maps one onto the other. We use torch's, everywhere.
#
# Fitzgibbon's lecture writes the GRU with other names: its $a_f$ multiplies $h_{\text{prev}}$
# before the product with $W_h$ (a reset gate, placed as on slide 1) and its $a_o$ blends,
# $h' = \mathrm{gate}(a_o, h_{\text{prev}}, \tilde h')$, with the old state in the first place. His
# notes do not define $\mathrm{gate}$; if it is $\mathrm{gate}(a, u, v) = a \odot u + (1 - a) \odot v$
# (the reading we use for his highway layer in section 8 too), $a_o$ is a *keep* gate as on slide 1,
# and with $\phi = \tanh$ (his notes leave $\phi$ open) his GRU is slide 1's cell. On that reading,
# Galerne's slide 1 and Fitzgibbon agree with each other and with Cho et al.; colah's slide differs
# in the mix, torch in where the reset acts.

# %%
W_xn, W_hn = cell.weight_ih[2 * H6 :], cell.weight_hh[2 * H6 :]  # the candidate's block (torch's order r, z, n)
b_xn, b_hn = cell.bias_ih[2 * H6 :], cell.bias_hh[2 * H6 :]
with torch.no_grad():
    g = ours_gru.gates(ours_gru.input_projection(x), h)  # r and z as torch computes them
    h_bar = torch.tanh(x @ W_xn.T + b_xn + (g["r"] * h) @ W_hn.T + b_hn)  # the lecture's reset before the product
    lecture_h = g["z"] * h + (1 - g["z"]) * h_bar
print(f"reset before vs after the product: max difference {(lecture_h - torch_h).abs().max():.3f}")
assert not torch.allclose(lecture_h, torch_h, atol=1e-3)

# %% [markdown]
# ## 3. Parameter counts
#
# Per gate block, a layer has an input matrix, a recurrent matrix and two bias vectors where the
# lectures write one (torch's `bias_ih` and `bias_hh`, ours `b_xh` and `b_hh`). The LSTM has 4 blocks
# (i, f, g, o), the GRU 3 (r, z, n); layers above the first read the $h$ of the layer below. Turning
# that into a count in $I$, $H$ and the number of layers $L$ is exercise 4.3 (the solutions check it
# against ours and torch's modules).
#
# **Do both biases matter?** Where the two are simply added, $W_x x + b_x + W_h h + b_h$, only their
# sum counts: moving an amount from one to the other changes nothing. That holds for the LSTM's
# four gates and the GRU's $r$ and $z$, but **not** for the GRU's candidate, where $b_{hn}$ sits
# inside $r_t \odot (W_{hn} h_{t-1} + b_{hn})$ and is scaled by the reset gate. Moving 1.0 from
# `bias_hh` to `bias_ih` in each block of torch's own cells:


# %%
def move_bias(cell, block, amount=1.0):
    """A copy of a torch cell with `amount` moved from bias_hh to bias_ih in gate block `block`."""
    moved = copy.deepcopy(cell)
    H = cell.hidden_size
    with torch.no_grad():
        moved.bias_ih[block * H : (block + 1) * H] += amount
        moved.bias_hh[block * H : (block + 1) * H] -= amount
    return moved


torch.manual_seed(0)
lstm_cell, gru_cell = nn.LSTMCell(4, 6), nn.GRUCell(4, 6)
x, h, c = torch.randn(50, 4), torch.randn(50, 6), torch.randn(50, 6)
bias_effect = {}
with torch.no_grad():
    for block, gate in enumerate("ifgo"):
        bias_effect["LSTM", gate] = (move_bias(lstm_cell, block)(x, (h, c))[0] - lstm_cell(x, (h, c))[0]).abs().max()
    for block, gate in enumerate("rzn"):
        bias_effect["GRU", gate] = (move_bias(gru_cell, block)(x, h) - gru_cell(x, h)).abs().max()
print(
    viz.table(
        [[cell, gate, v.item()] for (cell, gate), v in bias_effect.items()],
        header=["cell", "gate block", "max |change of h_t|"],
        floatfmt="{:.3g}",
    )
)
assert all(
    v < 1e-5 for (cell, gate), v in bias_effect.items() if gate != "n"
)  # only the sum matters (float32 rounding)
assert bias_effect["GRU", "n"] > 0.05  # b_hn is inside r * (...): it is a parameter of its own

# %% [markdown]
# ## 4. Evidence: how far back can each network remember?
#
# The task: the first symbol is one of 4 **signals** (0 to 3), then come $T$ **distractors**
# (symbols 4 to 7), and the network must say, at the end, which signal came first. Chance is
# 1/4. Nothing in the distractors helps: the only way to succeed is to carry the first
# symbol across $T$ steps. $T$ is the knob.

# %%
tokens, labels = memory.first_symbol_task(4, T=12, seed=0)
for seq, label in zip(tokens.tolist(), labels.tolist()):
    print(" ".join(map(str, seq)), "   -> answer", label)

# %% [markdown]
# We train an Elman network (ReLU, as in lesson 03), a GRU and an LSTM (torch's initialisation)
# with the same recipe, set by the constants at the top of the next cell and printed under it:
# hidden size `HIDDEN`, Adam with learning rate `LR`, `STEPS` steps of `BATCH` sequences, gradients
# clipped to norm `CLIP`, then accuracy on `N_TEST` fresh sequences (drawn with a seed of their own: fresh
# draws, not necessarily unseen ones, since at $T = 5$ the task has only $4 \cdot 4^5$ different sequences).
# Each setting is trained once per
# seed in `SEEDS` (the seed sets the initial weights and the training data): one run is one
# draw, and the spread between draws says which differences mean something. Small and short, to
# fit the lesson's time budget: the numbers are what a short run gives (the time the runs took on
# your machine is printed under the cell, with whether every run took all `STEPS` steps: a run also
# stops after 30 seconds, so a slow or busy machine can cut it short), not each model's best.
#
# The GRU and the LSTM are trained as torch's own modules, `nn.GRU` and `nn.LSTM`
# (`SequenceClassifier(kind, ..., fused=True)`): the equations and the weight layout of sections 1 and 2,
# computed in torch's C++ instead of our Python loop over the steps. On a CPU that pays for the LSTM, which has a
# fused kernel there; torch's GRU and `nn.RNN` run a loop of small ops and gain little over ours
# (`benchmarks/RESULTS.md`, "Lesson 04 on torch's fused RNNs", measures all three). The GRU goes with the LSTM so
# that the two gated networks are trained by the same code; the Elman network stays on our loop, which also keeps
# its one bias where `nn.RNN` has two (section 3: only their sum changes the function, but Adam would train them as
# two). The cell after the figure checks that the trained networks compute what their copies in our cells compute.

# %%
HIDDEN, STEPS, BATCH, LR, CLIP, N_TEST = 16, 250, 32, 1e-2, 1.0, 1000
T_VALUES = [5, 10, 20, 40]
SEEDS = [0, 1, 2]
KINDS = {"elman": "Elman", "gru": "GRU", "lstm": "LSTM"}
FUSED = {"elman": False, "gru": True, "lstm": True}  # train on torch's nn.GRU / nn.LSTM; the Elman network on ours
print(
    f"recipe: hidden size {HIDDEN}, Adam (lr {LR:g}), {STEPS} steps of {BATCH} sequences, gradients clipped "
    f"to norm {CLIP:g}, accuracy on {N_TEST} fresh sequences; T in {T_VALUES}; seeds {SEEDS}"
)


def loss_fn(model, batch):
    tokens, labels = batch
    return F.cross_entropy(model(tokens), labels)


steps_done = []  # steps each run took: fit stops a run early if it passes its time budget (max_seconds)


def train_memory(kind, T, forget_bias=None, seed=0):
    """Train a classifier on the first-symbol task at distance T; return (model, test accuracy)."""
    torch.manual_seed(seed)
    X, y = memory.first_symbol_task(STEPS * BATCH, T, seed=1000 * seed + T, device=device)
    X_test, y_test = memory.first_symbol_task(N_TEST, T, seed=10_000 + T, device=device)
    model = SequenceClassifier(kind, n_symbols=8, hidden_size=HIDDEN, n_classes=4, fused=FUSED[kind]).to(device)
    if forget_bias is not None:
        memory.set_forget_bias(model.rnn, forget_bias)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    history = fit(
        model,
        loss_fn,
        optimizer,
        make_batches(X, y, batch_size=BATCH),
        max_steps=STEPS,
        clip_grad_norm=CLIP,
        max_seconds=30,
        progress=False,
    )
    steps_done.append(len(history.step))
    with torch.no_grad():
        return model.eval(), accuracy(model(X_test), y_test)


def spread(runs):
    """mean, sample sd, min, max of a few runs."""
    return float(np.mean(runs)), float(np.std(runs, ddof=1)), min(runs), max(runs)


acc, trained = {}, {}
started = time.perf_counter()
for T, kind, seed in tqdm([(T, k, s) for T in T_VALUES for k in KINDS for s in SEEDS], desc="runs"):
    model, a = train_memory(kind, T, seed=seed)
    acc.setdefault((kind, T), []).append(a)
    if seed == SEEDS[0]:
        trained[kind, T] = model  # the first seed's networks go to the gate explorer below
print(
    f"{len(KINDS) * len(T_VALUES) * len(SEEDS)} runs in {time.perf_counter() - started:.0f} s; "
    + (f"every run took all {STEPS} steps" if min(steps_done) == STEPS else f"fewest steps in a run: {min(steps_done)}")
)


def steps_label():
    """The steps the runs so far took: STEPS, or, if a slow machine's time budget cut some short, the range."""
    return f"{STEPS} steps" if min(steps_done) == STEPS else f"{min(steps_done)}-{STEPS} steps"


stats = {key: spread(runs) for key, runs in acc.items()}
print(
    viz.table(
        [
            [f"T = {T}"]
            + [
                f"{stats[k, T][0]:.2f} ± {stats[k, T][1]:.2f}  ({stats[k, T][2]:.2f}-{stats[k, T][3]:.2f})"
                for k in KINDS
            ]
            for T in T_VALUES
        ],
        header=[f"accuracy: mean ± sd (min-max) of {len(SEEDS)} seeds"] + list(KINDS.values()),
    )
)

# %%
# One training run per seed at each point, and nothing measured between the T values: the mean with its sd
# as an error bar, and each run as a small hollow marker just right of its mean (drawn on top, so a run
# near the mean is not hidden behind it).
fig, ax = plt.subplots(figsize=(6.5, 4))
for (k, marker), offset in zip(zip(KINDS, "osD"), (-0.9, 0, 0.9)):
    xs = [T + offset for T in T_VALUES]
    ax.errorbar(
        xs,
        [stats[k, T][0] for T in T_VALUES],
        yerr=[stats[k, T][1] for T in T_VALUES],
        marker=marker,
        ls="none",
        ms=8,
        capsize=4,
        label=f"{KINDS[k]} (mean ± sd)",
    )
    for x, T in zip(xs, T_VALUES):
        ax.plot([x + 0.4] * len(SEEDS), acc[k, T], marker=marker, ls="none", ms=4, color="black", mfc="white", zorder=5)
ax.plot([], [], marker="o", ls="none", ms=4, color="black", mfc="white", label="one run (seed), right of its mean")
ax.set(xlabel="distance T", ylabel="test accuracy", xticks=T_VALUES, ylim=(0, 1.02))
ax.set_title(f"Recall the first symbol after T distractors ({steps_label()}, {len(SEEDS)} seeds per point)")
ax.grid(alpha=0.3)
ax.axhline(0.25, color="grey", ls="--", label="chance")
ax.legend(fontsize=8)
viz.show(
    f"Test accuracy against the distance T for Elman, GRU and LSTM, mean and sd over {len(SEEDS)} seeds with each "
    "run as a small hollow marker beside its mean: "
    + "; ".join(f"T = {T}: " + ", ".join(f"{KINDS[k]} {stats[k, T][0]:.2f}" for k in KINDS) for T in T_VALUES)
)

# %% [markdown]
# **The same networks as sections 1 and 2.** The GRUs and LSTMs above are torch's modules. With the same seed
# they start from exactly the weights our cells would (torch's initialisation, drawn in the same order; checked
# below for the first seed), and
# `model.unfused()` copies a trained one into our `GRU` / `LSTM` layer (section 5 reads its gates that way).
# The cell below prints the largest difference of the initial weights, and of the logits of each trained network
# (the first seed's, at every $T$) and of its copy in our cells on the `N_TEST` test sequences:

# %%
init_diff, logit_diff = 0.0, 0.0
for kind in [k for k in KINDS if FUSED[k]]:
    torch.manual_seed(SEEDS[0])
    ours = SequenceClassifier(kind, n_symbols=8, hidden_size=HIDDEN, n_classes=4)
    torch.manual_seed(SEEDS[0])
    fused_copy = SequenceClassifier(kind, n_symbols=8, hidden_size=HIDDEN, n_classes=4, fused=True).unfused()
    init_diff = max(
        [init_diff] + [(a - b).abs().max().item() for a, b in zip(ours.parameters(), fused_copy.parameters())]
    )
    for T in T_VALUES:
        X_test, _ = memory.first_symbol_task(N_TEST, T, seed=10_000 + T, device=device)
        with torch.no_grad():
            logit_diff = max(
                logit_diff, (trained[kind, T](X_test) - trained[kind, T].unfused()(X_test)).abs().max().item()
            )
print(f"initial weights, torch's module vs our cells, same seed: max |difference| {init_diff:.1e}")
print(f"trained networks, torch's module vs its copy in our cells: max |logit difference| {logit_diff:.1e}")
assert init_diff == 0.0 and logit_diff < 1e-4

# %% [markdown]
# What the table says, computed (a difference between two networks counts here only when their
# ranges over the seeds do not overlap; otherwise a change of seed could reverse it):

# %%
for T in T_VALUES:
    ranked = sorted(KINDS, key=lambda k: -stats[k, T][0])
    best, second = ranked[0], ranked[1]
    separated = stats[best, T][2] > stats[second, T][3]
    print(
        f"T = {T:>2}: best mean {KINDS[best]} {stats[best, T][0]:.2f}, then {KINDS[second]} {stats[second, T][0]:.2f}; "
        + ("their ranges do not overlap" if separated else "their ranges overlap: no ranking between these two")
    )
first_fail = {k: next((T for T in T_VALUES if stats[k, T][0] < 0.5), None) for k in KINDS}
print("first T whose mean accuracy is below 0.5:", {KINDS[k]: T for k, T in first_fail.items()})

# %% [markdown]
# ### Why: the gradient that reaches step 1
#
# To learn the task, the loss at the end must send a gradient back to the first input. For
# networks at initialisation (before any training), we measure $\lVert \partial L / \partial x_1
# \rVert$, averaged over `N_GRAD` sequences (set in the next cell), as $T$ grows (`memory.gradient_norms`, tested against
# finite differences).

# %%
T_GRAD, N_GRAD, INIT_SEED = [5, 10, 20, 40, 60], 256, 0
grad_at_1 = {k: [] for k in KINDS}
for T in T_GRAD:
    X, y = memory.first_symbol_task(N_GRAD, T, seed=1, device=device)
    for kind in KINDS:
        torch.manual_seed(INIT_SEED)
        model = SequenceClassifier(kind, n_symbols=8, hidden_size=HIDDEN, n_classes=4).to(device)
        grad_at_1[kind].append(memory.gradient_norms(model, X, y)[0].item())
        if kind == "elman" and T == T_GRAD[-1]:  # the same network in float64 (see below the plot), on the CPU
            elman_float64 = memory.gradient_norms(model.cpu().double(), X.cpu(), y.cpu())[0].item()  # MPS has none
grad_at_1["LSTM, b_f = 2"] = []
for T in T_GRAD:
    X, y = memory.first_symbol_task(N_GRAD, T, seed=1, device=device)
    torch.manual_seed(INIT_SEED)
    model = SequenceClassifier("lstm", n_symbols=8, hidden_size=HIDDEN, n_classes=4).to(device)
    memory.set_forget_bias(model.rnn, 2.0)
    grad_at_1["LSTM, b_f = 2"].append(memory.gradient_norms(model, X, y)[0].item())
series = {KINDS.get(k, k): v for k, v in grad_at_1.items()}
ax = viz.line_plot(
    T_GRAD,
    series,
    xlabel="distance T",
    ylabel="||dL/dx_1|| (log scale)",
    logy=True,
    title="Gradient reaching step 1, at initialisation",
)
for line, marker, style in zip(ax.get_lines(), "osD^", ["-", "--", "-.", ":"]):
    line.set_marker(marker)  # told apart by marker and dash, not by colour alone
    line.set_linestyle(style)
for line, (name, v) in zip(ax.get_lines(), series.items()):
    if v[-1] == 0:  # a log axis cannot draw 0: say so on the figure, not only in the printout
        line.set_label(f"{name} (0 at T = {T_GRAD[-1]}: not drawn)")
ax.legend()
viz.show(
    "The norm of the gradient reaching the first input against the distance T, log scale, at initialisation: "
    + "; ".join(
        f"{name} {v[0]:.1e} at T = {T_GRAD[0]}, "
        + (f"{v[-1]:.1e}" if v[-1] > 0 else "0 (no point: a log scale cannot draw 0)")
        + f" at T = {T_GRAD[-1]}"
        for name, v in series.items()
    )
    + "; each line has its own marker and dash pattern"
)
print(
    viz.table(
        [[name] + v for name, v in series.items()],
        header=["||dL/dx_1||"] + [f"T={T}" for T in T_GRAD],
        floatfmt="{:.1e}",
    )
)
print(f"Elman at T = {T_GRAD[-1]}: {series['Elman'][-1]:.2e} in float32, {elman_float64:.2e} in float64")
if series["Elman"][-1] == 0.0:
    print(
        "float32 gives exactly 0, which a log scale cannot draw; float64 does not: the squares of entries that "
        "small fall below float32's smallest number (about 1.4e-45), so the norm underflows to 0"
    )
shrinks = [name for name, v in series.items() if v[-1] < v[0]]
print(
    f"for these weights (one draw, seed {INIT_SEED}), the gradient at T = {T_GRAD[-1]} is below that at T = {T_GRAD[0]} for: "
    + ", ".join(shrinks)
)

# %% [markdown]
# Where the gradient that reaches step 1 shrinks with $T$ (the printout lists the networks, for this
# draw of the weights), the step-to-step Jacobians it passes through shrink it on the whole. This is
# a measurement at initialisation, for one draw of the weights: it suggests why a long distance is
# hard for the networks the printout lists, the more so the faster their row of the table falls,
# not why one trained network beats another (set the GRU and LSTM rows of the table beside their
# accuracies in section 4: a gap in one need not match a gap in the other).
# For the LSTM the path through the cell state multiplies by $f_t$ at each step, and at initialisation
# $f_t \approx \sigma(0) = 0.5$. Raise $f_t$ and the conveyor belt carries the gradient further:
# that is the forget-gate bias.
#
# ### The forget-gate bias
#
# Starting $b_f$ at a positive value, so that the forget gates begin open, goes back to Gers et
# al. (2000), the paper that added the forget gate; Jozefowicz et al. (2015) tested it in their
# search and report in their abstract that adding a bias of 1 to the LSTM's forget gate closes the
# gap between the LSTM and the GRU (`memory.set_forget_bias`; you write it in exercise
# 4.4). Whether our small runs agree is printed under the table. We train the LSTM again at the
# distance `T_FB` with each forget bias in `FORGET_BIASES` (both set in the next cell), with the
# same seeds and data, and compare with torch's initialisation above (there $b_f$ is the sum of two
# uniform draws in $\pm 1/\sqrt{H}$: near 0, not 0) and with the GRU:

# %%
T_FB, FORGET_BIASES = 20, [1.0, 2.0]  # T_FB must be one of T_VALUES (compared with section 4's runs)
fb_acc = {"torch": acc["lstm", T_FB]}
for b in FORGET_BIASES:
    fb_acc[b] = []
    for seed in tqdm(SEEDS, desc=f"b_f = {b:g}"):
        model, a = train_memory("lstm", T_FB, forget_bias=b, seed=seed)
        fb_acc[b].append(a)
        if seed == SEEDS[0]:
            trained["lstm_fb", b] = model
fb_stats = {b: spread(runs) for b, runs in fb_acc.items()}
print(
    viz.table(
        [[f"b_f = {b:g}" if b != "torch" else "torch's init (b_f near 0)", *fb_stats[b]] for b in fb_acc]
        + [["GRU, for comparison", *stats["gru", T_FB]]],
        header=[f"LSTM at T = {T_FB}, {len(SEEDS)} seeds", "mean", "sd", "min", "max"],
        floatfmt="{:.3f}",
    )
)
for b in FORGET_BIASES:
    separated = fb_stats[b][2] > fb_stats["torch"][3]
    print(
        f"b_f = {b:g} against torch's init: mean {fb_stats[b][0]:.2f} vs {fb_stats['torch'][0]:.2f}; "
        + (
            f"the lowest of the {len(SEEDS)} runs with b_f = {b:g} is above the highest with torch's init"
            if separated
            else f"the ranges of the {len(SEEDS)} runs overlap: these seeds do not separate them"
        )
    )
gru_fb = stats["gru", T_FB]
for b in FORGET_BIASES:
    remains = gru_fb[2] > fb_stats[b][3]  # the same rule as section 4: ranges that do not overlap
    print(
        f"b_f = {b:g} against the GRU: mean {fb_stats[b][0]:.2f} vs {gru_fb[0]:.2f}; "
        + (
            "every GRU run is above every LSTM run: the gap REMAINS in this run"
            if remains
            else "the ranges overlap: these seeds do not show a gap"
        )
    )
f_1 = torch.sigmoid(torch.tensor(1.0)).item()
print(
    f"sigma(1) = {f_1:.2f}: a forget gate at that value alone halves the cell state in "
    f"{np.log(0.5) / np.log(f_1):.1f} steps, and leaves {f_1**T_FB:.0e} of it after T_FB = {T_FB} steps"
)

# %% [markdown]
# Where the printout says the gap remains with $b_f = 1$, the paper's value, our runs disagree with
# Jozefowicz et al.'s abstract. They need not agree: the paper's comparison rests on a search that
# evaluated over ten thousand architectures, each tried with several randomly drawn hyperparameter
# settings, on arithmetic, XML modelling, Penn Treebank language modelling and music; ours are
# networks of $H$ = `HIDDEN` units trained for at most `STEPS` steps, with one learning rate, on one synthetic
# task, over the few seeds in `SEEDS`. A bias of 1 starts a forget gate
# near $\sigma(1)$ (printed, with how fast that alone forgets), not near 1, so at distance `T_FB` its
# benefit may need more training than ours to show; a larger bias starts closer to 1. The numbers
# say what `STEPS` steps of training at this size give, not whether the paper is right.
#
# ## 5. Inside the gates
#
# Pick a network trained at $T$ = `T_FB` and type a sequence (a signal 0-3, then distractors 4-7).
# Each heatmap row is one hidden unit, each column one time step. Watch for units whose
# forget gate $f$ (LSTM) stays near 1, or whose update gate $z$ (GRU, torch's *keep* gate)
# stays near 1, after the first symbol: those are the ones that can carry it. The last panels are the states.
# The panels do not share one colour scale, and each has its own colour bar. The gates, between 0 and 1,
# are drawn from 0 to 1 in a sequential colour map (dark to bright). The signed values are drawn in a
# diverging map whose white is 0, blue negative and red positive: the candidate ($g$ or $n$) and $h$
# from -1 to 1, and the LSTM's cell state $c$ from minus to plus its largest absolute value in the
# picture (it is not bounded by 1).

# %%
gate_models = {  # unfused(): the trained networks copied into our cells, whose gates gate_trace reads
    f"GRU (T = {T_FB})": trained["gru", T_FB].unfused(),
    f"LSTM, b_f = 2 (T = {T_FB})": trained["lstm_fb", 2.0].unfused(),
    f"LSTM, torch's init (T = {T_FB})": trained["lstm", T_FB].unfused(),
}
example = " ".join(map(str, memory.first_symbol_task(1, T_FB, seed=3)[0][0].tolist()))
GATE_NAMES = {
    "i": "input gate i",
    "f": "forget gate f",
    "g": "candidate g",
    "o": "output gate o",
    "c": "cell state c",
    "h": "hidden state h",
    "r": "reset gate r",
    "z": "update gate z (keep)",
    "n": "candidate n",
}


def show_gates(model_name, sequence):
    model = gate_models[model_name]
    try:
        seq = [int(s) for s in sequence.replace(",", " ").split()]
        if not seq or min(seq) < 0 or max(seq) > 7:
            raise ValueError
    except ValueError:
        print("type symbols 0 to 7 separated by spaces, e.g. 2 5 6 4 7")
        return
    tokens = torch.tensor([seq], device=device)
    x = F.one_hot(tokens.T, 8).float()  # (T, 1, 8)
    trace = memory.gate_trace(model.rnn, x)
    with torch.no_grad():
        probs = torch.softmax(model(tokens), -1)[0]
    names = list(trace)
    fig, axes = plt.subplots(len(names), 1, figsize=(min(14, 3 + 0.35 * len(seq)), 1.3 * len(names)), sharex=True)
    for ax, g in zip(axes, names):
        values = trace[g][:, 0, :].T.cpu().numpy()  # (H, T)
        # gates live in (0, 1), tanh outputs in (-1, 1); the cell state c is unbounded
        lo, hi = (0, 1) if g in "ifozr" else (-1, 1) if g != "c" else (-np.abs(values).max(), np.abs(values).max())
        # signed values: a diverging map, white at 0 (lo = -hi), so the sign reads at a glance
        im = ax.imshow(values, aspect="auto", cmap="viridis" if lo == 0 else "RdBu_r", vmin=lo, vmax=hi)
        ax.set_ylabel(GATE_NAMES[g], rotation=0, ha="right", va="center", fontsize=8)
        ax.set_yticks([])
        fig.colorbar(im, ax=ax, fraction=0.02, pad=0.01)
    axes[-1].set_xticks(range(len(seq)), [str(s) for s in seq])
    axes[-1].set_xlabel("input symbol at each step")
    fig.suptitle(f"{model_name}: answer {probs.argmax().item()} (p = {probs.max():.2f}); first symbol {seq[0]}")
    viz.show(
        f"Heatmaps of every gate and state of the {model_name} (rows: hidden units, columns: the {len(seq)} steps), "
        f"each with its colour bar (gates 0 to 1 in viridis; {', '.join(g for g in names if g not in 'ifozr')} in red and blue, white at 0); the network answers {probs.argmax().item()} (p = {probs.max():.2f}) for first "
        f"symbol {seq[0]}"
    )


explorer = viz.interactive(
    show_gates,
    model_name=widgets.Dropdown(options=list(gate_models), description="network"),
    sequence=widgets.Text(value=example, description="sequence", layout=widgets.Layout(width="90%")),
)

# %% [markdown]
# With $b_f = 2$ the forget gates start near $\sigma(2)$ instead of $\sigma(0) = 0.5$. Where training
# left them, in these two networks (trained with the first seed in `SEEDS`): the mean forget gate (LSTM)
# and update gate (GRU) after the first step, per unit,
# for the example above:

# %%
print(f"sigma(2) = {torch.sigmoid(torch.tensor(2.0)).item():.3f}")
x = F.one_hot(torch.tensor([[int(s) for s in example.split()]], device=device).T, 8).float()
f_mean = memory.gate_trace(gate_models[f"LSTM, b_f = 2 (T = {T_FB})"].rnn, x)["f"][1:, 0].mean(0)
z_mean = memory.gate_trace(gate_models[f"GRU (T = {T_FB})"].rnn, x)["z"][1:, 0].mean(0)
print("LSTM (b_f = 2), mean f_t per unit:", np.round(f_mean.cpu().numpy(), 2))
print("GRU, mean z_t per unit:           ", np.round(z_mean.cpu().numpy(), 2))
print(f"largest, in these two networks (seed {SEEDS[0]}): LSTM f {f_mean.max():.3f}, GRU z {z_mean.max():.3f}")

# %% [markdown]
# ## 6. Speed: the same equations, fast or slow
#
# Our layers compute the input projection $W_{xh} x_t + b$ for **all** steps in one matrix
# product, and keep only the recurrence in the Python loop. The tempting alternative slices
# `x[t]` inside the loop (`memory.run_sliced`): the same numbers (the next cell prints the
# largest difference), but $T$ small products
# instead of one, and, when the input needs its gradient (as it does after an embedding
# layer), the backward of every slice writes into a zero gradient of the full input's size, $T$
# times, so that part grows like $T^2$.
#
# Two comparisons, each like with like: the two loops with an input that needs its gradient, and the two
# with one that does not. Timings on a shared machine are noisy, so the variants take turns within each
# repeat (the order rotates), each repeat gives one ratio per comparison, and we print the median ratio
# and its spread (quartiles, and how many repeats had the sliced loop slower). The sizes are set in the
# next cell: a long sequence and a small hidden size, where the $T^2$ part weighs most.
# `benchmarks/bench_rnn.py` is the careful version (more repeats, LSTM and GRU, against `torch.nn`).

# %%
SPEED_T, SPEED_B, SPEED_H, SPEED_REPEATS = 100, 16, 32, 12
torch.manual_seed(0)
speed_lstm = LSTM(SPEED_H, SPEED_H).to(device)
x_plain = torch.randn(SPEED_T, SPEED_B, SPEED_H, device=device)  # (T, batch, input)
x_grad = x_plain.clone().requires_grad_()  # as after an embedding: the input needs its gradient
variants = {
    ("one product", "grad"): lambda: speed_lstm(x_grad)[0].square().mean().backward(),
    ("sliced", "grad"): lambda: memory.run_sliced(speed_lstm, x_grad)[0].square().mean().backward(),
    ("one product", "no grad"): lambda: speed_lstm(x_plain)[0].square().mean().backward(),
    ("sliced", "no grad"): lambda: memory.run_sliced(speed_lstm, x_plain)[0].square().mean().backward(),
}
sync = {"cuda": torch.cuda.synchronize, "mps": torch.mps.synchronize}.get(device.type, lambda: None)
for fn in variants.values():
    fn()  # warm-up
with torch.no_grad():  # "the same numbers": the two loops' outputs, compared
    sliced_diff = (memory.run_sliced(speed_lstm, x_plain)[0] - speed_lstm(x_plain)[0]).abs().max().item()
print(f"sliced loop vs one product: largest output difference {sliced_diff:.1e}")
assert sliced_diff < 1e-5
times = {key: [] for key in variants}
for r in tqdm(range(SPEED_REPEATS), desc="timing"):
    order = list(variants)[r % 4 :] + list(variants)[: r % 4]  # rotate who goes first
    for key in order:
        sync()
        start = time.perf_counter()
        variants[key]()
        sync()  # a GPU works on after Python returns: wait for it before reading the clock
        times[key].append(time.perf_counter() - start)
speed = {}
for need in ("grad", "no grad"):
    ratios = np.array(times["sliced", need]) / np.array(times["one product", need])
    speed[need] = (np.median(ratios), *np.percentile(ratios, [25, 75]), int((ratios > 1).sum()))
print(
    viz.table(
        [
            [f"input {need}", 1000 * np.median(times["one product", need]), 1000 * np.median(times["sliced", need]), *v]
            for need, v in speed.items()
        ],
        header=[
            f"LSTM fwd + bwd, T={SPEED_T}, B={SPEED_B}, H={SPEED_H}",
            "one product, ms",
            "sliced, ms",
            "sliced / one product, median",
            "lower quartile",
            "upper quartile",
            f"repeats (of {SPEED_REPEATS}) sliced slower",
        ],
        floatfmt="{:.2f}",
    )
)
for need, (median, q1, _, slower) in speed.items():
    print(
        f"input {need}: "
        + (
            f"the sliced loop was slower in {slower} of {SPEED_REPEATS} repeats, median {median:.2f}x"
            + (" (even the lower quartile is above 1)" if q1 > 1 else " (the lower quartile is not above 1)")
            if slower > SPEED_REPEATS / 2
            else f"no consistent cost in this run: sliced slower in only {slower} of {SPEED_REPEATS} repeats"
        )
    )
writes_show = speed["grad"][0] > speed["no grad"][0] and speed["grad"][1] > speed["no grad"][2]
print(
    f"median ratio with the input's gradient {speed['grad'][0]:.2f}x, without {speed['no grad'][0]:.2f}x: "
    + (
        "the gradient writes show in this run (the lower quartile with the gradient is above the upper one without)"
        if writes_show
        else "in this run the gradient writes do not stand out from the noise (the two rows' quartiles overlap, "
        "or the row with the gradient is the lower)"
    )
)

# %% [markdown]
# Read the two rows apart, and only as this run's: where the input needs no gradient, the sliced loop
# pays only for the $T$ small products instead of one; where it needs its gradient, for those and for
# the $T$ full-size gradient writes. So where the writes cost something measurable, the row with the
# gradient has the higher ratio, by roughly what the writes add; the last line of the printout says
# whether this run shows that, or whether the two rows are within each other's noise (a shared machine
# can hide the writes, or even reverse the rows). Whether slicing costs anything measurable, and how
# much, depends on the sizes and the machine (try `SPEED_T` = 400, or `SPEED_H` = 128);
# `benchmarks/RESULTS.md` records a careful run at other sizes.
#
# ## 7. Jozefowicz et al. (2015), held against our numbers
#
# Galerne's lecture quotes their conclusion (spelling the first author "Josefowicz"), after an extensive
# search over recurrent architectures:
#
# > *"We have evaluated a variety of recurrent neural network architectures in order to find
# > an architecture that reliably outperforms the LSTM. Though there were architectures that
# > outperformed the LSTM on some problems, **we were unable to find an architecture that
# > consistently beat the LSTM and the GRU in all experimental conditions.**"*
#
# Their second finding, that a forget-gate bias of 1 closes the gap between the LSTM and the GRU, is
# the one section 4 held against our runs (and printed where they disagree, with the reasons they
# need not agree). What our own runs say about the first:


# %%
def fmt(st):
    return f"{st[0]:.2f} ± {st[1]:.2f}"


print(
    f"memory task, T = {T_FB} (mean ± sd of {len(SEEDS)} seeds): Elman {fmt(stats['elman', T_FB])}, "
    f"GRU {fmt(stats['gru', T_FB])}, LSTM {fmt(stats['lstm', T_FB])} (torch's init), "
    + ", ".join(f"LSTM with b_f = {b:g}: {fmt(fb_stats[b])}" for b in FORGET_BIASES)
)
# the best mean of every gated network at T_FB: the GRU, and the LSTM with torch's init and with each b_f
gated_best = max([stats["gru", T_FB][0], stats["lstm", T_FB][0]] + [fb_stats[b][0] for b in FORGET_BIASES])
gru_st, lstm_st = stats["gru", T_FB], stats["lstm", T_FB]
print(
    f"memory task, T = {T_FB}: the best gated mean {gated_best:.2f} against Elman's {stats['elman', T_FB][0]:.2f}; "
    f"GRU {gru_st[0]:.2f} against LSTM with torch's init {lstm_st[0]:.2f} "
    f"(ranges {'overlap' if gru_st[2] <= lstm_st[3] and lstm_st[2] <= gru_st[3] else 'do not overlap'})"
)

# %% [markdown]
# Read the printout with the quote in mind, and with the spreads: on the memory task each number is
# a mean over the seeds in `SEEDS`, and a gap smaller than the sd (or with overlapping ranges) is not
# one to lean on. Lesson 03 (section 4) asked the same question on colored parentheses, with one
# trained Elman network, gated RNN, GRU and LSTM per training mix: single runs, which say nothing
# about how much another seed would move them. Neither gated cell wins everything in Jozefowicz et
# al.'s search either: which one leads depends on the task, and for the LSTM on its forget-gate bias.
# Our networks are tiny: treat them as a demonstration of how to ask the question, not as the answer.
# Exercise 4.5 measures the spread for your own LSTM cell.


# %% [markdown]
# ## 8. Around the gates: residual and highway connections, stacks and both directions
#
# Gates are one answer to vanishing gradients; Fitzgibbon's lecture puts two relatives beside
# them. The residual connection is easiest to see as a different recurrent unit $R(h_{t-1}, x_t)$ in
# the same loop; the highway connection blends a layer's input with a candidate computed from it,
# shown below across depth (and, across time, it is the GRU's blend).
#
# **Residual RNN.** Add the previous state back: $h_t = Q h_{t-1} + \phi(A x_t + b + C h_{t-1})$,
# with $A = W_{xh}$, $b = b_h$, $C = W_{hh}$ (lesson 03's map). With $Q = I$ the Jacobian
# $\partial h_t / \partial h_{t-1}$ is $I$ plus the Elman term, so the gradient reaching step 1
# is no longer a product of Elman Jacobians alone and need not shrink geometrically (it is not
# guaranteed to stay alive either: that depends on the weights). Measured at initialisation
# ($\phi = \tanh$, the same weights for both, loss $\sum h_T$), with the shared loop `unroll` and a one-line residual step:


# %%
class ResidualCell(ElmanCell):
    """Fitzgibbon's residual RNN with Q = I: h_t = h_{t-1} + tanh(W_xh x_t + b_h + W_hh h_{t-1})."""

    def step(self, xw_t, h):
        return h + super().step(xw_t, h)


torch.manual_seed(0)
plain = ElmanCell(8, 16, nonlinearity="tanh")
residual = ResidualCell(8, 16, nonlinearity="tanh")
residual.load_state_dict(plain.state_dict())
res_rows = []
for T in (10, 20, 40, 60):
    x = torch.randn(T, 64, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    row = [T]
    for cell in (plain, residual):
        output, h_T = unroll(cell, x, torch.zeros(64, 16))
        (grad,) = torch.autograd.grad(h_T.sum(), x)
        row += [grad[0].norm(dim=-1).mean().item(), h_T.abs().mean().item()]
    res_rows.append(row)
print(
    viz.table(
        res_rows,
        header=["T", "Elman ||dL/dx_1||", "Elman mean |h_T|", "residual ||dL/dx_1||", "residual mean |h_T|"],
        floatfmt="{:.3g}",
    )
)
# plain: vanished; residual: alive at T = 60 (this draw of the weights)
assert res_rows[-1][1] < 1e-6 * res_rows[-1][3] and res_rows[-1][3] > 1
assert res_rows[-1][4] > 10 * res_rows[-1][2]  # ... but the residual state grows with T

# %% [markdown]
# In this measurement the shortcut keeps the gradient alive, and shows its price: with $Q = I$ the
# state keeps growing ($|h_T|$ above); the lecture's $Q$ is a matrix, not necessarily $I$, and deep
# residual networks pair the shortcut with normalisation (lesson 07's transformer blocks use layer
# norm). A gate such as the GRU's avoids the growth by mixing instead of adding: its $h_t$ is a
# weighted average of $h_{t-1}$ and a candidate in $(-1, 1)$. (The LSTM's cell state still adds,
# $c_t = f_t \odot c_{t-1} + i_t \odot g_t$, and can grow by up to 1 per step; its output
# $h_t = o_t \odot \tanh(c_t)$ stays within $\pm 1$.)
#
# **Highway connections.** Fitzgibbon's notes write only the blend, $h = \mathrm{gate}(a, \tilde h, x)$,
# and say the layer chooses between transforming the input and passing it along unchanged. The rest
# is Srivastava et al.'s highway networks (2015), not the notes: a candidate $\tilde h = \phi(W x + b)$,
# a gate $a = \sigma(W_a x + b_a)$, and, with section 2's reading of $\mathrm{gate}$,
# $h = a \odot \tilde h + (1 - a) \odot x$. The GRU's
# update $h_t = z_t \odot h_{t-1} + (1 - z_t) \odot n_t$ is this blend applied across time,
# with the old state in the role of $x$, $n_t$ in that of $\tilde h$ and $a = 1 - z_t$. Across
# depth, `depth` plain ReLU layers against as many highway layers with the same weights (the gate
# bias set in the next cell is negative, so the gates start mostly closed and each layer mostly passes
# its input along, as Srivastava et al. advise for initialisation):

# %%
torch.manual_seed(0)
depth, width = 30, 16
layers = [nn.Linear(width, width) for _ in range(depth)]
gate_layers = [nn.Linear(width, width) for _ in range(depth)]
for g in gate_layers:
    nn.init.constant_(g.bias, -2.0)
x0 = torch.randn(64, width, requires_grad=True)
h_plain, h_highway = x0, x0
for W, W_a in zip(layers, gate_layers):
    h_plain = torch.relu(W(h_plain))
    a = torch.sigmoid(W_a(h_highway))
    h_highway = a * torch.relu(W(h_highway)) + (1 - a) * h_highway  # gate(a, h~, x)
(g_plain,) = torch.autograd.grad(h_plain.sum(), x0)
(g_highway,) = torch.autograd.grad(h_highway.sum(), x0)
print(f"||dL/dx|| through {depth} layers: plain {g_plain.norm():.2e}, highway {g_highway.norm():.2e}")
assert g_highway.norm() > 1e6 * g_plain.norm()

# %% [markdown]
# **Stacked and bidirectional RNNs** (Penn CIS 7000, Mayur Naik). *Stacking*: layer $\ell$'s
# outputs $h^{(\ell)}_1..h^{(\ell)}_T$ are layer $\ell + 1$'s inputs (`num_layers`, section 1
# checked two layers against torch). *Bidirectional*: a second network reads the sequence
# backwards, and the two states at each step are concatenated. Our layers do not take
# `bidirectional=True`; two of them and a flip compute what torch's does, up to float32 rounding (the
# difference is printed):


# %%
def direction(bi, layer, suffix):
    """One direction of one layer of a bidirectional torch.nn.LSTM, as our LSTM."""
    one = nn.LSTM(bi.input_size if layer == 0 else 2 * bi.hidden_size, bi.hidden_size)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(one, name + "_l0").copy_(getattr(bi, f"{name}_l{layer}{suffix}"))
    return LSTM.from_torch(one)


torch.manual_seed(0)
bi = nn.LSTM(5, 8, num_layers=2, bidirectional=True)
x = torch.randn(7, 3, 5)  # (T, B, I)
out_torch, (h_n_torch, _) = bi(x)
h = x
for layer in range(2):
    forward_out = direction(bi, layer, "")(h)[0]
    backward_out = direction(bi, layer, "_reverse")(h.flip(0))[0].flip(0)  # read from T down to 1
    h = torch.cat([forward_out, backward_out], dim=-1)  # (T, B, 2H): the next layer's input
print(
    f"torch.nn.LSTM(5, 8, num_layers=2, bidirectional=True): output {tuple(out_torch.shape)}, "
    f"h_n {tuple(h_n_torch.shape)} (layers x directions, B, H)"
)
print(f"ours, two directions per layer: output {tuple(h.shape)}, max difference {(h - out_torch).abs().max():.1e}")
assert h.shape == out_torch.shape == (7, 3, 16) and h_n_torch.shape == (4, 3, 8)
assert torch.allclose(h, out_torch, atol=1e-5)

# %% [markdown]
# A bidirectional network sees the whole sequence before it answers at any step: right for
# labelling a sentence that is already written, impossible for a language model, which must
# predict step $t + 1$ from steps $1..t$ only.
#
# ## 9. Training: truncated windows that carry the state; gradient clipping
#
# Lesson 02b trained a recurrent language model with **teacher forcing** (step $t + 1$ reads the
# true word $w_{t+1}$, whatever the model predicted), showed what truncated backpropagation through
# time cuts, and measured the memory it saves; the Penn notes say BPTT is "often 'truncated' after
# ~ 20 timesteps". Its language model started every training sequence from $h_0 = 0$. Run over a long
# text, truncated BPTT proper **carries** the state from one window to the next and cuts only the gradient (`detach`):
# a loss in one window sends no gradient to the windows before it, so dependencies longer than the
# window are learned only through what the forward state happens to carry. Here with
# `course_lib.rnn.RNNLanguageModel` (the Penn notes' RNN LM, $e_t = E x_t$, $h_t = \sigma(U h_{t-1} + W e_t)$,
# $\hat y_t = \mathrm{softmax}(V h_t)$, with a GRU as its recurrent unit instead of the notes' Elman
# step; lesson 07 compares the same class, with an LSTM as its unit, with a GPT) on a toy text: windows
# of `WINDOW` characters, one Adam step per window, `PASSES` passes over the text (both set in the next
# cell), once per seed in `SEEDS`; the loss is measured on the whole text (one forward pass from the zero
# state) before and after. That is the training text itself: the numbers show how well truncated
# training fits it, not how well the model would predict text it has not seen:

# %%
text = "the cat sat on the mat. the dog sat on the log. " * 4
chars = sorted(set(text))
ids = torch.tensor([chars.index(ch) for ch in text])
WINDOW, PASSES = 20, 15


def train_truncated(seed, window=WINDOW, passes=PASSES):
    """Truncated BPTT on `ids`: (whole-text loss before, after)."""
    torch.manual_seed(seed)
    model = RNNLanguageModel(len(chars), embedding_dim=16, hidden_size=32, rnn="gru")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    whole = lambda: model(ids[None, :-1], ids[None, 1:])[1].item()  # noqa: E731
    before = whole()
    for _ in range(passes):
        state = None
        for start in range(0, len(ids) - 1, window):
            x, y = ids[None, start : start + window], ids[None, start + 1 : start + window + 1]
            x = x[:, : y.shape[1]]
            h, state = model.rnn(model.embedding(x), state)
            loss = F.cross_entropy(model.W_hy(h).flatten(0, 1), y.flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            state = state.detach()  # the truncation: no gradient flows into the previous window
    with torch.no_grad():
        return before, whole()


tbptt = [train_truncated(seed) for seed in tqdm(SEEDS, desc="truncated BPTT")]
print(
    viz.table(
        [[f"seed {s}", b, a] for s, (b, a) in zip(SEEDS, tbptt)],
        header=[f"truncated BPTT, windows of {WINDOW}", "loss before", f"loss after {PASSES} passes"],
        floatfmt="{:.3f}",
    )
)
after = [a for _, a in tbptt]
print(
    f"after: mean {np.mean(after):.3f}, sd {np.std(after, ddof=1):.3f} (uniform guessing: ln {len(chars)} = {np.log(len(chars)):.3f})"
)

# %% [markdown]
# **Gradient clipping.** When $\lVert W_{hh} \rVert$ is large the gradient **can explode** instead of
# vanishing (a large norm is needed for it, not enough: Pascanu et al. 2013), and one plain gradient step can wreck the model. Clipping rescales the gradient to
# a maximum norm (`CLIP_TO` below) before the step; the direction is kept. An Elman network whose
# $W_{hh}$ is scaled up (`W_HH_SCALE`), trained for `SGD_STEPS` SGD steps (learning rate `SGD_LR`,
# batches of `SGD_BATCH`) on the memory task at distance `T_CLIP`, with and without clipping, from
# the same weights, once per seed in `SEEDS` (the settings are set at the top of the next cell and
# printed under it):

# %%
W_HH_SCALE, SGD_STEPS, SGD_LR, SGD_BATCH, T_CLIP, CLIP_TO = 3.0, 20, 0.1, 64, 30, 1.0
print(
    f"W_hh x {W_HH_SCALE:g}, {SGD_STEPS} SGD steps, learning rate {SGD_LR:g}, batches of {SGD_BATCH}, "
    f"T = {T_CLIP}, clipped to norm {CLIP_TO:g} or not clipped"
)
N_BATCHES = 8
X_clip, y_clip = memory.first_symbol_task(N_BATCHES * SGD_BATCH, T_CLIP, seed=0)
clip_result = {}
for seed in tqdm(SEEDS, desc="clipping"):
    torch.manual_seed(seed)
    exploding = SequenceClassifier("elman", n_symbols=8, hidden_size=32, n_classes=4)
    with torch.no_grad():
        exploding.rnn.cells[0].W_hh.mul_(W_HH_SCALE)
    start_state = copy.deepcopy(exploding.state_dict())
    for max_norm in (None, CLIP_TO):
        exploding.load_state_dict(start_state)
        opt = torch.optim.SGD(exploding.parameters(), lr=SGD_LR)
        norms = []
        with torch.no_grad():
            loss_before = F.cross_entropy(exploding(X_clip), y_clip).item()
        for step in range(SGD_STEPS):
            batch = slice(SGD_BATCH * (step % N_BATCHES), SGD_BATCH * (step % N_BATCHES + 1))
            loss = F.cross_entropy(exploding(X_clip[batch]), y_clip[batch])
            opt.zero_grad()
            loss.backward()
            norms.append(nn.utils.clip_grad_norm_(exploding.parameters(), max_norm or float("inf")).item())
            opt.step()
        with torch.no_grad():
            loss_after = F.cross_entropy(exploding(X_clip), y_clip).item()
        clip_result[seed, max_norm] = (loss_before, max(norms), loss_after)
print(
    viz.table(
        [[f"seed {s}", "no clipping" if m is None else f"clipped to {m:g}", *v] for (s, m), v in clip_result.items()],
        header=[
            f"{SGD_STEPS} SGD steps",
            "setting",
            "loss before",
            "largest gradient norm (before clipping)",
            "loss after",
        ],
        floatfmt="{:.4g}",
    )
)


def ends_lower(a, b):
    """Loss a below loss b, where a loss that is not finite (nan, inf: the run diverged) is the highest."""
    finite = lambda v: v if np.isfinite(v) else np.inf  # noqa: E731
    return finite(a) < finite(b)


lower = sum(ends_lower(clip_result[s, CLIP_TO][2], clip_result[s, None][2]) for s in SEEDS)
diverged = {m: sum(not np.isfinite(clip_result[s, m][2]) for s in SEEDS) for m in (None, CLIP_TO)}
print(
    f"clipped run ends with the lower loss for {lower} of {len(SEEDS)} seeds; loss after, clipped: "
    + ", ".join(f"{clip_result[s, CLIP_TO][2]:.3g}" for s in SEEDS)
    + "; unclipped: "
    + ", ".join(f"{clip_result[s, None][2]:.3g}" for s in SEEDS)
    + f" (chance: ln 4 = {np.log(4):.3f}); runs whose loss is not finite (diverged): "
    + f"{diverged[None]} unclipped, {diverged[CLIP_TO]} clipped"
)
clipped_after = [clip_result[s, CLIP_TO][2] for s in SEEDS]
print(
    "the clipped runs' final loss minus chance (ln 4): "
    + ", ".join(f"{v - np.log(4):+.3f}" for v in clipped_after)
    + (
        f"; the lowest is {np.log(4) - min(clipped_after):.3f} below chance"
        if min(clipped_after) < np.log(4)
        else "; none ends below chance: the clipped runs stayed finite but learned nothing measurable here"
    )
)

# %% [markdown]
# Read the table seed by seed: the largest gradient norm (measured before clipping) says how far the
# largest step of a run would jump without clipping (the learning rate times that norm; in a clipped
# run no step was longer than `CLIP_TO` times the learning rate); a loss of `nan` or `inf` means the
# run diverged, and the count treats it as the higher loss. Two questions, two printouts: does a run stay finite (the count of diverged
# runs, with and without clipping), and does it learn the task (the clipped runs' losses against
# chance, $\ln 4$; a few steps from weights this large may only get back to guessing). A claim that
# "clipping helps" holds here only as far as those printouts go, for this network, learning rate and
# number of steps.


# %% [markdown]
# ## What to try
#
# * Add seeds to `SEEDS` (five, say): which of the rankings printed in section 4 survive?
# * Train for four times `STEPS`: how far does each network's frontier $T$ move?
# * Give the GRU a "keep bias": set the z block of its input-side bias to 2 (torch's z is a keep gate;
#   section 4 trains torch's `nn.GRU`, whose bias is `bias_ih_l0`, ours calls it `b_xh`) and repeat
#   section 4 at $T = 30$.
# * Type a sequence with a second signal symbol in the middle into the gate explorer: does the
#   network overwrite its memory?
# * Make the sliced loop faster without changing its results (hint: `x @ W_xh.T` once), then
#   run `python benchmarks/bench_rnn.py`.
# * Then do the exercises, `exercises/04_lstm_gru.ipynb`: you build the LSTM cell as an `nn.Module`,
#   drop it into this lesson's sequence model and measure its memory over seeds (plus a GRU step,
#   the parameter count and the forget-gate bias).
#
# ## Closing note: our numbers
#
# The Elman network on the residual line is section 8's: $\tanh$, Gaussian inputs and the loss
# $\sum h_T$; section 4's Elman network uses ReLU, one-hot symbols and the cross-entropy of its
# answer, so its gradient at the same $T$ is a different number.

# %%
print(f"accuracy vs T (first-symbol task, hidden {HIDDEN}, {steps_label()}, mean ± sd of {len(SEEDS)} seeds):")
for kind in KINDS:
    print(f"  {KINDS[kind]:>6}: " + ", ".join(f"T={T} {fmt(stats[kind, T])}" for T in T_VALUES))
print(
    f"  LSTM at T={T_FB}: torch's init {fmt(fb_stats['torch'])}, "
    + ", ".join(f"b_f = {b:g}: {fmt(fb_stats[b])}" for b in FORGET_BIASES)
)
print(
    f"speed, LSTM forward + backward at T = {SPEED_T}, sliced / one product, median of {SPEED_REPEATS} interleaved "
    "repeats, in this run: " + ", ".join(f"input {need} {v[0]:.2f}x" for need, v in speed.items())
)
print(
    f"residual RNN at T = {res_rows[-1][0]}: ||dL/dx_1|| {res_rows[-1][3]:.3g} vs Elman {res_rows[-1][1]:.2e}; "
    f"highway through {depth} layers {g_highway.norm():.2e} vs plain {g_plain.norm():.2e}"
)
print(
    f"truncated BPTT (windows of {WINDOW}) on the toy text: loss "
    f"{np.mean([b for b, _ in tbptt]):.3f} -> {np.mean(after):.3f} (mean of {len(SEEDS)} seeds)"
)
print(
    f"gradient clipping (Elman, W_hh x {W_HH_SCALE:g}, T = {T_CLIP}, {SGD_STEPS} SGD steps): runs that diverged "
    f"(of {len(SEEDS)} seeds): {diverged[None]} without clipping, {diverged[CLIP_TO]} with; clipped final losses "
    f"minus ln 4: " + ", ".join(f"{v - np.log(4):+.3f}" for v in clipped_after)
)
