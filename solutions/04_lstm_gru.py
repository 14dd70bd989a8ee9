# %% [markdown]
# # Lesson 04 exercises: LSTM vs GRU
#
# You **build** the LSTM cell as an `nn.Module` (4.1), then three warm-ups (a GRU step, the
# parameter count, the forget-gate bias), and finally drop your cell into the lesson's sequence
# model and measure how far back it remembers, over several seeds (4.5). Each exercise is followed
# by a check that calls your code on fresh inputs (4.1-4.3 compare it with `torch.nn`, the oracle) and says
# **passed**, **not implemented yet**, or **failed** with a hint about the likely mistake. Replace each
# `raise NotImplementedError(...)` with your code and run the cell below it. The lesson
# notebook `notebooks/04_lstm_gru.ipynb` explains everything used here.
#
# Conventions (torch's): `x` is a row per example, so $W x$ is `x @ W.T`; the weights of all
# gates are stacked in one matrix, LSTM in the order **i, f, g, o**, GRU in the order
# **r, z, n**; there are two bias vectors, `b_xh` (input side) and `b_hh` (hidden side).
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
# In every exercise but 4.5 (which may use any package), your functions may call Python's standard library, torch
# and numpy, and print, display, plot or show progress; a check refuses an answer that calls any
# other installed package, such as `pandas`, `sympy` or `nltk` (importing one is fine).

# %%
import course_lib
from course_lib.checks import lesson04 as checks

course_lib.setup(seed=0, threads=1)

# %% [markdown]
# ## Exercise 4.1: the LSTM cell as an `nn.Module`
#
# $$\begin{aligned}
# i_t &= \sigma(W_{xi} x_t + W_{hi} h_{t-1} + b_i) &\quad f_t &= \sigma(W_{xf} x_t + W_{hf} h_{t-1} + b_f)\\
# g_t &= \tanh(W_{xg} x_t + W_{hg} h_{t-1} + b_g) &\quad o_t &= \sigma(W_{xo} x_t + W_{ho} h_{t-1} + b_o)\\
# c_t &= f_t \odot c_{t-1} + i_t \odot g_t &\quad h_t &= o_t \odot \tanh(c_t)
# \end{aligned}$$
#
# Write the cell as torch stores it, so that `torch.nn.LSTMCell`'s weights fit:
#
# * `__init__(self, input_size, hidden_size)`: store `self.input_size`, `self.hidden_size`, and four
#   `nn.Parameter`s with the four gate blocks stacked in the order **i, f, g, o**: `W_xh` $(4H, I)$,
#   `W_hh` $(4H, H)$, `b_xh` and `b_hh` $(4H,)$, uniform in $(-1/\sqrt{H}, 1/\sqrt{H})$ as torch does.
# * `forward(self, x, state=None)`: `x` is `(B, I)` (one example per row, so $W x$ is `x @ W.T`),
#   `state` is `(h_{t-1}, c_{t-1})`, each `(B, H)`; when it is `None`, zeros in x's dtype and device
#   (`x.new_zeros(B, H)`: the check also runs your cell in float64). Compute the four gates (one product
#   gives all four: `chunk(4, dim=1)` cuts them apart), then return the pair `(h_t, c_t)`.
#
# colah writes one matrix on the concatenation, $W \cdot [h_{t-1}, x_t]$; with torch's two matrices that is
# `torch.cat([x, h], dim=1) @ torch.cat([W_xh, W_hh], dim=1).T`, the same order on both sides. Either form
# is fine. You may not call `torch.nn.LSTMCell`, `torch.nn.LSTM` or `course_lib.rnn`'s cells.

# %%
# Exercise 4.1: the LSTM cell as a module
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    """One LSTM step, torch's layout: x (B, I), state (h, c) each (B, H) -> (h_t, c_t)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        ### BEGIN SOLUTION
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)  # torch's initialisation: uniform in (-1/sqrt(H), 1/sqrt(H))
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        ### END SOLUTION

    def forward(self, x, state=None):
        ### BEGIN SOLUTION
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h_prev, c_prev = state
        W = torch.cat([self.W_xh, self.W_hh], dim=1)  # colah's W, acting on [x_t, h_{t-1}]
        gates = torch.cat([x, h_prev], dim=1) @ W.T + self.b_xh + self.b_hh  # (B, 4H)
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c_prev + i * g
        h = o * torch.tanh(c)
        return h, c
        ### END SOLUTION


# %%
result = checks.check_lstm_cell(LSTMCell)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4.2: one GRU step, torch's convention
#
# $$\begin{aligned}
# r_t &= \sigma(W_{xr} x_t + b_{xr} + W_{hr} h_{t-1} + b_{hr}) \qquad
# z_t = \sigma(W_{xz} x_t + b_{xz} + W_{hz} h_{t-1} + b_{hz})\\
# n_t &= \tanh\big(W_{xn} x_t + b_{xn} + r_t \odot (W_{hn} h_{t-1} + b_{hn})\big)\\
# h_t &= z_t \odot h_{t-1} + (1 - z_t) \odot n_t
# \end{aligned}$$
#
# `W_xh` is $(3H, I)$, `W_hh` is $(3H, H)$, biases $(3H,)$. Careful: the reset gate multiplies
# $W_{hn} h_{t-1} + b_{hn}$, *after* the product (the lecture writes it before: the lesson
# shows the difference).

# %%
# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    ### BEGIN SOLUTION
    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)
    h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(x_r + h_r)
    z = torch.sigmoid(x_z + h_z)
    n = torch.tanh(x_n + r * h_n)
    return z * h + (1 - z) * n
    ### END SOLUTION


# %%
result = checks.check_gru_step(gru_step)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4.3: the parameter count
#
# How many parameters has `torch.nn.LSTM(input_size, hidden_size, num_layers)` (`kind="lstm"`),
# or `torch.nn.GRU(...)` (`kind="gru"`)? Count per gate block: a weight matrix for the input,
# one for the hidden state, and torch's two bias vectors. The first layer reads the input;
# each layer above reads the hidden state of the layer below.


# %%
# Exercise 4.3: the parameter count
def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM (kind="lstm") or torch.nn.GRU (kind="gru")."""
    ### BEGIN SOLUTION
    blocks = {"lstm": 4, "gru": 3}[kind]
    total = 0
    for layer in range(num_layers):
        inputs = input_size if layer == 0 else hidden_size
        total += blocks * hidden_size * (inputs + hidden_size + 2)
    return total
    ### END SOLUTION


# %%
result = checks.check_param_count(param_count)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4.4: the forget-gate bias
#
# At initialisation $f_t \approx \sigma(0) = 0.5$: through the forget gate alone the cell state halves
# at every step, so after $T$ steps $0.5^{T}$ of it is left. Setting the forget-gate bias to 1 (Gers et
# al. 2000; Jozefowicz et al. 2015) or more starts the forget gates nearer 1, so the cell state fades
# more slowly (at 1, still fast: the lesson prints how fast). For a `course_lib.rnn.LSTM`
# (layers in `lstm.cells`, each with `b_xh` and `b_hh` of shape $(4H,)$, gates i, f, g, o), make
# every layer's forget bias $b_f$ equal `value`. Only the sum `b_xh + b_hh` enters the
# equations. The lesson shows what this does to learning at its distance `T_FB`.

# %%
# Exercise 4.4: the forget-gate bias
import torch


def set_forget_bias(lstm, value):
    """Set b_f = value in every layer of a course_lib.rnn.LSTM (in place); return lstm."""
    ### BEGIN SOLUTION
    H = lstm.hidden_size
    with torch.no_grad():
        for cell in lstm.cells:
            cell.b_xh[H:2 * H] = value
            cell.b_hh[H:2 * H] = 0.0
    return lstm
    ### END SOLUTION


# %%
result = checks.check_set_forget_bias(set_forget_bias)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4.5: how far back does your LSTM remember? (experiment)
#
# The lesson's memory task: the first symbol is one of 4 signals (0 to 3), then come $T$ distractors
# (4 to 7), and the network must name the signal at the end (chance: 0.25). Below, `CellRNN` runs **your**
# cell over a sequence (the interface `SequenceClassifier` needs), and `train_memory(T, seed)` trains
# the lesson's sequence model with it (a shorter version of the lesson's recipe: Adam, gradients clipped,
# `steps` steps; the sizes are in its code below) and returns its accuracy on fresh test sequences.
#
# One run is one draw: a different seed gives a different network. Write `memory_table(train, T_values,
# seeds)`: call `train(T, seed)` (the argument, not `train_memory` by name: the check hands in a stand-in
# that answers at once) for every `T` and every seed, and return
# `{T: {"runs": [accuracy for each seed, in order], "mean": ..., "sd": ...}}` with the sample standard
# deviation (`statistics.stdev`, $n - 1$ in the denominator).

# %%
import torch.nn.functional as F

from course_lib import memory
from course_lib.rnn import SequenceClassifier
from course_lib.train import accuracy, fit, make_batches


class CellRNN(nn.Module):
    """A cell looped over time, with torch.nn.RNN's interface: x (T, B, I) -> (output (T, B, H), h_T)."""

    def __init__(self, cell):
        super().__init__()
        self.cell, self.input_size, self.hidden_size = cell, cell.input_size, cell.hidden_size

    def forward(self, x):
        state, outputs = None, []
        for x_t in x.unbind(0):
            state = self.cell(x_t, state)
            outputs.append(state[0])
        return torch.stack(outputs), state[0]


def train_memory(T, seed, cell_class=LSTMCell, steps=150):
    """Train the sequence model with a `cell_class` cell on the memory task at distance T; test accuracy."""
    torch.manual_seed(seed)
    X, y = memory.first_symbol_task(steps * 32, T, seed=seed)
    X_test, y_test = memory.first_symbol_task(500, T, seed=10_000 + seed)
    model = SequenceClassifier(CellRNN(cell_class(8, 16)), n_symbols=8, n_classes=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss_fn(model, batch):
        return F.cross_entropy(model(batch[0]), batch[1])

    fit(
        model,
        loss_fn,
        optimizer,
        make_batches(X, y, batch_size=32),
        max_steps=steps,
        clip_grad_norm=1.0,
        progress=False,
    )
    with torch.no_grad():
        return accuracy(model(X_test), y_test)


# %%
# Exercise 4.5: the memory experiment over seeds
import statistics


def memory_table(train, T_values, seeds):
    """{T: {"runs": [train(T, seed) for each seed], "mean": ..., "sd": sample standard deviation}}."""
    ### BEGIN SOLUTION
    table = {}
    for T in T_values:
        runs = [train(T, seed) for seed in seeds]
        table[T] = {"runs": runs, "mean": statistics.mean(runs), "sd": statistics.stdev(runs)}
    return table
    ### END SOLUTION


# %%
result = checks.check_memory_table(memory_table)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# Now with your LSTM cell, one training run for each distance in `T_VALUES` and each seed in `SEEDS`
# (how long that takes depends on your machine):

# %%
import matplotlib.pyplot as plt

from course_lib.notebook import viz

T_VALUES, SEEDS = [5, 10, 20], [0, 1, 2]
try:
    table = memory_table(train_memory, T_VALUES, SEEDS)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for k, seed in enumerate(SEEDS):
        ax.plot(T_VALUES, [table[T]["runs"][k] for T in T_VALUES], ls="none", marker="os^"[k], label=f"seed {seed}")
    ax.errorbar(
        T_VALUES,
        [table[T]["mean"] for T in T_VALUES],
        yerr=[table[T]["sd"] for T in T_VALUES],
        color="black",
        capsize=4,
        label="mean ± sd",
    )
    ax.axhline(0.25, color="grey", ls=":", label="chance")
    ax.set(
        xlabel="distance T",
        ylabel="test accuracy",
        ylim=(0, 1.02),
        xticks=T_VALUES,
        title="Your LSTM cell on the memory task",
    )
    ax.legend(fontsize=8)
    viz.show(
        "Test accuracy of your LSTM against the distance T, one marker per seed and the mean with its sd: "
        + "; ".join(f"T = {T}: mean {table[T]['mean']:.2f}, sd {table[T]['sd']:.2f}" for T in T_VALUES)
    )
    print(
        viz.table(
            [[T, *table[T]["runs"], table[T]["mean"], table[T]["sd"]] for T in T_VALUES],
            header=["T", *[f"seed {s}" for s in SEEDS], "mean", "sd"],
            floatfmt="{:.3f}",
        )
    )
except NotImplementedError:
    print("(finish exercises 4.1 and 4.5 to see this)")

# %% [markdown]
# **Question.** At which distance does your LSTM stop solving the task (say, mean accuracy below 0.9)?
# Is the spread between seeds at that distance small or large next to the gap between two distances?
# What does that say about a comparison of two networks from one run each? Then give the cell a forget-gate
# bias of 1 or 2 (the idea of exercise 4.4) and run the table again: `train_memory` takes the cell's class,
# so write a subclass of your `LSTMCell` whose `__init__` calls `super().__init__(input_size, hidden_size)`
# and then, under `torch.no_grad()`, sets the forget block `self.b_xh[H:2H]` to the bias and `self.b_hh[H:2H]`
# to 0; then pass `lambda T, seed: train_memory(T, seed, cell_class=YourSubclass)` to `memory_table`.
#
# ### BEGIN SOLUTION
# A good answer reads the table: the first T whose mean falls below 0.9 and its sd; where the runs of one
# T range from near chance to near 1, a single run says little, and two networks compared on one run each
# may be ranked by their seeds rather than by their cells. With the forget bias the frontier may move
# to larger T (at initialisation, the lesson measured a larger gradient at step 1 with $b_f = 2$ than with
# torch's init); the table says whether it does, and by how much.
# ### END SOLUTION

# %% [markdown]
# ## After the exercises: course_lib's cells
#
# `course_lib.rnn.LSTMCell` and `GRUCell` keep the same equations in one method, `gates`, which the
# lesson's heatmaps read too:

# %%
import inspect

from course_lib.rnn import GRUCell as LibGRUCell
from course_lib.rnn import LSTMCell as LibLSTMCell

print(inspect.getsource(LibLSTMCell.gates))
print(inspect.getsource(LibGRUCell.gates))

# %% [markdown]
# ## Summary

# %%
print(course_lib.checks.summary(lesson="04"))
