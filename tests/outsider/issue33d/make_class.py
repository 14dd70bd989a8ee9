"""Write the fifth hostile class of issue 33 (tests/outsider/issue33d/class/<lesson>/<student>.ipynb) from
attacks.py, and expected.json (each submission's intent and the exercises that deserve to pass).

    .venv/bin/python tests/outsider/issue33d/make_class.py

Bases: "solved" is the solutions notebook as the builder makes it (solutions/NN_*.ipynb: every answer written),
"untouched" the released exercises notebook (exercises/NN_*.ipynb: every stub left).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks import ATTACKS  # noqa: E402

LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}


def grade_id(cell) -> str:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id", "")


def exercises_of(nb) -> list[str]:
    found = []
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid.startswith("check-"):
            found.append(gid[len("check-") :].replace("-", "."))
    return sorted(set(found), key=lambda e: [int(p) for p in e.split(".")])


def code_cell(source: str, nbgrader: dict | None = None) -> dict:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    if nbgrader:
        cell["metadata"]["nbgrader"] = nbgrader
    return cell


def build(attack: dict) -> tuple[dict, list[str]]:
    stem = LESSONS[attack["lesson"]]
    solved = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text())
    untouched = json.loads((ROOT / "exercises" / f"{stem}.ipynb").read_text())
    nb = copy.deepcopy(solved if attack["base"] == "solved" else untouched)
    solved_cells = {grade_id(c): c for c in solved["cells"] if grade_id(c)}
    for gid in attack.get("solved", []):
        for i, cell in enumerate(nb["cells"]):
            if grade_id(cell) == gid:
                nb["cells"][i] = copy.deepcopy(solved_cells[gid])
    for gid, source in (attack.get("cells") or {}).items():
        hits = [c for c in nb["cells"] if grade_id(c) == gid]
        if len(hits) != 1:
            raise SystemExit(f"{attack['name']}: answer cell {gid} found {len(hits)} times")
        hits[0]["source"] = source
        hits[0]["outputs"], hits[0]["execution_count"] = [], None
    for after, source in attack.get("extra") or []:
        index = [i for i, c in enumerate(nb["cells"]) if grade_id(c) == after]
        if len(index) != 1:
            raise SystemExit(f"{attack['name']}: cell {after} found {len(index)} times")
        meta = None
        if attack.get("dup_id"):
            meta = {
                "grade": False,
                "grade_id": attack["dup_id"],
                "locked": False,
                "schema_version": 3,
                "solution": True,
                "task": False,
            }
        nb["cells"].insert(index[0] + 1, code_cell(source, meta))
    every = exercises_of(untouched)
    passes = attack["passes"]
    if isinstance(passes, str) and passes.startswith("all_but:"):
        passes = [e for e in every if e not in passes[len("all_but:") :].split(",")]
    return nb, [e for e in every if e in passes]


PLANTED = ("json", "secrets", "nbclient", "nbformat", "sitecustomize", "usercustomize", "torch", "course_lib", "bwrap")
PLANT = """import os
import sys

with open("/tmp/h33d/PWNED_{module}_" + str(os.getpid()), "w") as f:  # imported from the current folder: a marker
    f.write(repr(sys.argv))
raise ImportError("planted {module} imported from the current folder")
"""


def nbgrader_class() -> None:
    """nbgrader's layout (submitted/<student>/<assignment>/<notebook>.ipynb) with its tricks: a notebook that is a
    link (to a solved notebook), a student folder with two notebooks, a student folder that is a link, an honest
    solved one. Every student should get exactly one row."""
    stem = LESSONS["06"]
    root = HERE / "class_nbgrader"
    if root.exists():
        shutil.rmtree(root)
    solved = (ROOT / "solutions" / f"{stem}.ipynb").read_text()
    untouched = (ROOT / "exercises" / f"{stem}.ipynb").read_text()
    sub = root / "submitted"

    def put(student: str, text: str, name: str = f"{stem}.ipynb") -> Path:
        folder = sub / student / stem
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
        return folder

    put("nb_bob", solved)  # honest: 4/4
    put("nb_carol", solved)
    put("nb_carol", untouched, "copy_of_06.ipynb")  # two notebooks: one row saying why
    outside = root / "_outside"
    outside.mkdir(parents=True)
    (outside / f"{stem}.ipynb").write_text(solved)
    alice = sub / "nb_alice" / stem
    alice.mkdir(parents=True)
    os.symlink(os.path.relpath(outside / f"{stem}.ipynb", alice), alice / f"{stem}.ipynb")  # the notebook is a link
    (outside / "dave" / stem).mkdir(parents=True)
    (outside / "dave" / stem / f"{stem}.ipynb").write_text(solved)
    os.symlink(os.path.relpath(outside / "dave", sub), sub / "nb_dave")  # the student folder is a link
    expected = {
        "nb_bob": ALL06_PASS,
        "nb_carol": [],
        "nb_alice": [],
        "nb_dave": [],
    }
    (HERE / "expected_nbgrader.json").write_text(json.dumps(expected, indent=1) + "\n")


ALL06_PASS = ["6.1", "6.2", "6.3", "6.4"]


def main() -> None:
    out = HERE / "class"
    if out.exists():
        shutil.rmtree(out)
    expected = {}
    for attack in ATTACKS:
        nb, passes = build(attack)
        folder = out / attack["lesson"]
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{attack['name']}.ipynb"
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        if attack.get("special") == "symlink":
            outside = out / "_outside"
            outside.mkdir(exist_ok=True)
            real = outside / f"{attack['name']}.ipynb"
            real.write_text(text)
            os.symlink(os.path.relpath(real, folder), target)
        else:
            target.write_text(text)
        expected[f"{attack['lesson']}/{attack['name']}"] = {
            "intent": attack["intent"],
            "deserves_to_pass": passes,
            "note": attack.get("note", ""),
        }
    # the current-folder attack: modules named like what the grader imports, planted in the submissions folder
    # that the grader is run from (run_class.sh cds there); importing one leaves a marker file
    for lesson in ("02", "03"):
        for module in PLANTED:
            path = out / lesson / (f"{module}/__init__.py" if module == "course_lib" else f"{module}.py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PLANT.format(module=module))
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    nbgrader_class()
    print(f"{len(ATTACKS)} submissions in {out}, 4 in nbgrader's layout in {HERE / 'class_nbgrader'}")


if __name__ == "__main__":
    main()
