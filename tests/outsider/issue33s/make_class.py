"""Write hostile class 33s into /tmp/hostile33s/class/<lesson>/<name>.ipynb, with manifest.json beside.

Each notebook starts from the released exercise notebook (exercises/) with the solutions' answers
(solutions/), then the entry's changes (attacks_src.ENTRIES). Code cells that are neither the setup cell, an
answer nor a check (training and experiment cells the grade does not read) are dropped to save CPU.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = Path("/tmp/hostile33s/class")
sys.path.insert(0, str(HERE))

from attacks_src import ENTRIES  # noqa: E402

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _notebook(folder: str, lesson: str) -> dict:
    (path,) = sorted((ROOT / folder).glob(f"{lesson}_*.ipynb"))
    return json.loads(path.read_text())


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _source(cell) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _strip(src: str) -> str:
    return "\n".join(line for line in src.split("\n") if line.strip() not in MARKERS)


def _inject(src: str, lines: list[str]) -> str:
    """``lines`` at the start of the solution's body (after its first BEGIN SOLUTION marker, same indent)."""
    out, done = [], False
    for line in src.split("\n"):
        out.append(line)
        if not done and line.strip() == MARKERS[0]:
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + x if x else "" for x in lines]
            done = True
    assert done, "no BEGIN SOLUTION marker to inject after"
    return "\n".join(out)


def build(name: str, entry: dict) -> dict:
    lesson = entry["lesson"]
    release = _notebook("exercises", lesson)
    solution = {_grade_id(c): _source(c) for c in _notebook("solutions", lesson)["cells"] if _grade_id(c)}
    nb = copy.deepcopy(release)
    cells, first_code = [], True
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if cell["cell_type"] == "code" and not gid and not first_code:
            continue  # a training or experiment cell: not read by the grade
        if cell["cell_type"] == "code":
            first_code = False
        answer = gid is not None and gid.startswith("ex-") and cell["cell_type"] == "code"
        if answer and not entry.get("untouched"):
            if "half" in entry and gid not in entry["half"]:
                pass
            else:
                src = solution[gid]
                change = entry.get("replace", {}).get(gid)
                if isinstance(change, tuple):
                    src = _inject(src, change[1])
                elif isinstance(change, str):
                    src = change
                src = _strip(src)
                if entry.get("drawn") and change is not None:
                    src = src.rstrip("\n") + "\n\n_DRAWN = []\n"
                cell["source"] = src
        cells.append(cell)
    for src in entry.get("add", []):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src})
    nb["cells"] = cells
    return nb


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, entry in ENTRIES.items():
        folder = OUT / entry["lesson"]
        folder.mkdir(exist_ok=True)
        nb = build(name, entry)
        (folder / f"{name}.ipynb").write_text(json.dumps(nb, indent=1))
        manifest[name] = {
            "lesson": entry["lesson"],
            "kind": entry["kind"],
            "intent": entry["intent"],
            "deserves": entry["deserves"],
            "judgement": bool(entry.get("judgement")),
        }
    (OUT.parent / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
