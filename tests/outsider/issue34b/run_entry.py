"""Run one entry the way a student would: in a Jupyter kernel, the exercises notebook's setup cell, the
student's earlier answers (the right ones), the entry's answer cell, then the check cell once per seed.

Usage: python run_entry.py ENTRIES_JSON OUT_JSONL   (a list of {"id", "exercise", "kind", "code"}, one exercise)
Prints nothing; appends one JSON line per draw to OUT_JSONL.
"""

import json
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).parent))
from right import RIGHT  # noqa: E402

NOTEBOOKS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
SEEDS = (11, 22, 33, 44, 55)
# non-answer cells a student has run before an exercise that its check cell needs (definitions only, fast)
EXTRA_CELLS = {"4.5": [15]}
MARK = "@@RESULT@@"


def grade_id_to_ex(gid):
    return gid[len("ex-") :].replace("-", ".")


def build(entries):
    """One notebook for a group of entries of one exercise: each entry's cell, then its check cell per seed."""
    exercise = entries[0]["exercise"]
    lesson = exercise.split(".")[0].zfill(2)
    nb = nbformat.read(ROOT / "exercises" / f"{NOTEBOOKS[lesson]}.ipynb", as_version=4)
    cells = [nbformat.v4.new_code_cell(nb.cells[1].source)]  # the setup cell
    check_src = None
    for k, cell in enumerate(nb.cells):
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if k in EXTRA_CELLS.get(exercise, []):
            cells.append(nbformat.v4.new_code_cell(cell.source))
        if cell.cell_type != "code" or not gid.startswith("ex-"):
            continue
        ex = grade_id_to_ex(gid)
        if ex == exercise:
            check_src = nb.cells[k + 1].source
            break
        cells.append(nbformat.v4.new_code_cell(RIGHT[ex]))
    var = re.match(r"(\w+) = checks\.", check_src).group(1)
    layout = []  # (entry, index of its cell, [(seed, check cell index, report cell index)])
    for entry in entries:
        cells.append(nbformat.v4.new_code_cell(entry["code"]))
        where = (entry, len(cells) - 1, [])
        for seed in SEEDS:
            cells.append(nbformat.v4.new_code_cell(f"{var} = None\ncourse_lib.setup(seed={seed})"))
            cells.append(nbformat.v4.new_code_cell(check_src))
            cells.append(
                nbformat.v4.new_code_cell(
                    "import json as _json\n"
                    f"_r = {var}\n"
                    f"print({MARK!r} + _json.dumps({{'seed': {seed}, 'status': None if _r is None else _r.status, "
                    "'passed': None if _r is None else bool(_r.passed), 'message': None if _r is None else _r.message}))"
                )
            )
            where[2].append((seed, len(cells) - 2, len(cells) - 1))
        layout.append(where)
    nb2 = nbformat.v4.new_notebook(cells=cells)
    nb2.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb2, layout


def text_of(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}")
        elif "data" in o and "text/plain" in o.data:
            out.append(o.data["text/plain"])
    return "".join(out).strip()


def main(entries_path, out_path):
    entries = json.loads(Path(entries_path).read_text())
    nb, layout = build(entries)
    t0 = time.time()
    client = NotebookClient(
        nb, timeout=300, allow_errors=True, kernel_name="python3", resources={"metadata": {"path": "/tmp"}}
    )
    error = None
    try:
        client.execute()
    except Exception as err:  # a dead kernel or a cell past its timeout
        error = f"{type(err).__name__}: {err}"[:500]
    lines = []
    for entry, entry_index, draws in layout:
        for d, (seed, check_index, report_index) in enumerate(draws):
            rec = {"seed": seed, "status": None, "passed": None, "message": None}
            for line in text_of(nb.cells[report_index]).splitlines():
                if line.startswith(MARK):
                    rec = json.loads(line[len(MARK) :])
            rec.update(
                id=entry["id"],
                exercise=entry["exercise"],
                kind=entry["kind"],
                draw=d,
                check_output=text_of(nb.cells[check_index])[-1500:],
                entry_output=text_of(nb.cells[entry_index])[-500:],
                runner_error=error,
                group_seconds=round(time.time() - t0, 1),
            )
            lines.append(json.dumps(rec))
    with open(out_path, "a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
