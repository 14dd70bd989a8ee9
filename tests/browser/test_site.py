"""The course site in a real browser: the front page and lesson 06, served over HTTP as a static host would,
show every image, typeset their equations and log no console error (nothing is fetched from the internet)."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("nbconvert")
pytest.importorskip("jupyter_server_mathjax")

from course_lib.instructor import site  # noqa: E402

pytestmark = pytest.mark.browser


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served_site(browser_ready, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    site.build(out, lessons=["06"], log=lambda *_: None)  # executed copy from build/site-cache when up to date
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.mark.parametrize("name, min_images", [("index.html", 0), ("06_masked_attention.html", 3)])
def test_site_page_shows_every_image_and_equation_without_errors(served_site, page, name, min_images, tmp_path):
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.goto(served_site + name)
    page.wait_for_load_state("networkidle")
    # MathJax typesets after loading; wait until its queue is empty
    page.wait_for_function(
        "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && !MathJax.Hub.queue.running"
    )
    images = page.evaluate(
        "[...document.images].map(i => ({src: i.src.slice(0, 60), ok: i.complete && i.naturalWidth > 0}))"
    )
    assert len(images) >= min_images, images
    broken = [i["src"] for i in images if not i["ok"]]
    assert not broken, f"{name}: broken images {broken}"
    assert page.locator(".MathJax, .MathJax_Display").count() >= 1, f"{name}: no equation was typeset"
    assert not problems, f"{name}:\n" + "\n".join(problems)
    if name != "index.html":
        quiz = page.locator(".course-quiz-static").first
        assert "(B) 0.5" in quiz.inner_text()
        quiz.screenshot(path=str(tmp_path / "quiz.png"))
