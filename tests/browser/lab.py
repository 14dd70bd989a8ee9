"""What a student does in JupyterLab, as functions for the browser tests."""

from __future__ import annotations

import json
import re
from pathlib import Path


def open_and_run_all(page, base: str, token: str, path: str, timeout_s: float = 240):
    """Open ``path`` in JupyterLab, Run > Run All Cells from the menu, wait until every cell ran."""
    page.set_default_timeout(60_000)
    page.goto(f"{base}/lab/tree/{path}?token={token}")
    notebook = page.locator(".jp-NotebookPanel-notebook")
    notebook.wait_for()
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)  # the kernel has started
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    n_code = notebook.locator(".jp-CodeCell .jp-InputArea-prompt").count()
    # Done when every code cell shows an execution count ("[12]:", not "[*]:" or "[ ]:").
    page.wait_for_function(
        """n => {
            const p = [...document.querySelectorAll('.jp-NotebookPanel-notebook .jp-CodeCell .jp-InputArea-prompt')];
            return p.length === n && p.every(e => /\\[\\d+\\]/.test(e.textContent));
        }""", arg=n_code, timeout=timeout_s * 1000)
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()
    return notebook


def save_and_read(page, served: Path, path: str) -> dict:
    """Save the notebook from the browser (File > Save) and read what JupyterLab wrote."""
    before = (served / path).stat().st_mtime_ns
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.title.startsWith('*')", timeout=30_000)  # title drops the dirty star
    for _ in range(100):
        if (served / path).stat().st_mtime_ns != before:
            break
        page.wait_for_timeout(100)
    return json.loads((served / path).read_text(encoding="utf-8"))


def error_outputs(nb: dict) -> list[str]:
    """Every error a cell raised, as 'cell N: Name: message'."""
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue', '')[:300]}"
            for i, cell in enumerate(nb["cells"]) for o in cell.get("outputs", []) if o.get("output_type") == "error"]
