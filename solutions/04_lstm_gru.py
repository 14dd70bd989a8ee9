# %% [markdown]
# # Lesson 04 exercises: LSTM vs GRU
#
# Four small functions, each followed by a check. A check calls your function on fresh
# inputs, compares it with `torch.nn` (the oracle) and says **passed**, **not implemented
# yet**, or **failed** with a hint about the likely mistake. Replace each
# `raise NotImplementedError(...)` with your code and run the cell below it. The lesson
# notebook `notebooks/04_lstm_gru.ipynb` explains everything used here.
#
# Conventions (torch's): `x` is a row per example, so $W x$ is `x @ W.T`; the weights of all
# gates are stacked in one matrix, LSTM in the order **i, f, g, o**, GRU in the order
# **r, z, n**; there are two bias vectors, `b_xh` (input side) and `b_hh` (hidden side).

# %%
import course_lib
from course_lib.checks import lesson04 as checks

course_lib.setup(seed=0, threads=1)

# %% [markdown]
# ## Exercise 4.1: one LSTM step
#
# $$\begin{aligned}
# i_t &= \sigma(W_{xi} x_t + W_{hi} h_{t-1} + b_i) &\quad f_t &= \sigma(W_{xf} x_t + W_{hf} h_{t-1} + b_f)\\
# g_t &= \tanh(W_{xg} x_t + W_{hg} h_{t-1} + b_g) &\quad o_t &= \sigma(W_{xo} x_t + W_{ho} h_{t-1} + b_o)\\
# c_t &= f_t \odot c_{t-1} + i_t \odot g_t &\quad h_t &= o_t \odot \tanh(c_t)
# \end{aligned}$$
#
# `W_xh` is $(4H, I)$, `W_hh` is $(4H, H)$, `b_xh` and `b_hh` are $(4H,)$. Return `(h_t, c_t)`.

# %%
# Exercise 4.1: one LSTM step
import torch


def lstm_step(x, h, c, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.LSTMCell: x (B, I), h and c (B, H) -> (h_t, c_t)."""
    ### BEGIN SOLUTION
    gates = x @ W_xh.T + b_xh + h @ W_hh.T + b_hh  # (B, 4H)
    i, f, g, o = gates.chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    c_new = f * c + i * g
    h_new = o * torch.tanh(c_new)
    return h_new, c_new
    ### END SOLUTION


# %%
result = checks.check_lstm_step(lstm_step)
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
# At initialisation $f_t \approx \sigma(0) = 0.5$: the cell state halves at every step, so
# after 20 steps $0.5^{20}$ of it is left. Setting the forget-gate bias to 1 (Gers et al. 2000;
# Josefowicz et al. 2015) or more starts the network off remembering. For a `course_lib.rnn.LSTM`
# (layers in `lstm.cells`, each with `b_xh` and `b_hh` of shape $(4H,)$, gates i, f, g, o), make
# every layer's forget bias $b_f$ equal `value`. Only the sum `b_xh + b_hh` enters the
# equations. The lesson shows what this does to learning over 20 steps.

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
# ## Summary

# %%
print(course_lib.checks.summary(lesson="04"))
