"""What a student does in JupyterLab, as functions for the browser tests."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

# The notebook in the tab in front (JupyterLab keeps other panels in the DOM, hidden).
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-notebook"


def open_and_run_all(page, base: str, token: str, path: str, timeout_s: float = 240):
    """Open ``path`` alone in JupyterLab, Run > Run All Cells from the menu, wait until every cell ran."""
    page.set_default_timeout(60_000)
    # ?reset: start from an empty workspace, so notebooks opened by earlier tests are not restored
    page.goto(f"{base}/lab/tree/{path}?reset&token={token}")
    notebook = page.locator(CURRENT)
    notebook.wait_for()
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)  # the kernel has started
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    n_code = notebook.locator(".jp-CodeCell .jp-InputArea-prompt").count()
    # Done when every code cell shows an execution count ("[12]:", not "[*]:" or "[ ]:").
    page.wait_for_function(
        """([selector, n]) => {
            const p = [...document.querySelectorAll(selector + ' .jp-CodeCell .jp-InputArea-prompt')];
            return p.length === n && p.every(e => /\\[\\d+\\]/.test(e.textContent));
        }""",
        arg=[CURRENT, n_code],
        timeout=timeout_s * 1000,
    )
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()
    return notebook


def save_and_read(page, served: Path, path: str) -> dict:
    """Save the notebook from the browser (Ctrl+S) and read what JupyterLab wrote."""
    file = served / path
    before = file.stat().st_mtime_ns
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if file.stat().st_mtime_ns != before:
            try:
                return json.loads(file.read_text(encoding="utf-8"))
            except json.JSONDecodeError:  # caught mid-write: read again
                pass
        time.sleep(0.2)
    raise AssertionError(f"JupyterLab did not save {path} within 30 s")


def error_outputs(nb: dict) -> list[str]:
    """Every error a cell raised, as 'cell N: Name: message'."""
    return [
        f"cell {i}: {o.get('ename')}: {o.get('evalue', '')[:300]}"
        for i, cell in enumerate(nb["cells"])
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def shutdown_kernels(base: str, token: str) -> None:
    """Stop every kernel the server runs (each lesson's kernel holds its corpus in memory)."""
    headers = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=headers), timeout=10) as r:
        kernels = json.loads(r.read())
    for kernel in kernels:
        request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", headers=headers, method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


EXPLORER = ".course-explorer"  # what viz.interactive renders: its controls, then its view
VIEW = ".course-explorer-view"
CONTROLS = "select, .widget-slider [role=slider], .widget-slider .ui-slider-handle, input[type=number], textarea, input[type=text], input[type=checkbox]"


def move(page, control) -> None:
    """Change one control as a student would: another option, a slider step, another number or text."""
    tag = control.evaluate("el => el.tagName.toLowerCase()")
    kind = control.get_attribute("type") if tag == "input" else tag
    if kind == "select":
        options = control.locator("option").all_inner_texts()
        current = control.evaluate("el => el.options[el.selectedIndex].text")
        control.select_option(label=next(o for o in options if o != current))
    elif kind == "number":
        control.fill(str(float(control.input_value() or 0) + 1))
        control.press("Enter")
    elif kind in ("text", "textarea"):
        control.fill(control.input_value() + " and more")
        control.press("Enter")
    elif kind == "checkbox":
        control.click()
    else:  # a slider handle
        control.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")


def moved_and_redrawn(page, explorer) -> None:
    view = explorer.locator(VIEW)
    before = view.inner_html()  # text, or an image whose data changes
    move(page, explorer.locator(CONTROLS).filter(visible=True).first)
    page.wait_for_function(
        "([el, before]) => el.innerHTML !== before", arg=[view.element_handle(), before], timeout=60_000
    )
