"""What a widget shows to a reader without a kernel (GitHub, nbviewer, an LMS, the course site).

A widget's saved output is only a reference to its state (``application/vnd.jupyter.widget-view+json``)
plus a ``text/plain`` such as ``interactive(children=(FloatLogSlider(...``. Here every widget the course
displays goes out as ONE display bundle that also holds a static picture of its first load:

- ``application/vnd.jupyter.widget-view+json``: the live widget. JupyterLab, Notebook 7, VS Code and Colab
  rank it first and render only it, so a student never sees the figure twice;
- ``text/html``: the printed text and every figure (PNG data URIs, each with its alt text, also shown as a
  caption), with a line saying it is static.
  nbconvert (and so nbviewer and the course site) skips the widget view when the page holds no widget
  state and renders this instead; JupyterLab shows it for an untrusted notebook;
- ``image/png``: the first figure, with its alt text in the bundle's metadata, for viewers that show images
  but not HTML;
- ``text/plain``: the printed text and a line per figure (``[figure: its alt text]``), for text-only viewers.

A figure's alt text is what ``viz.show(alt)`` put in its display metadata (``{"image/png": {"alt": ...}}``,
nbconvert's convention); :func:`capture` keeps that metadata, so the static picture says what the figure shows.

:func:`keep_progress_lines` does the same for tqdm's notebook bars: when a bar finishes, its saved
``text/plain`` becomes the final line (``training: 100%|##########| 150/150 [04:03<00:00,  1.74s/it]``)
instead of the empty bar it was displayed with.
"""

from __future__ import annotations

import base64
import html
import io
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATIC_NOTE = "A static picture of the first load. Run the notebook to use the controls."


@dataclass
class Shown:
    """What a call printed and displayed, in order: ("text", str, {}) or ("data", mime bundle, its metadata)."""

    items: list[tuple[str, object, dict]] = field(default_factory=list)

    @property
    def figures(self) -> list[tuple[str, str]]:
        """The figures, in order: (base64 PNG, alt text; "" when the figure was shown without one)."""
        return [
            (data["image/png"], alt_of(meta))
            for kind, data, meta in self.items
            if kind == "data" and "image/png" in data
        ]

    def html(self) -> str:
        parts = []
        for kind, item, meta in self.items:
            if kind == "text":
                parts.append(f'<pre class="course-static-text">{html.escape(item)}</pre>')
            elif "image/png" in item:
                parts.append(figure_html(item["image/png"], alt_of(meta)))
            elif "text/html" in item:
                parts.append(item["text/html"])
            elif "text/plain" in item:
                parts.append(f'<pre class="course-static-text">{html.escape(item["text/plain"])}</pre>')
        return "\n".join(parts)

    def text(self) -> str:
        parts = []
        for kind, item, meta in self.items:
            if kind == "text":
                parts.append(item.rstrip("\n"))
            elif "image/png" in item:
                parts.append(f"[figure: {alt_of(meta)}]" if alt_of(meta) else "[figure]")
            elif "text/plain" in item:
                parts.append(item["text/plain"])
        return "\n".join(parts)


def alt_of(metadata: Mapping | None) -> str:
    """The alt text of a PNG output, from its display metadata ({"image/png": {"alt": ...}}), or ""."""
    alt = ((metadata or {}).get("image/png") or {}).get("alt", "")
    return alt if isinstance(alt, str) else ""


def figure_html(png, alt: str) -> str:
    """A PNG with its alt text, and the same text as a visible caption (hidden from screen readers, which
    read the alt text: they would otherwise hear it twice). A figure shown without alt text gets none here
    either, so the site's alt-text test finds it (an invented "figure" would only hide the gap)."""
    src = f"data:image/png;base64,{_b64(png)}"
    if not alt:
        return f'<img src="{src}">'
    text = html.escape(alt)
    return (
        f'<figure class="course-figure"><img alt="{text}" src="{src}">'
        f'<figcaption aria-hidden="true">{text}</figcaption></figure>'
    )


def _b64(png) -> str:
    if isinstance(png, bytes):
        return base64.b64encode(png).decode("ascii")
    return "".join(png.split())  # IPython already gives base64 text


def capture(call: Callable[[], object]) -> tuple[object, Shown]:
    """Run ``call()`` in a kernel, keeping what it prints and displays, in order (figures shown with
    plt.show(), and figures left open, which ipywidgets' interactive would flush); return (result, shown).

    The explorer draws what was kept into its view (``Shown.html``). If ``call`` raises, what it showed
    before is replayed at once, then the exception propagates.
    """
    from IPython import get_ipython
    from IPython.core.displaypub import CapturingDisplayPublisher
    from ipywidgets.widgets.interaction import show_inline_matplotlib_plots

    shown = Shown()

    class Stream(io.TextIOBase):
        def writable(self):
            return True

        def write(self, text):
            if shown.items and shown.items[-1][0] == "text":
                shown.items[-1] = ("text", shown.items[-1][1] + text, {})
            elif text:
                shown.items.append(("text", text, {}))
            return len(text)

    class Publisher(CapturingDisplayPublisher):
        def publish(self, data, metadata=None, *args, **kwargs):
            shown.items.append(("data", dict(data), dict(metadata or {})))  # metadata holds the alt text

    shell = get_ipython()
    sys.stdout.flush()
    saved = sys.stdout, shell.display_pub
    sys.stdout, shell.display_pub = Stream(), Publisher()
    try:
        result = call()
        show_inline_matplotlib_plots()
    except BaseException:
        sys.stdout, shell.display_pub = saved
        replay(shown)
        raise
    sys.stdout, shell.display_pub = saved
    return result, shown


def replay(shown: Shown) -> None:
    """Print and display again what :func:`capture` kept (inside a widget's Output, it lands there)."""
    from IPython.display import display

    for kind, item, metadata in shown.items:
        if kind == "text":
            print(item, end="")
        else:
            display(item, raw=True, metadata=metadata or None)


def bundle(widget, html_text: str, plain_text: str, png: str | None = None) -> dict:
    """The display bundle of ``widget`` with a static fallback (see the module docstring); its metadata is
    :func:`png_metadata`."""
    data = {
        "text/plain": plain_text,
        "text/html": f'<div class="course-static">{html_text}</div>',
    }
    if png is not None:
        data["image/png"] = _b64(png)
    view = widget._repr_mimebundle_().get(WIDGET_VIEW)
    if view is not None:
        data[WIDGET_VIEW] = view
    return data


def png_metadata(alt: str) -> dict | None:
    """The display metadata that gives a bundle's image/png its alt text (nbconvert writes it as alt=)."""
    return {"image/png": {"alt": alt}} if alt else None


def display_with_fallback(widget, html_text: str, plain_text: str, png: str | None = None, alt: str = "") -> None:
    """Display ``widget`` as one bundle that also carries its static picture (``png`` described by ``alt``)."""
    from IPython.display import display

    display(bundle(widget, html_text, plain_text, png), raw=True, metadata=png_metadata(alt if png else ""))


def settings_line(values: Mapping[str, object]) -> str:
    """``order = 2, smoothing = 'kneser-ney'``: the controls' values a static picture was made with."""
    return ", ".join(f"{name} = {value!r}" for name, value in values.items())


# --- tqdm ---


def _final_line(box) -> str:
    return repr(box)  # tqdm's TqdmHBox.__repr__ formats its bar's current state: steps, time, rate


def _display_progress(box) -> None:
    """TqdmHBox's display: the widget with a display id, so its text/plain can be made final at the end."""
    from IPython.display import display

    data = box._repr_mimebundle_()
    handle = display(data, raw=True, display_id=True)
    bar = box.children[1]

    def finished(change):
        if change["new"] in ("success", "danger"):  # tqdm sets these when the bar closes (or fails)
            handle.update({**box._repr_mimebundle_(), "text/plain": _final_line(box)}, raw=True)

    bar.observe(finished, names="bar_style")


def keep_progress_lines() -> bool:
    """Make every tqdm notebook bar leave its final line in the saved output; True if tqdm's notebook bar exists.

    tqdm.notebook displays a ``TqdmHBox`` whose text/plain is fixed when it is displayed ("0it [00:00, ?it/s]").
    Giving the class an ``_ipython_display_`` (IPython calls it instead of formatting the object) lets us
    display it with a display id and update its text/plain when tqdm marks it finished. This works for bars
    made by ``tqdm.auto`` anywhere (the lessons, course_lib.train), whenever it was imported.
    """
    try:
        from tqdm.notebook import TqdmHBox
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return False
    TqdmHBox._ipython_display_ = _display_progress
    return True
