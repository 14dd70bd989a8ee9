"""Plain-text tables: what the lessons print (through ``viz.table``) and the lesson modules build."""

from __future__ import annotations

from collections.abc import Sequence


def table(rows: Sequence[Sequence], header: Sequence[str], floatfmt: str = "{:,.1f}") -> str:
    """A plain-text table (renders everywhere, diffs cleanly)."""
    cells = [[floatfmt.format(v) if isinstance(v, float) else str(v) for v in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    line = lambda r: "  ".join(s.rjust(w) if i else s.ljust(w) for i, (s, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line([str(h) for h in header]), line(["-" * w for w in widths])] + [line(r) for r in cells])
