"""Write hostile class 33p into /tmp/hostile33p/class/<lesson>/<student>.ipynb, with manifest.json.

Each attack starts from the released solutions notebook (the right answers), its attack in one answer cell, and
without the training and experiment cells (code cells that are neither the setup cell nor nbgrader cells), which
the grade does not read. Controls: a fully solved notebook, an untouched one, a half-solved one (lesson 01), and a
fully solved notebook for each other lesson attacked (the baseline its attacks are read against).
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ATTACKS  # noqa: E402

OUT = Path("/tmp/hostile33p/class")


def notebook_path(folder: str, lesson: str) -> Path:
    (path,) = sorted((ROOT / folder).glob(f"{lesson}_*.ipynb"))
    return path


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def exercises(lesson: str) -> list[str]:
    """The auto-graded exercises of a lesson ("1.1", ...): its code answer cells."""
    nb = json.loads(notebook_path("solutions", lesson).read_text())
    found = []
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and gid and gid.startswith("ex-"):
            found.append(gid[3:].replace("-", "."))
    return found


def slim(nb: dict) -> dict:
    nb = copy.deepcopy(nb)
    cells, first_code = [], True
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            keep = first_code or grade_id(cell)
            first_code = False
            if not keep:
                continue
            cell["outputs"], cell["execution_count"] = [], None
        cells.append(cell)
    nb["cells"] = cells
    return nb


def with_answers(nb: dict, replace: dict[str, str]) -> dict:
    nb = copy.deepcopy(nb)
    done = set()
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid in replace:
            cell["source"] = replace[gid]
            done.add(gid)
    missing = set(replace) - done
    assert not missing, missing
    return nb


def write(lesson: str, name: str, nb: dict) -> None:
    folder = OUT / lesson
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ipynb").write_text(json.dumps(nb, indent=1))


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    manifest = []
    solved = {lesson: slim(json.loads(notebook_path("solutions", lesson).read_text())) for lesson in ("01", "02")}

    def add(name, lesson, nb, deserved, kind, intent, either=()):
        write(lesson, name, nb)
        manifest.append(
            dict(name=name, lesson=lesson, deserved=sorted(deserved), either=sorted(either), kind=kind, intent=intent)
        )

    # controls (lesson 01)
    add("l01_control_full", "01", solved["01"], exercises("01"), "control", "the solutions' answers: full marks")
    untouched = json.loads(notebook_path("exercises", "01").read_text())
    add("l01_control_untouched", "01", untouched, [], "control", "the released exercise notebook, untouched: 0")
    ex_cells = {grade_id(c): "".join(c["source"]) for c in untouched["cells"] if grade_id(c)}
    half = with_answers(solved["01"], {g: ex_cells[g] for g in ("ex-1-2", "ex-1-3", "ex-1-5")})
    add("l01_control_half", "01", half, ["1.1", "1.4"], "control", "1.1 and 1.4 solved, the rest as released")
    # a fully solved baseline for each other lesson attacked
    for lesson in sorted({a["lesson"] for a in ATTACKS} - {"01"}):
        nb = slim(json.loads(notebook_path("solutions", lesson).read_text()))
        solved[lesson] = nb
        add(f"l{lesson}_baseline_full", lesson, nb, exercises(lesson), "baseline", "the solutions' answers")
    for attack in ATTACKS:
        lesson = attack["lesson"]
        nb = with_answers(solved[lesson], attack["replace"])
        deserved = [e for e in exercises(lesson) if e not in attack["deny"]]
        add(attack["name"], lesson, nb, deserved, attack["kind"], attack["intent"], attack.get("either", ()))
    (OUT.parent / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
