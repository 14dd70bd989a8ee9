"""Plots and interactive explorers for the lessons.

Every explorer has a static fall-back: where widgets cannot render (plain Python,
a CI run, a viewer without a kernel) it calls the function once with the default
settings and says so, so the notebook still shows a result.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence


def widgets_available() -> bool:
    """True inside a Jupyter kernel with ipywidgets importable."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def interactive(fn: Callable, **controls):
    """``ipywidgets.interactive(fn, **controls)`` and display it, or a static call where widgets cannot render.

    ``controls`` are ipywidgets (sliders, dropdowns, ...); their current values are
    the defaults. An exception in the first call is raised here (ipywidgets would
    only print it inside the widget, and CI would never see it).
    """
    for name, control in controls.items():
        if not hasattr(control, "value"):
            raise TypeError(f"control {name!r} must be an ipywidgets widget with a .value, got {type(control).__name__}")
    defaults = {name: control.value for name, control in controls.items()}
    if not widgets_available():
        print("(Widgets are not available here: showing the result for the default settings.)")
        return fn(**defaults)

    import ipywidgets
    from IPython.display import display

    failure: list[BaseException] = []

    def guarded(**kwargs):
        try:
            return fn(**kwargs)
        except Exception as exc:  # keep the first failure so the cell fails loudly
            failure.append(exc)
            raise

    widget = ipywidgets.interactive(guarded, **controls)
    if failure:
        raise failure[0]
    display(widget)
    return widget


def line_plot(x: Sequence, series: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str, title: str = "",
              logy: bool = False, ax=None, marker: str = "o"):
    """One line per entry of ``series`` against ``x``; returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    if not series:
        raise ValueError("series is empty: give at least one name -> values")
    for name, ys in series.items():
        if len(ys) != len(x):
            raise ValueError(f"series[{name!r}] has {len(ys)} values but x has {len(x)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4))
    for name, ys in series.items():
        ax.plot(list(x), list(ys), marker=marker, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return ax


def table(rows: Sequence[Sequence], header: Sequence[str], floatfmt: str = "{:,.1f}") -> str:
    """A plain-text table (renders everywhere, diffs cleanly)."""
    cells = [[floatfmt.format(v) if isinstance(v, float) else str(v) for v in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    line = lambda r: "  ".join(s.rjust(w) if i else s.ljust(w) for i, (s, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line([str(h) for h in header]), line(["-" * w for w in widths])] + [line(r) for r in cells])
