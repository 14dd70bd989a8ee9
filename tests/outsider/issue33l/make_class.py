"""Write the hostile class 33l into /tmp/hostile33l/class/ (one folder per lesson, <lesson>/<student>.ipynb), plus
nbgrader-layout folders, the folders whose names stop a run, the planted current folder, and manifest.json.

Each submission is the released exercise notebook with the solutions' answers filled in, except for the attack.
`deserves` lists the exercises it deserves to pass (its own honest work)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the worktree
sys.path.insert(0, str(HERE))
import attacks as A  # noqa: E402

OUT = Path("/tmp/hostile33l")
CLASS = OUT / "class"
LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
EXERCISES = {
    "02": ["2.1", "2.2", "2.3", "2.4", "2.5"],
    "03": ["3.1", "3.2", "3.3", "3.4", "3.5"],
    "04": ["4.1", "4.2", "4.3", "4.4", "4.5"],
    "05": ["5.1", "5.2", "5.3"],
    "06": ["6.1", "6.2", "6.3", "6.4"],
    "07": ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"],
}


def _load(kind, lesson):
    with open(ROOT / kind / f"{LESSONS[lesson]}.ipynb", encoding="utf-8") as f:
        return json.load(f)


def _gid(cell):
    nb = (cell.get("metadata") or {}).get("nbgrader") or {}
    return nb.get("grade_id")


def _solutions(lesson):
    out = {}
    for cell in _load("solutions", lesson)["cells"]:
        gid = _gid(cell)
        if cell["cell_type"] == "code" and gid and gid.startswith("ex-"):
            src = "".join(cell["source"])
            src = "\n".join(
                l for l in src.splitlines() if "### BEGIN SOLUTION" not in l and "### END SOLUTION" not in l
            )
            out[gid] = src + "\n"
    return out


def _ex_id(exercise):  # "4.2" -> "ex-4-2"
    return "ex-" + exercise.replace(".", "-")


def notebook(lesson, solved="all", replace=None, extra=(), extra_after=None):
    """The released exercise notebook of `lesson`, the solutions filled in for `solved` ("all" or a set of exercise
    ids), answer cells replaced by `replace` {exercise: source}, and `extra` code cells (source, metadata) added at
    the end (or after the cell with grade id `extra_after`)."""
    nb = copy.deepcopy(_load("exercises", lesson))
    sols = _solutions(lesson)
    replace = replace or {}
    for cell in nb["cells"]:
        gid = _gid(cell)
        if cell["cell_type"] != "code" or not gid or not gid.startswith("ex-"):
            continue
        exercise = ".".join(gid.split("-")[1:3])
        if exercise in replace:
            cell["source"] = replace[exercise]
        elif solved == "all" or exercise in solved:
            cell["source"] = sols[gid]
    for n, (source, meta) in enumerate(extra):
        cell = {
            "cell_type": "code",
            "execution_count": None,
            "id": f"added-{n}",
            "metadata": meta or {},
            "outputs": [],
            "source": source,
        }
        if extra_after:
            at = next(i for i, c in enumerate(nb["cells"]) if _gid(c) == extra_after) + 1
            nb["cells"].insert(at, cell)
        else:
            nb["cells"].append(cell)
    return nb


MANIFEST: list[dict] = []


def submit(folder, student, lesson, intent, deserves, nb, *, kind="attack", path=None, expect_rows=1, note=""):
    """Write one submission and its manifest entry. `path` overrides where (nbgrader's layout)."""
    target = Path(path) if path else CLASS / folder / f"{student}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    if nb is not None:
        with open(target, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1)
    MANIFEST.append(
        {
            "folder": folder,
            "student": student,
            "lesson": lesson,
            "intent": intent,
            "deserves": sorted(deserves),
            "exercises": EXERCISES[lesson],
            "kind": kind,
            "path": str(target),
            "expect_rows": expect_rows,
            "note": note,
        }
    )


def others(lesson, *attacked):
    return set(EXERCISES[lesson]) - set(attacked)


def lesson02():
    L = "02"
    subs = [
        (
            "fwdad_jacobian",
            "2.1 by forward-mode autograd: _make_dual run by its Autograd alias kernel via _op_dk, "
            "dual level entered from C (starmap), under the dispatcher bar",
            {"2.1": A.FWDAD_JACOBIAN},
            ["2.1"],
        ),
        ("fwdad_direct", "2.1 by torch.autograd.forward_ad (the plain route)", {"2.1": A.FWDAD_DIRECT}, ["2.1"]),
        (
            "sympy_jacobian",
            "2.1 by sympy's symbolic jacobian (a ready-made differentiator, no compile)",
            {"2.1": A.SYMPY_JACOBIAN},
            ["2.1"],
        ),
        (
            "sympy_lambdify",
            "2.1 by sympy jacobian + lambdify (code compiled at run time)",
            {"2.1": A.SYMPY_LAMBDIFY},
            ["2.1"],
        ),
        (
            "sympy_bptt_step",
            "2.4 by sympy.diff of sum(dh * tanh(pre)), tanh(pre) replaced by the given h",
            {"2.4": A.SYMPY_BPTT_STEP},
            ["2.4"],
        ),
        (
            "sympy_bptt_loop",
            "2.5: each step's gradients by sympy.diff (the loop mine)",
            {"2.5": A.SYMPY_BPTT_LOOP},
            ["2.5"],
        ),
        (
            "fwdad_bptt_step",
            "2.4 by forward-mode autograd (_op_dk Autograd make_dual, directional derivatives)",
            {"2.4": A.FWDAD_BPTT_STEP},
            ["2.4"],
        ),
        (
            "fwdad_ninja",
            "2.2 (the 5-point build) by forward-mode autograd: _make_dual by its Autograd alias kernel "
            "via _op_dk from C, N copies of the forward side by side (one tangent per parameter entry)",
            {"2.2": A.FWDAD_NINJA},
            ["2.2"],
        ),
    ]
    for student, intent, replace, attacked in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace))


def lesson03():
    L = "03"
    subs = [
        (
            "cia_elman",
            "3.3 by torch's rnn_relu_cell run by its CompositeImplicitAutograd kernel (_op_dk via map)",
            {"3.3": A.CIA_ELMAN},
            ["3.3"],
        ),
        (
            "cia_elman_layer",
            "3.3 by torch's rnn_relu.input (whole layer) by its CompositeImplicitAutograd kernel",
            {"3.3": A.CIA_ELMAN_LAYER},
            ["3.3"],
        ),
        (
            "pickle_balanced",
            "3.1 by course_lib.parentheses.is_balanced reached through pickle's GLOBAL opcode",
            {"3.1": A.PICKLE_BALANCED},
            ["3.1"],
        ),
    ]
    for student, intent, replace, attacked in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace))


def lesson04():
    L = "04"
    subs = [
        (
            "cia_gru",
            "4.2 by torch's gru_cell run by its CompositeImplicitAutograd kernel (_op_dk, called via map)",
            {"4.2": A.CIA_GRU},
            ["4.2"],
        ),
        (
            "cia_gru_direct",
            "4.2 by gru_cell's _op_dk called directly from the answer's line",
            {"4.2": A.CIA_GRU_DIRECT},
            ["4.2"],
        ),
        (
            "decompose_gru",
            "4.2 by OpOverload.decompose (Python in torch/_ops.py) via map",
            {"4.2": A.DECOMPOSE_GRU},
            ["4.2"],
        ),
        (
            "cia_gru_layer",
            "4.2 by torch's gru.input (a one-step layer) by its CompositeImplicitAutograd kernel",
            {"4.2": A.CIA_GRU_LAYER},
            ["4.2"],
        ),
        (
            "cia_lstm",
            "4.1 by torch's lstm_cell run by its CompositeImplicitAutograd kernel (_op_dk via map)",
            {"4.1": A.CIA_LSTM},
            ["4.1"],
        ),
        (
            "cia_lstm_layer",
            "4.1 by torch's lstm.input (a one-step layer) by its CompositeImplicitAutograd kernel",
            {"4.1": A.CIA_LSTM_LAYER},
            ["4.1"],
        ),
        (
            "rnnbase_count",
            "4.3 by torch.nn.RNNBase on the meta device (LSTM's base class, not LSTM)",
            {"4.3": A.RNNBASE_COUNT},
            ["4.3"],
        ),
    ]
    for student, intent, replace, attacked in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace))


def lesson05():
    L = "05"
    subs = [
        (
            "sdpa_cia_decode",
            "5.2 attention by _scaled_dot_product_attention_math's CompositeImplicitAutograd kernel",
            {"5.2": A.SDPA_CIA_DECODE},
            ["5.2"],
        ),
        (
            "own_score_step",
            "5.2 by the handed-in model's own step after giving it a dot score of mine",
            {"5.2": A.STEP_WITH_OWN_SCORE},
            ["5.2"],
        ),
        (
            "einsum_additive",
            "5.1 honest but clever: einsum notation (own code; deserves everything)",
            {"5.1": A.EINSUM_ADDITIVE},
            [],
        ),
        (
            "course_additive",
            "5.1 by course_lib.seq2seq.AdditiveScore imported by importlib with a built name",
            {"5.1": A.COURSE_ADDITIVE},
            ["5.1"],
        ),
    ]
    for student, intent, replace, attacked in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace))


def lesson06():
    L = "06"
    # the three honest controls
    submit(
        L,
        "control_full",
        L,
        "control: every exercise solved (full marks)",
        set(EXERCISES[L]),
        notebook(L),
        kind="control",
    )
    submit(
        L,
        "control_untouched",
        L,
        "control: the released notebook untouched (0)",
        set(),
        notebook(L, solved=set()),
        kind="control",
    )
    submit(
        L,
        "control_half",
        L,
        "control: 6.1 and 6.2 solved, 6.3 and 6.4 not (half)",
        {"6.1", "6.2"},
        notebook(L, solved={"6.1", "6.2"}),
        kind="control",
    )
    sols = _solutions(L)
    added = "\n".join(sols[g] for g in ("ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4"))
    submit(
        L,
        "added_cells",
        L,
        "untouched answers; the solutions in added cells without metadata, and a cell that "
        "records forged results in the kernel",
        set(),
        notebook(L, solved=set(), extra=[(added, {}), (A.FORGE_KERNEL_CELL, {})]),
    )
    subs = [
        (
            "leak_env",
            "6.3 raises with every HOSTILE33L it finds (/proc/*/environ, cmdline, os.environ) and "
            "solutions/ it can read; an extra cell does the same in the kernel",
            {"6.3": A.LEAK_MASKED},
            ["6.3"],
            [(A.LEAK_CELL, {})],
        ),
        (
            "forge_pipe",
            "6.3 writes forged reply lines on fds 0-11, then is the stub",
            {"6.3": A.FORGE_PIPE},
            ["6.3"],
            [],
        ),
        (
            "sdpa_cia_masked",
            "6.3 by _scaled_dot_product_attention_math's CompositeImplicitAutograd kernel (mask built by me)",
            {"6.3": A.SDPA_CIA_MASKED},
            ["6.3"],
            [],
        ),
        ("masked_tensor", "6.3 by torch.masked.MaskedTensor's softmax", {"6.3": A.MASKED_TENSOR}, ["6.3"], []),
        (
            "safe_softmax_cia",
            "6.3: the masked softmax (a row with no key gives 0) by torch's _safe_softmax, barred, run "
            "by its CompositeExplicitAutograd kernel via _op_dk from C (the masks mine)",
            {"6.3": A.SAFE_SOFTMAX_MASKED},
            ["6.3"],
            [],
        ),
        (
            "dict_subclass",
            "6.2 returns a dict subclass whose __eq__/__getitem__ lie",
            {"6.2": A.DICT_SUBCLASS},
            ["6.2"],
            [],
        ),
        ("nan_alpha", "6.1 returns NaN (a comparison that lies?)", {"6.1": A.NAN_ALPHA}, ["6.1"], []),
    ]
    for student, intent, replace, attacked, extra in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace, extra=extra))


def lesson07():
    L = "07"
    subs = [
        (
            "sdpa_via_map_head",
            "7.3 (and so 7.4, 7.6, 7.7 built on it) by F.scaled_dot_product_attention called from C (map)",
            {"7.3": A.MHA_FORWARD_HEAD},
            ["7.3", "7.4", "7.6", "7.7"],
        ),
        (
            "sdpa_cia_head",
            "7.3 by _scaled_dot_product_attention_math's CompositeImplicitAutograd kernel",
            {"7.3": A.SDPA_CIA_HEAD},
            ["7.3", "7.4", "7.6", "7.7"],
        ),
        (
            "sdpa_mode_head",
            "7.3 (and 7.4, 7.6, 7.7 built on it) by torch's whole attention: the math kernel of "
            "scaled_dot_product_attention by its CompositeImplicitAutograd kernel, below autograd, with a dispatch mode "
            "that sends its barred _safe_softmax to that op's CompositeExplicitAutograd kernel",
            {"7.3": A.SDPA_MODE_HEAD},
            ["7.3", "7.4", "7.6", "7.7"],
        ),
        (
            "zero_head",
            "7.3: W^V zeroed in __init__, forward returns zeros (a reference from those weights is 0)",
            {"7.3": A.ZERO_HEAD},
            ["7.3", "7.4", "7.6", "7.7"],
        ),
        ("topk_course", "7.9 by course_lib.lm reached through sys.modules", {"7.9": A.SAMPLE_NEXT_TOPK}, ["7.9"]),
        (
            "posenc_map",
            "7.1 by course_lib.transformer.sinusoidal_positions via importlib and map",
            {"7.1": A.POSENC_PARTIAL},
            ["7.1"],
        ),
        (
            "unflatten_split",
            "7.2 honest but clever: unflatten + movedim (own code; deserves everything)",
            {"7.2": A.UNFLATTEN_SPLIT},
            [],
        ),
    ]
    for student, intent, replace, attacked in subs:
        submit(L, student, L, intent, others(L, *attacked), notebook(L, replace=replace))


def wave2():
    """Written after the first grading (its own folders, graded once): the routes the first wave found refused, by
    another way."""
    L = "07"
    submit(
        "07w2",
        "sdpa_push_head",
        L,
        "7.3 (and 7.4, 7.6, 7.7) by torch's whole attention (SDPA's math kernel by its "
        "CompositeImplicitAutograd kernel, below autograd) with a plain dispatch-mode object pushed from C that "
        "sends the barred _safe_softmax to its CompositeExplicitAutograd kernel",
        others(L, "7.3", "7.4", "7.6", "7.7"),
        notebook(L, replace={"7.3": A.SDPA_PUSH_HEAD}),
    )
    submit(
        "07w3",
        "sdpa_push_head_c",
        L,
        "as sdpa_push_head, the mode running every op from C (starmap) by its Composite kernel where it has one",
        others(L, "7.3", "7.4", "7.6", "7.7"),
        notebook(L, replace={"7.3": A.SDPA_PUSH_HEAD_C}),
    )
    submit(
        "02w3",
        "fwdad_bptt_loop",
        "02",
        "2.5 (the 5-point build): each step's gradients by forward-mode autograd "
        "(_make_dual by its Autograd alias kernel via _op_dk from C), the loop mine",
        others("02", "2.5"),
        notebook("02", replace={"2.5": A.FWDAD_BPTT_LOOP}),
    )
    L = "02"
    submit(
        "02w2",
        "sympy_lazy_jacobian",
        L,
        "2.1 by sympy's jacobian, sympy imported at call time by importlib",
        others(L, "2.1"),
        notebook(L, replace={"2.1": A.SYMPY_LAZY_JACOBIAN}),
    )


def rows_nbgrader():
    """nbgrader's layout for lesson 06 (pass submitted/): several assignments, odd names, links, a FIFO."""
    L, base = "06", CLASS / "nbg06" / "submitted"
    nbname = f"{LESSONS[L]}.ipynb"
    full = notebook(L)
    one = lambda s, rel, intent, deserves, **kw: submit(
        "nbg06",
        s,
        L,
        intent,
        deserves,
        full,
        kind="rows",  # noqa
        path=base / s / rel,
        **kw,
    )
    one(
        "alice",
        f"ps06/{nbname}",
        "nbgrader: two assignments (ps01 holds lesson 01's notebook): 06 graded",
        set(L and EXERCISES[L]),
    )
    lesson01 = copy.deepcopy(_load("exercises", "02"))  # another lesson's notebook in another assignment
    (base / "alice" / "ps01").mkdir(parents=True, exist_ok=True)
    json.dump(lesson01, open(base / "alice" / "ps01" / "01_ngrams.ipynb", "w"))
    one("carol", nbname, "nbgrader: <student>/<notebook>.ipynb directly", set(EXERCISES[L]))
    one(
        "Dave", f"ps06/{nbname}", "nbgrader: Dave and dave (case only): two rows, two feedback files", set(EXERCISES[L])
    )
    one("dave", f"ps06/{nbname}", "nbgrader: dave (see Dave)", set(EXERCISES[L]))
    one("con", f"ps06/{nbname}", "nbgrader: a name Windows reserves", set(EXERCISES[L]))
    one("eve", f"ps06/{nbname}", "nbgrader: the notebook plus Jupyter's autosave beside it", set(EXERCISES[L]))
    (base / "eve" / "ps06" / ".ipynb_checkpoints").mkdir(parents=True, exist_ok=True)
    json.dump(
        notebook(L, solved=set()),
        open(base / "eve" / "ps06" / ".ipynb_checkpoints" / f"{LESSONS[L]}-checkpoint.ipynb", "w"),
    )
    one("x\ny", f"ps06/{nbname}", "nbgrader: a line break in the student's name", set(EXERCISES[L]))
    one("-=cmd", f"ps06/{nbname}", "nbgrader: a name that starts like a spreadsheet formula", set(EXERCISES[L]))
    one(
        "'-=cmd",
        f"ps06/{nbname}",
        "nbgrader: the CSV's escaped form of -=cmd as a name (two rows, one name?)",
        set(EXERCISES[L]),
    )
    # frank: the assignment folder is a link to alice's (not followed: a row saying so, no grade of alice's work)
    (base / "frank").mkdir(parents=True, exist_ok=True)
    os.symlink(base / "alice" / "ps06", base / "frank" / "ps06")
    submit(
        "nbg06",
        "frank",
        L,
        "nbgrader: frank's assignment folder is a link to alice's (row, not graded)",
        set(),
        None,
        kind="rows",
        path=base / "frank",
    )
    # gina: the notebook is a FIFO (a row saying so; the grader must not hang)
    (base / "gina" / "ps06").mkdir(parents=True, exist_ok=True)
    os.mkfifo(base / "gina" / "ps06" / nbname)
    submit(
        "nbg06",
        "gina",
        L,
        "nbgrader: the notebook is a FIFO (row, not graded, no hang)",
        set(),
        None,
        kind="rows",
        path=base / "gina" / "ps06" / nbname,
    )
    # hank: the same notebook in two assignments named alike (two notebooks named as the release)
    for a in ("ps06", "ps06-resubmit"):
        (base / "hank" / a).mkdir(parents=True, exist_ok=True)
        json.dump(full, open(base / "hank" / a / nbname, "w"))
    submit(
        "nbg06",
        "hank",
        L,
        "nbgrader: two notebooks named as the release (one row saying why)",
        set(),
        None,
        kind="rows",
        path=base / "hank",
    )
    long = "l" * 200 + "\u00e9" * 20
    one(long, f"ps06/{nbname}", "nbgrader: a 240-byte non-ASCII name", set(EXERCISES[L]))


def rows_resume():
    """A run interrupted after its first row, then resumed (the same call): two names whose CSV cells are alike."""
    L = "06"
    full = notebook(L, solved={"6.1", "6.2"})
    for s in ("'-=x", "-=x"):  # sorted: '-=x is graded first
        submit(
            "resume06",
            s,
            L,
            "resume: graded first, then the run is interrupted"
            if s.startswith("'")
            else "resume: its CSV cell ('-=x) equals the other's name: skipped on resume?",
            {"6.1", "6.2"},
            full,
            kind="rows",
        )


def flat_checkpoints():
    """Jupyter's autosave folder in a flat class folder (the instructor opened a notebook): not a student."""
    p = CLASS / "06" / ".ipynb_checkpoints" / "control_full-checkpoint.ipynb"
    p.parent.mkdir(parents=True, exist_ok=True)
    json.dump(notebook("06"), open(p, "w"))
    submit(
        "06",
        ".ipynb_checkpoints",
        "06",
        "flat: Jupyter's .ipynb_checkpoints folder beside the notebooks (no student: no row expected)",
        set(),
        None,
        kind="rows",
        path=p.parent,
        expect_rows=0,
    )


def rows_dos():
    """Names that make the grader refuse the whole folder: no row for anyone."""
    L = "06"
    nbname = f"{LESSONS[L]}.ipynb"
    full = notebook(L)
    base = CLASS / "dos_nbg06" / "submitted"
    for s in ("ivy", "submitted"):
        submit(
            "dos_nbg06",
            s,
            L,
            "nbgrader: a student whose user name is 'submitted' (and ivy beside)"
            if s == "submitted"
            else "nbgrader: an honest student beside one named 'submitted'",
            set(EXERCISES[L]),
            full,
            kind="rows",
            path=base / s / "ps06" / nbname,
        )
    flat = CLASS / "dos_flat06"
    submit(
        "dos_flat06",
        "jack",
        L,
        "flat: an honest student beside a link named 'submitted' in the folder",
        set(EXERCISES[L]),
        full,
        kind="rows",
        path=flat / "jack.ipynb",
    )
    (OUT / "elsewhere").mkdir(parents=True, exist_ok=True)  # a folder of mine, empty
    os.symlink(OUT / "elsewhere", flat / "submitted")
    submit(
        "dos_flat06",
        "submitted",
        L,
        "flat: a symbolic link named 'submitted' (to a folder) handed in",
        set(),
        None,
        kind="rows",
        path=flat / "submitted",
        expect_rows=1,
    )


PLANTED = [
    "json",
    "sitecustomize",
    "usercustomize",
    "secrets",
    "nbclient",
    "nbformat",
    "csv",
    "typing",
    "enum",
    "subprocess",
    "torch",
    "numpy",
    "course_lib",
    "jupyter_client",
    "dask",
    "distributed",
    "pathlib",
    "shutil",
    "tempfile",
    "hashlib",
    "zmq",
    "traitlets",
    "ipykernel",
    "sympy",
    "bwrap",
]


def planted():
    """The folder the grader is started in (and every class folder): modules that leave a marker if imported."""
    markers = OUT / "markers"
    markers.mkdir(parents=True, exist_ok=True)
    cwd = OUT / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    for folder in [cwd]:
        for name in PLANTED:
            (folder / f"{name}.py").write_text(
                f"import os as _o\nopen('{markers}/{name}-' + str(_o.getpid()), 'w').write(repr(__file__))\n"
            )
    (cwd / "exercises").mkdir(exist_ok=True)
    (cwd / "bwrap").write_text("#!/bin/sh\ntouch " + str(markers) + '/bwrap-exec\nexec /usr/bin/bwrap "$@"\n')
    (cwd / "bwrap").chmod(0o755)


def main():
    for old in (CLASS, OUT / "cwd", OUT / "elsewhere"):  # results and markers stay
        if old.exists():
            shutil.rmtree(old)
    CLASS.mkdir(parents=True)
    lesson02()
    lesson03()
    lesson04()
    lesson05()
    lesson06()
    lesson07()
    rows_nbgrader()
    rows_dos()
    rows_resume()
    flat_checkpoints()
    wave2()
    planted()
    for folder in ("02", "03", "04", "05", "06", "07"):  # modules planted beside the notebooks too
        (CLASS / folder / "json.py").write_text(
            f"open('{OUT}/markers/classfolder-json-' + __import__('os').getpid().__str__(), 'w')\n"
        )
    with open(CLASS / "manifest.json", "w", encoding="utf-8") as f:
        json.dump(MANIFEST, f, indent=1)
    print(f"{len(MANIFEST)} entries in {CLASS / 'manifest.json'}")


if __name__ == "__main__":
    main()
