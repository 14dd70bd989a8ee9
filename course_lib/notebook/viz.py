"""Plots and interactive explorers for the lessons, in a colour-blind-safe style.

Every explorer has a static fall-back: where widgets cannot render (plain Python, a terminal)
it calls the function once with the default settings and says so, so the notebook still shows
a result. In a kernel, the widget goes out with a static picture of its first load in the same
display bundle (course_lib.notebook.fallback), which viewers without a kernel show instead.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence

from course_lib._text import table  # noqa: F401 - lessons print tables through viz.table
from course_lib.notebook.setup import widgets_available

# Okabe and Ito's colour-universal-design palette (Wong, Nature Methods 8, 441 (2011)), told apart with every
# common colour-vision deficiency (tests/test_viz_fallback.py simulates them); its yellow (#F0E442) is left
# out: a thin yellow line on white is hard to see for anyone.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
# One line style per colour, so lines are told apart without any colour (a grey print, a projector).
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)))
MARKERS = ("o", "s", "D", "^", "v", "P", "X")
HEATMAP = "viridis"  # perceptually uniform: lightness rises steadily, also for colour-blind readers


def use_course_style() -> None:
    """Every figure from now on: the Okabe-Ito colours, each with its own line style; heatmaps on viridis.

    ``course_lib.setup`` calls it, so a lesson's own ``plt.plot`` calls get it too.
    """
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams["axes.prop_cycle"] = cycler(color=list(OKABE_ITO)) + cycler(linestyle=list(LINESTYLES))
    mpl.rcParams["image.cmap"] = HEATMAP


def interactive(fn: Callable, **controls):
    """Display ``fn``'s result with ``controls`` that call it again when moved, or a static call where widgets
    cannot render; returns the explorer (a VBox: the controls, then the view).

    ``controls`` are ipywidgets (sliders, dropdowns, ...); their current values are the defaults. An exception
    in the first call is raised here, so the cell fails loudly; a later one is shown in the view.

    What ``fn`` prints and displays (figures included) is drawn into an HTML widget's value, not an Output
    widget: a headless executor (nbclient, so nbconvert, papermill, nbgrader) answers every change of an Output
    widget with a message on the socket it awaits the cell's reply on, which can leave that reply unread until
    the client's timeout (scripts/upstream/README.md). A value widget needs no answer.
    """
    for name, control in controls.items():
        if not hasattr(control, "value"):
            raise TypeError(
                f"control {name!r} must be an ipywidgets widget with a .value, got {type(control).__name__}"
            )
    defaults = {name: control.value for name, control in controls.items()}
    if not widgets_available():
        print("(Widgets are not available here: showing the result for the default settings.)")
        return fn(**defaults)

    import ipywidgets

    from course_lib.notebook import fallback

    _, shown = fallback.capture(lambda: fn(**defaults))  # raises: the cell fails loudly
    view = ipywidgets.HTML(value=shown.html())
    view.add_class("course-explorer-view")

    def redraw(_change=None):
        values = {name: control.value for name, control in controls.items()}
        failure: list[Exception] = []

        def call():
            try:
                fn(**values)
            except Exception as exc:  # shown in the view: nobody would see it raised in a callback
                failure.append(exc)

        _, now = fallback.capture(call)
        error = f'<pre class="course-explorer-error">{html.escape(_error_line(failure[0]))}</pre>' if failure else ""
        view.value = now.html() + error

    for control in controls.values():
        control.observe(redraw, names="value")
    explorer = ipywidgets.VBox([*controls.values(), view])
    explorer.add_class("course-explorer")

    # a dropdown of (label, value) pairs shows its label, as the widget does; where the label is just the
    # value written out (options=[1, 2, 3]), the value itself (order = 2, not order = '2')
    shown_as = {
        name: label if (label := getattr(control, "label", None)) and label != str(control.value) else control.value
        for name, control in controls.items()
    }
    note = f"{fallback.STATIC_NOTE} Settings: {fallback.settings_line(shown_as)}."
    fallback.display_with_fallback(
        explorer,
        shown.html() + f'\n<p class="course-static-note"><em>{html.escape(note)}</em></p>',
        "\n".join(filter(None, [shown.text(), f"({note})"])),
        png=shown.figures[0][0] if shown.figures else None,
        alt=shown.figures[0][1] if shown.figures else "",
    )
    return explorer


def _error_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


GENERIC_ALT = ("figure", "plot", "image", "chart", "graph", "no description has been provided for this image")


def show(alt: str, fig=None) -> None:
    """Show ``fig`` (default: the current figure) with ``alt``, its text for readers who cannot see it.

    Use it instead of ``plt.show()``. ``alt`` says what the figure shows: the axes and the point, with the
    computed numbers where they matter ("Test perplexity against n-gram order: 962 at 1, 170 at 2 ...").
    The text travels as the PNG's ``alt`` metadata, which nbconvert (the site) and screen readers use.
    """
    import base64
    import io

    import matplotlib.pyplot as plt

    if not isinstance(alt, str) or len(alt.split()) < 4 or alt.strip().lower().rstrip(".") in GENERIC_ALT:
        raise ValueError(f"alt must describe the figure in a sentence (axes and what it shows), got {alt!r}")
    fig = plt.gcf() if fig is None else fig
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python: nothing to display on
        print(f"[figure: {alt}]")
        return
    if get_ipython() is None:
        print(f"[figure: {alt}]")
        return
    display({"image/png": png, "text/plain": f"[figure: {alt}]"}, raw=True, metadata={"image/png": {"alt": alt}})


def line_plot(
    x: Sequence,
    series: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    logy: bool = False,
    ax=None,
    marker: str | None = None,
):
    """One line per entry of ``series`` against ``x``; returns the matplotlib Axes.

    Each line has its own colour, line style and marker (``marker`` gives them all the same one;
    ``marker=""`` draws none, for curves of many points).
    """
    import matplotlib.pyplot as plt

    if not series:
        raise ValueError("series is empty: give at least one name -> values")
    for name, ys in series.items():
        if len(ys) != len(x):
            raise ValueError(f"series[{name!r}] has {len(ys)} values but x has {len(x)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4))
    for i, (name, ys) in enumerate(series.items()):
        ax.plot(list(x), list(ys), marker=MARKERS[i % len(MARKERS)] if marker is None else marker, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return ax


# --- lesson 06 ---


def attention_heatmap(
    weights,
    keys: Sequence[str] | None = None,
    queries: Sequence[str] | None = None,
    *,
    mask=None,
    title: str = "",
    ax=None,
    annotate: bool = True,
    fmt: str = "{:.2f}",
):
    """Heatmap of a (T_q, T_k) attention matrix: row i is query i, column j is key j; returns the Axes.

    ``mask`` (bool, True = may attend) greys out the masked cells, so a masked 0 looks
    different from a weight that happens to be small. ``annotate`` writes each weight in its cell.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    w = np.asarray(weights.detach().cpu() if hasattr(weights, "detach") else weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights must be a 2-D (queries, keys) matrix, got shape {w.shape}")
    n_q, n_k = w.shape
    for name, labels, n in (("queries", queries, n_q), ("keys", keys, n_k)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name} has {len(labels)} labels but the matrix has {n} {name}")
    allowed = None
    if mask is not None:
        allowed = np.asarray(mask.detach().cpu() if hasattr(mask, "detach") else mask)
        if allowed.shape != w.shape or allowed.dtype != bool:
            raise ValueError(f"mask must be a boolean matrix of shape {w.shape}, got {allowed.dtype} {allowed.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * n_k + 2, 0.5 * n_q + 1.5))
    shown = w if allowed is None else np.ma.masked_where(~allowed, w)
    cmap = plt.get_cmap(HEATMAP).with_extremes(bad="#d0d0d0")  # masked cells in grey
    image = ax.imshow(shown, cmap=cmap, vmin=0.0, vmax=max(1e-9, float(np.nanmax(w))) if w.size else 1.0)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xticks(
        range(n_k),
        keys if keys is not None else [str(j + 1) for j in range(n_k)],
        rotation=90 if keys is not None and max(map(len, keys), default=0) > 2 else 0,
    )
    ax.set_yticks(range(n_q), queries if queries is not None else [str(i + 1) for i in range(n_q)])
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    if annotate and n_q * n_k <= 400:
        for i in range(n_q):
            for j in range(n_k):
                if allowed is not None and not allowed[i, j]:
                    text, color = "-inf", "#555555"
                else:
                    text, color = fmt.format(w[i, j]), "white" if w[i, j] < 0.6 * np.nanmax(w) else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
    if title:
        ax.set_title(title)
    return ax
