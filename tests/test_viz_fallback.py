"""What a widget leaves for a reader without a kernel (course_lib.notebook.fallback): one display bundle with the
live widget first and a static picture of its first load; tqdm bars that end on their final line.

An IPython shell with a capturing display publisher stands in for the kernel: it records every bundle the
notebook would send to the front end, in order, as nbclient would save them.
"""

import base64
import io

import pytest

pytest.importorskip("ipywidgets")

from IPython.core.displaypub import CapturingDisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from course_lib.notebook import fallback, quiz, viz  # noqa: E402

WIDGET = fallback.WIDGET_VIEW


@pytest.fixture
def shell(monkeypatch, tmp_path):
    """An IPython shell whose displays are recorded; widgets count as available (as in a kernel)."""
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # nothing written to the user's ~/.ipython
    config = Config()
    config.HistoryManager.enabled = False
    ip = InteractiveShell.instance(config=config)
    ip.display_pub = CapturingDisplayPublisher()
    monkeypatch.setattr(viz, "widgets_available", lambda: True)
    monkeypatch.setattr(quiz, "widgets_available", lambda: True)
    yield ip
    InteractiveShell.clear_instance()


def png_bytes() -> bytes:
    """A real PNG, made by matplotlib (not by the code under test)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [1, 0])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def widget_bundles(ip) -> list[dict]:
    return [o["data"] for o in ip.display_pub.outputs if WIDGET in o["data"]]


def test_explorer_bundle_holds_its_first_figure_and_text_in_order(shell):
    import ipywidgets as w
    from IPython.display import Image, display

    png = png_bytes()
    calls = []

    def explore(n):
        calls.append(n)
        print(f"before the figure, n = {n}")
        display(Image(data=png))
        print("after the figure")

    widget = viz.interactive(explore, n=w.IntSlider(value=3, min=0, max=9, description="n"))
    assert calls == [3], "the explorer's function runs once for its first load, not twice"
    [data] = widget_bundles(shell)
    # the live widget first: JupyterLab renders only it, so the figure is not shown twice
    assert data[WIDGET]["model_id"] == widget.model_id
    page = data["text/html"]
    b64 = base64.b64encode(png).decode()
    assert page.index("before the figure, n = 3") < page.index(f"data:image/png;base64,{b64}") < page.index("after")
    assert "n = 3" in page and "Run the notebook" in page
    assert data["image/png"] == b64
    assert data["text/plain"].splitlines()[:3] == ["before the figure, n = 3", "[figure]", "after the figure"]
    # the live view holds the first load too, and nothing goes to an Output widget (a headless client would
    # have to answer every change of one: issue 31)
    view = widget.children[-1]
    assert f"data:image/png;base64,{b64}" in view.value and "before the figure, n = 3" in view.value
    assert not any(isinstance(child, w.Output) for child in widget.children)
    assert len(shell.display_pub.outputs) == 1, "the explorer is displayed once, as one bundle"

    widget.children[0].value = 5  # a later move of the slider calls the function and redraws the view
    assert calls == [3, 5]
    assert "before the figure, n = 5" in view.value and "n = 3" not in view.value
    assert len(shell.display_pub.outputs) == 1, "a redraw changes the view's value; it displays nothing"


def test_a_failure_after_the_first_load_is_shown_in_the_view(shell):
    import ipywidgets as w

    def explore(x):
        print("x is", x)
        if x == 2:
            raise ValueError("x must not be 2 <here>")

    widget = viz.interactive(explore, x=w.IntSlider(value=1, min=0, max=3))
    widget.children[0].value = 2
    view = widget.children[-1].value
    assert "x is 2" in view and "ValueError: x must not be 2 &lt;here&gt;" in view  # escaped, after its output
    widget.children[0].value = 3
    assert "x is 3" in widget.children[-1].value and "ValueError" not in widget.children[-1].value


def test_explorer_shows_the_label_of_a_dropdown_and_raises_a_first_failure(shell):
    import ipywidgets as w

    viz.interactive(lambda k: print("k is", k), k=w.Dropdown(options=[("kneser-ney", 4), ("laplace", 1)], value=4))
    [data] = widget_bundles(shell)
    assert "k = 'kneser-ney'" in data["text/plain"] and "k is 4" in data["text/plain"]
    viz.interactive(lambda order: print("order is", order), order=w.Dropdown(options=[1, 2, 3], value=2))
    data = widget_bundles(shell)[-1]
    assert "order = 2" in data["text/plain"] and "'2'" not in data["text/plain"]  # the value, not its label

    def broken(x):
        print("partial output")
        raise ZeroDivisionError("x")

    with pytest.raises(ZeroDivisionError):
        viz.interactive(broken, x=w.IntSlider(value=1))


def test_quiz_bundle_shows_question_and_options_but_not_the_answer(shell):
    q = quiz.MultipleChoice(
        "What is $\\alpha_{2,2}$ in masked attention?",
        {"A": "0", "B": "0.5", "C": "e / (2e + e⁻¹ + 1)"},
        answer="B",
        feedback={"A": "masked key", "B": "two equal scores", "C": "the unmasked row"},
    )
    q.show()
    [data] = widget_bundles(shell)
    for text in (data["text/html"], data["text/plain"]):
        assert "What is $\\alpha_{2,2}$ in masked attention?" in text
        for option in ("(A) 0", "(B) 0.5", "(C) e / (2e + e⁻¹ + 1)"):
            assert option in text
        assert "two equal scores" not in text and "Correct" not in text  # nothing gives the answer away
    assert "run the notebook" in data["text/plain"]

    practice = quiz.Practice(lambda rng: quiz.NumericQuestion(f"What is {rng.randint(2, 9)} squared?", 4.0), seed=1)
    practice.show()
    data = widget_bundles(shell)[-1]
    assert practice.question.question in data["text/html"] and practice.question.question in data["text/plain"]


def test_a_progress_bar_ends_on_its_final_line(shell):
    from tqdm.notebook import TqdmHBox, tqdm

    monkey = pytest.MonkeyPatch()
    monkey.setattr(TqdmHBox, "_ipython_display_", None, raising=False)
    try:
        assert fallback.keep_progress_lines()
        for _ in tqdm(range(7), desc="steps"):
            pass
        bar = tqdm(total=10, desc="stopped")  # a bar that stops early (an error) keeps where it stopped
        bar.update(4)
        bar.close()
    finally:
        monkey.undo()
    outputs = [o for o in shell.display_pub.outputs if WIDGET in o["data"]]
    first, final = outputs[0], [o for o in outputs if o.get("update")]
    assert "0/7" in first["data"]["text/plain"]  # what the bar showed when it was displayed
    assert len(final) == 2
    steps, stopped = final[0]["data"]["text/plain"], final[1]["data"]["text/plain"]
    assert steps.startswith("steps: 100%") and "7/7 [" in steps, steps
    assert stopped.startswith("stopped:  40%") and "4/10 [" in stopped, stopped
    assert final[0]["transient"]["display_id"] == first["transient"]["display_id"]


def test_show_carries_the_alt_text_with_the_png(shell):
    import matplotlib.pyplot as plt

    plt.plot([1, 2, 3], [3, 1, 2])
    shell.run_cell(
        'from course_lib.notebook import viz\nviz.show("Loss against step: falls from 3 to 1, then rises to 2.")'
    )
    bundles = [o for o in shell.display_pub.outputs if "image/png" in o["data"]]
    assert bundles, "no PNG was displayed"
    data, md = bundles[-1]["data"], bundles[-1]["metadata"]
    base64.b64decode(data["image/png"])  # a real PNG payload
    assert md["image/png"]["alt"] == "Loss against step: falls from 3 to 1, then rises to 2."
    assert plt.get_fignums() == [], "the figure must be closed (or the inline backend shows it a second time)"


@pytest.mark.parametrize("alt", ["", "figure", "A plot.", None, "No description has been provided for this image"])
def test_show_refuses_a_generic_alt(alt):
    with pytest.raises(ValueError, match="alt must describe"):
        viz.show(alt)


def test_explorer_static_picture_carries_the_alt_text_of_its_figure(shell):
    """viz.show(alt) inside an explorer: the bundle's HTML shows the figure with that alt text and a caption, its
    image/png carries the alt in the metadata, and its text names the figure by it (was alt="figure")."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    def explore(k):
        plt.plot([0, 1, 2], [k, 1, 0])
        viz.show(f"Loss against step for k = {k}: falls from {k} to 0 in two steps.")

    explorer = viz.interactive(explore, k=w.IntSlider(value=3, min=1, max=9))
    alt = "Loss against step for k = 3: falls from 3 to 0 in two steps."
    outputs = [o for o in shell.display_pub.outputs if WIDGET in o["data"]]
    [bundle] = outputs
    page = bundle["data"]["text/html"]
    assert f'<img alt="{alt}"' in page and f'<figcaption aria-hidden="true">{alt}</figcaption>' in page
    assert 'alt="figure"' not in page
    assert bundle["metadata"]["image/png"]["alt"] == alt
    assert f"[figure: {alt}]" in bundle["data"]["text/plain"]
    # the live view shows the figure with the same alt text
    assert f'<img alt="{alt}"' in explorer.children[-1].value


def test_a_figure_shown_without_alt_text_gets_none_in_the_static_picture():
    shown = fallback.Shown([("data", {"image/png": base64.b64encode(png_bytes()).decode()}, {})])
    assert shown.html().startswith("<img src=") and "alt=" not in shown.html()  # axe and the site test find it
    assert shown.text() == "[figure]"
    assert shown.figures[0][1] == ""


# --- the default style: colours that colour-blind readers tell apart, heatmaps whose lightness rises ---

colorspacious = pytest.importorskip("colorspacious")

# Machado, Oliveira and Fernandes (2009) at full severity, as colorspacious implements them
DEFICIENCIES = ("deuteranomaly", "protanomaly", "tritanomaly")
# Distance in CAM02-UCS (about 1 is a just-noticeable difference on large patches); thin lines need far more.
MIN_DISTANCE = 10.0


def _as_seen(rgb, deficiency):
    import numpy as np

    if deficiency is None:
        return np.asarray(rgb, dtype=float)
    space = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(colorspacious.cspace_convert(rgb, space, "sRGB1"), 0, 1)


def closest_pair(colours, deficiency):
    """The smallest CAM02-UCS distance between two colours of ``colours`` as seen with ``deficiency``."""
    import itertools

    import matplotlib.colors as mcolors

    seen = [_as_seen(mcolors.to_rgb(c), deficiency) for c in colours]
    return min(colorspacious.deltaE(a, b, input_space="sRGB1") for a, b in itertools.combinations(seen, 2))


@pytest.fixture
def styled():
    import matplotlib as mpl

    saved = mpl.rcParams.copy()
    viz.use_course_style()
    yield mpl.rcParams
    mpl.rcParams.update(saved)


def test_the_default_colours_stay_apart_for_colour_blind_readers(styled):
    import matplotlib as mpl

    colours = styled["axes.prop_cycle"].by_key()["color"]
    assert len(colours) >= 6
    for deficiency in (None, *DEFICIENCIES):
        assert closest_pair(colours, deficiency) >= MIN_DISTANCE, deficiency
    # the check can fail: matplotlib's own default (tab10) has pairs that protanopes and deuteranopes confuse
    tab10 = [mpl.colors.to_hex(c) for c in mpl.colormaps["tab10"].colors]
    assert closest_pair(tab10, "protanomaly") < MIN_DISTANCE
    assert closest_pair(tab10, "deuteranomaly") < MIN_DISTANCE


def test_lines_differ_in_style_too_so_colour_is_never_the_only_cue(styled):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    lines = [ax.plot([0, 1], [i, i + 1])[0] for i in range(len(viz.OKABE_ITO))]
    plt.close(fig)
    styles = [(str(line.get_linestyle()), str(line._dash_pattern)) for line in lines]
    assert len(set(styles)) == len(lines), styles
    ax = viz.line_plot([1, 2, 3], {"a": [1, 2, 3], "b": [3, 2, 1], "c": [2, 2, 2]}, xlabel="x", ylabel="y")
    assert len({line.get_marker() for line in ax.get_lines()}) == 3
    plt.close(ax.figure)
    ax = viz.line_plot([1, 2, 3], {"a": [1, 2, 3], "b": [3, 2, 1]}, xlabel="x", ylabel="y", marker="")
    assert {line.get_marker() for line in ax.get_lines()} <= {"", "None", None}  # marker="" draws none
    plt.close(ax.figure)


def test_heatmaps_default_to_a_map_whose_lightness_rises_for_every_reader(styled):
    """Perceptually uniform: lightness (CAM02-UCS J') rises along the map, also as colour-blind readers see it
    (a rainbow map such as jet fails), and the attention heatmap has a colour bar."""
    import matplotlib.pyplot as plt
    import numpy as np

    def rises(cmap, deficiency):
        rgb = cmap(np.linspace(0, 1, 32))[:, :3]
        lightness = colorspacious.cspace_convert(_as_seen(rgb, deficiency), "sRGB1", "CAM02-UCS")[:, 0]
        return bool(np.all(np.diff(lightness) > 0))

    default = plt.get_cmap(styled["image.cmap"])
    for deficiency in (None, *DEFICIENCIES):
        assert rises(default, deficiency), deficiency
    assert not rises(plt.get_cmap("jet"), None)  # the check can fail
    ax = viz.attention_heatmap(np.eye(3) * 0.5 + 0.1)
    assert len(ax.figure.axes) == 2, "the heatmap and its colour bar"
    assert rises(ax.images[0].get_cmap(), "deuteranomaly")
    plt.close(ax.figure)


def test_setup_applies_the_course_style(monkeypatch):
    import matplotlib as mpl

    import course_lib

    saved = mpl.rcParams.copy()
    try:
        mpl.rcParams["axes.prop_cycle"] = mpl.rcParamsDefault["axes.prop_cycle"]
        course_lib.setup(seed=0, device="cpu")
        assert mpl.rcParams["axes.prop_cycle"].by_key()["color"] == [c for c in viz.OKABE_ITO]
    finally:
        mpl.rcParams.update(saved)
