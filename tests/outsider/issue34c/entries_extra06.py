"""Second-round entries for lesson 06 (see entries_extra.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entries_extra import _load, sub  # noqa: E402

_base = _load("06")
LESSON, RIGHT, PREREQ = _base.LESSON, _base.RIGHT, _base.PREREQ
R = RIGHT
ENTRIES = [
    dict(
        id="06x-6.3-m-len0-all",
        ex="6.3",
        kind="mistake",
        desc="padding mask from lengths[0] for every sentence (batch mixing)",
        code=sub(
            R["6.3"],
            "pad = torch.arange(T, device=scores.device)[None, :] < lengths[:, None]",
            "pad = (torch.arange(T, device=scores.device) < lengths[0])[None, :].expand(B, T)",
        ),
    ),
    dict(
        id="06x-6.3-b-sdpa-values",
        ex="6.3",
        kind="borrowed",
        desc="output from F.scaled_dot_product_attention with identity queries/keys trick replaced: uses sdpa on (scores as q, eye as k)",
        code=sub(
            R["6.3"],
            "    return w @ values, w",
            "    q = scores\n    k = torch.eye(T, dtype=scores.dtype, device=scores.device).expand(B, T, T) * (T ** 0.5)\n    out = torch.nn.functional.scaled_dot_product_attention(q, k, values, attn_mask=mask)\n    return torch.nan_to_num(out), w",
        ),
    ),
]
