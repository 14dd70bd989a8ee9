"""The course site (course_lib.instructor.site): lesson 06, executed and converted, holds its figures, its equations
and its quiz as text; exercises never go out, solutions only with the instructor flag.

Executing lesson 06 takes about a minute; the executed copy is cached under build/site-cache (keyed by the notebook
and course_lib's sources), which the browser test of the site reuses.
"""

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("nbconvert")
pytest.importorskip("jupyter_server_mathjax")

from course_lib.instructor import site  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Tags(HTMLParser):
    """Every tag's attributes, and the text outside <script> and <style>."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def parse(path: Path) -> Tags:
    tags = Tags()
    tags.feed(path.read_text(encoding="utf-8"))
    return tags


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    report = site.build(out, lessons=["06"], log=lambda *_: None)
    return out, report


@pytest.mark.slow
def test_lesson_page_holds_its_figures_as_png_images(built):
    out, report = built
    assert report["pages"] == ["06_masked_attention.html"]
    images = [a.get("src", "") for tag, a in parse(out / "06_masked_attention.html").tags if tag == "img"]
    # the two heatmap figures of the lesson, the three heatmaps of section 4, and the explorer's first picture
    assert len(images) >= 3, images
    for src in images:
        assert src.startswith("data:image/png;base64,"), src[:80]
        data = base64.b64decode(src.split(",", 1)[1])
        assert data.startswith(PNG_SIGNATURE) and len(data) > 2000


@pytest.mark.slow
def test_lesson_page_holds_its_equations_and_a_local_mathjax(built):
    out, _ = built
    import nbformat

    text = " ".join("".join(parse(out / "06_masked_attention.html").text).split())
    lesson = nbformat.read(ROOT / "notebooks" / "06_masked_attention.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in lesson.cells if c.cell_type == "markdown")
    # every display equation of the lesson's markdown is on the page, for MathJax to typeset
    equations = re.findall(r"\$\$(.+?)\$\$", markdown, flags=re.S)
    assert len(equations) >= 2
    for equation in equations:
        assert f"$${' '.join(equation.split())}$$" in text
    scripts = [a["src"] for tag, a in parse(out / "06_masked_attention.html").tags if tag == "script" and "src" in a]
    assert scripts and all(not s.startswith(("http:", "https:", "//")) for s in scripts), scripts  # works offline
    mathjax = [s for s in scripts if "MathJax.js" in s]
    assert mathjax and (out / mathjax[0].split("?")[0]).exists()


@pytest.mark.slow
def test_lesson_page_shows_the_quiz_as_text_and_no_widget_reprs(built):
    out, _ = built
    text = "".join(parse(out / "06_masked_attention.html").text)
    # the lecture's quiz as the lesson defines it (notebooks/06_masked_attention.py)
    assert "What is $\\alpha_{2,2}$ in masked attention?" in text
    for option in ("(A) 0", "(B) 0.5", "(C) e / (2e + e⁻¹ + 1)", "(D) 1"):
        assert option in text
    assert "run the notebook to answer it" in text
    # what a saved widget used to leave: its repr
    for repr_ in ("interactive(children=", "VBox(children=", "HBox(children="):
        assert repr_ not in text


@pytest.mark.slow
def test_front_page_lists_the_lesson_with_its_goals_and_how_to_run_it(built):
    out, _ = built
    front = parse(out / "index.html")
    links = [a.get("href") for tag, a in front.tags if tag == "a"]
    assert "06_masked_attention.html" in links
    text = " ".join(front.text)
    assert "Lesson 06: masked self-attention" in text
    # its first learning goal, as the notebook's source words it (first line of goal 1)
    source = (ROOT / "notebooks" / "06_masked_attention.py").read_text(encoding="utf-8")
    first_goal = re.search(r"^# 1\. (.+)$", source, re.M).group(1)
    first_words = " ".join(re.sub(r"\*\*", "", first_goal).split()[:4])
    assert first_words in text
    assert "make lab" in text


def test_exercises_never_go_out_and_solutions_only_with_the_flag(tmp_path, monkeypatch):
    import nbformat

    executed = []

    def fake_execute(source, cache, timeout=900, log=print):  # conversion only: the notebook as committed
        executed.append(source.relative_to(ROOT).as_posix())
        return nbformat.read(source, as_version=4)

    monkeypatch.setattr(site, "execute", fake_execute)
    site.build(tmp_path / "public", lessons=["06", "1"], log=lambda *_: None)
    assert executed == ["notebooks/01_ngrams.ipynb", "notebooks/06_masked_attention.ipynb"]
    assert not list((tmp_path / "public").rglob("solutions*")) and not list((tmp_path / "public").rglob("exercises*"))

    executed.clear()
    site.build(tmp_path / "instructor", lessons=["06"], solutions=True, log=lambda *_: None)
    assert executed == ["notebooks/06_masked_attention.ipynb", "solutions/06_masked_attention.ipynb"]
    assert (tmp_path / "instructor" / "solutions" / "06_masked_attention.html").exists()
    assert "solutions/06_masked_attention.html" in (tmp_path / "instructor" / "index.html").read_text()
    with pytest.raises(ValueError, match="lessons must be among"):
        site.build(tmp_path / "bad", lessons=["99"], log=lambda *_: None)


def test_the_cache_key_follows_the_notebook_and_the_package(tmp_path):
    root = tmp_path / "repo"
    (root / "course_lib" / "weights").mkdir(parents=True)
    (root / "course_lib" / "instructor").mkdir()
    (root / "notebooks").mkdir()
    nb, module = root / "notebooks" / "01_x.ipynb", root / "course_lib" / "ngram.py"
    nb.write_text("{}")
    module.write_text("a = 1")
    (root / "course_lib" / "instructor" / "site.py").write_text("x = 1")
    key = site.fingerprint(nb, root)
    (root / "course_lib" / "instructor" / "site.py").write_text("x = 2")  # the builder itself does not count
    assert site.fingerprint(nb, root) == key
    module.write_text("a = 2")
    assert site.fingerprint(nb, root) != key
    module.write_text("a = 1")
    nb.write_text('{"cells": []}')
    assert site.fingerprint(nb, root) != key
