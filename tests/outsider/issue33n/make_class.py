"""Hostile class 33n: writes the class into /tmp/hostile33n/class/ (one folder per lesson, <lesson>/<student>.ipynb,
plus nbgrader-layout and odd-name folders) and manifest.json (each submission's lesson, intent, and the exercises
it DESERVES to pass). Usage: python make_class.py [OUT]"""

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
from attacks_src import A  # noqa: E402

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33n/class")
NAMES = {
    "02": "02_backprop",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
EXPECTED = {
    "02": ["2.1", "2.2", "2.3", "2.4", "2.5"],
    "04": ["4.1", "4.2", "4.3", "4.4", "4.5"],
    "05": ["5.1", "5.2", "5.3"],
    "06": ["6.1", "6.2", "6.3", "6.4"],
    "07": ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"],
}


DEPENDS = {"7.3": ("7.4", "7.6", "7.7"), "7.4": ("7.6", "7.7"), "7.5": ("7.6", "7.7"), "7.6": ("7.7",)}


def gid_of(cell):
    nbg = (cell.get("metadata") or {}).get("nbgrader") or {}
    return nbg.get("grade_id") or ""


def exercise_of(gid):
    parts = gid.split("-")
    return f"{int(parts[1])}.{int(parts[2])}" if len(parts) >= 3 and parts[0] == "ex" else None


def load(folder, lesson):
    return json.loads((ROOT / folder / f"{NAMES[lesson]}.ipynb").read_text())


def solution_sources(lesson):
    sol = load("solutions", lesson)
    return {
        gid_of(c): "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in sol["cells"]
        if c["cell_type"] == "code" and gid_of(c).startswith("ex-")
    }


def notebook(lesson, *, solve=None, replace=None, strip=True, extra_cells=()):
    """The released exercise notebook with the solutions' answers in the answer cells of ``solve`` (all by default),
    the ``replace`` sources (grade id -> source) in theirs; ``strip``: the code cells that are neither the setup cell,
    an answer cell nor a check cell are dropped (training and experiments: the grade never reads them, and they
    cost minutes of CPU on a shared machine)."""
    nb = load("exercises", lesson)
    sols = solution_sources(lesson)
    solve = EXPECTED[lesson] if solve is None else solve
    replace = replace or {}
    cells, first_code = [], True
    for cell in nb["cells"]:
        cell = copy.deepcopy(cell)
        gid = gid_of(cell)
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            if gid.startswith("ex-"):
                if gid in replace:
                    cell["source"] = replace[gid]
                elif exercise_of(gid) in solve and gid in sols:
                    cell["source"] = sols[gid]
            elif strip and not first_code and not gid.startswith("check-"):
                continue
            first_code = False
        cells.append(cell)
    cells += list(extra_cells)
    nb["cells"] = cells
    return nb


def write(path: Path, nb):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))


def code_cell(source, metadata=None):
    import hashlib

    cid = hashlib.sha1((source + json.dumps(metadata or {})).encode()).hexdigest()[:12]
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cid,
        "metadata": metadata or {},
        "outputs": [],
        "source": source,
    }


# ------------------------------------------------------------------ the attacks: (lesson, student, grade id, key,
# intent, deserves-the-attacked-exercise)
ATTACKS = [
    (
        "02",
        "a02_later_engine_ninja",
        "ex-2-2",
        "ex-2-2 later engine",
        "2.2: placeholders returned; a torch function mode left on fills them with autograd's gradients (engine by map, "
        "no *backward* op) once the check's observer and graph clock are gone",
        False,
    ),
    (
        "02",
        "a02_engine_in_call",
        "ex-2-2",
        "ex-2-2 engine in call",
        "2.2: autograd's engine by map and recording switched on by map, inside the call (the graph clock's case)",
        False,
    ),
    (
        "02",
        "a02_later_engine_jacobian",
        "ex-2-1",
        "ex-2-1 later engine",
        "2.1: the Jacobian placeholder filled later by autograd's engine, row by row",
        False,
    ),
    (
        "02",
        "a02_complex_step_honest",
        "ex-2-1",
        "ex-2-1 complex step",
        "2.1 HONEST (policy: numerical gradients are the student's arithmetic): the complex step, exact to rounding",
        True,
    ),
    (
        "02",
        "a02_later_decomp_bptt_step",
        "ex-2-4",
        "ex-2-4 later decomp",
        "2.4: placeholders filled later with torch._decomp's tanh_backward (refused 'whoever calls')",
        False,
    ),
    (
        "02",
        "a02_later_engine_bptt_loop",
        "ex-2-5",
        "ex-2-5 later engine",
        "2.5: BPTT by autograd's engine on a surrogate graph, run later by a left-on function mode",
        False,
    ),
    (
        "04",
        "a04_rnnbase_count",
        "ex-4-3",
        "ex-4-3 rnnbase",
        "4.3: torch's RNNBase.__init__ (inherited by nn.LSTM/GRU, so not their own code) run on an nn.Module stand-in "
        "put before Module in the MRO: torch counts the parameters",
        False,
    ),
    (
        "04",
        "a04_cellbase_count",
        "ex-4-3",
        "ex-4-3 cellbase",
        "4.3: torch's RNNCellBase.__init__ (nn.LSTMCell's base, not forbidden) layer by layer on a Module stand-in",
        False,
    ),
    (
        "04",
        "a04_meta_lstm_count",
        "ex-4-3",
        "ex-4-3 meta lstm",
        "4.3: nn.LSTM/nn.GRU on the meta device, counted (the plain borrow)",
        False,
    ),
    (
        "04",
        "a04_later_decomp_gru",
        "ex-4-2",
        "ex-4-2 later decomp",
        "4.2: placeholder filled later by torch._decomp's gru_cell_data (a GRU step in Python)",
        False,
    ),
    (
        "04",
        "a04_later_vf_gru",
        "ex-4-2",
        "ex-4-2 later VF",
        "4.2: placeholder filled later by torch._VF.gru_cell (the fused kernel, after the observer)",
        False,
    ),
    (
        "04",
        "a04_honest_lerp_gru",
        "ex-4-2",
        "ex-4-2 honest lerp",
        "4.2 HONEST: addmm, one sigmoid for r and z, lerp for the mix",
        True,
    ),
    (
        "05",
        "a05_masked_softmax_decode",
        "ex-5-2",
        "ex-5-2 masked softmax",
        "5.2: torch.masked.softmax (fill and normalise in one call; course_lib's masked_softmax is forbidden here, and "
        "lesson 06 forbids torch's) for the padding",
        False,
    ),
    (
        "05",
        "a05_sparse_softmax_decode",
        "ex-5-2",
        "ex-5-2 sparse softmax",
        "5.2: torch.sparse.softmax over a sparse tensor of the real positions",
        False,
    ),
    (
        "05",
        "a05_mha_forward_decode",
        "ex-5-2",
        "ex-5-2 mha forward",
        "5.2: F.multi_head_attention_forward (one head, identity projections, need_weights=True: no fused kernel) "
        "computes c_i and alpha_i",
        False,
    ),
    ("05", "a05_einsum_honest", "ex-5-1", "ex-5-1 einsum honest", "5.1 HONEST: three einsums", True),
    (
        "05",
        "a05_later_course_additive",
        "ex-5-1",
        "ex-5-1 later course",
        "5.1: placeholder filled later by course_lib.seq2seq.AdditiveScore",
        False,
    ),
    (
        "06",
        "a06_masked_logsumexp",
        "ex-6-3",
        "ex-6-3 masked logsumexp",
        "6.3: own masks, but the normaliser by torch.masked.logsumexp (a masked softmax in two calls; arguable)",
        False,
    ),
    (
        "06",
        "a06_later_torch_masks",
        "ex-6-3",
        "ex-6-3 later torch masks",
        "6.3: placeholders filled later by torch's _generate_square_subsequent_mask and torch.masked.softmax "
        "(forbidden names, called after the stand-ins are put back)",
        False,
    ),
    (
        "06",
        "a06_leak_env",
        "ex-6-1",
        "ex-6-1 leak env",
        "6.1: no answer; the sandbox's environment, /proc and folders carried out in an exception message",
        False,
    ),
    (
        "07",
        "a07_mha_forward_head",
        "ex-7-3",
        "ex-7-3 mha forward",
        "7.3: F.multi_head_attention_forward (need_weights=True: its explicit bmm/softmax path)",
        False,
    ),
    (
        "07",
        "a07_later_sdpa_head",
        "ex-7-3",
        "ex-7-3 later sdpa",
        "7.3: placeholder from forward, filled later by F.scaled_dot_product_attention",
        False,
    ),
    (
        "07",
        "a07_masked_softmax_head_honest",
        "ex-7-3",
        "ex-7-3 masked softmax honest",
        "7.3 HONEST: own tril mask, torch.masked.softmax to normalise (7.x forbids ready-made attention only)",
        True,
    ),
    (
        "07",
        "a07_te_ff_block",
        "ex-7-5",
        "ex-7-5 te ff block",
        "7.5: torch's TransformerEncoderLayer._ff_block run on the module's own layers",
        False,
    ),
    (
        "07",
        "a07_honest_sort_topk",
        "ex-7-9",
        "ex-7-9 honest sort",
        "7.9 HONEST: sort, softmax of the first k, scatter",
        True,
    ),
    (
        "07",
        "a07_later_mha_module",
        "ex-7-4",
        "ex-7-4 later course mha",
        "7.4: placeholder filled later by torch's nn.MultiheadAttention with the heads' weights copied in",
        False,
    ),
    (
        "06",
        "a06_onnx_attention",
        "ex-6-3",
        "ex-6-3 onnx attention",
        "6.3: own masks; the masked softmax and weighted sum by torch.onnx.ops.attention (torch's ONNX Attention op, "
        "manual path: no fused kernel, op name not on the bar)",
        False,
    ),
    (
        "06",
        "a06_onnx_alpha",
        "ex-6-1",
        "ex-6-1 onnx attention",
        "6.1: torch.onnx.ops.attention(is_causal=True) weights: the masked softmax of the quiz in one call",
        False,
    ),
    (
        "07",
        "a07_onnx_head",
        "ex-7-3",
        "ex-7-3 onnx attention",
        "7.3: torch.onnx.ops.attention(is_causal=True) computes the head (torch's ready-made attention by another name)",
        False,
    ),
    (
        "07",
        "a07_onnx_mha",
        "ex-7-4",
        "ex-7-4 onnx attention",
        "7.4: torch.onnx.ops.attention with q_num_heads: splits, attends and merges every head at once",
        False,
    ),
    (
        "07",
        "a07_later_course_pe",
        "ex-7-1",
        "ex-7-1 later course",
        "7.1: placeholder filled later by course_lib.transformer.sinusoidal_positions",
        False,
    ),
]


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    manifest = []

    def add(folder, file, lesson, intent, deserves, *, kind="attack", student=None, rows=1):
        manifest.append(
            {
                "folder": folder,
                "file": file,
                "student": student or Path(file).stem,
                "lesson": lesson,
                "intent": intent,
                "deserves": deserves,
                "kind": kind,
                "rows": rows,
            }
        )

    # the attacks: the solutions everywhere, the attack in one answer cell
    for lesson, student, gid, key, intent, deserved in ATTACKS:
        attacked = exercise_of(gid)
        # an unsolved part makes the parts built on it fail too (7.4 uses Head, 7.6 MultiHeadAttention and FeedForward,
        # 7.7 Block): those are not deserved either when the part is not
        lost = set() if deserved else {attacked, *DEPENDS.get(attacked, ())}
        deserves = [e for e in EXPECTED[lesson] if e not in lost]
        write(OUT / lesson / f"{student}.ipynb", notebook(lesson, replace={gid: A[key]}))
        add(lesson, f"{student}.ipynb", lesson, intent, deserves)

    # the controls (lesson 06, unstripped: as handed in)
    write(OUT / "06" / "c06_full.ipynb", notebook("06", strip=False))
    add("06", "c06_full.ipynb", "06", "control: every exercise solved", EXPECTED["06"], kind="control")
    write(OUT / "06" / "c06_untouched.ipynb", notebook("06", solve=[], strip=False))
    add("06", "c06_untouched.ipynb", "06", "control: the released notebook untouched", [], kind="control")
    write(OUT / "06" / "c06_half.ipynb", notebook("06", solve=["6.2", "6.3"], strip=False))
    add(
        "06",
        "c06_half.ipynb",
        "06",
        "control: 6.2 and 6.3 solved (6 of 11 points), 6.1 and 6.4 stubs",
        ["6.2", "6.3"],
        kind="control",
    )

    # untouched notebooks with cells added
    sols = solution_sources("06")
    added = [code_cell(sols[g]) for g in ("ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4")]
    write(OUT / "06" / "a06_untouched_added_cells.ipynb", notebook("06", solve=[], extra_cells=added))
    add(
        "06",
        "a06_untouched_added_cells.ipynb",
        "06",
        "untouched answer cells; every solution in added plain cells (no nbgrader metadata)",
        [],
    )
    meta = {"nbgrader": {"grade_id": "ex-6-1", "solution": True, "grade": False, "locked": False, "schema_version": 3}}
    write(
        OUT / "06" / "a06_untouched_added_answer_meta.ipynb",
        notebook("06", solve=[], extra_cells=[code_cell(sols["ex-6-1"], meta)]),
    )
    add(
        "06",
        "a06_untouched_added_answer_meta.ipynb",
        "06",
        "untouched; 6.1's own answer written in an added cell carrying the answer id ex-6-1 (the student's code: "
        "deserved, a calibration of 'duplicated answer ids are loaded in order')",
        ["6.1"],
    )

    # ---------------------------------------------------------------- rows: odd names in the flat layout (06)
    untouched = notebook("06", solve=[], strip=True)
    flat = OUT / "06_rows"
    for name, why in [
        ("Bob", "case: Bob beside bob"),
        ("bob", "case: bob beside Bob"),
        ("=HYPERLINK(1)", "a spreadsheet formula as a name"),
        ("nl\nScore: 100", "a line break"),
        ("con", "a Windows reserved name"),
        ("carol", "carol.ipynb beside a folder carol/ (nbgrader)"),
    ]:
        write(flat / f"{name}.ipynb", untouched)
        add("06_rows", f"{name}.ipynb", "06", f"rows: {why}", [], kind="rows", student=name)
    write(flat / "bob2.IPYNB", untouched)  # pathlib stem 'bob2'
    add("06_rows", "bob2.IPYNB", "06", "rows: a notebook saved as .IPYNB", [], kind="rows", student="bob2")
    write(flat / "carol" / "ps6" / "06_masked_attention.ipynb", untouched)
    add(
        "06_rows",
        "carol/ps6/06_masked_attention.ipynb",
        "06",
        "rows: a folder carol/ beside carol.ipynb",
        [],
        kind="rows",
        student="carol",
    )
    write(flat / ".ipynb", untouched)
    add(
        "06_rows",
        ".ipynb",
        "06",
        "rows: a notebook with no name before .ipynb (a row saying so)",
        [],
        kind="rows",
        student=".ipynb",
    )
    raw = os.fsencode(str(flat)) + b"/bad\xff\xfe.ipynb"
    with open(raw, "w") as f:
        f.write(json.dumps(untouched))
    add(
        "06_rows",
        "bad\\xff\\xfe.ipynb",
        "06",
        "rows: a file name that is not UTF-8",
        [],
        kind="rows",
        student="bad\\xff\\xfe",
    )
    os.mkfifo(flat / "fifo.ipynb")
    add(
        "06_rows",
        "fifo.ipynb",
        "06",
        "rows: a FIFO named like a notebook (a row saying so, never opened)",
        [],
        kind="rows",
        student="fifo",
    )
    os.symlink("/etc/passwd", flat / "link.ipynb")
    add("06_rows", "link.ipynb", "06", "rows: a symbolic link named like a notebook", [], kind="rows", student="link")
    os.symlink("../06/c06_full.ipynb", flat / "copycat.ipynb")
    add(
        "06_rows",
        "copycat.ipynb",
        "06",
        "rows: a link to another student's (full marks) notebook: must not be graded",
        [],
        kind="rows",
        student="copycat",
    )

    # ---------------------------------------------------------------- rows: nbgrader's layout (06)
    sub = OUT / "06_nbgrader" / "submitted"
    full = notebook("06", strip=True)
    release = "06_masked_attention.ipynb"
    layout = [
        ("alice", "alice/ps6/" + release, full, EXPECTED["06"], "nbgrader: a plain full submission"),
        ("Alice", "Alice/ps6/" + release, untouched, [], "nbgrader: Alice beside alice (case)"),
        ("bob", "bob/ps6/" + release, untouched, [], "nbgrader: two assignments, the release's name picked"),
        (
            ".ipynb_checkpoints",
            ".ipynb_checkpoints/ps6/" + release,
            untouched,
            [],
            "nbgrader: a student named .ipynb_checkpoints (holds folders)",
        ),
        ("dave", "dave/06_MASKED_ATTENTION.IPYNB", untouched, [], "nbgrader: shallow, upper-case suffix"),
        (
            "eve",
            "eve/ps6/.ipynb_checkpoints/06_masked_attention-checkpoint.ipynb",
            full,
            [],
            "nbgrader: only Jupyter's autosave (full marks in it): a row, not graded",
        ),
        ("frank", "frank/ps6/a.ipynb", untouched, [], "nbgrader: two notebooks, neither the release's name"),
        ("submitted", "submitted/ps6/" + release, untouched, [], "nbgrader: a student named submitted"),
        ("hank", "hank/ps6/" + release, full, [], "nbgrader: the release's name twice (depth 1 and 2): not graded"),
        (
            "gina",
            "gina/ps6/" + release + "/" + release,
            full,
            [],
            "nbgrader: the notebook inside a folder named like the notebook (too deep): a row, not graded",
        ),
    ]
    for student, rel, nb, deserves, why in layout:
        write(sub / rel, nb)
        add("06_nbgrader/submitted", rel, "06", why, deserves, kind="rows", student=student)
    write(sub / "bob" / "ps7" / "07_transformer.ipynb", notebook("07", strip=True))
    write(sub / "frank" / "ps6" / "b.ipynb", untouched)
    write(sub / "hank" / release, full)

    # ---------------------------------------------------------------- rows: a flat folder that looks like a course
    fc = OUT / "06_flatcourse"
    write(fc / "alice.ipynb", full)
    add(
        "06_flatcourse",
        "alice.ipynb",
        "06",
        "rows: a flat-layout student (full marks)",
        EXPECTED["06"],
        kind="rows",
        student="alice",
    )
    write(fc / "bob.ipynb", untouched)
    add("06_flatcourse", "bob.ipynb", "06", "rows: a flat-layout student", [], kind="rows", student="bob")
    (fc / "gradebook.db").write_text("a stray upload named gradebook.db\n")
    write(fc / "submitted" / "ps6" / release, untouched)
    add(
        "06_flatcourse",
        "submitted/ps6/" + release,
        "06",
        "rows: a stray file gradebook.db plus a student folder named submitted (nbgrader layout) in a flat folder: "
        "must not make the grader read only submitted/",
        [],
        kind="rows",
        student="submitted",
    )

    # ---------------------------------------------------------------- wave 2 (small): torch.masked's reductions
    for student, gid, key, intent in [
        (
            "w06_masked_amax_sum",
            "ex-6-3",
            "ex-6-3 masked amax sum",
            "6.3 (wave 2): own masks; torch.masked.amax and torch.masked.sum do the masked softmax's reductions",
        ),
        (
            "w06_masked_logsumexp_alpha",
            "ex-6-1",
            "ex-6-1 masked logsumexp",
            "6.1 (wave 2): torch.masked.logsumexp over the causal mask, the masked log-softmax in two calls",
        ),
    ]:
        write(OUT / "06_wave2" / f"{student}.ipynb", notebook("06", replace={gid: A[key]}))
        add("06_wave2", f"{student}.ipynb", "06", intent, [e for e in EXPECTED["06"] if e != exercise_of(gid)])

    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} submissions in {OUT}")


if __name__ == "__main__":
    main()
