"""Count stalls of plain headless executors: run notebooks many times with nbclient (no watchdog), alone or
beside a CPU load, and report every wait between two cells longer than --gap seconds.

    python scripts/headless_stall.py --runs 20 --load 2 notebooks/06_masked_attention.ipynb
    python scripts/headless_stall.py --runs 20 --load 2 scripts/upstream/output_widget_stall.ipynb
    python scripts/headless_stall.py --executor nbconvert --runs 5 notebooks/01_ngrams.ipynb

A stall (issue 31; scripts/upstream/README.md): the kernel has sent a cell's reply, but the client does not
read it until its per-cell timeout runs out, then goes on as if nothing happened. It shows as idle time
between one cell's reply and the next cell's start, both stamped by the kernel (nbclient's record_timing
metadata), so it is measured whatever the cell computes. The client's timeout is --timeout (a stall costs
exactly that). --kernel-path DIR puts DIR first on the kernel's PYTHONPATH to try another ipykernel:
`pip install --no-deps --target DIR ipykernel==7.4.0`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path


def spin(stop_at: float, niceness: int = 0) -> None:
    """Keep one core busy until ``stop_at``; with ``niceness`` 19 only where nothing else wants the core."""
    os.nice(niceness)
    while time.monotonic() < stop_at:
        pass


def spinning(n: int, niceness: int = 0, seconds: float = 900) -> list:
    """``n`` started processes that each spin on a core for ``seconds`` (terminate them when done)."""
    stop_at = time.monotonic() + seconds
    load = [multiprocessing.Process(target=spin, args=(stop_at, niceness), daemon=True) for _ in range(n)]
    for p in load:
        p.start()
    return load


def _stamp(value) -> float:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def idle_gaps(nb) -> list[tuple[int, float]]:
    """(cell index, seconds) between each code cell's reply and the next code cell's start, kernel-stamped."""
    gaps, previous, reply = [], None, 0.0
    for index, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or "iopub.execute_input" not in timing:
            continue
        if previous is not None:
            gaps.append((previous, _stamp(timing["iopub.execute_input"]) - reply))
        previous, reply = index, _stamp(timing["shell.execute_reply"])
    return gaps


def run_nbclient(path: Path, timeout: float) -> tuple[float, list[tuple[int, float]], str]:
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    start = time.monotonic()
    failed = ""
    try:
        nbclient.NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    except Exception as error:  # counted, and the next run goes on
        failed = f"{type(error).__name__}: {str(error)[:160]}"
    return time.monotonic() - start, idle_gaps(nb), failed


def run_nbconvert(path: Path, timeout: float) -> tuple[float, list[tuple[int, float]], str]:
    import nbformat

    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", str(path)]
        command += [f"--ExecutePreprocessor.timeout={int(timeout)}", "--output-dir", out, "--log-level=ERROR"]
        done = subprocess.run(command, cwd=path.parent, capture_output=True, text=True)
        seconds = time.monotonic() - start
        failed = "" if done.returncode == 0 else done.stderr.strip().splitlines()[-1][:160]
        written = Path(out) / path.name
        gaps = idle_gaps(nbformat.read(written, as_version=4)) if written.exists() else []
    return seconds, gaps, failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=2, help="processes spinning on the CPU beside each run")
    parser.add_argument("--timeout", type=float, default=120.0, help="the client's per-cell timeout")
    parser.add_argument("--gap", type=float, default=30.0, help="an idle wait longer than this is a stall")
    parser.add_argument("--executor", choices=("nbclient", "nbconvert"), default="nbclient")
    parser.add_argument("--kernel-path", type=Path, help="put this folder first on the kernel's PYTHONPATH")
    parser.add_argument("--json", type=Path, help="also write every run as JSON here")
    args = parser.parse_args(argv)
    if args.kernel_path:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.kernel_path), os.environ.get("PYTHONPATH")]))
    run = run_nbclient if args.executor == "nbclient" else run_nbconvert

    print(f"{args.executor}, per-cell timeout {args.timeout:.0f} s, {args.load} spinning processes beside each run")
    records = []
    for path in args.notebooks:
        for i in range(args.runs):
            load = spinning(args.load, seconds=3600)
            try:
                seconds, gaps, failed = run(path.resolve(), args.timeout)
            finally:
                for p in load:
                    p.terminate()
            stalls = [(cell, round(gap, 1)) for cell, gap in gaps if gap > args.gap]
            longest = max((gap for _, gap in gaps), default=0.0)
            records.append({"notebook": str(path), "seconds": seconds, "stalls": stalls, "failed": failed})
            print(
                f"  {path.name} run {i + 1:2d}: {seconds:6.1f} s, longest wait between cells {longest:5.1f} s, "
                f"stalls {stalls}" + (f", FAILED {failed}" if failed else ""),
                flush=True,
            )
    print("\nnotebook  runs  runs with a stall  median s  max s")
    for path in args.notebooks:
        rows = [r for r in records if r["notebook"] == str(path)]
        seconds = [r["seconds"] for r in rows]
        print(
            f"{path.name}  {len(rows)}  {sum(bool(r['stalls']) for r in rows)}  "
            f"{statistics.median(seconds):.1f}  {max(seconds):.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
