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
# # Lesson 02b (going further): backpropagation through time, vanishing gradients, an RNN language model
#
# Lesson 02 took the gradient of a network that reads a fixed window of words. A recurrent
# network reads a sequence one step at a time with the same weights at every step; this
# notebook takes its gradient by hand, through time. Nothing in lesson 03 depends on it.
#
# **Learning goals.** After this notebook you can
# 1. backpropagate through time in an Elman RNN by hand, check it against autograd, and say
#    what truncated BPTT cuts and why it is used (memory and training time);
# 2. say when gradients vanish or explode: from a loss at the last step, the norm is multiplied
#    by exactly $\rho^{T-t}$ for a linear RNN with a scaled orthogonal $W_{hh} = \rho Q$, and in
#    general bounded by powers of the largest singular value (times the activation's largest
#    slope), not of the spectral radius;
# 3. train an RNN language model with teacher forcing, and say how generation differs.
#
# Two exercises in `exercises/02_backprop.ipynb` go with this notebook: 2.4 (one step of BPTT) with
# section 1, and 2.5 (the whole backward loop over time, truncated, then an experiment on section 2's
# vanishing gradients).

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
from course_lib import bptt
from course_lib.corpora import Vocab, load_sotu
from course_lib.fflm import Adam
from course_lib.notebook import viz

course_lib.setup(seed=0)
torch.set_default_dtype(torch.float64)  # float64 for gradient checks
gen = torch.Generator().manual_seed(0)

# %% [markdown]
# ## 1. Backpropagation through time
#
# An Elman RNN, in the notation of Galerne's lecture (the Penn CIS 7000 notes write $U$ for
# $W_{hh}$ and $W$ for $W_{xh}$; Fitzgibbon writes $h_t = \phi(A x_t + b + C h_{t-1})$ for $t \ge 2$
# and $h_1 = \phi(A x_1 + b)$, the same as starting from $h_0 = 0$, so $A = W_{xh}$, $b = b_h$,
# $C = W_{hh}$). Galerne writes the "usual implementation" of an RNN with $\tanh$ and his Elman
# network with a ReLU, the one lessons 03 and 04 train; here we take $\tanh$, whose derivative is
# at most 1, which keeps section 2's argument simple (the widget there also offers ReLU):
#
# $$h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h), \qquad t = 1, \dots, T$$
#
# The same weights are used at every step, so their gradient is the **sum** over steps of
# each step's share, and the gradient reaching $h_t$ has two parts: from the loss at step $t$,
# and from $h_{t+1}$, which $h_t$ fed into. BPTT walks $t = T, \dots, 1$ (`bptt_step` is one
# iteration, exercise 2.4):
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
# The Penn notes give two reasons. Computing the loss and gradients over the entire corpus at
# once is too expensive memory-wise, so one takes a batch of sentences at a time; and in
# practice BPTT is often truncated after about 20 steps, for training efficiency. The backward
# pass needs every step's input $x_t$ and state $h_t$; `rnn_backward` also keeps the pre-activation
# $a_t$ (its ReLU derivative reads it; tanh's, $1 - h_t^2$, needs only $h_t$, as in exercise 2.4).
# These three per step are the cache, so memory grows
# linearly with the number of steps held for it: the whole sequence without truncation, one chunk
# of $k$ steps when truncated BPTT runs forward and backward one chunk at a time. (Section 1's
# `rnn_backward(..., truncate=4)` cuts the same paths but works from the whole sequence's cache:
# it shows what truncation cuts, not the memory it saves.) We measure the cache for 20 and 200 steps
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


cache_20, cache_200 = cache_bytes(20), cache_bytes(200)
per_step = cache_200 / 200
assert cache_200 == 10 * cache_20  # linear in the number of steps
corpus = load_sotu(level="word")
n_train_tokens = sum(len(s) + 1 for s in corpus.train)  # words plus one </s> per sentence
corpus_steps = n_train_tokens // 32  # every training token once, 32 streams side by side
print(
    f"cache for 20 steps: {cache_20 / 2**20:.1f} MiB, for 200 steps: {cache_200 / 2**20:.1f} MiB;  "
    f"for lesson 01's whole training text "
    f"({corpus_steps:,} steps): {per_step * corpus_steps / 2**30:,.0f} GiB"
)
assert corpus_steps / 20 > 1000  # more than a thousand times the memory of a 20-step chunk

# %% [markdown]
# ## 2. Vanishing and exploding gradients, shown
#
# Going back one step maps the gradient $g_{t+1} = \partial L / \partial h_{t+1}$ (a row) to
# $g_t = \left(g_{t+1} \odot \sigma'(a_{t+1})\right) W_{hh}$, plus the gradient of step $t$'s own
# loss. Put a loss at the last step $T$ only, as in the experiments below, so that nothing is
# added on the way: $g_t$ is then $g_T$ sent through a product of $T - t$ such maps, and every
# statement in this section is about that gradient. Take $W_{hh} = \rho\, Q$ with $Q$ orthogonal: its
# spectral radius (the largest $|\lambda|$) is $\rho$, and so is **every singular value**, so each
# step multiplies the norm by exactly $\rho$ when there is no activation (linear):
# $\|g_t\| = \rho^{T-t} \|g_T\|$, vanishing for $\rho < 1$, exploding for $\rho > 1$. With tanh,
# $0 < \tanh' \le 1$ can only shrink the vector before $W_{hh}$ stretches it by exactly $\rho$, so
# $\|g_t\| \le \rho^{T-t} \|g_T\|$: with $W_{hh} = \rho Q$ and $\rho \le 1$, a tanh RNN's gradient
# can never grow going back in time.
#
# **That argument needs $W_{hh} = \rho Q$ with $Q$ orthogonal.** For a general matrix, one step can stretch a
# vector by up to its largest singular value $\sigma_{max} \ge \rho$, and the bound that always
# holds is $\|g_t\| \le \left(\sigma_{max} \max|\sigma'|\right)^{T-t} \|g_T\|$. For a linear RNN the
# spectral radius says what happens in the long run ($\|W^k\|^{1/k} \to \rho$ as $k$ grows), not
# step by step. This is the argument of Pascanu, Mikolov and Bengio (2013), the paper the Penn notes
# point to for more on vanishing and exploding gradients: with $\gamma$ the activation's largest
# slope (1 for tanh, 1/4 for sigmoid), a largest singular value below $1/\gamma$ is enough for the
# gradient to vanish, and one above $1/\gamma$ is needed (not enough) for it to explode. Below: 60
# steps, 32 hidden units, a loss at the last step; scaled orthogonal matrices $\rho Q$ first, then a
# general one.

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
STYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1))]  # line styles as well as colours
linear = {r: gradient_norms(r, "linear") for r in radii}
tanh = {r: gradient_norms(r, "tanh") for r in radii}
fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
for ax, (activation, norms) in zip(axes, [("linear", linear), ("tanh", tanh)]):
    for r, style in zip(radii, STYLES):
        ax.semilogy(steps, norms[r], ls=style, lw=2, label=f"rho = {r}")
    ax.set(xlabel="step t", title=f"{activation} RNN, W_hh = rho Q, loss at t = {T_long}")
    ax.grid(True, alpha=0.3)
    ax.legend()
axes[0].set_ylabel("||dL/dh_t||  (log scale)")
viz.show(
    f"Norm of the gradient reaching step t from a loss at step {T_long}, log scale, for spectral radius "
    + ", ".join(str(r) for r in radii)
    + f". Left, no activation: straight lines rho^(T-t), from {linear[0.5][0]:.0e} at rho = 0.5 to "
    f"{linear[1.5][0]:.0e} at rho = 1.5 at step 1. Right, tanh: at or below the same lines "
    f"({tanh[0.5][0]:.0e} and {tanh[1.5][0]:.0e} at step 1)."
)
for r in radii:
    print(
        f"rho = {r}: ||dL/dh_1|| = {linear[r][0]:.2e} (linear; rho^{T_long - 1} = {r ** (T_long - 1):.2e}),  {tanh[r][0]:.2e} (tanh)"
    )
    assert np.allclose(linear[r], r ** (T_long - steps), rtol=1e-8)  # exactly rho^(T - t)
    assert np.all(tanh[r] <= linear[r] * (1 + 1e-9))  # tanh' <= 1 only shrinks it
assert linear[1.5][0] > 1e9  # 1.5^59

# %% [markdown]
# Now a general $W_{hh}$, still with spectral radius $\rho = 0.9$ like the scaled orthogonal ones
# above. Its largest singular value is larger, and the gradient no longer equals $\rho^{T-t}$ step for
# step; what always holds is the singular-value bound. The spectral radius is no bound step by step:
# the norm can rise above $\rho^{T-t}$. With an activation whose derivative is at most 1 (linear,
# tanh, ReLU, sigmoid), only a non-normal matrix ($W W^\top \ne W^\top W$) can do this: for a normal
# one, such as a diagonal matrix, $\|W^k\| = \rho^k$ for every $k$. A hand example:
# $W = \begin{pmatrix} 0.9 & 10 \\ 0 & 0.9 \end{pmatrix}$ has both eigenvalues 0.9, yet one linear
# step maps the row $g = (1, 0)$ to $g W = (0.9, 10)$, of norm above 10, and $k$ steps map it to
# $g W^k = (0.9^k,\ 10k \cdot 0.9^{k-1})$, of norm above $\rho^k = 0.9^k$ for every $k \ge 1$ (checked
# below over the steps of this section's sequence).
#
# The same in 32 dimensions: an upper-triangular matrix $R$ whose diagonal (its eigenvalues) is drawn
# in $[-0.9, 0.9]$, one of them 0.9, with random entries above the diagonal (standard deviation
# $2/\sqrt{32}$), seen in a random orthonormal basis $Q$: $W_{hh} = Q R Q^\top$, spectral radius exactly
# 0.9, far from normal. The figure shows the gradient of a linear and of a tanh RNN with it. For
# comparison the printout also counts the steps above $\rho^{T-t}$ for a plain Gaussian matrix scaled to
# the same spectral radius (also non-normal, with a smaller largest singular value).

# %%
rho_target = 0.9  # the spectral radius of both general matrices
g3 = torch.Generator().manual_seed(5)
eigenvalues = torch.empty(H_long).uniform_(-rho_target, rho_target, generator=g3)
eigenvalues[0] = rho_target
R = torch.diag(eigenvalues) + torch.triu(torch.randn(H_long, H_long, generator=g3), diagonal=1) * 2 / math.sqrt(H_long)
Q_basis, _ = torch.linalg.qr(torch.randn(H_long, H_long, generator=g3))
W_general = Q_basis @ R @ Q_basis.T
W_gauss = torch.randn(H_long, H_long, generator=g3)
W_gauss *= rho_target / torch.linalg.eigvals(W_gauss).abs().max()


def norms_with(W_hh, activation):
    _, cache = bp.rnn_forward(xs_long, torch.zeros(1, H_long), W_in, W_hh, torch.zeros(H_long), activation)
    return bp.rnn_backward(dL_dhT, cache)["dh_total"].norm(dim=(1, 2)).numpy()


def steps_above_rho(norms):
    return int(np.sum(norms > rho_target ** (T_long - steps) * (1 + 1e-9)))


rho_g = float(torch.linalg.eigvals(W_general).abs().max())
sigma_g = float(torch.linalg.matrix_norm(W_general, ord=2))  # the largest singular value
assert math.isclose(rho_g, rho_target, rel_tol=1e-6)  # the eigenvalues of R: its diagonal
general = {activation: norms_with(W_general, activation) for activation in ["linear", "tanh"]}
for norms in general.values():
    assert np.all(norms <= sigma_g ** (T_long - steps) * (1 + 1e-9))  # the bound always holds
W_hand, g_hand = torch.tensor([[0.9, 10.0], [0.0, 0.9]]), torch.tensor([1.0, 0.0])  # the hand example
hand_above = sum(
    float((g_hand @ torch.linalg.matrix_power(W_hand, k)).norm()) > 0.9**k for k in range(1, T_long)
)  # steps t = T - k
assert hand_above == T_long - 1  # above rho^(T-t) at every step before T
print(f"hand example W: above rho^(T-t) at {hand_above} of {T_long} steps (every step but T itself)")
print(f"W_hh = Q R Q^T: spectral radius {rho_g:.2f}, largest singular value {sigma_g:.2f}")
above = {activation: steps_above_rho(norms) for activation, norms in general.items()}
for activation, norms in general.items():
    print(
        f"{activation:6s}: ||dL/dh_1|| = {norms[0]:.2e}  (rho^{T_long - 1} = {rho_target ** (T_long - 1):.2e}, "
        f"sigma_max^{T_long - 1} = {sigma_g ** (T_long - 1):.2e}); above rho^(T-t) at {above[activation]} of {T_long} steps"
    )
assert above["linear"] > T_long // 2  # the picture shows what the text says: above rho^(T-t) at most steps


def mean_tanh_slope(W_hh):
    """tanh'(a_t) = 1 - h_t^2, averaged over the units and steps of section 2's sequence."""
    hs_w, _ = bp.rnn_forward(xs_long, torch.zeros(1, H_long), W_in, W_hh, torch.zeros(H_long), "tanh")
    return float((1 - hs_w**2).mean())


mean_slope = mean_tanh_slope(W_general)
slope_no_recurrence = mean_tanh_slope(torch.zeros(H_long, H_long))  # the inputs alone
slope_orthogonal = mean_tanh_slope(bp.scaled_orthogonal(H_long, rho_target, seed=2))
print(
    f"mean slope tanh' over units and steps: {mean_slope:.3f} with this W_hh; {slope_orthogonal:.3f} with the "
    f"scaled orthogonal one of spectral radius {rho_target} above; {slope_no_recurrence:.3f} with W_hh = 0 (inputs alone)"
)
assert general["tanh"][0] < general["linear"][0] and mean_slope < slope_orthogonal < slope_no_recurrence < 0.75
gauss_above = {activation: steps_above_rho(norms_with(W_gauss, activation)) for activation in ["linear", "tanh"]}

assert float(torch.linalg.matrix_norm(W_gauss, ord=2)) < sigma_g
print(
    f"plain Gaussian W_hh of spectral radius {rho_target} (largest singular value "
    f"{float(torch.linalg.matrix_norm(W_gauss, ord=2)):.2f}): above rho^(T-t) at {gauss_above['linear']} (linear) "
    f"and {gauss_above['tanh']} (tanh) of {T_long} steps"
)
fig, ax = plt.subplots(figsize=(10, 4))
ax.semilogy(steps, general["linear"], lw=2, label="linear, W_hh = Q R Q^T")
ax.semilogy(steps, general["tanh"], lw=2, ls="--", label="tanh, W_hh = Q R Q^T")
ax.semilogy(steps, rho_target ** (T_long - steps), ls=":", color="gray", label=f"rho^(T-t), rho = {rho_target}")
ax.semilogy(
    steps, sigma_g ** (T_long - steps), ls="-.", color="black", label=f"sigma_max^(T-t), sigma_max = {sigma_g:.2f}"
)
ax.set(xlabel="step t", ylabel="||dL/dh_t||  (log scale)", title="A non-normal W_hh: the bound is the singular value")
ax.grid(True, alpha=0.3)
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))  # outside the axes: the legend hides no curve
fig.tight_layout()
viz.show(
    f"Gradient norm against step for a non-normal W_hh of spectral radius {rho_g:.2f} and largest singular value "
    f"{sigma_g:.2f}: the linear RNN's curve lies above rho^(T-t) at {above['linear']} of {T_long} steps "
    f"({general['linear'][0]:.1e} at step 1, against rho^(T-t) = {rho_target ** (T_long - 1):.1e}); the tanh "
    f"RNN's at {above['tanh']} ({general['tanh'][0]:.1e} at step 1); both stay under the bound "
    f"sigma_max^(T-t) = {sigma_g ** (T_long - 1):.1e}."
)

# %% [markdown]
# The linear RNN shows what the spectral radius hides: its gradient stays above $\rho^{T-t}$ at the
# steps counted above, although every eigenvalue of $W_{hh}$ is at most 0.9 in size. With tanh the
# same matrix gives a far smaller gradient here (the counts above): each step multiplies the gradient
# by the slopes $\tanh' = 1 - h^2$ before $W_{hh}$ stretches it, and these are well below 1. Their
# mean is printed, with two references: the inputs alone ($W_{hh} = 0$) already keep it well below 1,
# and in this run the scaled orthogonal matrix lowers it a little and this one a little more. Being non-normal
# is what allows a rise above $\rho^{T-t}$, not what forces it: the plain Gaussian matrix, also
# non-normal but with a smaller largest singular value (both printed), stays at or below
# $\rho^{T-t}$ except at the steps counted in the last line.

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
        marker=".",
        title="Gradient reaching each step from a loss at the last step",
    )
    viz.show(
        f"Gradient norm against step for a {activation} RNN with W_hh = rho Q, Q orthogonal, rho = {radius:.2f}, beside "
        f"rho^(T-t); at step 1 it is {norms[0] / norms[-1]:.1e} times its size at the last step."
    )
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
# RNN language model must carry "tickets", the 7th word, to the end. The loss that needs it sits at
# the step whose target is the blank, the step that reads "her" (section 3: step $t$ reads $x_t$
# and predicts $x_{t+1}$). How many steps back from there is "tickets" read? (The code counts words
# only, with the punctuation dropped; section 3's tokens keep punctuation, which would add a few
# steps.)

# %%
passage = (
    "When she tried to print her tickets, she found that the printer was out of toner. She went to the "
    "stationery store to buy more toner. It was very overpriced. After installing the toner into the "
    "printer, she finally printed her ____"
)
words = passage.replace(",", "").replace(".", "").split()
first, blank = words.index("tickets"), words.index("____")
back = blank - 1 - first  # from the step that reads "her" (target: the blank) to the step that reads "tickets"
print(
    f'"tickets" is word {first + 1}, read at step {first + 1}; the blank is word {blank + 1}, the target of step '
    f'{blank} (which reads "{words[blank - 1]}"); from the loss at step {blank}, step {first + 1} is {back} steps back'
)
assert first + 1 == 7 and words[blank - 1] == "her" and 30 <= back <= 40
for r in [0.9, 1.0]:
    print(
        f"tanh RNN of section 2 (these weights and inputs), rho = {r}: the gradient {back} steps back is "
        f"{tanh[r][-1 - back] / tanh[r][-1]:.1e} of its size at the step of the loss"
    )

# %% [markdown]
# ## 3. An RNN language model, trained with teacher forcing
#
# The Penn lecture's RNN language model reads one word per step and predicts the next one
# (the lecture writes $\sigma$, $U$, $W$, $V$ and no biases; here $\sigma = \tanh$, with biases
# $b_h$ and $b_y$, in section 1's names and, for the output layer, Galerne's $W_{hy}$; the lecture's
# $E$ is $d \times |V|$ and multiplies a one-hot column $x_t$, while the code's `E` is its transpose,
# one row per word, so `E[x]` is the lecture's $E x_t$ as a row, as in lesson 02):
#
# $$h_t = \tanh(W_{xh} E x_t + W_{hh} h_{t-1} + b_h), \qquad \hat{y}_t = \mathrm{softmax}(W_{hy} h_t + b_y), \qquad L = \frac{1}{T} \sum_{t=1}^{T} -\log \hat{y}_t[x_{t+1}]$$
#
# In training, the input at step $t+1$ is the **true** word $x_{t+1}$ of the text, whatever the
# model predicted at step $t$: this is **teacher forcing**. So the inputs are the text and the
# targets are the same text shifted by one word; all $T$ predictions of a sequence come out of
# one forward pass, and one backward pass through time (section 1, with a loss at every step)
# gives the gradient of all $T$ losses. At generation time there is no text to read: the
# model's own sampled word becomes its next input.
#
# Everything below is by hand again: writing $L_t = -\frac{1}{T} \log \hat{y}_t[x_{t+1}]$ for step
# $t$'s term of $L$ (the code also averages over the sequences of a batch), the output layer's
# backward gives $\partial L_t / \partial h_t$ at every step, `rnn_backward` takes it through time,
# and the embedding's backward adds the gradients of repeated words. The data: the addresses of 1990
# to 2000, a vocabulary of 2,000 entries (`<UNK>`, `</s>` and the 1,998 most frequent words; the
# other words become `<UNK>`), every sentence followed by `</s>`, read as one stream and cut into
# rows of $T + 1 = 21$ tokens (each a sequence of $T = 20$ inputs and their 20 targets; rows do not
# overlap), about the length after which the Penn notes say BPTT is truncated in practice. In this
# section (its prose, printouts and labels) every token is called a word, punctuation marks and
# `</s>` included. Each sequence starts from $h_0 = 0$ here; truncated BPTT proper would carry the
# state over from the previous chunk, without its gradient.

# %%
lm_text = load_sotu(level="word", first_year=1990, last_year=2000)
lm_vocab = Vocab(lm_text.train, specials=("<UNK>", "</s>"), max_size=2000)


def stream_of(sentences, T=20):
    """Sentences (each followed by </s>) as one stream of ids, cut into rows of T + 1 ids."""
    ids = torch.tensor([i for s in sentences for i in lm_vocab.encode([*s, "</s>"])])
    return ids[: len(ids) // (T + 1) * (T + 1)].reshape(-1, T + 1)


lm_train, lm_val = stream_of(lm_text.train), stream_of(lm_text.val)
inputs, targets = lm_train[0, :-1], lm_train[0, 1:]
print(
    f"{len(lm_train):,} training and {len(lm_val):,} validation sequences of {lm_train.shape[1] - 1} words; "
    f"V = {len(lm_vocab):,}"
)
assert len(lm_vocab) == 2000 and lm_vocab.itos[:2] == ["<UNK>", "</s>"]  # 2 specials + 1,998 words
print(
    viz.table(
        [[t + 1, lm_vocab.itos[int(inputs[t])], lm_vocab.itos[int(targets[t])]] for t in range(8)],
        header=["step t", "input x_t (the true word)", "target x_{t+1}"],
    )
)
assert torch.equal(inputs[1:], targets[:-1])  # the targets are the inputs shifted by one word


# %%
def rnn_lm_loss_and_grads(P, seqs):
    """Mean cross-entropy of the RNN LM on sequences (B, T + 1) under teacher forcing, and its gradients."""
    x, y = seqs[:, :-1].T, seqs[:, 1:].T  # (T, B): inputs are the true words, targets the next ones
    T, B = x.shape
    V = P["E"].shape[0]
    hs, cache = bptt.rnn_forward(
        P["E"][x], torch.zeros(B, P["W_hh"].shape[0], dtype=P["E"].dtype), P["W_xh"], P["W_hh"], P["b_h"]
    )
    z = hs @ P["W_hy"].T + P["b_y"]  # (T, B, V): a prediction at every step
    loss = F.cross_entropy(z.reshape(-1, V), y.reshape(-1))
    dz = bp.cross_entropy_backward(z.reshape(-1, V), y.reshape(-1))  # (T B, V), the loss is a mean over T B
    dhs, dW_hy, db_y = bp.linear_backward(dz, hs.reshape(T * B, -1), P["W_hy"])
    g = bptt.rnn_backward(dhs.reshape(T, B, -1), cache)  # dL_t/dh_t at every step, back through time
    dE = bp.embedding_backward(g["xs"], x, V)
    return float(loss), {"E": dE, "W_xh": g["W_xh"], "W_hh": g["W_hh"], "b_h": g["b_h"], "W_hy": dW_hy, "b_y": db_y}


def rnn_lm_params(V, D=32, H=64, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return {
        "E": torch.randn(V, D, generator=g, dtype=dtype),
        "W_xh": torch.randn(H, D, generator=g, dtype=dtype) / math.sqrt(D),
        "W_hh": bptt.scaled_orthogonal(H, 0.9, seed=seed, dtype=dtype),
        "b_h": torch.zeros(H, dtype=dtype),
        "W_hy": torch.randn(V, H, generator=g, dtype=dtype) / math.sqrt(H),
        "b_y": torch.zeros(V, dtype=dtype),
    }


# the whole hand-written backward pass against autograd, once, in float64 on 3 sequences
P64 = rnn_lm_params(len(lm_vocab), D=4, H=5, dtype=torch.float64)


def autograd_rnn_lm_loss(E, W_xh, W_hh, b_h, W_hy, b_y):
    x, y = lm_train[:3, :-1].T, lm_train[:3, 1:].T
    h, total = torch.zeros(3, 5), 0
    for t in range(x.shape[0]):
        h = torch.tanh(E[x[t]] @ W_xh.T + h @ W_hh.T + b_h)
        total = total + F.cross_entropy(h @ W_hy.T + b_y, y[t])
    return total / x.shape[0]


_, mine = rnn_lm_loss_and_grads(P64, lm_train[:3])
report = bp.compare_gradients(mine, bp.autograd_gradients(autograd_rnn_lm_loss, P64))
print(report)
assert report.ok

# %% [markdown]
# Training, with `Adam` from lesson 02 on the hand-written gradients; a batch is the next 32 sequences
# of a shuffled order, counted modulo its length: a batch that reaches the end of the order is cut
# short there, and the next one starts again a few sequences into the order, not at its first.
# The validation perplexity printed is $e$ to the mean loss over every target of the validation rows,
# with `<UNK>` one of the 2,000 entries and each row read from $h_0 = 0$; lesson 01's perplexities
# score other text (the addresses of every year) with another vocabulary, so the two do not compare.

# %%
P = rnn_lm_params(len(lm_vocab))
optimizer = Adam(P, lr=3e-3)
order = torch.randperm(len(lm_train), generator=torch.Generator().manual_seed(0))
LM_STEPS, LM_BATCH = 300, 32
lm_losses = []
t0 = time.time()
for step in tqdm(range(LM_STEPS), desc="RNN LM (teacher forcing, hand-written BPTT)"):
    idx = order[(step * LM_BATCH) % len(order) :][:LM_BATCH]
    loss, grads = rnn_lm_loss_and_grads(P, lm_train[idx])
    optimizer.step(grads)
    lm_losses.append(loss)
val_batches = [lm_val[i : i + 64] for i in range(0, len(lm_val), 64)]  # the last one may be shorter
val_loss = sum(rnn_lm_loss_and_grads(P, b)[0] * len(b) for b in val_batches) / len(lm_val)  # mean over every word
print(
    f"{LM_STEPS} steps in {time.time() - t0:.0f} s; training loss {lm_losses[0]:.2f} -> {np.mean(lm_losses[-20:]):.2f} "
    f"(last 20 steps); validation perplexity {math.exp(val_loss):.0f} (ln V = {math.log(len(lm_vocab)):.2f})"
)

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(range(1, LM_STEPS + 1), lm_losses, lw=1.5, label="training loss (per batch)")
ax.axhline(math.log(len(lm_vocab)), color="gray", ls=":", label="ln V (uniform guess)")
ax.set(
    xlabel="step", ylabel="cross-entropy per word (nats)", ylim=(0, None), title="RNN LM trained with teacher forcing"
)
ax.grid(True, alpha=0.3)
ax.legend()
viz.show(
    f"Training loss of the RNN language model over {LM_STEPS} steps, from {lm_losses[0]:.2f} nats (ln V = "
    f"{math.log(len(lm_vocab)):.2f}) to {np.mean(lm_losses[-20:]):.2f} over the last 20 steps, in this run."
)

# %% [markdown]
# Under teacher forcing the model always reads the true previous words, also where it had
# predicted something else. Generating, it reads its own samples, a situation it never met in
# training (this mismatch is called exposure bias). Below: its top guess at each of the first 10
# steps of a validation sequence, then 20 tokens it writes on its own, starting after a `</s>`.

# %%
x, y = lm_val[0, :-1], lm_val[0, 1:]
hs, _ = bptt.rnn_forward(P["E"][x][:, None], torch.zeros(1, 64, dtype=torch.float32), P["W_xh"], P["W_hh"], P["b_h"])
probs = torch.softmax(hs[:, 0] @ P["W_hy"].T + P["b_y"], dim=1)
print(
    viz.table(
        [
            [
                lm_vocab.itos[int(x[t])],
                lm_vocab.itos[int(y[t])],
                lm_vocab.itos[int(probs[t].argmax())],
                float(probs[t, y[t]]),
            ]
            for t in range(10)
        ],
        header=["input (true word)", "target", "model's top guess", "P(target)"],
        floatfmt="{:.3f}",
    )
)
g = torch.Generator().manual_seed(0)
word, h, written = lm_vocab.stoi["</s>"], torch.zeros(1, 64, dtype=torch.float32), []
for _ in range(20):
    h = torch.tanh(P["E"][[word]] @ P["W_xh"].T + h @ P["W_hh"].T + P["b_h"])
    word = int(torch.multinomial(torch.softmax(h @ P["W_hy"].T + P["b_y"], dim=1)[0], 1, generator=g))
    written.append(lm_vocab.itos[word])  # its own sample is its next input
print("generated:", " ".join(written))

# %% [markdown]
# ### The recurrent LM against the feedforward one (the Penn lecture's list)
#
# Lesson 02 ended with what the feedforward LM leaves unsolved. The Penn lecture lists what the RNN
# LM gains: it **processes any length** of input, step $t$ can **in principle use information from many
# steps back**, its **size does not grow** with the context, and **every input is multiplied by the same
# weights**. And what it costs: the **computation is sequential** (step $t$ needs $h_{t-1}$, so the steps
# of one sequence cannot run in parallel), and **in practice it is hard to reach information from many
# steps back** (section 2). The cell checks the first and third on the model above: the same
# parameters read a sequence of 5 words and one of 200.

# %%
n_params = sum(p.numel() for p in P.values())
for length in (5, 200):
    seq = lm_val[:10].reshape(1, -1)[:, : length + 1]  # consecutive rows are consecutive text
    loss_len, _ = rnn_lm_loss_and_grads(P, seq)
    print(f"a sequence of {length} words: mean loss {loss_len:.2f} nats, with the same {n_params:,} parameters")
print(
    f"the vanishing side, from section 2: {back} steps back, the tanh RNN there (rho = 0.9) kept "
    f"{tanh[0.9][-1 - back] / tanh[0.9][-1]:.1e} of the gradient"
)

# %% [markdown]
# Lesson 04's gated cells give the gradient a path along which each step multiplies it by a gate
# (which can stay close to 1) instead of by $W_{hh}$ and the slopes of a $\tanh$; attention
# (lessons 05 to 07) drops the recurrence, so that every step can look at every earlier one directly
# and the steps of a sequence are computed in parallel.

# %% [markdown]
# ## What to try
#
# * Section 1: truncate at `truncate=2` and `truncate=6`; how does the change of `dW_hh` (the
#   relative norm printed) move with k?
# * Section 2: in the widget, pick `relu` and a radius above 1; then `sigmoid`, whose derivative
#   is at most 1/4. Where does each stop following $\rho^{T-t}$?
# * Section 2: make $R$'s entries above the diagonal smaller (`* 0.5 / math.sqrt(H_long)`) or larger,
#   and compare the curve with both lines. Is $\sigma_{max}^{T-t}$ close to the curve or far above it, and why?
# * Section 3: train for 1,000 steps, or with sequences of $T = 5$ instead of 20 (change
#   `stream_of`). How do the validation perplexity and the generated text change?
# * Section 3: generate with a temperature (divide the logits by 0.7 before the softmax).
