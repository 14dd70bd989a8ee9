"""Write hostile class 33w into /tmp/hostile33w/class/<lesson>/<name>.ipynb and its manifest.json."""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ENTRIES  # noqa: E402

OUT = Path("/tmp/hostile33w/class")


def _notebook(folder: str, lesson: str) -> dict:
    (path,) = sorted((ROOT / folder).glob(f"{lesson}_*.ipynb"))
    return json.loads(path.read_text())


def _gid(cell) -> str:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id", "")


def _code_exercises(nb) -> list[str]:
    """The auto-graded exercises: the ids of the check cells (check-N-M -> N.M)."""
    return [_gid(c)[len("check-") :].replace("-", ".") for c in nb["cells"] if _gid(c).startswith("check-")]


def _source(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def build(name: str, spec: dict) -> dict:
    lesson = spec["lesson"]
    release, solution = _notebook("exercises", lesson), _notebook("solutions", lesson)
    answers = {_gid(c): c["source"] for c in solution["cells"] if _gid(c).startswith("ex-")}
    nb = copy.deepcopy(release)
    exercises = _code_exercises(release)
    if spec.get("untouched"):
        deserved = []
    else:
        keep = spec.get("half")
        for cell in nb["cells"]:
            gid = _gid(cell)
            if gid.startswith("ex-") and (keep is None or gid in keep):
                cell["source"] = copy.deepcopy(answers[gid])
            if gid in spec.get("cells", {}):
                cell["source"] = _source(spec["cells"][gid])
        if keep is not None:
            deserved = [e for e in exercises if f"ex-{e.replace('.', '-')}" in keep]
        else:
            deserved = [e for e in exercises if e not in spec.get("fail", [])]
    # the experiment cells the grade does not read: dropped to save CPU (the first code cell, the setup, stays)
    first_code = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    nb["cells"] = [c for i, c in enumerate(nb["cells"]) if c["cell_type"] != "code" or i == first_code or _gid(c)]
    for text in spec.get("extra", []):
        nb["cells"].append({"cell_type": "code", "metadata": {}, "source": _source(text), "outputs": [],
                            "execution_count": None})  # fmt: skip
    folder = OUT / lesson
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(nb, indent=1)
    (folder / f"{name}.ipynb").write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {"lesson": lesson, "intent": spec["intent"], "exercises": exercises, "deserved": deserved, "sha256": digest}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {name: build(name, spec) for name, spec in ENTRIES.items()}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    lessons = sorted({m["lesson"] for m in manifest.values()})
    print(f"{len(manifest)} submissions in lessons {', '.join(lessons)} -> {OUT}")


if __name__ == "__main__":
    main()
