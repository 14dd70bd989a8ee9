"""Each submission's expected outcome (manifest.json) beside the row the grader wrote (results/grades_NN.csv).

python tests/outsider/issue33e/compare.py CLASS_DIR  -> prints a markdown table (name, deserved, got, match)
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    manifest = json.loads((Path(sys.argv[1]) / "manifest.json").read_text())
    rows: dict[str, list[dict]] = {}
    for path in sorted((HERE / "results").glob("grades_*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                rows.setdefault(path.stem.split("_", 1)[1], []).append(row)
    print("| submission | lesson | deserved to pass | passed | rows | problems (clipped) | as expected |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for sub in manifest:
        name = sub["name"]
        file_name = name + ".ipynb"
        found = [
            r
            for r in rows.get(sub.get("group", sub["lesson"]), [])
            if r["file"].endswith(file_name.replace("\n", "\\x0a"))
            or r["file"].endswith(file_name)
            or r["file"].endswith(file_name.replace("\n", "\\n"))
            or f"/{name}/" in r["file"] + "/"  # nbgrader's layout: the student's folder
        ]
        passed = sorted({e[3:] for r in found for e, v in r.items() if e.startswith("ex ") and v == "passed"})
        ok = (
            len(found) == 1
            and passed == sorted(sub["deserved"])
            and (not sub.get("problem") or sub["problem"] in found[0]["problems"])
        )
        problems = found[0]["problems"][:160].replace("|", "\\|") if found else ""
        shown = name.replace("\n", "\\n").replace("|", "\\|")
        print(
            f"| {shown[:40]} | {sub['lesson']} | {', '.join(sub['deserved']) or '-'} | {', '.join(passed) or '-'} | "
            f"{len(found)} | {problems} | {'yes' if ok else 'NO'} |"
        )


if __name__ == "__main__":
    main()
