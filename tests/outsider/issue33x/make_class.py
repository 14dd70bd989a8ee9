"""Write hostile class 33x into /tmp/hostile33x/class/<lesson>/<student>.ipynb, with manifest.json beside it.

Each notebook starts from the released exercise notebook (exercises/) with the solutions' answers in its answer
cells (or none, for the untouched control), then the entry's cells replace answers. Code cells that are neither the
setup cell nor an nbgrader cell (training runs, experiments) are dropped: the grade does not read them.
"""

import copy
import glob
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ENTRIES  # noqa: E402

OUT = Path(os.environ.get("CLASS_DIR", "/tmp/hostile33x/class"))


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def exercises_of(nb):
    """The auto-graded exercises ("1.1", ...) of a notebook: its check cells."""
    out = []
    for cell in nb["cells"]:
        gid = grade_id(cell) or ""
        m = re.fullmatch(r"check-(\d+)-(\d+)", gid)
        if m:
            out.append(f"{m.group(1)}.{m.group(2)}")
    return out


def build(entry):
    lesson = entry["lesson"]
    released = json.load(open(glob.glob(str(ROOT / "exercises" / f"{lesson}_*.ipynb"))[0]))
    solved = json.load(open(glob.glob(str(ROOT / "solutions" / f"{lesson}_*.ipynb"))[0]))
    answers = {grade_id(c): c["source"] for c in solved["cells"] if grade_id(c)}
    nb = copy.deepcopy(released)
    cells, first_code = [], True
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and not gid:
            if first_code:  # the setup cell
                first_code = False
                cells.append(cell)
            continue
        if cell["cell_type"] == "code":
            first_code = False
        if gid and gid.startswith("ex-"):
            base = entry.get("base", "solution")
            keep = entry.get("keep")
            if base == "solution" or (keep and gid in keep):
                cell["source"] = answers[gid]
            if gid in entry["cells"]:
                cell["source"] = entry["cells"][gid]
        cells.append(cell)
    for src in entry.get("added", []):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src})
    nb["cells"] = cells
    return nb, exercises_of(released)


def main():
    manifest = {}
    for entry in ENTRIES:
        nb, exercises = build(entry)
        folder = OUT / entry["lesson"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{entry['name']}.ipynb").write_text(json.dumps(nb, indent=1))
        deserved = exercises if entry["deserved"] is None else entry["deserved"]
        manifest[entry["name"]] = {
            "lesson": entry["lesson"],
            "kind": entry["kind"],
            "intent": entry["intent"],
            "exercises": exercises,
            "deserved": deserved,
        }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
