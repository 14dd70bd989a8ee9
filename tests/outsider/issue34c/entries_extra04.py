"""Second-round entries for lesson 04 (see entries_extra.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entries_extra import _load, sub  # noqa: E402

_base = _load("04")
LESSON, RIGHT, PREREQ = _base.LESSON, _base.RIGHT, _base.PREREQ
R = RIGHT
ENTRIES = [
    dict(
        id="04x-4.1-m-state-batch0",
        ex="4.1",
        kind="mistake",
        desc="zero state made with one row (1, H) and broadcast over the batch",
        code=sub(R["4.1"], "z = x.new_zeros(x.shape[0], self.hidden_size)", "z = x.new_zeros(1, self.hidden_size)"),
    ),
    dict(
        id="04x-4.1-m-cat-order",
        ex="4.1",
        kind="mistake",
        desc="colah's concatenation with mismatched order: cat([h, x]) @ cat([W_xh, W_hh]).T",
        code=sub(
            R["4.1"],
            "gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh",
            "gates = torch.cat([h, x], dim=1) @ torch.cat([self.W_xh, self.W_hh], dim=1).T + self.b_xh + self.b_hh",
        ),
    ),
    dict(
        id="04x-4.1-b-nn-lstmcell-forward",
        ex="4.1",
        kind="borrowed",
        desc="forward copied from torch.nn.LSTMCell, my parameters aliased under torch's names",
        code=sub(
            R["4.1"],
            "    def forward(self, x, state=None):",
            "    weight_ih = property(lambda self: self.W_xh)\n    weight_hh = property(lambda self: self.W_hh)\n    bias_ih = property(lambda self: self.b_xh)\n    bias_hh = property(lambda self: self.b_hh)\n    bias = True\n    _check_forward_input = lambda self, *a: None\n    forward = nn.LSTMCell.forward\n\n    def _mine(self, x, state=None):",
        ),
    ),
    dict(
        id="04x-4.2-b-func-gru",
        ex="4.2",
        kind="borrowed",
        desc="torch.nn.functional has no gru_cell; torch.ops.aten.gru_cell by string",
        code="""
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return getattr(torch.ops.aten, "gru" + "_cell")(x, h, W_xh, W_hh, b_xh, b_hh)
""",
    ),
]
