"""Build the course as a static website: every lesson executed, every figure and equation in place.

    python -m course_lib.instructor.site                  # the seven lessons -> build/site/index.html
    python -m course_lib.instructor.site --lessons 01 06  # a subset (the front page lists what was built)
    python -m course_lib.instructor.site --solutions      # also the solutions notebooks (for instructors)

Each notebook is executed with nbclient as a student would run it (in its folder), and the executed
copy is cached in build/site-cache/ under a hash of the notebook, course_lib's sources and the shipped
weights, so a second build only converts. nbconvert's HTML exporter (the "lab" template, the look of
JupyterLab) writes one page per notebook. The widget state is left out of the pages: without it
nbconvert shows each widget's static fallback (course_lib.notebook.fallback: the explorer's first
figure and text, the quiz question), which needs no kernel and no JavaScript from the internet.
MathJax comes from the jupyter-server-mathjax package and is copied next to the pages, so the site
works offline and on any static host. Exercises are never published; solutions only with --solutions.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "site"
DEFAULT_CACHE = ROOT / "build" / "site-cache"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
# MathJax 2.7 from jupyter-server-mathjax, without what these pages never load (other output processors,
# accessibility maps, translations): 9.5 MB -> about 3 MB.
MATHJAX_SKIP = ("jax/output/SVG", "extensions/a11y", "localization")

# Each lesson page: JupyterLab's look (nbconvert's lab template) without require.js, Mermaid and the widget
# manager (all loaded from a CDN, none needed here), plus a bar to the front page and the next lesson.
PAGE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mathjax -%}
<link rel="icon" href="data:,">{{ resources.course_mathjax }}
{%- endblock html_head_js_mathjax -%}
{% block extra_css %}<style>{{ resources.course_css }}</style>{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
{{ resources.course_nav }}
{%- endblock body_header -%}
{% block body_footer %}
{{ resources.course_nav }}
{{ super() }}
{% endblock body_footer %}
"""

SITE_CSS = """
.course-nav { display: flex; gap: 1.5em; padding: 0.6em 1em; margin: 0 0 1em 0; background: #f3f5f7;
  border-bottom: 1px solid #d0d7de; font-family: var(--jp-ui-font-family, sans-serif); font-size: 14px; }
.course-nav a { text-decoration: none; color: #0b5cad; }
.course-nav .course-nav-here { color: #57606a; }
.course-static img { max-width: 100%; }
.course-static-note { color: #57606a; font-size: 90%; }
/* MathJax's hidden MathML for screen readers asks for TeX web fonts (\\mathbb) that this MathJax copy lacks */
.MJX_Assistive_MathML [mathvariant] { font-family: inherit !important; }
"""

FRONT_CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; max-width: 62em;
  margin: 2em auto; padding: 0 1em; color: #1f2328; line-height: 1.5; }
h1 { margin-bottom: 0.2em; } .lead { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; vertical-align: top;
  padding: 0.6em; border-bottom: 1px solid #d0d7de; } th { background: #f3f5f7; }
td.nn { font-weight: bold; white-space: nowrap; } td ol { margin: 0; padding-left: 1.2em; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; } .extra { color: #57606a; font-size: 90%; }
/* MathJax's hidden MathML for screen readers asks for TeX web fonts (\\mathbb) that this MathJax copy lacks */
.MJX_Assistive_MathML [mathvariant] { font-family: inherit !important; }
"""


def mathjax_head(url: str) -> str:
    """MathJax 2.7 as nbconvert configures it, with the STIX web fonts (the ones jupyter-server-mathjax ships).

    MathJax measures web fonts against an empty font it loads from url('about:blank'), which Chromium refuses
    (a console error on every page); a local() source that does not exist is just as empty and loads nothing.
    """
    return f"""<script type="text/x-mathjax-config">
MathJax.Hub.Config({{
  TeX: {{equationNumbers: {{autoNumber: "AMS", useLabelIds: true}}}},
  tex2jax: {{inlineMath: [['$','$'], ['\\\\(','\\\\)']], displayMath: [['$$','$$'], ['\\\\[','\\\\]']],
            processEscapes: true, processEnvironments: true}},
  "HTML-CSS": {{availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null,
    styles: {{"@font-face": {{"font-family": "MathJax_Blank", src: "local('MathJax_Blank')"}}}}}},
  displayAlign: "center", messageStyle: "none"
}});
</script>
<script src="{url}"></script>"""


@dataclass
class Page:
    """One notebook of the site: a lesson (notebooks/) or its solutions (solutions/)."""

    source: Path
    kind: str  # "lesson" or "solutions"

    @property
    def number(self) -> str:
        return self.source.name[:2]

    @property
    def href(self) -> str:
        return f"{self.source.stem}.html" if self.kind == "lesson" else f"solutions/{self.source.stem}.html"


def lesson_sources(root: Path, numbers: list[str] | None = None) -> list[Path]:
    """notebooks/NN_*.ipynb, all or those whose number is in ``numbers`` (an unknown number is an error)."""
    found = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if numbers is None:
        return found
    wanted = [n.zfill(2) for n in numbers]
    unknown = sorted(set(wanted) - {p.name[:2] for p in found})
    if unknown:
        raise ValueError(f"lessons must be among {[p.name[:2] for p in found]}, got unknown {unknown}")
    return [p for p in found if p.name[:2] in wanted]


def fingerprint(source: Path, root: Path = ROOT) -> str:
    """A hash of what an executed notebook depends on: the notebook, course_lib's sources and weights."""
    digest = hashlib.sha256(source.read_bytes())
    package = root / "course_lib"
    for path in sorted([*package.rglob("*.py"), *(package / "weights").glob("*")]):
        if "instructor" not in path.relative_to(package).parts:  # building tools do not change outputs
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def execute(source: Path, cache: Path, timeout: int = 180, log=print):
    """The executed notebook (nbformat node), from the cache when nothing it depends on changed.

    A cell that runs past ``timeout`` seconds, or whose kernel stops answering, fails the build with a
    message naming the notebook, the cell and its first line (course_lib.instructor.watchdog)."""
    import nbformat

    from course_lib.instructor import watchdog

    key = fingerprint(source)
    cached = cache / f"{source.parent.name}-{source.stem}-{key}.ipynb"
    if cached.exists():
        log(f"  {source.parent.name}/{source.name}: executed copy from the cache")
        return nbformat.read(cached, as_version=4)
    nb = nbformat.read(source, as_version=4)
    start = time.perf_counter()
    log(f"  {source.parent.name}/{source.name}: executing ...")
    client = watchdog.execute(
        nb, notebook_name=f"{source.parent.name}/{source.name}", path=str(source.parent), timeout=timeout
    )
    if client.wakes:
        log(f"  {source.parent.name}/{source.name}: woke a kernel that stopped answering, {client.wakes} time(s)")
    log(f"  {source.parent.name}/{source.name}: executed in {time.perf_counter() - start:.0f} s")
    cache.mkdir(parents=True, exist_ok=True)
    for old in cache.glob(f"{source.parent.name}-{source.stem}-*.ipynb"):
        old.unlink()
    nbformat.write(nb, cached)
    return nb


def first_markdown(nb) -> str:
    return next((c.source for c in nb.cells if c.cell_type == "markdown"), "")


def title_of(nb, fallback: str) -> str:
    match = re.search(r"^#\s+(.+)$", first_markdown(nb), flags=re.M)
    return match.group(1).strip() if match else fallback


def goals_of(nb) -> str:
    """The lesson's numbered learning goals (markdown), or '' if it has none."""
    text = first_markdown(nb)
    match = re.search(r"\*\*Learning goals\.\*\*[^\n]*\n((?:\d+\.\s.*\n?(?:[ \t]+.*\n?)*)+)", text)
    return match.group(1).strip() if match else ""


def nav_html(page: Page, pages: list[Page], titles: dict[str, str]) -> str:
    home = "index.html" if page.kind == "lesson" else "../index.html"
    up = "" if page.kind == "lesson" else "../"
    same = [p for p in pages if p.kind == page.kind]
    i = same.index(page)
    links = [f'<a href="{home}">Course home</a>']
    if i > 0:
        links.append(f'<a href="{up}{same[i - 1].href}">&larr; {html.escape(titles[same[i - 1].href])}</a>')
    links.append(f'<span class="course-nav-here">{html.escape(titles[page.href])}</span>')
    if i + 1 < len(same):
        links.append(f'<a href="{up}{same[i + 1].href}">{html.escape(titles[same[i + 1].href])} &rarr;</a>')
    return '<nav class="course-nav">' + "".join(links) + "</nav>"


def page_html(nb, title: str, nav: str, mathjax_url: str) -> str:
    """One notebook as a page. The widget state is dropped, so nbconvert shows each widget's static fallback."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader({"course-page.html.j2": PAGE_TEMPLATE})],
        template_file="course-page.html.j2",
    )
    resources = {
        "metadata": {"name": title},
        "course_nav": nav,
        "course_css": SITE_CSS,
        "course_mathjax": mathjax_head(mathjax_url),
    }
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


def front_page(pages: list[Page], titles: dict[str, str], goals: dict[str, str], mathjax_url: str) -> str:
    from nbconvert.filters import markdown2html

    rows = []
    for page in (p for p in pages if p.kind == "lesson"):
        solution = next((p for p in pages if p.kind == "solutions" and p.number == page.number), None)
        extra = f'<div class="extra"><a href="{solution.href}">solutions</a></div>' if solution else ""
        rows.append(
            f'<tr><td class="nn">{page.number}</td><td><a href="{page.href}">{html.escape(titles[page.href])}</a>'
            f"{extra}</td><td>{markdown2html(goals[page.href]) if goals[page.href] else ''}</td></tr>"
        )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sequence models, from n-grams to transformers</title>
<link rel="icon" href="data:,">
<style>{FRONT_CSS}</style>
{mathjax_head(mathjax_url)}
</head><body>
<h1>Sequence models, from n-grams to transformers</h1>
<p class="lead">An interactive course in seven Jupyter notebooks on a small, tested PyTorch package
(<code>course_lib</code>). These pages are the notebooks as executed on a CPU: every figure, number and
equation as a student sees it. The explorers and quizzes show their first state here; run the notebooks
to use them.</p>
<h2>Lessons</h2>
<table><thead><tr><th>#</th><th>Lesson</th><th>After it you can</th></tr></thead>
<tbody>
{"".join(rows)}
</tbody></table>
<h2>How to run it</h2>
<p>On your machine (Python 3.10 or newer; a GPU is used when there is one, a CPU is enough), from a clone of the
repository:</p>
<pre>make lab     # makes .venv, installs the course, opens the lessons in JupyterLab</pre>
<p>Each lesson runs top to bottom in about three minutes on a laptop CPU. The exercises are in
<code>exercises/</code>; each exercise is followed by a check that tells you what is wrong.
In Colab, install the course in the first cell: <code>!pip install 'course-lib @ git+&lt;repository URL&gt;'</code>.</p>
<p class="extra">Built {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} with nbconvert {_version("nbconvert")}
from the executed notebooks.</p>
</body></html>
"""


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def copy_mathjax(out: Path) -> None:
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    target = out / "mathjax"
    if (target / "MathJax.js").exists():
        return

    def skip(folder, names):
        rel = Path(folder).relative_to(source)
        return [n for n in names if str(rel / n) in MATHJAX_SKIP]

    shutil.copytree(source, target, ignore=skip)


def build(
    out: Path = DEFAULT_OUT,
    lessons: list[str] | None = None,
    solutions: bool = False,
    cache: Path = DEFAULT_CACHE,
    root: Path = ROOT,
    log=print,
) -> dict:
    """Build the site into ``out``; returns what was built (pages, seconds, size)."""
    start = time.perf_counter()
    sources = lesson_sources(root, lessons)
    pages = [Page(p, "lesson") for p in sources]
    if solutions:
        pages += [
            Page(root / "solutions" / p.name, "solutions") for p in sources if (root / "solutions" / p.name).exists()
        ]
    out.mkdir(parents=True, exist_ok=True)
    copy_mathjax(out)
    notebooks = {page.href: execute(page.source, cache, log=log) for page in pages}
    titles = {
        href: title_of(nb, page.source.stem) + (" (solutions)" if page.kind == "solutions" else "")
        for (href, nb), page in zip(notebooks.items(), pages)
    }
    goals = {href: goals_of(nb) for href, nb in notebooks.items()}
    for page in pages:
        mathjax = ("" if page.kind == "lesson" else "../") + f"mathjax/MathJax.js?config={MATHJAX_CONFIG}"
        target = out / page.href
        target.parent.mkdir(parents=True, exist_ok=True)
        nav = nav_html(page, pages, titles)
        target.write_text(page_html(notebooks[page.href], titles[page.href], nav, mathjax), encoding="utf-8")
    index = out / "index.html"
    index.write_text(front_page(pages, titles, goals, f"mathjax/MathJax.js?config={MATHJAX_CONFIG}"), encoding="utf-8")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    report = {
        "index": str(index),
        "pages": [page.href for page in pages],
        "seconds": round(time.perf_counter() - start, 1),
        "megabytes": round(size / 1e6, 1),
    }
    log(f"site: {len(pages)} pages in {report['seconds']} s, {report['megabytes']} MB -> {index}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.instructor.site", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", nargs="+", metavar="NN", help="only these lessons, e.g. 01 06 (default: all)")
    parser.add_argument("--solutions", action="store_true", help="also publish the solutions notebooks (instructors)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where executed notebooks are kept")
    parser.add_argument("--no-cache", action="store_true", help="execute every notebook again")
    args = parser.parse_args(argv)
    if args.no_cache:
        shutil.rmtree(args.cache, ignore_errors=True)
    try:
        report = build(args.out, args.lessons, args.solutions, args.cache)
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
