"""Lesson 04's run time, and what one of its trainings costs on the course's cells vs torch's fused modules (issue 32).

    .venv/bin/python benchmarks/bench_lesson04.py training [--repeats 3]   # one section-4 training, both ways
    .venv/bin/python benchmarks/bench_lesson04.py lesson [--notebook X]    # the lesson under nbclient, by section

``training``: the lesson's recipe (hidden 16, Adam, 250 steps of 32 sequences, clipping at 1, one torch thread) at
T = 40 for the LSTM, the GRU and the Elman network, on the course's cells (``SequenceClassifier(kind)``) and on
torch's fused module (``SequenceClassifier(kind, fused=True)``), interleaved, median wall and CPU
(``time.process_time``) seconds of ``--repeats`` runs; the ratio is against the peer in the same run.
``lesson``: executes notebooks/04_lstm_gru.ipynb (or ``--notebook``, e.g. an older version from ``git show``, run
from notebooks/ all the same) once with a plain nbclient; an IPython hook in the kernel
records each cell's wall and CPU time, summed per section (## headings). The machine is shared: compare columns
of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HOOK = """
import time as _t, json as _j
_cell_times = []
def _pre(info):
    global _start
    _start = (_t.perf_counter(), _t.process_time())
def _post(result):
    _cell_times.append((_t.perf_counter() - _start[0], _t.process_time() - _start[1]))
get_ipython().events.register("pre_run_cell", _pre)
get_ipython().events.register("post_run_cell", _post)
"""


def time_training(kind: str, fused: bool, T: int = 40) -> tuple[float, float]:
    import torch
    import torch.nn.functional as F

    from course_lib import memory
    from course_lib.rnn import SequenceClassifier
    from course_lib.train import fit, make_batches

    torch.manual_seed(0)
    X, y = memory.first_symbol_task(250 * 32, T, seed=T)
    model = SequenceClassifier(kind, n_symbols=8, hidden_size=16, n_classes=4, fused=fused)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    wall, cpu = time.perf_counter(), time.process_time()
    fit(
        model,
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        optimizer,
        make_batches(X, y, batch_size=32),
        max_steps=250,
        clip_grad_norm=1.0,
        progress=False,
    )
    return time.perf_counter() - wall, time.process_time() - cpu


def training(repeats: int) -> None:
    import torch

    torch.set_num_threads(1)
    print("| network (T = 40, 250 steps) | cells: wall s | cells: CPU s | fused: wall s | fused: CPU s | CPU ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind in ("lstm", "gru", "elman"):
        times = {False: [], True: []}
        for r in range(repeats):
            for fused in (False, True) if r % 2 == 0 else (True, False):  # take turns
                times[fused].append(time_training(kind, fused))
        med = {f: [statistics.median(t[i] for t in times[f]) for i in (0, 1)] for f in times}
        print(
            f"| {kind} | {med[False][0]:.2f} | {med[False][1]:.2f} | {med[True][0]:.2f} | {med[True][1]:.2f} "
            f"| **x{med[False][1] / med[True][1]:.1f}** |"
        )


def lesson(path: Path) -> None:
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    section, sections = "preamble", {}
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown":
            m = re.search(r"^## (\d+\.|What to try|Closing)", c.source, re.M)
            if m:
                section = m.group(1).rstrip(".")
        else:
            sections[i] = section
    nb.cells.insert(0, nbformat.v4.new_code_cell(HOOK))
    nb.cells.append(nbformat.v4.new_code_cell("print(_j.dumps(_cell_times))"))
    wall = time.perf_counter()
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    wall = time.perf_counter() - wall
    per_cell = json.loads(nb.cells[-1].outputs[0]["text"])  # the hook cell itself is not recorded (no pre-run)
    assert len(per_cell) == len(code), (len(per_cell), len(code))  # the printing cell records itself after it prints
    totals: dict[str, list[float]] = {}
    for i, (w, c) in zip(code, per_cell):
        t = totals.setdefault(sections[i], [0.0, 0.0])
        t[0] += w
        t[1] += c
    kernel_wall, kernel_cpu = sum(t[0] for t in totals.values()), sum(t[1] for t in totals.values())
    print(
        f"lesson 04: nbclient wall {wall:.1f} s (kernel start included); "
        f"cells: wall {kernel_wall:.1f} s, CPU {kernel_cpu:.1f} s"
    )
    print("| section | wall s | CPU s | share of CPU |")
    print("| --- | --- | --- | --- |")
    for name, (w, c) in totals.items():
        print(f"| {name} | {w:.1f} | {c:.1f} | {100 * c / kernel_cpu:.0f}% |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("training", "lesson"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--notebook", type=Path, default=ROOT / "notebooks" / "04_lstm_gru.ipynb")
    args = parser.parse_args()
    training(args.repeats) if args.what == "training" else lesson(args.notebook)
