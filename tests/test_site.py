"""The course site (course_lib.instructor.site): lesson 06, executed and built with Sphinx, holds its figures (each
with specific alt text and a caption), its equations and its quiz as text; pages carry a language, a title, a skip
link, a main landmark, headings in order and previous/next links in the course's order (01, 02, 02b, 03, ...);
exercises never go out, solutions only with the instructor flag. Every lesson source shows each figure with
``viz.show(alt)`` and specific alt text.

Executing lesson 06 takes about a minute; the executed copy is cached under build/site-cache (keyed by the notebook
and course_lib's sources), which the browser test of the site reuses. The navigation tests build from unexecuted
notebooks (Sphinx alone, about 15 s).
"""

import ast
import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")
pytest.importorskip("pydata_sphinx_theme")
pytest.importorskip("jupyter_server_mathjax")

from course_lib.instructor import site  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SOURCES = sorted([*(ROOT / "notebooks").glob("[0-9][0-9]*_*.py"), *(ROOT / "solutions").glob("[0-9][0-9]*_*.py")])

# --- what counts as alt text that says what a figure shows ---

GENERIC_ALT = {
    "figure",
    "image",
    "plot",
    "chart",
    "graph",
    "picture",
    "output",
    "a figure",
    "a plot",
    "no description has been provided for this image",  # nbconvert's stand-in
}


def alt_problem(alt: str | None) -> str | None:
    """Why ``alt`` does not say what a figure shows (absent, empty, generic, a file name, too short), or None."""
    if alt is None:
        return "no alt attribute"
    text = " ".join(alt.split())
    if not text:
        return "empty alt text"
    if text.lower().rstrip(".") in GENERIC_ALT:
        return f"generic alt text {alt!r}"
    if text.startswith("data:") or re.fullmatch(r"[\w./-]+\.(png|jpe?g|svg|gif)", text):
        return f"a file name, not a description: {alt[:60]!r}"
    if len(re.findall(r"[A-Za-z]{2,}", text)) < 4:
        return f"too short to say what the figure shows (fewer than 4 words): {alt!r}"
    return None


@pytest.mark.parametrize(
    "alt, ok",
    [
        (None, False),
        ("", False),
        ("  ", False),
        ("Figure.", False),
        ("No description has been provided for this image", False),
        ("_images/3a9f.png", False),
        ("Loss curve", False),
        ("Training loss against step: falls from 4.2 to 1.9 in 300 steps.", True),
        ("Attention weights of head {} over {} keys: the diagonal dominates.", True),
    ],
)
def test_alt_problem_tells_a_description_from_a_stand_in(alt, ok):
    assert (alt_problem(alt) is None) == ok


# --- the lesson sources: every figure shown with viz.show(alt) ---

PYPLOT = {"plt", "pyplot"}
# pyplot calls that make a figure (or draw on the current one, making it if there is none)
FIGURE_MAKERS = {"subplots", "figure", "subplot", "plot", "imshow", "bar", "barh", "hist", "scatter", "matshow"}
VIZ_FIGURE_MAKERS = {"line_plot", "attention_heatmap"}  # course_lib.notebook.viz helpers that make one without ax=


def _call_name(node: ast.Call) -> tuple[str, str] | None:
    """("plt", "show") for plt.show(...), ("viz", "line_plot") for viz.line_plot(...), else None."""
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.value.id, node.func.attr
    return None


def _literal_text(node: ast.expr) -> str | None:
    """The text of a str literal or f-string (each {...} read as a number), None for any other expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "12" for v in node.values)
    return None


def _scopes(tree: ast.Module):
    """Each function body and the module's top level, as (name, nodes of that scope without nested functions)."""

    def walk(body):
        for node in body:
            yield from _own_nodes(node)

    def _own_nodes(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        yield node
        for child in ast.iter_child_nodes(node):
            yield from _own_nodes(child)

    yield "<top level>", list(walk(tree.body))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, list(walk(node.body))


def _cells(source: str):
    """(line of the cell's "# %%" marker, parsed cell) for each code cell of a jupytext percent source."""
    lines = source.splitlines(keepends=True)
    markers = [i for i, text in enumerate(lines) if text.startswith("# %%")]
    for begin, end in zip([0] + [m + 1 for m in markers], markers + [len(lines)]):
        try:
            yield begin, ast.parse("".join(lines[begin:end]))
        except SyntaxError:
            continue  # a magic: nothing to check


def _makes_figure(node: ast.Call, helpers: set[str]) -> str | None:
    """What figure-making call ``node`` is (plt.subplots, viz.line_plot without ax=, a helper below), or None."""
    given_ax = any(k.arg == "ax" for k in node.keywords)
    if isinstance(node.func, ast.Name) and node.func.id in helpers and not given_ax:
        return f"{node.func.id}()"
    owner, attr = _call_name(node) or ("", "")
    if owner in PYPLOT and attr in FIGURE_MAKERS:
        return f"plt.{attr}"
    if owner == "viz" and attr in VIZ_FIGURE_MAKERS and not given_ax:
        return f"viz.{attr}"
    return None


def figure_problems(source: str) -> list[str]:
    """What keeps a jupytext lesson source from describing every figure: plt.show() calls, viz.show() with a
    literal alt that is not specific, and cells (or functions) that make a figure but never call viz.show.

    A function that makes a figure and returns without showing it (``def alignment(i, ax=None)``) is a helper:
    the cell or function that calls it (without ax=) must show the figure."""
    cells = list(_cells(source))
    helpers: set[str] = set()
    for _ in range(3):  # helpers of helpers
        for _, tree in cells:
            for scope, nodes in _scopes(tree):
                calls = [n for n in nodes if isinstance(n, ast.Call)]
                shows = [c for c in calls if (_call_name(c) or ("", ""))[1] == "show"]
                if scope != "<top level>" and not shows and any(_makes_figure(c, helpers) for c in calls):
                    helpers.add(scope)
    problems = []
    for first_line, tree in cells:
        for scope, nodes in _scopes(tree):
            if scope in helpers:
                continue
            where = f"cell at line {first_line}" + ("" if scope == "<top level>" else f", in {scope}()")
            calls = [n for n in nodes if isinstance(n, ast.Call)]
            shows = plt_shows = 0
            makes = [m for m in (_makes_figure(c, helpers) for c in calls) if m]
            for node in calls:
                owner, attr = _call_name(node) or ("", "")
                if owner in PYPLOT and attr == "show":
                    plt_shows += 1
                    problems.append(f"{where}: plt.show() shows a figure without alt text (use viz.show(alt))")
                elif owner == "viz" and attr == "show":
                    shows += 1
                    alt = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "alt"), None)
                    text = _literal_text(alt) if alt is not None else None
                    problem = "no alt argument" if alt is None else (alt_problem(text) if text is not None else None)
                    if problem:
                        problems.append(f"{where}: viz.show: {problem}")
            if makes and not shows and not plt_shows:
                problems.append(f"{where}: makes a figure ({makes[0]}) but never calls viz.show(alt)")
    return problems


def test_figure_problems_finds_each_kind_of_gap():
    source = """# %%
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.show()

# %%
fig, ax = plt.subplots()
ax.plot([1, 2])

# %%
viz.line_plot([1, 2], {"a": [1, 2]}, xlabel="x", ylabel="y")
viz.show("figure")

# %%
def explore(k):
    fig, ax = plt.subplots()
    viz.show(f"Loss against step for k = {k}: falls from 3 to 1.")

# %%
fig, ax = plt.subplots()
viz.show(f"Perplexity against n-gram order: {pp[0]:.0f} at 1, {pp[1]:.0f} at 2.")

# %%
def heatmap(i, ax=None):
    if ax is None:
        _, ax = plt.subplots()
    viz.attention_heatmap(w[i], ax=ax)
    return ax

# %%
heatmap(3)

# %%
fig, axes = plt.subplots(1, 2)
heatmap(1, ax=axes[0])
viz.show("Attention weights of sentences 1 and 2: both follow the diagonal.")
"""
    problems = figure_problems(source)
    assert len(problems) == 4, problems
    assert problems[0].startswith("cell at line 1: plt.show()")
    assert problems[1].startswith("cell at line 6: makes a figure (plt.subplots) but never calls viz.show")
    assert problems[2] == "cell at line 10: viz.show: generic alt text 'figure'"
    assert problems[3] == "cell at line 30: makes a figure (heatmap()) but never calls viz.show(alt)"  # the helper's


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_figure_in_the_lesson_source_is_shown_with_specific_alt_text(source):
    """Fails for a lesson that still calls plt.show(), leaves a figure unshown, or gives viz.show a stand-in."""
    problems = figure_problems(source.read_text(encoding="utf-8"))
    assert not problems, f"{source.relative_to(ROOT)}:\n" + "\n".join(problems)


# --- the built site ---


class Tags(HTMLParser):
    """Every tag's attributes, the text outside <script> and <style>, the headings (level, text) in order, and
    each <figure>'s image alt and caption."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.headings: list[tuple[int, str]] = []
        self.captions: list[str] = []
        self._skip = 0
        self._heading: list = []
        self._caption: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._skip += tag in ("script", "style")
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = [int(tag[1]), ""]
        if tag == "figcaption":
            self._caption = []

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style")
        if re.fullmatch(r"h[1-6]", tag) and self._heading:
            self.headings.append((self._heading[0], " ".join(self._heading[1].split())))
            self._heading = []
        if tag == "figcaption" and self._caption is not None:
            self.captions.append(" ".join("".join(self._caption).split()))
            self._caption = None

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)
            if self._heading:
                self._heading[1] += data
            if self._caption is not None:
                self._caption.append(data)


def parse(path: Path) -> Tags:
    tags = Tags()
    tags.feed(path.read_text(encoding="utf-8"))
    return tags


def pages_of(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html") if not p.relative_to(out).parts[0].startswith("_"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    report = site.build(out, lessons=["06"], log=lambda *_: None)
    return out, report


@pytest.mark.slow
def test_lesson_page_holds_its_figures_as_png_images(built):
    out, report = built
    assert report["pages"] == ["06_masked_attention.html"]
    images = [a.get("src", "") for tag, a in parse(out / "06_masked_attention.html").tags if tag == "img"]
    # section 4's three heatmaps (one figure) and the explorer's first picture; the quiz's heatmaps wait for an
    # answer to the quiz
    assert len(images) >= 2, images
    for src in images:
        assert src.startswith("data:image/png;base64,"), src[:80]
        data = base64.b64decode(src.split(",", 1)[1])
        assert data.startswith(PNG_SIGNATURE) and len(data) > 2000


@pytest.mark.slow
def test_every_figure_on_the_site_has_specific_alt_text_and_a_caption(built):
    """Fails while a lesson shows a figure with plt.show() (no alt text) instead of viz.show(alt)."""
    out, _ = built
    problems = []
    for page in pages_of(out):
        tags = parse(page)
        for tag, attrs in tags.tags:
            if tag == "img":
                problem = alt_problem(attrs.get("alt"))
                if problem:
                    problems.append(f"{page.name}: {problem} ({attrs.get('src', '')[:40]}...)")
        alts = [a.get("alt") for t, a in tags.tags if t == "img" and not alt_problem(a.get("alt"))]
        for alt in alts:  # the caption under each described figure repeats its alt text
            if " ".join(alt.split()) not in tags.captions:
                problems.append(f"{page.name}: no caption for the figure described as {alt[:60]!r}")
    assert not problems, "\n".join(problems)


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
        assert " ".join(equation.split()) in text
    scripts = [a["src"] for tag, a in parse(out / "06_masked_attention.html").tags if tag == "script" and "src" in a]
    assert scripts and all(not s.startswith(("http:", "https:", "//")) for s in scripts), scripts  # works offline
    styles = [a["href"] for tag, a in parse(out / "06_masked_attention.html").tags if tag == "link" and "href" in a]
    assert all(not s.startswith(("http:", "https:", "//")) for s in styles), styles
    mathjax = [s for s in scripts if "MathJax.js" in s]
    assert mathjax and (out / mathjax[0].split("?")[0]).exists()


@pytest.mark.slow
def test_lesson_page_shows_the_quiz_as_text_and_no_widget_reprs(built):
    out, _ = built
    text = "".join(parse(out / "06_masked_attention.html").text)
    # the lecture's quiz as the lesson defines it (notebooks/06_masked_attention.py)
    assert "What is α(2,2), the weight of query 2 on key 2, in masked attention?" in text  # no raw LaTeX
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
    text = " ".join(" ".join(front.text).split()).replace("’", "'")  # Sphinx typesets quotes
    assert "Lesson 06: masked self-attention" in text
    # its first learning goal, as the notebook's source words it (first line of goal 1)
    source = (ROOT / "notebooks" / "06_masked_attention.py").read_text(encoding="utf-8")
    first_goal = re.search(r"^# 1\. (.+)$", source, re.M).group(1)
    first_words = " ".join(re.sub(r"\*\*", "", first_goal).split()[:4])
    assert first_words in text
    assert "make lab" in text
    assert "American Presidency Project" in text  # the corpus's attribution
    assert "https://www.presidency.ucsb.edu/" in links


@pytest.mark.slow
def test_each_page_opens_in_colab_and_binder_at_the_release_and_offers_its_notebook(built):
    out, _ = built
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    repo = re.search(r'^Repository = "https://github.com/([^"]+)"', pyproject, re.M).group(1)
    page = parse(out / "06_masked_attention.html")
    links = {a.get("href") for tag, a in page.tags if tag == "a"}
    rel = "notebooks/06_masked_attention.ipynb"
    assert f"https://colab.research.google.com/github/{repo}/blob/v{version}/{rel}" in links
    assert f"https://mybinder.org/v2/gh/{repo}/v{version}?urlpath=lab/tree/{rel}" in links
    download = "_notebooks/06_masked_attention.ipynb"
    assert download in links
    # the file behind the link is the notebook as committed (no outputs), install cell and all
    assert (out / download).read_bytes() == (ROOT / rel).read_bytes()
    # no image from Colab's or Binder's servers: the site loads nothing from elsewhere
    images = [a.get("src", "") for tag, a in page.tags if tag == "img"]
    assert not [src for src in images if src.startswith("http")], images


@pytest.mark.slow
def test_built_pages_have_language_title_skip_link_main_and_ordered_headings(built):
    out, _ = built
    for page in pages_of(out):
        tags = parse(page)
        html_tag = next(a for t, a in tags.tags if t == "html")
        assert html_tag.get("lang") == "en", page.name
        assert any(t == "title" for t, _ in tags.tags), page.name
        mains = [a for t, a in tags.tags if t == "main"]
        assert len(mains) == 1 and mains[0].get("id"), f"{page.name}: one <main> with an id"
        assert any(t == "a" and a.get("href") == f"#{mains[0]['id']}" for t, a in tags.tags), f"{page.name}: skip link"
        assert_headings_in_order(page.name, tags.headings)


DOCS = ["students", "instructors", "contributing", "threat-model", "architecture", "api"]


def page_text(path: Path) -> str:
    """The page's text with Sphinx's typography undone (curly quotes, ellipses, dashes: its smartquotes)."""
    text = " ".join("".join(parse(path).text).split())
    for typeset, typed in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("…", "..."), ("—", "---"), ("–", "--")):
        text = text.replace(typeset, typed)
    return text


def resolved_links(out: Path, page: Path) -> set[str]:
    """Every internal link of ``page`` as a path from the site's root (docs/api.html), anchors dropped."""
    import posixpath

    found = set()
    for attrs in links_of(page):
        href = attrs.get("href", "").split("#")[0]
        if href and not href.startswith(("http:", "https:", "mailto:")):
            found.add(posixpath.normpath(posixpath.join(page.parent.relative_to(out).as_posix(), href)))
    return found


@pytest.mark.slow
def test_the_guides_threat_model_and_api_reference_are_pages_linked_from_every_page(built):
    """The documentation is part of the site: each page is built with the lessons' template (the accessibility
    checks above and tests/browser/test_site.py's axe run cover it) and every page's sidebar links to it."""
    out, report = built
    assert report["docs"] == [f"docs/{name}.html" for name in DOCS]
    for page in pages_of(out):
        itself = page.relative_to(out).as_posix()  # its own entry in the sidebar links to "#"
        missing = {f"docs/{name}.html" for name in DOCS} - resolved_links(out, page) - {itself}
        assert not missing, f"{page.relative_to(out)} does not link to {sorted(missing)}"
    front = page_text(out / "index.html")
    for title in ("Running the course", "Instructor guide", "Contributor guide", "Threat model", "API reference"):
        assert title in front
    # a guide is the markdown file as written: its section headings and a sentence from each
    for name in ("students", "instructors", "contributing"):
        source = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
        headings = [" ".join(h.split()) for h in re.findall(r"^#+ (.+)$", source, re.M)]
        shown = [text.replace("`", "") for _, text in parse(out / "docs" / f"{name}.html").headings]
        assert [h.replace("`", "") for h in headings] == [h.rstrip("#").strip() for h in shown[: len(headings)]]


@pytest.mark.slow
def test_the_threat_model_page_is_architecture_md_s_section_as_it_is_now(built):
    out, _ = built
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = architecture[architecture.index("## Threat model") :]
    section = section[: section.index("\n## ", 4)] if "\n## " in section[4:] else section
    # the first cell of every row of its table (what a submission can or cannot touch), as the file says now
    rows = [r.split("|")[1].strip() for r in section.splitlines() if r.startswith("| ") and "---" not in r]
    assert len(rows) >= 5, rows
    threats = page_text(out / "docs" / "threat-model.html")
    for row in rows:
        assert row.replace("`", "") in threats
    assert "Threat model" in parse(out / "docs" / "threat-model.html").headings[0][1]
    rest = [text for _, text in parse(out / "docs" / "architecture.html").headings]
    assert any("Glossary" in h for h in rest) and not any("Threat model" in h for h in rest)  # the rest, without it


@pytest.mark.slow
def test_the_api_reference_gives_each_public_function_its_signature_and_docstring(built):
    """Against the functions themselves (inspect): every public function of two modules, with its parameters in
    order and its docstring's first sentence; every public module of course_lib has a section."""
    import importlib
    import inspect
    import pkgutil

    import course_lib

    out, _ = built
    text = page_text(out / "docs" / "api.html")
    headings = {h for _, h in parse(out / "docs" / "api.html").headings}
    modules = [m.name for m in pkgutil.walk_packages(course_lib.__path__, "course_lib.")]
    public = [m for m in modules if not any(part.startswith("_") for part in m.split("."))]
    assert len(public) > 40
    missing = [m for m in ["course_lib", *public] if not any(h.rstrip("#").strip() == m for h in headings)]
    assert not missing, missing
    for name in ("course_lib.smoothing", "course_lib.notebook.quiz"):
        module = importlib.import_module(name)
        functions = [
            f
            for n, f in vars(module).items()
            if inspect.isfunction(f) and f.__module__ == name and not n.startswith("_")
        ]
        assert functions, name
        for function in functions:
            params = list(inspect.signature(function).parameters)
            call = re.search(rf"\b{function.__name__}\(([^)]*)\)", text)
            assert call, (name, function.__name__)
            written = [p.split(":")[0].split("=")[0].strip(" *") for p in call.group(1).split(",") if p.strip()]
            assert [p for p in written if p != "/"] == params, (function.__name__, written, params)
            doc = inspect.getdoc(function)
            if doc:
                first = " ".join(doc.split("\n\n")[0].split()).replace("``", "").replace("`", "")
                assert first[:60] in text, (function.__name__, first[:60])


def assert_headings_in_order(name: str, headings: list[tuple[int, str]]) -> None:
    """One h1, and no heading more than one level below the one before it (h2 -> h4 skips a level)."""
    levels = [level for level, _ in headings]
    assert levels.count(1) == 1, f"{name}: {levels.count(1)} h1 headings"
    for (before, _), (level, text) in zip(headings, headings[1:]):
        assert level <= before + 1, f"{name}: h{level} {text!r} follows an h{before}"


# --- navigation and what is published, from unexecuted notebooks (Sphinx alone) ---


def write_notebook(path: Path, title: str, sections: list[str]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n**Learning goals.** After it you can\n\n1. read {title}.")]
    for section in sections:
        nb.cells += [nbformat.v4.new_markdown_cell(f"## {section}"), nbformat.v4.new_code_cell("1 + 1")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def unexecuted(monkeypatch) -> list[str]:
    import nbformat

    executed = []

    def fake_execute(source, cache, timeout=180, log=print):  # conversion only: the notebook as committed
        executed.append(f"{source.parent.name}/{source.name}")
        return nbformat.read(source, as_version=4)

    monkeypatch.setattr(site, "execute", fake_execute)
    return executed


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs))


def links_of(path: Path) -> list[dict]:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.links


def test_going_further_notebooks_come_after_their_lesson_with_previous_and_next_links(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    for stem in ("03_third", "01_first", "02b_further", "02_second", "notes"):
        write_notebook(root / "notebooks" / f"{stem}.ipynb", f"Lesson {stem}", ["One", "Two"])
    assert [p.stem for p in site.lesson_sources(root)] == ["01_first", "02_second", "02b_further", "03_third"]
    assert [p.stem for p in site.lesson_sources(root, ["2b", "3"])] == ["02b_further", "03_third"]
    executed = unexecuted(monkeypatch)
    report = site.build(tmp_path / "out", cache=tmp_path / "cache", root=root, log=lambda *_: None)
    assert executed == [f"notebooks/{s}.ipynb" for s in ("01_first", "02_second", "02b_further", "03_third")]
    assert report["pages"] == ["01_first.html", "02_second.html", "02b_further.html", "03_third.html"]
    order = ["index.html", *report["pages"]]
    for i, name in enumerate(order):
        links = links_of(tmp_path / "out" / name)
        prev = [a["href"] for a in links if "left-prev" in a.get("class", "")]
        after = [a["href"] for a in links if "right-next" in a.get("class", "")]
        assert prev == ([order[i - 1]] if i else []), (name, prev)
        assert after == ([order[i + 1]] if i + 1 < len(order) else []), (name, after)
        # the sidebar lists every lesson, in order, on every page
        sidebar = [name if a["href"] == "#" else a["href"] for a in links if "reference internal" in a.get("class", "")]
        sidebar = [h for h in sidebar if h in order]
        assert [h for h in sidebar if h != "index.html"][:4] == report["pages"], (name, sidebar)
        tags = parse(tmp_path / "out" / name)
        assert_headings_in_order(name, tags.headings)
        page_toc = [
            a.get("href") for a in links if "nav-link" in a.get("class", "") and a.get("href", "").startswith("#")
        ]
        if name != "index.html":
            assert {"#one", "#two"} <= set(page_toc), (name, page_toc)  # the page's own table of contents
    assert (tmp_path / "out" / "search.html").exists() and (tmp_path / "out" / "searchindex.js").exists()


def test_exercises_never_go_out_and_solutions_only_with_the_flag(tmp_path, monkeypatch):
    executed = unexecuted(monkeypatch)
    site.build(tmp_path / "public", lessons=["06", "1"], cache=tmp_path / "cache", log=lambda *_: None, docs=False)
    assert executed == ["notebooks/01_ngrams.ipynb", "notebooks/06_masked_attention.ipynb"]
    assert not list((tmp_path / "public").rglob("solutions*")) and not list((tmp_path / "public").rglob("exercises*"))

    executed.clear()
    site.build(
        tmp_path / "instructor",
        lessons=["06"],
        solutions=True,
        cache=tmp_path / "cache",
        log=lambda *_: None,
        docs=False,
    )
    assert executed == ["notebooks/06_masked_attention.ipynb", "solutions/06_masked_attention.ipynb"]
    page = tmp_path / "instructor" / "solutions" / "06_masked_attention.html"
    assert page.exists()
    assert "(solutions)" in next(iter(parse(page).headings))[1]  # told apart from the lesson page
    assert "solutions/06_masked_attention.html" in (tmp_path / "instructor" / "index.html").read_text()
    with pytest.raises(ValueError, match="lessons must be among"):
        site.build(tmp_path / "bad", lessons=["99"], log=lambda *_: None)


def test_a_folder_that_is_not_a_built_site_is_never_emptied(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(ValueError, match="not a site built here"):
        site.build(out, lessons=["06"], log=lambda *_: None)
    assert (out / "thesis.tex").read_text() == "years of work"


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
    assert site.fingerprint(nb, root) == key
    weights = root / "course_lib" / "weights" / "m.pt"
    weights.write_bytes(b"1" * 100)
    with_weights = site.fingerprint(nb, root)
    assert with_weights != key
    weights.write_bytes(b"2" * 101)
    assert site.fingerprint(nb, root) != with_weights
    (root / "constraints.txt").write_text("torch==2.13.0\n")
    assert site.fingerprint(nb, root) not in (key, with_weights)
    weights.unlink()
    (root / "constraints.txt").unlink()
    nb.write_text('{"cells": []}')
    assert site.fingerprint(nb, root) != key
