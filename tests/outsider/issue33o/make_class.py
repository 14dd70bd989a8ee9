"""Write hostile class 33o into /tmp/hostile33o/class/lessonNN/<name>.ipynb, plus manifest.json.

Each notebook starts from the released exercise notebook (exercises/NN_*.ipynb) with the solutions' answers in
its answer cells (solutions/NN_*.ipynb, same grade ids), then the attack's cells replace theirs. Code cells that
are neither the setup cell nor an answer or check cell (training runs, plots) are dropped to save CPU: the grade
reads the answer cells only. Usage: python make_class.py [--only NAME ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ATTACKS  # noqa: E402

LESSONS = {
    "01": "01_ngrams",
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}


def grade_id(cell) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or ""


def exercise_of(gid: str) -> str:
    """ex-6-3 -> 6.3 (code answer cells only: ex-6-4-2 is a written answer)."""
    parts = gid.split("-")
    return f"{int(parts[1])}.{int(parts[2])}" if gid.startswith("ex-") and len(parts) == 3 else ""


def source_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    return lines


def build(entry: dict) -> tuple[dict, list[str]]:
    stem = LESSONS[entry["lesson"]]
    released = json.loads((ROOT / "exercises" / f"{stem}.ipynb").read_text())
    solved = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text())
    answers = {grade_id(c): c["source"] for c in solved["cells"] if grade_id(c).startswith("ex-")}
    nb = copy.deepcopy(released)
    exercises = [exercise_of(grade_id(c)) for c in nb["cells"] if c["cell_type"] == "code"]
    exercises = [e for e in exercises if e]
    mode = entry.get("mode", "solved")
    half = set(exercises[: len(exercises) // 2])
    cells = []
    for index, cell in enumerate(nb["cells"]):
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and not gid and index > 1:
            continue  # an experiment or plot: the grade never reads it
        if gid.startswith("ex-") and cell["cell_type"] == "code":
            ex = exercise_of(gid)
            if mode == "solved" or (mode == "half" and ex in half):
                cell["source"] = answers[gid]
            if gid in entry.get("cells", {}):
                cell["source"] = source_lines(entry["cells"][gid])
        cell.pop("outputs", None) if cell["cell_type"] != "code" else cell.update(outputs=[], execution_count=None)
        cells.append(cell)
    for extra in entry.get("extra_cells", []):
        cells.append({"cell_type": "code", "metadata": {}, "source": source_lines(extra), "outputs": []})
        cells[-1]["execution_count"] = None
    nb["cells"] = cells
    if mode == "untouched":
        deserved = []
    elif mode == "half":
        deserved = [e for e in exercises if e in half]
    else:
        deserved = [e for e in exercises if e not in entry.get("undeserved", [])]
    return nb, deserved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="/tmp/hostile33o/class")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    out = Path(args.out)
    manifest = {}
    for entry in ATTACKS:
        if args.only and entry["name"] not in args.only:
            continue
        nb, deserved = build(entry)
        folder = out / f"lesson{entry['lesson']}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{entry['name']}.ipynb"
        text = json.dumps(nb, indent=1) + "\n"
        path.write_text(text)
        manifest[entry["name"]] = {
            "lesson": entry["lesson"],
            "kind": entry["kind"],
            "intent": entry["intent"],
            "deserved": deserved,
            "path": str(path),
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} submissions in {out}")


if __name__ == "__main__":
    main()
