"""Second-round entries for lesson 03 (see entries_extra.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entries_extra import _load, sub  # noqa: E402

_base = _load("03")
LESSON, RIGHT, PREREQ = _base.LESSON, _base.RIGHT, _base.PREREQ
R = RIGHT
ENTRIES = [
    dict(
        id="03x-3.3-m-state-kept",
        ex="3.3",
        kind="mistake",
        desc="keeps the last state in self.h and starts the next call from it (state not reset)",
        code=sub(
            sub(
                R["3.3"],
                "h = x.new_zeros(x.shape[1], self.hidden_size) if h0 is None else h0",
                'if h0 is None:\n            h0 = getattr(self, "h", None)\n            if h0 is None or h0.shape[0] != x.shape[1]:\n                h0 = x.new_zeros(x.shape[1], self.hidden_size)\n        h = h0',
            ),
            "return torch.stack(outputs), h",
            "self.h = h.detach()\n        return torch.stack(outputs), h",
        ),
    ),
    dict(
        id="03x-3.3-b-func-rnn",
        ex="3.3",
        kind="borrowed",
        desc="torch._VF.rnn_relu over the whole sequence, reached by getattr",
        code=sub(
            R["3.3"],
            "        outputs = []\n",
            '        out, hT = getattr(torch._VF, "rnn_" + "relu")(x, h[None], [self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h)], True, 1, 0.0, self.training, False, False)\n        return out, hT[0]\n        outputs = []\n',
        ),
    ),
]
