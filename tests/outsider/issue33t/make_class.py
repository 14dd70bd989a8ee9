"""Write hostile class 33t into /tmp/hostile33t/class/lessonNN/<name>.ipynb, with manifest.json beside.

Each notebook is the released exercise notebook (exercises/NN_*.ipynb) with the solutions' answers
(solutions/NN_*.ipynb, the BEGIN/END SOLUTION markers dropped), an attack's cells put in place of the answers it
names; code cells that are neither the setup cell nor an nbgrader cell (training runs, plots) are dropped to save
CPU (the grade reads the answer cells only). The manifest gives each submission's lesson, intent, the exercises it
DESERVES to pass and the sha256 of the file (to see that the grader left it unchanged).

    python tests/outsider/issue33t/make_class.py [--check]

``--check`` also runs the grader's own load-time rule (``harness.refusal``) on every answer cell.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = Path("/tmp/hostile33t/class")
sys.path.insert(0, str(HERE))

from attacks_src import ATTACKS  # noqa: E402

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _notebook(lesson: str, folder: str) -> Path:
    (path,) = sorted((ROOT / folder).glob(f"{lesson}_*.ipynb"))
    return path


def _grade_id(cell) -> str:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id", "")


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _answers(lesson: str) -> dict:
    nb = json.loads(_notebook(lesson, "solutions").read_text(encoding="utf-8"))
    found = {}
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid.startswith("ex-") and cell["cell_type"] == "code":
            lines = [line for line in _source(cell).splitlines(keepends=True) if line.strip() not in MARKERS]
            found[gid] = "".join(lines)
    return found


def exercises(lesson: str) -> list[str]:
    """The checked exercises of a lesson, "N.M", from the release's check cells."""
    nb = json.loads(_notebook(lesson, "exercises").read_text(encoding="utf-8"))
    ids = [_grade_id(c) for c in nb["cells"]]
    return [g[len("check-") :].replace("-", ".") for g in ids if g.startswith("check-")]


def deserved(spec, lesson: str) -> list[str]:
    every = exercises(lesson)
    if spec == "all":
        return every
    if isinstance(spec, str) and spec.startswith("all but "):
        out = spec[len("all but ") :].split()
        return [e for e in every if e not in out]
    return list(spec)


def build(attack: dict) -> dict:
    lesson = attack["lesson"]
    release = json.loads(_notebook(lesson, "exercises").read_text(encoding="utf-8"))
    if attack.get("untouched"):
        return release
    answers = _answers(lesson)
    only = attack.get("solved_only")
    nb = copy.deepcopy(release)
    cells, first_code = [], True
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if cell["cell_type"] == "code" and not gid:
            if first_code:  # the setup cell
                first_code = False
                cells.append(cell)
            continue  # an experiment or a plot: not read by the grade
        if cell["cell_type"] == "code":
            first_code = False
        if gid.startswith("ex-") and cell["cell_type"] == "code":
            if gid in attack["cells"]:
                cell["source"] = attack["cells"][gid]
            elif only is None or gid in only:
                cell["source"] = answers[gid]
            cell["outputs"], cell["execution_count"] = [], None
        cells.append(cell)
    nb["cells"] = cells
    return nb


def main(argv: list[str]) -> int:
    names = [a["name"] for a in ATTACKS]
    assert len(names) == len(set(names)) and len(names) <= 60, "names must be unique, at most 60"
    manifest = []
    problems = 0
    for attack in ATTACKS:
        lesson = attack["lesson"]
        folder = OUT / f"lesson{lesson}"
        folder.mkdir(parents=True, exist_ok=True)
        nb = build(attack)
        path = folder / f"{attack['name']}.ipynb"
        data = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        path.write_text(data, encoding="utf-8")
        manifest.append(
            {
                "name": attack["name"],
                "lesson": lesson,
                "path": str(path),
                "intent": attack["intent"],
                "exercises": exercises(lesson),
                "deserved": deserved(attack["deserved"], lesson),
                "sha256": hashlib.sha256(data.encode("utf-8")).hexdigest(),
            }
        )
        if "--check" in argv:
            from course_lib.instructor.harness import refusal

            for cell in nb["cells"]:
                gid = _grade_id(cell)
                if gid.startswith("ex-") and cell["cell_type"] == "code":
                    why = refusal(_source(cell))
                    if why:
                        problems += 1
                        print(f"{attack['name']} {gid}: refused at load: {why}")
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(manifest)} submissions in {OUT} ({problems} cells the load rule refuses)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
