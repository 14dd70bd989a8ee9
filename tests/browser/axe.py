"""axe-core, the accessibility engine, run inside a page that playwright drives.

axe-core comes from the npm registry (the ``axe-core`` package, installed into .venv/node_modules by
scripts/install_browser.sh) and is injected from that file, so an audit never fetches anything at run time.
``python -m tests.browser.axe build/site`` audits a built site from the command line (counts per rule).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = Path(os.environ.get("COURSE_LIB_AXE_JS", ROOT / ".venv" / "node_modules" / "axe-core" / "axe.min.js"))
# WCAG 2.1 A and AA, plus axe's best practices (one main landmark, no duplicate landmarks, all content in
# a landmark, no empty table header): the rules issue 26 asks for.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
SEVERE = ("serious", "critical")


def audit(page) -> list[dict]:
    """axe's violations on the page as loaded: [{id, impact, help, nodes: [{target, html, summary}]}]."""
    if not AXE_JS.exists():
        raise FileNotFoundError(f"{AXE_JS} is missing: run scripts/install_browser.sh (npm install axe-core)")
    page.add_script_tag(path=str(AXE_JS))
    result = page.evaluate(
        """async (tags) => {
            const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                          summary: (n.failureSummary || '').slice(0, 300)}))}));
        }""",
        TAGS,
    )
    return result


def describe(violations: list[dict], limit: int = 3) -> str:
    """One line per rule (impact, id, count, help) and its first few nodes, for an assertion message."""
    lines = []
    for v in violations:
        lines.append(f"{v['impact']:>8} {v['id']} x{len(v['nodes'])}: {v['help']}")
        lines += [f"           {n['target']}  {n['html'][:100]}  {n['summary'][:160]}" for n in v["nodes"][:limit]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Audit every HTML page of a built site folder; print the violations per page; exit 1 on a serious one."""
    import argparse
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(args.folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    severe = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for html in sorted(args.folder.rglob("*.html")):
                rel = html.relative_to(args.folder).as_posix()
                if rel.startswith(("mathjax/", "_static/", "_sources/")):
                    continue
                page.goto(base + rel)
                page.wait_for_load_state("networkidle")
                found = audit(page)
                counts = {
                    k: sum(len(v["nodes"]) for v in found if v["impact"] == k) for k in (*SEVERE, "moderate", "minor")
                }
                severe += counts["serious"] + counts["critical"]
                print(f"== {rel}: {counts}")
                if found:
                    print(describe(found))
            browser.close()
    finally:
        server.shutdown()
    return 1 if severe else 0


if __name__ == "__main__":
    raise SystemExit(main())
