"""Lesson 04 entries."""

LESSON = "04"

LSTM_RIGHT = """
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            z = x.new_zeros(x.shape[0], self.hidden_size)
            state = (z, z)
        h, c = state
        gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c
"""

GRU_RIGHT = """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    gx = x @ W_xh.T + b_xh
    gh = h @ W_hh.T + b_hh
    xr, xz, xn = gx.chunk(3, dim=1)
    hr, hz, hn = gh.chunk(3, dim=1)
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return z * h + (1 - z) * n
"""

COUNT_RIGHT = """
def param_count(kind, input_size, hidden_size, num_layers=1):
    gates = {"lstm": 4, "gru": 3}[kind]
    total = 0
    for layer in range(num_layers):
        inp = input_size if layer == 0 else hidden_size
        total += gates * hidden_size * (inp + hidden_size + 2)
    return total
"""

FB_RIGHT = """
import torch


def set_forget_bias(lstm, value):
    with torch.no_grad():
        for cell in lstm.cells:
            H = cell.b_xh.shape[0] // 4
            cell.b_xh[H:2 * H] = value
            cell.b_hh[H:2 * H] = 0
    return lstm
"""

MEM_RIGHT = """
import statistics


def memory_table(train, T_values, seeds):
    table = {}
    for T in T_values:
        runs = [train(T, seed) for seed in seeds]
        table[T] = {"runs": runs, "mean": statistics.mean(runs), "sd": statistics.stdev(runs)}
    return table
"""

RIGHT = {"4.1": LSTM_RIGHT, "4.2": GRU_RIGHT, "4.3": COUNT_RIGHT, "4.4": FB_RIGHT, "4.5": MEM_RIGHT}
PREREQ = {}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="04-4.1-right", ex="4.1", kind="right", desc="torch layout", code=LSTM_RIGHT),
    dict(
        id="04-4.1-m-gate-order-ifog",
        ex="4.1",
        kind="mistake",
        desc="gates unpacked in order i, f, o, g",
        code=sub(LSTM_RIGHT, "i, f, g, o = gates.chunk(4, dim=1)", "i, f, o, g = gates.chunk(4, dim=1)"),
    ),
    dict(
        id="04-4.1-m-h-uses-c-prev",
        ex="4.1",
        kind="mistake",
        desc="h = o * tanh(c_prev): output from the old cell state",
        code=sub(
            sub(
                LSTM_RIGHT,
                "c = f * c + i * g\n        h = o * torch.tanh(c)\n        return h, c",
                "c_new = f * c + i * g\n        h = o * torch.tanh(c)\n        return h, c_new",
            ),
            "",
            "",
        ),
    ),
    dict(
        id="04-4.1-m-init-sqrt-in",
        ex="4.1",
        kind="mistake",
        desc="init range 1/sqrt(input_size) instead of 1/sqrt(H)",
        code=sub(LSTM_RIGHT, "k = 1 / math.sqrt(hidden_size)", "k = 1 / math.sqrt(input_size)"),
    ),
    dict(
        id="04-4.1-m-init-positive",
        ex="4.1",
        kind="mistake",
        desc="init uniform in (0, k) (torch.rand * k)",
        code=LSTM_RIGHT.replace(".uniform_(-k, k)", ".uniform_(0, k)"),
    ),
    dict(
        id="04-4.1-m-one-bias",
        ex="4.1",
        kind="mistake",
        desc="a single bias b_xh, b_hh zeros buffer not a parameter",
        code=sub(
            sub(
                LSTM_RIGHT,
                "self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))",
                'self.register_buffer("b_hh", torch.zeros(4 * hidden_size))',
            ),
            "",
            "",
        ),
    ),
    dict(
        id="04-4.1-m-zeros-float32",
        ex="4.1",
        kind="mistake",
        desc="default state torch.zeros(B, H) (float32, ignores x.dtype)",
        code=sub(
            LSTM_RIGHT, "z = x.new_zeros(x.shape[0], self.hidden_size)", "z = torch.zeros(x.shape[0], self.hidden_size)"
        ),
    ),
    dict(
        id="04-4.1-m-cell-W-square-only",
        ex="4.1",
        kind="mistake",
        desc="W_xh applied as x @ W_hh-shaped reshape: uses W_xh.T reshaped (works only when I == H)",
        code=sub(
            LSTM_RIGHT,
            "gates = x @ self.W_xh.T",
            "gates = x @ self.W_xh.reshape(self.input_size, 4 * self.hidden_size)",
        ),
    ),
    dict(
        id="04-4.1-b-torch-lstmcell-fn",
        ex="4.1",
        kind="borrowed",
        desc="torch._VF.lstm_cell (the fused op behind nn.LSTMCell)",
        code=sub(
            LSTM_RIGHT,
            """        gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c""",
            """        return tuple(torch._VF.lstm_cell(x, (h, c), self.W_xh, self.W_hh, self.b_xh, self.b_hh))""",
        ),
    ),
    dict(
        id="04-4.1-b-forward-copied",
        ex="4.1",
        kind="borrowed",
        desc="forward = course_lib.rnn.LSTMCell.forward copied into the class body",
        code=sub(
            LSTM_RIGHT,
            "    def forward(self, x, state=None):",
            "    forward = __import__('course_lib.rnn', fromlist=['x']).LSTMCell.forward\n\n    def _unused(self, x, state=None):",
        ),
    ),
    dict(
        id="04-4.1-b-torch-lstmcell-module",
        ex="4.1",
        kind="borrowed",
        desc="nn.LSTMCell built inside, reached via getattr(nn, 'LSTM' + 'Cell'), sharing weights",
        code=sub(
            LSTM_RIGHT,
            """        gates = x @ self.W_xh.T""",
            """        cls = getattr(nn, "LSTM" + "Cell")
        m = cls(self.input_size, self.hidden_size).to(x.dtype)
        m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh = self.W_xh, self.W_hh, self.b_xh, self.b_hh
        return m(x, (h, c))
        gates = x @ self.W_xh.T""",
        ),
    ),
    dict(id="04-4.2-right", ex="4.2", kind="right", desc="torch's GRU convention", code=GRU_RIGHT),
    dict(
        id="04-4.2-m-reset-before",
        ex="4.2",
        kind="mistake",
        desc="reset gate applied before the product (lecture form): W_hn (r*h) + b_hn",
        code=sub(
            GRU_RIGHT,
            "n = torch.tanh(xn + r * hn)",
            "H = h.shape[1]\n    n = torch.tanh(xn + (r * h) @ W_hh[2 * H:].T + b_hh[2 * H:])",
        ),
    ),
    dict(
        id="04-4.2-m-z-swapped",
        ex="4.2",
        kind="mistake",
        desc="h_t = (1 - z) h + z n (update gate roles swapped)",
        code=sub(GRU_RIGHT, "return z * h + (1 - z) * n", "return (1 - z) * h + z * n"),
    ),
    dict(
        id="04-4.2-m-rz-order",
        ex="4.2",
        kind="mistake",
        desc="chunks unpacked as z, r, n",
        code=sub(
            sub(GRU_RIGHT, "xr, xz, xn = gx.chunk(3, dim=1)", "xz, xr, xn = gx.chunk(3, dim=1)"),
            "hr, hz, hn = gh.chunk(3, dim=1)",
            "hz, hr, hn = gh.chunk(3, dim=1)",
        ),
    ),
    dict(
        id="04-4.2-m-reset-bias-outside",
        ex="4.2",
        kind="mistake",
        desc="b_hn added outside the reset product: r*(W_hn h) + b_hn",
        code=sub(
            GRU_RIGHT,
            "n = torch.tanh(xn + r * hn)",
            "H = h.shape[1]\n    n = torch.tanh(xn + r * (hn - b_hh[2 * H:]) + b_hh[2 * H:])",
        ),
    ),
    dict(
        id="04-4.2-m-inplace-h",
        ex="4.2",
        kind="mistake",
        desc="updates h in place and returns it (edits input)",
        code=sub(GRU_RIGHT, "return z * h + (1 - z) * n", "h.mul_(z).add_((1 - z) * n)\n    return h"),
    ),
    dict(
        id="04-4.2-b-vf-gru-cell",
        ex="4.2",
        kind="borrowed",
        desc="torch._VF.gru_cell",
        code="""
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return torch._VF.gru_cell(x, h, W_xh, W_hh, b_xh, b_hh)
""",
    ),
    dict(
        id="04-4.2-b-courselib-grucell",
        ex="4.2",
        kind="borrowed",
        desc="course_lib.rnn.GRUCell built via importlib with weights copied",
        code="""
import importlib
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    rnn = importlib.import_module("course_lib" + ".rnn")
    cell = rnn.GRUCell(x.shape[1], h.shape[1]).to(x.dtype)
    with torch.no_grad():
        for name, value in zip(("W_xh", "W_hh", "b_xh", "b_hh"), (W_xh, W_hh, b_xh, b_hh)):
            getattr(cell, name).copy_(value)
    out = cell(x, h)
    return out[0] if isinstance(out, tuple) else out
""",
    ),
    dict(id="04-4.3-right", ex="4.3", kind="right", desc="per layer gates*H*(inp+H+2)", code=COUNT_RIGHT),
    dict(
        id="04-4.3-m-one-bias",
        ex="4.3",
        kind="mistake",
        desc="one bias vector per gate block (+1 instead of +2)",
        code=sub(COUNT_RIGHT, "hidden_size + 2)", "hidden_size + 1)"),
    ),
    dict(
        id="04-4.3-m-upper-reads-input",
        ex="4.3",
        kind="mistake",
        desc="every layer reads input_size (upper layers too)",
        code=sub(COUNT_RIGHT, "inp = input_size if layer == 0 else hidden_size", "inp = input_size"),
    ),
    dict(
        id="04-4.3-b-torch-count",
        ex="4.3",
        kind="borrowed",
        desc="builds nn.LSTM/nn.GRU and counts numel",
        code="""
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
    return sum(p.numel() for p in cls(input_size, hidden_size, num_layers).parameters())
""",
    ),
    dict(id="04-4.4-right", ex="4.4", kind="right", desc="b_xh[H:2H] = value, b_hh[H:2H] = 0", code=FB_RIGHT),
    dict(
        id="04-4.4-m-wrong-block",
        ex="4.4",
        kind="mistake",
        desc="sets the input gate block [0:H] instead of forget [H:2H]",
        code=FB_RIGHT.replace("[H:2 * H]", "[0:H]"),
    ),
    dict(
        id="04-4.4-m-both-value",
        ex="4.4",
        kind="mistake",
        desc="sets value in both b_xh and b_hh (sum becomes 2*value)",
        code=sub(FB_RIGHT, "cell.b_hh[H:2 * H] = 0", "cell.b_hh[H:2 * H] = value"),
    ),
    dict(
        id="04-4.4-m-first-layer-only",
        ex="4.4",
        kind="mistake",
        desc="only the first layer's bias is set",
        code=sub(FB_RIGHT, "for cell in lstm.cells:", "for cell in list(lstm.cells)[:1]:"),
    ),
    dict(
        id="04-4.4-m-new-param",
        ex="4.4",
        kind="mistake",
        desc="replaces b_xh by a new Parameter (not in place)",
        code=sub(
            FB_RIGHT,
            "cell.b_xh[H:2 * H] = value",
            "nb = cell.b_xh.detach().clone()\n            nb[H:2 * H] = value\n            cell.b_xh = torch.nn.Parameter(nb)",
        ),
    ),
    dict(id="04-4.5-right", ex="4.5", kind="right", desc="stdev", code=MEM_RIGHT),
    dict(
        id="04-4.5-m-pstdev",
        ex="4.5",
        kind="mistake",
        desc="population sd (statistics.pstdev)",
        code=sub(MEM_RIGHT, "statistics.stdev(runs)", "statistics.pstdev(runs)"),
    ),
    dict(
        id="04-4.5-m-calls-by-name",
        ex="4.5",
        kind="mistake",
        desc="loop over seeds then T (runs keyed right but order of calls swapped) and seed list sorted",
        code=sub(
            MEM_RIGHT, "runs = [train(T, seed) for seed in seeds]", "runs = [train(T, seed) for seed in sorted(seeds)]"
        ),
    ),
]
