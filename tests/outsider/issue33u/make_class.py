"""Write hostile class 33u into /tmp/hostile33u/class/L<NN>/<name>.ipynb, plus manifest.json.

Every notebook starts from the released exercise notebook; its answer cells get the released solutions (markers
removed) unless the entry replaces them (``cells``), keeps them as released (``untouched``) or solves only some
(``solve_only``). Experiment cells the grade does not read are dropped (CPU), except in the untouched control.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import SUBMISSIONS  # noqa: E402

OUT = Path("/tmp/hostile33u/class")
NAMES = {
    "01": "01_ngrams",
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}


def grade_id(cell) -> str:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id") or ""


def text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def strip_markers(src: str) -> str:
    keep = [line for line in src.split("\n") if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
    return "\n".join(keep)


def code_cell(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}


def solutions(lesson: str) -> dict:
    nb = json.loads((ROOT / "solutions" / f"{NAMES[lesson]}.ipynb").read_text())
    return {grade_id(c): strip_markers(text(c)) for c in nb["cells"] if grade_id(c).startswith("ex-")}


def build(name: str, spec: dict) -> dict:
    lesson = spec["lesson"]
    release = json.loads((ROOT / "exercises" / f"{NAMES[lesson]}.ipynb").read_text())
    if spec.get("untouched"):
        nb = copy.deepcopy(release)
        if spec.get("append_solutions"):
            sols = solutions(lesson)
            body = "\n\n".join(src for gid, src in sols.items() if "BEGIN" not in src and gid.count("-") == 2)
            nb["cells"].append(code_cell(body))
        return nb
    sols = solutions(lesson)
    nb = copy.deepcopy(release)
    cells, first_code = [], True
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and not gid:
            src = text(cell)
            if first_code or "summary" in src:  # the setup cell and the results cell stay
                first_code = False
                cells.append(cell)
            continue  # an experiment cell the grade does not read
        if gid.startswith("ex-"):
            before = spec.get("before", {}).get(gid)
            if before:
                cells.append(code_cell(before))
            solve = spec.get("solve_only") is None or gid in spec["solve_only"]
            if gid in spec.get("cells", {}):
                cell["source"] = spec["cells"][gid]
            elif solve:
                cell["source"] = sols.get(gid, text(cell))
        cells.append(cell)
    nb["cells"] = cells
    return nb


def main() -> None:
    manifest = {}
    for name, spec in SUBMISSIONS.items():
        folder = OUT / f"L{spec['lesson']}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.ipynb"
        data = json.dumps(build(name, spec), indent=1).encode()
        path.write_bytes(data)
        manifest[name] = {
            "lesson": spec["lesson"],
            "kind": spec["kind"],
            "intent": spec["intent"],
            "deserved": spec["deserved"],
            "grey": spec.get("grey", []),
            "path": str(path),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
