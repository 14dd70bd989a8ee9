"""The course site in a real browser, served over HTTP as a static host would: every page (front page, lesson 06,
its solutions, search, the guides, the threat model and the API reference) shows every image, typesets its equations, logs no console error, fetches nothing from the
internet, and has no axe-core violation of WCAG 2.1 A/AA or of axe's best practices (landmarks, regions, heading
order) in light and in dark mode; the keyboard reaches a visible skip link first; search finds a lesson.

axe-core runs from the npm package that scripts/install_browser.sh installs (tests/browser/axe.py). The site is
built for lesson 06 and its solutions from the executed copies in build/site-cache when they are up to date.
"""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")
pytest.importorskip("jupyter_server_mathjax")

from course_lib.instructor import site  # noqa: E402

from .axe import AXE_JS, audit, describe  # noqa: E402

pytestmark = pytest.mark.browser

PAGES = ["index.html", "06_masked_attention.html", "solutions/06_masked_attention.html", "search.html", "genindex.html"]
# the documentation pages (course_lib.instructor.site_docs): the guides, ARCHITECTURE.md's two pages, the API reference
PAGES += [
    f"docs/{name}.html" for name in ("students", "instructors", "contributing", "threat-model", "architecture", "api")
]
REPORTED = ("moderate", "serious", "critical")  # axe's impacts that fail the test
ALSO_REPORTED = ("empty-table-header",)  # minor for axe, but a table whose header says nothing is hard to read aloud


def reported(violations: list[dict]) -> list[dict]:
    return [v for v in violations if v["impact"] in REPORTED or v["id"] in ALSO_REPORTED]


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served_site(browser_ready, tmp_path_factory):
    if not AXE_JS.exists():
        pytest.fail(f"{AXE_JS} is missing: run scripts/install_browser.sh (it installs axe-core from npm)")
    out = tmp_path_factory.mktemp("site") / "site"
    site.build(out, lessons=["06"], solutions=True, log=lambda *_: None)  # executed copies from build/site-cache
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", out
    server.shutdown()
    thread.join()
    server.server_close()


def serve(out):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_every_built_page_is_audited(served_site):
    _, out = served_site
    built = {
        p.relative_to(out).as_posix() for p in out.rglob("*.html") if not p.relative_to(out).parts[0].startswith("_")
    }
    assert built == set(PAGES)


def test_every_lesson_and_solutions_page_passes_axe_as_written(browser, tmp_path, monkeypatch):
    """Every lesson and solutions notebook as committed (not executed: Sphinx alone, about 30 s): its headings,
    tables, code and prose have no axe violation. Outputs are checked on lesson 06 above."""
    import nbformat

    monkeypatch.setattr(
        site, "execute", lambda source, cache, timeout=180, log=print: nbformat.read(source, as_version=4)
    )
    out = tmp_path / "site"
    report = site.build(out, solutions=True, cache=tmp_path / "cache", log=lambda *_: None)
    server = serve(out)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    found = {}
    try:
        for name in report["pages"]:
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/{name}")
            page.wait_for_load_state("networkidle")
            violations = reported(audit(page))
            if violations:
                found[name] = describe(violations)
    finally:
        page.close()
        server.shutdown()
        server.server_close()
    assert not found, "\n".join(f"axe-core on {name}:\n{text}" for name, text in found.items())


def load(page, url: str) -> list[str]:
    """Open ``url`` and wait until MathJax has typeset; return the problems seen (console errors, failed requests)."""
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => !window.MathJax || (MathJax.Hub && MathJax.Hub.queue.pending === 0 && !MathJax.Hub.queue.running)"
    )
    return problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_site_page_is_accessible_and_whole(served_site, browser, name, scheme, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=scheme)
    page = context.new_page()
    try:
        problems = load(page, served_site[0] + name)
        assert page.evaluate("document.documentElement.dataset.theme") == scheme  # the theme follows the reader
        images = page.evaluate(
            "[...document.querySelectorAll('main img')].map(i => ({src: i.src.slice(0, 60), ok: i.complete && i.naturalWidth > 0}))"
        )
        if name == "06_masked_attention.html":
            assert len(images) >= 2, images  # the quiz heatmaps wait for an answer (lesson 06, section 2)
            assert page.locator(".MathJax, .MathJax_Display").count() >= 1, f"{name}: no equation was typeset"
        broken = [i["src"] for i in images if not i["ok"]]
        assert not broken, f"{name}: broken images {broken}"
        assert not [p for p in problems if "127.0.0.1" not in p or "HTTP" in p or "failed" in p], problems
        assert not problems, f"{name}:\n" + "\n".join(problems)
        violations = reported(audit(page))
        page.screenshot(path=str(tmp_path / "page.png"), full_page=False)
        assert not violations, f"axe-core on {name} ({scheme}):\n{describe(violations)}"
        if name == "06_masked_attention.html":
            quiz = page.locator(".course-quiz-static").first
            assert "(B) 0.5" in quiz.inner_text()
    finally:
        context.close()


def test_keyboard_reaches_a_visible_skip_link_first_and_it_leads_to_the_lesson(served_site, page):
    load(page, served_site[0] + "06_masked_attention.html")
    page.keyboard.press("Tab")
    # the skip link slides into view when it gets the focus
    page.wait_for_function("() => document.activeElement.getBoundingClientRect().top >= 0", timeout=5_000)
    focused = page.evaluate(
        """() => { const e = document.activeElement, s = getComputedStyle(e), r = e.getBoundingClientRect();
                   return {text: e.textContent.trim(), href: e.getAttribute('href'), outline: s.outlineStyle,
                           width: parseFloat(s.outlineWidth), shadow: s.boxShadow, w: r.width, h: r.height,
                           top: r.top}; }"""
    )
    assert focused["text"] == "Skip to main content" and focused["href"] == "#main-content", focused
    assert focused["w"] > 0 and focused["h"] > 0 and 0 <= focused["top"] < 1000, f"skip link not visible: {focused}"
    assert (focused["outline"] != "none" and focused["width"] > 0) or focused["shadow"] != "none", focused
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#main-content"


def test_search_finds_the_lesson(served_site, page):
    load(page, served_site[0] + "search.html?q=masked")
    page.wait_for_selector("#search-results li a", timeout=30_000)
    hits = page.locator("#search-results li a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any("06_masked_attention.html" in h for h in hits), hits
