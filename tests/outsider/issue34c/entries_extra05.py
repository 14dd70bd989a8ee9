"""Second-round entries for lesson 05 (see entries_extra.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entries_extra import _load, sub  # noqa: E402

_base = _load("05")
LESSON, RIGHT, PREREQ = _base.LESSON, _base.RIGHT, _base.PREREQ
R = RIGHT
ENTRIES = [
    dict(
        id="05x-5.2-m-h0-len0",
        ex="5.2",
        kind="mistake",
        desc="h0 from lengths[0] for every sentence (batch mixing)",
        code=sub(
            R["5.2"], "h = states[torch.arange(B, device=states.device), lengths - 1]", "h = states[:, lengths[0] - 1]"
        ),
    ),
    dict(
        id="05x-5.2-m-pad-from-first",
        ex="5.2",
        kind="mistake",
        desc="padding mask built from the first sentence's length for the whole batch",
        code=sub(
            R["5.2"],
            "pad = torch.arange(T_in, device=states.device)[None, :] >= lengths[:, None]",
            "pad = (torch.arange(T_in, device=states.device) >= lengths[0])[None, :].expand(B, T_in)",
        ),
    ),
    dict(
        id="05x-5.2-b-checks-module",
        ex="5.2",
        kind="borrowed",
        desc="a function of the notebook's `checks` module whose name says decode/reference, found with dir()",
        code="""
def decode(model, states, lengths, tgt_in):
    import __main__
    ck = __main__.checks
    for name in dir(ck):
        low = name.lower()
        if not low.startswith("check") and ("decode" in low or "ref" in low) and callable(getattr(ck, name)):
            try:
                out = getattr(ck, name)(model, states, lengths, tgt_in)
                if isinstance(out, tuple) and len(out) == 2:
                    return out
            except Exception:
                pass
    raise RuntimeError("no reference in checks: " + ", ".join(n for n in dir(ck) if not n.startswith("_")))
""",
    ),
]
