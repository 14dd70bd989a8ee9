"""Shared by the benchmark scripts: each writes its own section of RESULTS.md."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmarks\n\nWritten by the scripts in `benchmarks/`.\n"


def write_section(section: str, text: str, path: Path = RESULTS) -> None:
    """Replace the section that starts with the heading ``section`` (or append it); leave the others alone."""
    if not text.startswith(section):
        raise ValueError(f"text must start with its heading {section!r}")
    old = path.read_text(encoding="utf-8") if path.exists() else HEADER
    pattern = re.compile(re.escape(section) + r".*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    path.write_text(new, encoding="utf-8")
