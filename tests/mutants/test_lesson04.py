"""Lesson 04 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson04 as checks

from .mutate import lesson_suite

LESSON = "04_lstm_gru"
EXERCISES = {
    "lstm_step": checks.check_lstm_step,
    "gru_step": checks.check_gru_step,
    "param_count": checks.check_param_count,
    "set_forget_bias": checks.check_set_forget_bias,
}

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("lstm_step", "i, f, g, o = gates.chunk(4, dim=-1)", "i, f, o, g = gates.chunk(4, dim=-1)", "gate order"),
    ("lstm_step", "torch.sigmoid(o)", "torch.tanh(o)", "tanh where sigmoid belongs"),
    ("lstm_step", "torch.sigmoid(f), torch.tanh(g)", "torch.tanh(f), torch.tanh(g)", "tanh where sigmoid belongs"),
    ("lstm_step", "torch.tanh(g)", "torch.sigmoid(g)", "candidate g_t"),
    ("lstm_step", "c_new = f * c + i * g", "c_new = i * g", "cell state is not carried"),
    ("lstm_step", "h_new = o * torch.tanh(c_new)", "h_new = o * c_new", "tanh(c_t)"),
    ("lstm_step", "h @ W_hh.T + b_hh", "h @ W_hh.T", "both biases"),
    ("gru_step", "return z * h + (1 - z) * n", "return (1 - z) * h + z * n", "swapped"),
    (
        "gru_step",
        "r = torch.sigmoid(x_r + h_r)\n    z = torch.sigmoid(x_z + h_z)",
        "z = torch.sigmoid(x_r + h_r)\n    r = torch.sigmoid(x_z + h_z)",
        "gate order",
    ),
    ("gru_step", "n = torch.tanh(x_n + r * h_n)", "n = torch.sigmoid(x_n + r * h_n)", "tanh, not sigmoid"),
    (
        "gru_step",
        "n = torch.tanh(x_n + r * h_n)",
        "n = torch.tanh(x_n + (r * h) @ W_hh[2 * h.shape[-1]:].T + b_hh[2 * h.shape[-1]:])",
        "before the product",
    ),
    ("gru_step", "n = torch.tanh(x_n + r * h_n)", "n = torch.tanh(x_n + h_n)", "reset gate r_t is missing"),
    ("param_count", "(inputs + hidden_size + 2)", "(inputs + hidden_size + 1)", "two bias vectors"),
    (
        "param_count",
        "inputs = input_size if layer == 0 else hidden_size",
        "inputs = input_size",
        "only the first layer",
    ),
    ("param_count", '{"lstm": 4, "gru": 3}', '{"lstm": 3, "gru": 3}', "4 blocks"),
    ("param_count", '{"lstm": 4, "gru": 3}', '{"lstm": 4, "gru": 4}', "3 blocks"),
    ("param_count", "for layer in range(num_layers):", "for layer in range(1):", "every layer"),
    ("set_forget_bias", "cell.b_xh[H:2 * H] = value", "cell.b_xh[0:H] = value", "wrong slice"),
    ("set_forget_bias", "cell.b_xh[H:2 * H] = value", "cell.b_xh[2 * H:3 * H] = value", "wrong slice"),
    ("set_forget_bias", "cell.b_hh[H:2 * H] = 0.0", "cell.b_hh[H:2 * H] = value", "twice the value"),
    ("set_forget_bias", "            cell.b_hh[H:2 * H] = 0.0\n", "", "b_hh is added too"),
    ("set_forget_bias", "for cell in lstm.cells:", "for cell in lstm.cells[:1]:", "every layer"),
    ("set_forget_bias", "cell.b_xh[H:2 * H] = value", "cell.b_xh[:] = value", "only the forget slice"),
    ("lstm_step", "c_new = f * c + i * g", "c.mul_(f).add_(i * g)\n    c_new = c", "in place"),
    ("lstm_step", "i, f, g, o = gates.chunk(4, dim=-1)", "f, i, g, o = gates.chunk(4, dim=-1)", "forget gate first"),
    ("gru_step", "return z * h + (1 - z) * n", "return h.mul_(z).add_((1 - z) * n)", "in place"),
    (
        "param_count",
        "inputs = input_size if layer == 0 else hidden_size",
        "inputs = input_size",
        "only the first layer reads",
    ),
    ("param_count", "(inputs + hidden_size + 2)", "(inputs + hidden_size) + 2", "vectors of size H"),
    ("set_forget_bias", "    return lstm\n", "", "return the lstm"),
    ("set_forget_bias", "cell.b_xh[H:2 * H] = value", "cell.b_xh[H:2 * H] += value", "do not add"),
]

# (function, edit from, edit to): different but right code that must pass
ALTERNATIVES = [
    (
        "lstm_step",
        "gates = x @ W_xh.T + b_xh + h @ W_hh.T + b_hh",
        "gates = torch.nn.functional.linear(x, W_xh, b_xh) + torch.nn.functional.linear(h, W_hh, b_hh)",
    ),
    ("gru_step", "return z * h + (1 - z) * n", "return n + z * (h - n)"),
    (
        "param_count",
        "total += blocks * hidden_size * (inputs + hidden_size + 2)",
        "total += blocks * (hidden_size * inputs + hidden_size * hidden_size + 2 * hidden_size)",
    ),
    (
        "set_forget_bias",
        "            cell.b_xh[H:2 * H] = value\n            cell.b_hh[H:2 * H] = 0.0\n",
        "            cell.b_hh[H:2 * H] = value / 2\n            cell.b_xh[H:2 * H] = value / 2\n",
    ),
]


# Checks draw fresh inputs: the solution must pass, and a mistake be caught with its hint, every time.
# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))
