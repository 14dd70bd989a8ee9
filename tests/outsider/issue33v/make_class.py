"""Write hostile class 33v into /tmp/hostile33v/class/L<NN>/<student>.ipynb, with a manifest.json.

Each notebook starts from the released exercise notebook (exercises/NN_*.ipynb): its answer cells get the
solutions' answers (or the stubs, for the untouched and half controls), then the submission's own cells from
attacks_src.py. Check cells and experiment cells are dropped (the grade reads only the answer cells; this saves
CPU); the setup cell and the markdown stay.
"""

import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33v/class")
sys.path.insert(0, str(HERE))

import attacks_src  # noqa: E402

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
NBGRADER_LESSONS = ("05",)  # graded in nbgrader's layout; the others flat


def _notebook(folder: str, lesson: str) -> Path:
    (path,) = sorted((ROOT / folder).glob(f"{lesson}_*.ipynb"))
    return path


def _grade_id(cell) -> str:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id") or ""


def _answers(lesson: str) -> dict:
    """grade_id -> the solutions' source of each answer cell, markers removed."""
    nb = json.loads(_notebook("solutions", lesson).read_text())
    out = {}
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid.startswith("ex-") and cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines(keepends=True)
            out[gid] = "".join(line for line in lines if line.strip() not in MARKERS)
    return out


def _exercise_of(gid: str) -> str:
    return ".".join(gid.split("-")[1:3])


def _source(text: str) -> list:
    return text.splitlines(keepends=True)


def build(sub: dict) -> dict:
    lesson = sub["lesson"]
    released = json.loads(_notebook("exercises", lesson).read_text())
    answers = _answers(lesson)
    base = sub.get("base", "solved")
    solved = set(sub.get("solved", ()))
    cells = []
    for index, cell in enumerate(released["cells"]):
        gid = _grade_id(cell)
        cell = copy.deepcopy(cell)
        if cell["cell_type"] == "markdown":
            cells.append(cell)
        elif index == 1 and not gid:  # the setup cell
            cells.append(cell)
        elif gid.startswith("ex-"):
            keep_stub = base == "untouched" or (base == "half" and _exercise_of(gid) not in solved)
            if gid in sub["cells"]:
                cell["source"] = _source(sub["cells"][gid])
            elif not keep_stub and gid in answers:
                cell["source"] = _source(answers[gid])
            cell["outputs"], cell["execution_count"] = [], None
            cells.append(cell)
        else:
            continue  # check cells, experiments
        added = sub.get("added")
        if added and gid == added["after"]:
            cells.append(
                {
                    "cell_type": "code",
                    "id": "added-33v",
                    "metadata": {},
                    "source": _source(added["source"]),
                    "outputs": [],
                    "execution_count": None,
                }  # fmt: skip
            )
    released["cells"] = cells
    return released


def main() -> None:
    manifest = {}
    for sub in attacks_src.SUBMISSIONS:
        folder = OUT / f"L{sub['lesson']}"
        nb = build(sub)
        if sub["lesson"] in NBGRADER_LESSONS:  # nbgrader's layout: submitted/<student>/<assignment>/<notebook>
            stem = _notebook("exercises", sub["lesson"]).stem
            folder = folder / "submitted" / sub["name"] / stem
            path = folder / f"{stem}.ipynb"
        else:
            path = folder / f"{sub['name']}.ipynb"
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(nb, indent=1))
        manifest[sub["name"]] = {"lesson": sub["lesson"], "intent": sub["intent"], "deserve": sub["deserve"]}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
