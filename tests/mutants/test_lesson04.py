"""Lesson 04 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson04 as checks

from .mutate import lesson_suite

LESSON = "04_lstm_gru"
EXERCISES = {
    "LSTMCell": checks.check_lstm_cell,
    "gru_step": checks.check_gru_step,
    "param_count": checks.check_param_count,
    "set_forget_bias": checks.check_set_forget_bias,
    "memory_table": checks.check_memory_table,
}

# (function, edit from, edit to, words the hint must contain)
# the 4.1 solution between the zero state and the gates (one edit can change both)
STATE_TO_GATES = """
            state = (zeros, zeros)
        h_prev, c_prev = state
        W = torch.cat([self.W_xh, self.W_hh], dim=1)  # colah's W, acting on [x_t, h_{t-1}]
"""

MUTANTS = [
    # issue 34: the zero state in x's dtype (the check also runs the cell in float64)
    # (with the solution's torch.cat, a float32 state is promoted and harmless: the edit also writes two products)
    (
        "LSTMCell",
        "zeros = x.new_zeros(x.shape[0], self.hidden_size)"
        + STATE_TO_GATES
        + "        gates = torch.cat([x, h_prev], dim=1) @ W.T",
        "zeros = torch.zeros(x.shape[0], self.hidden_size)"
        + STATE_TO_GATES
        + "        gates = x @ self.W_xh.T + h_prev @ self.W_hh.T",
        "dtype: with the module in float64",
    ),
    # 4.1: gate order, forget gate as 1 - f, concatenation order, sigmoid/tanh swapped, a bias left out,
    # no tanh on c, (c, h) returned, the given state ignored, the state detached, W_hh not transposed
    ("LSTMCell", "i, f, g, o = gates.chunk(4, dim=1)", "i, f, o, g = gates.chunk(4, dim=1)", "gate order"),
    ("LSTMCell", "c = f * c_prev + i * g", "c = (1 - f) * c_prev + i * g", "1 - f_t"),
    ("LSTMCell", "torch.cat([x, h_prev], dim=1)", "torch.cat([h_prev, x], dim=1)", "order of the concatenation"),
    ("LSTMCell", "torch.sigmoid(f), torch.tanh(g)", "torch.sigmoid(f), torch.sigmoid(g)", "candidate g_t"),
    ("LSTMCell", "torch.sigmoid(i), torch.sigmoid(f)", "torch.tanh(i), torch.sigmoid(f)", "input gate"),
    ("LSTMCell", " + self.b_xh + self.b_hh", " + self.b_xh", "both biases"),
    ("LSTMCell", "h = o * torch.tanh(c)", "h = o * c", "tanh(c_t)"),
    ("LSTMCell", "return h, c", "return c, h", "(c_t, h_t)"),
    (
        "LSTMCell",
        "        h_prev, c_prev = state\n",
        "        h_prev, c_prev = state\n        h_prev = c_prev = h_prev * 0\n",
        "state you are given",
    ),
    ("LSTMCell", "h_prev, c_prev = state", "h_prev, c_prev = state[0].detach(), state[1].detach()", "detached"),
    ("LSTMCell", "c = f * c_prev + i * g", "c = f * c_prev + i * g\n        c_prev.mul_(0)", "in place"),
    (
        "LSTMCell",
        "self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k)",
        "nn.Parameter",
    ),
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
    # 4.5: population sd, one seed repeated, a T left out, the mean over the wrong runs
    ("memory_table", "statistics.stdev(runs)", "statistics.pstdev(runs)", "n - 1"),
    (
        "memory_table",
        "runs = [train(T, seed) for seed in seeds]",
        "runs = [train(T, seeds[0]) for seed in seeds]",
        "run every seed",
    ),
    ("memory_table", "for T in T_values:", "for T in T_values[:1]:", "one entry per T"),
    ("memory_table", '"mean": statistics.mean(runs)', '"mean": statistics.median(runs)', "the mean at T"),
    ("memory_table", "table[T] = {", "table[str(T)] = {", "one entry per T"),
    ("memory_table", '"sd": statistics.stdev(runs)', '"spread": statistics.stdev(runs)', "'sd'"),
    ("memory_table", "train(T, seed) for seed in seeds", "train(seed, T) for seed in seeds", "use the T values"),
    ("LSTMCell", "h_prev, c_prev = state", "c_prev, h_prev = state", "you read it as (c, h)"),
    ("LSTMCell", "c = f * c_prev + i * g", "c = f * c_prev.detach() + i * g", "keep the graph"),
    (
        "LSTMCell",
        "torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k)",
        "torch.randn(4 * hidden_size, hidden_size)",
        "uniformly in (-1/sqrt(H), 1/sqrt(H))",
    ),
    # issue 34b (outsider M4.1.4): one sign only, W_hh drawn in (0, k); and a bias the text also ranges, all zero
    (
        "LSTMCell",
        "torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k)",
        "torch.empty(4 * hidden_size, hidden_size).uniform_(0, k)",
        "W_hh starts with one sign only",
    ),
    (
        "LSTMCell",
        "self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))",
        "self.b_hh = nn.Parameter(torch.zeros(4 * hidden_size))",
        "b_hh starts all zero",
    ),
    (
        "gru_step",
        "n = torch.tanh(x_n + r * h_n)",
        "n = torch.tanh(x_n + r * (h_n - b_hh[2 * h.shape[1] :]) + b_hh[2 * h.shape[1] :])",
        "b_hn goes inside the reset gate",
    ),
    ("memory_table", '"mean": statistics.mean(runs)', '"mean": sum(runs) / 3', "divide by len(seeds)"),
    ("gru_step", "(h @ W_hh.T + b_hh)", "(h @ W_hh.T)", "both biases"),
    ("LSTMCell", "k = 1 / math.sqrt(hidden_size)", "k = 0.0 * hidden_size", "leave the units alike"),
    ("LSTMCell", "k = 1 / math.sqrt(hidden_size)", "k = 1 / hidden_size", "leave the units alike"),
    ("LSTMCell", "c = f * c_prev + i * g", "c = f * h_prev + i * g", "you used h_{t-1} for c_{t-1}"),
    (
        "LSTMCell",
        "        c = f * c_prev + i * g\n        h = o * torch.tanh(c)\n",
        "        h = o * torch.tanh(c_prev)\n        c = f * c_prev + i * g\n",
        "compute c_t first",
    ),
    ("param_count", "for layer in range(num_layers):", "for layer in range(num_layers - 1):", "one fewer"),
    (
        "set_forget_bias",
        "            cell.b_xh[H:2 * H] = value\n",
        "            b = cell.b_xh.detach().clone()\n"
        "            b[H:2 * H] = value\n"
        "            cell.b_xh = torch.nn.Parameter(b)\n",
        "replaced a parameter",
    ),
    (
        "param_count",
        "for layer in range(num_layers):",
        "for layer in range(1, num_layers + 1):",
        "the first layer is layer 0",
    ),
    # the seeds taken in another order than given (a draw in ascending order hid these: seeds are never drawn so)
    ("memory_table", "for seed in seeds]", "for seed in sorted(seeds)]", "runs[k] is train(T, seeds[k])"),
    ("memory_table", "for seed in seeds]", "for seed in set(seeds)]", "runs[k] is train(T, seeds[k])"),
    ("set_forget_bias", "    with torch.no_grad():\n        for", "    if True:\n        for", "torch.no_grad()"),
    # issue 34: properties, not a first difference: c_t fed by the output gate where g belongs (with g's weights
    # zero, c_t moves with the input gate), n_t with its input term outside the tanh (h_t beyond +-max(|h|, 1)),
    # n_t without its input term (h_t deaf to x_t when the gates' input weights are zero)
    ("LSTMCell", "c = f * c_prev + i * g", "c = f * c_prev + i * o", "input gate scales the candidate g_t"),
    ("gru_step", "n = torch.tanh(x_n + r * h_n)", "n = x_n + torch.tanh(r * h_n)", "goes inside the tanh"),
    ("gru_step", "n = torch.tanh(x_n + r * h_n)", "n = torch.tanh(r * h_n)", "keep its input term"),
    # a training function called by name, not the one handed in: the runs are numbers the check's train never
    # returned (the outsider's called train_memory itself; a stand-in of one's own keeps the suite fast)
    (
        "memory_table",
        "runs = [train(T, seed) for seed in seeds]",
        "my_train = lambda T, seed: 0.5 + seed / 1000  # a stand-in of my own\n        "
        "runs = [my_train(T, seed) for seed in seeds]",
        "the train you are given returned",
    ),
]

# (function, edit from, edit to): different but right code that must pass
ALTERNATIVES = [
    (
        "LSTMCell",
        "        W = torch.cat([self.W_xh, self.W_hh], dim=1)  # colah's W, acting on [x_t, h_{t-1}]\n"
        "        gates = torch.cat([x, h_prev], dim=1) @ W.T + self.b_xh + self.b_hh  # (B, 4H)\n",
        "        gates = torch.nn.functional.linear(x, self.W_xh, self.b_xh) + h_prev @ self.W_hh.T + self.b_hh\n",
    ),
    (
        "memory_table",
        '"sd": statistics.stdev(runs)',
        '"sd": float(__import__("numpy").std(runs, ddof=1))',
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
# (function, edit from, edit to, the forbidden name it calls): answers borrowed from torch or course_lib,
# which the check refuses with "write it yourself"
BORROWED = [
    (
        "LSTMCell",
        "        h_prev, c_prev = state\n",
        "        torch_cell = nn.LSTMCell(self.input_size, self.hidden_size)\n"
        "        torch_cell.weight_ih, torch_cell.weight_hh = self.W_xh, self.W_hh\n"
        "        torch_cell.bias_ih, torch_cell.bias_hh = self.b_xh, self.b_hh\n"
        "        return torch_cell(x, state)\n",
        "torch.nn.LSTMCell",
    ),
    (
        "LSTMCell",
        "        h_prev, c_prev = state\n",
        "        from course_lib.rnn import LSTMCell as Lib\n"
        "        lib = Lib(self.input_size, self.hidden_size)\n"
        "        lib.W_xh, lib.W_hh, lib.b_xh, lib.b_hh = self.W_xh, self.W_hh, self.b_xh, self.b_hh\n"
        "        return lib(x, state)\n",
        "course_lib.rnn.LSTMCell",
    ),
    (
        "LSTMCell",
        "        h_prev, c_prev = state\n",
        "        return tuple(torch.lstm_cell(x, state, self.W_xh, self.W_hh, self.b_xh, self.b_hh))\n",
        "torch.lstm_cell",
    ),
    (
        "gru_step",
        "    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)\n",
        "    cell = torch.nn.GRUCell(x.shape[1], h.shape[1])\n"
        "    with torch.no_grad():\n"
        "        for p, v in zip(cell.parameters(), (W_xh, W_hh, b_xh, b_hh)):\n"
        "            p.copy_(v)\n"
        "        return cell(x, h)\n",
        "torch.nn.GRUCell",
    ),
    (
        "gru_step",
        "    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)\n",
        "    return torch.gru_cell(x, h, W_xh, W_hh, b_xh, b_hh)\n",
        "torch.gru_cell",
    ),
    (
        "param_count",
        "    blocks = {",
        "    from torch import nn\n\n"
        "    module = (nn.LSTM if kind == 'lstm' else nn.GRU)(input_size, hidden_size, num_layers)\n"
        "    return sum(p.numel() for p in module.parameters())\n"
        "    blocks = {",
        "torch.nn.LSTM",
    ),
    (
        "set_forget_bias",
        "    H = lstm.hidden_size\n",
        "    from course_lib import memory\n\n    return memory.set_forget_bias(lstm, value)\n    H = lstm.hidden_size\n",
        "course_lib.memory.set_forget_bias",
    ),
    # refused by what runs, whatever name reached it: routes that no list of forbidden names covers
    (  # the aten kernel, reached through torch.ops
        "LSTMCell",
        "        h_prev, c_prev = state\n",
        "        return tuple(torch.ops.aten.lstm_cell.default(x, list(state), self.W_xh, self.W_hh, self.b_xh, self.b_hh))\n",
        "torch.ops.aten.lstm_cell.default",
    ),
    (  # a method other than forward taken from a course_lib class
        "LSTMCell",
        "    def forward(self, x, state=None):",
        "    input_projection = __import__('course_lib.rnn', fromlist=['LSTMCell']).LSTMCell.input_projection\n\n    def forward(self, x, state=None):",
        "course_lib.rnn_cells.LSTMCell.input_projection",
    ),
    (  # the aten kernel, reached through torch.ops
        "gru_step",
        "    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)\n",
        "    return torch.ops.aten.gru_cell.default(x, h, W_xh, W_hh, b_xh, b_hh)\n",
        "torch.ops.aten.gru_cell.default",
    ),
]

# pytest collects the suite's tests (solution, stub, mutants, alternatives, borrowed answers, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, borrowed=BORROWED))
