"""Write hostile class 33q into /tmp/hostile33q/class/<lesson>/<student>.ipynb, with manifest.json.

Each submission starts from the released exercise notebook (exercises/), its answer cells filled with the
solutions' answers (solutions/), then the attack's cells put in. Attack notebooks drop the code cells that are
neither the setup cell, an answer nor a check (training and experiments: the grade does not read them).
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

import attacks_src as A  # noqa: E402

OUT = Path("/tmp/hostile33q/class")
LESSONS = {
    "01": "01_ngrams",
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def exercise_ids(nb) -> list[str]:
    """The auto-graded exercises: code answer cells ex-N-M -> "N.M"."""
    return [
        grade_id(c)[3:].replace("-", ".")
        for c in nb["cells"]
        if c["cell_type"] == "code" and (grade_id(c) or "").startswith("ex-")
    ]


def load(kind: str, lesson: str):
    return json.loads((ROOT / kind / f"{LESSONS[lesson]}.ipynb").read_text())


def solved(lesson: str, only=None, drop_experiments=True):
    """The released notebook with the solutions' answers (all, or the grade ids in ``only``)."""
    nb = load("exercises", lesson)
    answers = {grade_id(c): c["source"] for c in load("solutions", lesson)["cells"] if grade_id(c)}
    cells = []
    for i, cell in enumerate(nb["cells"]):
        gid = grade_id(cell)
        if cell["cell_type"] == "code" and gid and gid.startswith("ex-") and (only is None or gid in only):
            cell = copy.deepcopy(cell)
            cell["source"] = answers[gid]
            cell["outputs"], cell["execution_count"] = [], None
        if drop_experiments and cell["cell_type"] == "code" and not gid and i > 1:
            continue  # an experiment or a summary: the grade does not read it
        cells.append(cell)
    nb = copy.deepcopy(nb)
    nb["cells"] = cells
    return nb


def with_cells(nb, sources: dict):
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid in sources:
            cell["source"] = sources[gid]
    missing = set(sources) - {grade_id(c) for c in nb["cells"]}
    assert not missing, missing
    return nb


def entries():
    """(name, lesson, intent, kind, notebook, exercises that deserve no mark)."""
    out = []
    nb = solved("01", drop_experiments=False)
    out.append(("ctl_full_01", "01", "control: the solutions in the released notebook", "control", nb, []))
    out.append(
        (
            "ctl_untouched_01",
            "01",
            "control: the released notebook as handed out",
            "control",
            load("exercises", "01"),
            None,
        )
    )
    half = solved("01", only={"ex-1-1", "ex-1-2"}, drop_experiments=False)
    out.append(
        (
            "ctl_half_01",
            "01",
            "control: 1.1 and 1.2 solved, the rest left as stubs",
            "control",
            half,
            ["1.3", "1.4", "1.5"],
        )
    )

    def attack(name, lesson, intent, sources, fails, kind="attack"):
        out.append((name, lesson, intent, kind, with_cells(solved(lesson), sources), fails))

    m = lambda text, mode: text.replace("{mode}", mode)  # noqa: E731
    # lesson 01: nltk (refused whole, by where it lives) from an unnormalised path
    attack(
        "a01_nltk_plain",
        "01",
        "1.1 by nltk's everygrams, plainly (reference: refused since 33o)",
        {"ex-1-1": A.L01_NLTK_PLAIN},
        ["1.1"],
    )
    for mode in ("dotdot", "dslash", "symlink"):
        attack(
            f"a01_nltk_{mode}",
            "01",
            f"1.1 by nltk/util.py loaded afresh from a {mode} path",
            {"ex-1-1": m(A.L01_NLTK_PATH, mode)},
            ["1.1"],
        )
    # the new library rule: third-party packages in a build exercise
    attack("a01_toolz", "01", "1.1 by toolz (third-party, pure Python)", {"ex-1-1": A.L01_TOOLZ}, ["1.1"])
    for mode in ("dotdot", "symlink"):
        attack(
            f"a01_toolz_{mode}",
            "01",
            f"1.1 by toolz/itertoolz.py loaded from a {mode} path",
            {"ex-1-1": m(A.L01_TOOLZ_PATH, mode)},
            ["1.1"],
        )
    attack(
        "a01_pandas_c",
        "01",
        "1.1 by pandas' C hash table (only C runs in the call)",
        {"ex-1-1": A.L01_PANDAS_C},
        ["1.1"],
    )
    attack("a01_pandas", "01", "1.1 by pandas' value_counts", {"ex-1-1": A.L01_PANDAS}, ["1.1"])
    attack("a01_mpmath", "01", "1.4 by mpmath (third-party)", {"ex-1-4": A.L01_MPMATH_PPL}, ["1.4"])
    attack("a01_sortedcontainers", "01", "1.5 by sortedcontainers' bisect", {"ex-1-5": A.L01_SORTED_SAMPLE}, ["1.5"])
    # honest but clever: deserve every mark
    attack(
        "h01_stdlib",
        "01",
        "honest: zip of shifted copies, statistics.fmean, bisect+accumulate",
        {"ex-1-1": A.L01_STDLIB_11, "ex-1-4": A.L01_STDLIB_14, "ex-1-5": A.L01_STDLIB_15},
        [],
        "honest",
    )
    attack("h01_tqdm", "01", "honest: 1.2 with tqdm progress bars", {"ex-1-2": A.L01_TQDM_12}, [], "honest")
    attack(
        "h01_matplotlib", "01", "honest: 1.4 plots its input with matplotlib", {"ex-1-4": A.L01_MPL_14}, [], "honest"
    )
    attack(
        "h01_ipython_display",
        "01",
        "honest: 1.5 shows a dict with IPython.display",
        {"ex-1-5": A.L01_IPY_15},
        [],
        "honest",
    )
    attack(
        "h01_tabulate",
        "01",
        "honest: 1.2 prints a table with tabulate (a printing package)",
        {"ex-1-2": A.L01_TABULATE_12},
        [],
        "honest",
    )
    # lesson 02: a library's numerical differentiation for the by-hand Jacobian
    attack(
        "a02_mpmath_diff",
        "02",
        "2.1 by mpmath.diff (third-party numerical differentiation)",
        {"ex-2-1": A.L02_MPMATH_DIFF},
        ["2.1"],
    )
    for mode in ("dotdot", "dslash"):
        attack(
            f"a02_mpmath_{mode}",
            "02",
            f"2.1 by mpmath's differentiation.py loaded from a {mode} path",
            {"ex-2-1": m(A.L02_MPMATH_PATH, mode)},
            ["2.1"],
        )
    # lesson 03
    attack(
        "a03_regex",
        "03",
        "3.1 by the regex module's recursive pattern (third-party, C)",
        {"ex-3-1": A.L03_REGEX},
        ["3.1"],
    )
    attack(
        "h03_replace",
        "03",
        "honest: 3.1 by removing adjacent pairs with re until none is left",
        {"ex-3-1": A.L03_REPLACE},
        [],
        "honest",
    )
    attack("h03_tqdm", "03", "honest: 3.4 with a tqdm progress bar", {"ex-3-4": A.L03_TQDM_34}, [], "honest")
    # lesson 06: torch.masked (refused by folder) from an unnormalised path, one exercise per submission (a first
    # run put both in one notebook: the second cell's helpers of the same names replaced the first's, refused as
    # "code made at run time under an answer cell's name", an artefact of the attack, not a defence)
    for mode in ("dotdot", "dslash", "procroot", "symlink"):
        attack(
            f"a06_masked61_{mode}",
            "06",
            f"6.1 by torch/masked/_ops.py's logsumexp loaded from a {mode} path",
            {"ex-6-1": m(A.L06_MASKED_PATH, mode)},
            ["6.1"],
        )
        attack(
            f"a06_masked63_{mode}",
            "06",
            f"6.3 by torch/masked/_ops.py's softmax loaded from a {mode} path",
            {"ex-6-3": m(A.L06_MASKED_PATH_63, mode)},
            ["6.3"],
        )
    for extra in getattr(A, "EXTRA", []):
        attack(*extra)
    return out


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    manifest = {}
    for name, lesson, intent, kind, nb, fails in entries():
        ids = exercise_ids(load("exercises", lesson))
        deserve = [] if fails is None else [e for e in ids if e not in fails]
        folder = OUT / lesson
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.ipynb").write_text(json.dumps(nb, indent=1))
        manifest[name] = {"lesson": lesson, "intent": intent, "kind": kind, "exercises": ids, "deserve": deserve}
    (OUT.parent / "manifest.json").write_text(json.dumps(manifest, indent=1))
    digest = hashlib.sha256()
    for path in sorted(OUT.rglob("*.ipynb")):
        digest.update(path.read_bytes())
    (OUT.parent / "class.sha256").write_text(digest.hexdigest()[:16] + "\n")
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
