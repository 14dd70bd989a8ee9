"""Compare the grader's rows with expected.json: per submission, the exercises it passed vs those it deserves.

    .venv/bin/python tests/outsider/issue33d/compare.py [/tmp/h33d/results]

Prints one line per submission (missing rows and extra rows included), the secret search over every output file,
and the current-folder markers. The verdicts in results.md are written from this and from the feedback files.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECRET = "hunter2-h33d-secret"


def main() -> None:
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/h33d/results")
    expected = json.loads((HERE / "expected.json").read_text())
    only = set(sys.argv[2:])  # lessons/names to compare (the re-graded ones), else all
    if only:
        expected = {k: v for k, v in expected.items() if k in only or k.split("/")[0] in only}
    rows: dict[str, list[dict]] = {}
    for csv_path in sorted(results.glob("*/grades.csv")):
        lesson = csv_path.parent.name
        with open(csv_path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                name = row["file"][1:] if row["file"].startswith("'") else row["file"]  # a formula's guard
                stem = Path(name).name.removesuffix(".ipynb")
                rows.setdefault(f"{lesson}/{stem}", []).append(row)
    for key, want in expected.items():
        got = rows.get(key) or []
        if len(got) != 1:
            print(f"ROWS={len(got)} {key}")
            continue
        row = got[0]
        passed = sorted(k[3:] for k, v in row.items() if k.startswith("ex ") and v == "passed")
        ok = passed == sorted(want["deserves_to_pass"])
        print(f"{'as expected' if ok else 'DIFFERENT  '} {key}: passed {passed} deserves {want['deserves_to_pass']}")
        if not ok:
            print(f"      row: {row}")
    for key in rows:
        if key not in expected:
            print(f"EXTRA ROW {key}: {rows[key]}")
    leaks = []
    for path in results.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            if SECRET.encode() in text:
                leaks.append(str(path))
    print("secret found in:", leaks or "nowhere")
    print("current-folder markers:", sorted(p.name for p in Path("/tmp/h33d").glob("PWNED_*")) or "none")


if __name__ == "__main__":
    main()
