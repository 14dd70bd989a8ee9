"""Write hostile class 33r into /tmp/hostile33r/class/<lesson>/<student>.ipynb, with manifest.json.

Every notebook starts from the released exercise notebook (exercises/NN_*.ipynb) with the solutions' answers
(solutions/NN_*.ipynb, matched by nbgrader grade id); the lesson's demo and training cells (code cells without an
nbgrader id, after the setup cell) are dropped to save CPU: the grade never reads them. An attack replaces one
or more answer cells (attacks_src.ATTACKS). Controls: a fully solved notebook, an untouched one, a half-solved
one, and an untouched one with added cells that define every answer.

Run with the worktree's Python: .venv/bin/python tests/outsider/issue33r/make_class.py [OUT]
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ATTACKS  # noqa: E402

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33r/class")


def _gid(cell) -> str | None:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")


def release_of(lesson: str) -> Path:
    return sorted((ROOT / "exercises").glob(f"{lesson}_*.ipynb"))[0]


def solution_answers(lesson: str) -> dict[str, str]:
    nb = nbformat.read(sorted((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))[0], as_version=4)
    return {_gid(c): c.source for c in nb.cells if c.cell_type == "code" and (_gid(c) or "").startswith("ex-")}


def graded_exercises(lesson: str) -> list[str]:
    """The exercises the grader checks in this lesson: those with a check and an answer cell in the release."""
    from course_lib import checks

    nb = nbformat.read(release_of(lesson), as_version=4)
    ids = {_gid(c) for c in nb.cells if c.cell_type == "code"}
    return [e for e in checks.exercises(lesson) if "ex-" + e.replace(".", "-") in ids]


def build(lesson: str, solved=True, replace=None, added=(), keep_demo=False):
    """The released notebook, answers solved (all, none, or a set of grade ids), some replaced, cells added."""
    nb = nbformat.read(release_of(lesson), as_version=4)
    answers = solution_answers(lesson)
    replace = replace or {}
    cells, seen_code = [], False
    for cell in nb.cells:
        gid = _gid(cell)
        if cell.cell_type == "code":
            first = not seen_code
            seen_code = True
            if gid is None and not first and not keep_demo:
                continue  # a demo or training cell: the grade does not read it
            if gid in replace:
                cell.source = replace[gid]
            elif gid in answers and (solved is True or (solved and gid in solved)):
                cell.source = answers[gid]
        cells.append(cell)
    for source in added:
        cells.append(nbformat.v4.new_code_cell(source))
    nb.cells = cells
    return nb


ADDED_ANSWERS = """import torch


def alpha(scores, i, j):
    n = scores.shape[0]
    keep = torch.ones(n, n, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~keep, float("-inf")), -1)[i - 1, j - 1].item()


def by_hand():
    import math
    e = math.e
    return {"alpha_22": 0.5, "alpha_33": e / (1 + 2 * e), "alpha_42": 1 / (2 + e**3), "alpha_44": 0.0}
"""

KERNEL_LEAK = """import os
raise RuntimeError("KERNEL ENV " + " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()))[:1500])
"""


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    manifest = {}
    every = {lesson: graded_exercises(lesson) for lesson in ("01", "02", "03", "04", "05", "06", "07")}

    def put(name, lesson, nb, family, intent, deserved, expect):
        folder = OUT / lesson
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.ipynb"
        nbformat.write(nb, path)
        manifest[name] = {
            "lesson": lesson,
            "family": family,
            "intent": intent,
            "deserved": sorted(deserved),
            "expect": expect,
            "path": str(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }

    put("ctl_full_06", "06", build("06"), "control", "fully solved (solutions' answers)", every["06"], "full marks")
    put("ctl_untouched_03", "03", build("03", solved=False), "control", "untouched release", [], "zero")
    put(
        "ctl_half_01",
        "01",
        build("01", solved={"ex-1-1", "ex-1-2"}),
        "control",
        "half solved: 1.1 and 1.2 answered, 1.3-1.5 left as stubs",
        ["1.1", "1.2"],
        "1.1 and 1.2 only",
    )
    put(
        "ctl_added_cells_06",
        "06",
        build("06", solved=False, added=[ADDED_ANSWERS]),
        "control",
        "untouched release plus an added cell (no nbgrader id) defining alpha and by_hand",
        [],
        "zero",
    )
    for name, attack in ATTACKS.items():
        lesson = attack["lesson"]
        added = [KERNEL_LEAK] if attack["family"] == "leak" else []
        nb = build(lesson, replace=attack["cells"], added=added)
        deserved = [e for e in every[lesson] if e not in attack["undeserved"]]
        put(name, lesson, nb, attack["family"], attack["intent"], deserved, attack["expect"])
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    counts = {}
    for entry in manifest.values():
        counts[entry["lesson"]] = counts.get(entry["lesson"], 0) + 1
    print(f"{len(manifest)} submissions in {OUT}: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
