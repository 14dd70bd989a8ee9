"""Summarise a graded outsider class: one line per CSV row with its score, statuses and feedback excerpt.

.venv/bin/python tests/outsider/issue33/collect.py /tmp/neutral/g02/grades.csv [more.csv ...]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def main(paths):
    for path in map(Path, paths):
        rows = list(csv.DictReader(path.open(newline="", encoding="utf-8")))
        feedback = path.with_name(path.stem + "_feedback")
        files = sorted(feedback.glob("*")) if feedback.is_dir() else []
        print(f"## {path}: {len(rows)} rows, {len(files)} feedback files")
        for row in rows:
            exs = {k: v for k, v in row.items() if k.startswith("ex ")}
            statuses = " ".join(f"{k[3:]}={v[:6]}" for k, v in exs.items())
            print(f"- {row['student']!r} score={row['score']}/{row['total']} {statuses}")
            print(f"    checks: {row.get('checks', '')[:600]}")
            print(f"    problems: {row.get('problems', '')[:600]}")
        for f in files:
            print(f"  feedback file: {f.name!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
