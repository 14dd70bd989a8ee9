"""Count kernel hangs: execute a notebook many times with nbclient, alone and beside a CPU load.

    python scripts/kernel_hang_repro.py                                   # a synthetic notebook, 20 runs each way
    python scripts/kernel_hang_repro.py --notebook notebooks/06_masked_attention.ipynb --runs 5
    python scripts/kernel_hang_repro.py --kernel-path /tmp/ipykernel7     # the kernel imports from there first

A hang is a cell whose kernel went quiet while the client waited for its reply (ipykernel issue 1554: the
request sits unread in the shell socket). Each run uses course_lib.instructor.watchdog's client, which
notices that after --stall-after seconds, wakes the kernel with a request on a fresh connection, and counts
it; a run whose kernel cannot be woken fails after --stall-timeout seconds. Without the watchdog such a cell
waits until the cell timeout. The default notebook is many short cells with output, which gives the race
many chances; --notebook runs a real lesson (in its folder, as a student would).

`--kernel-path DIR` puts DIR first on the kernel's PYTHONPATH, to measure another ipykernel without
changing the environment: `pip install --no-deps --target DIR ipykernel==7.4.0`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic(cells: int):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    sources = ["import ipykernel, sys\nprint('ipykernel', ipykernel.__version__)"]
    sources += [f"x = {i}\nprint(x, end='')\nx * 2" for i in range(cells)]
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def spin(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def nudger(info: dict, every: float, stop):
    """What jupyter_server does when a browser tab connects: a kernel_info_request on a short-lived connection
    that closes without waiting for the reply (the reply goes to a peer that is gone)."""
    from jupyter_client import BlockingKernelClient

    while not stop.wait(every):
        kc = BlockingKernelClient()
        kc.load_connection_info(info)
        kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
        kc.kernel_info()
        time.sleep(0.01)
        kc.stop_channels()


def one_run(make_notebook, path: str, stall_after: float, stall_timeout: float, nudge: float = 0.0) -> dict:
    import threading

    from course_lib.instructor import watchdog

    nb = make_notebook()
    start = time.monotonic()
    client = watchdog.client_class()(
        nb,
        notebook_name="repro",
        timeout=600,
        stall_after=stall_after,
        stall_timeout=stall_timeout,
        kernel_name="python3",
        resources={"metadata": {"path": path}},
    )
    stop = threading.Event()

    def start_nudging(**_):
        info = client.km.get_connection_info()
        info.pop("session", None)
        threading.Thread(target=nudger, args=(info, nudge, stop), daemon=True).start()

    if nudge:
        client.on_notebook_start = start_nudging
    failed = ""
    try:
        client.execute()
    except Exception as error:  # a failed run is counted, the next one goes on
        failed = f"{type(error).__name__}: {str(error)[:200]}"
    finally:
        stop.set()
    version = next((o.get("text", "") for o in nb.cells[0].get("outputs", []) if o.get("name") == "stdout"), "")
    return {
        "seconds": time.monotonic() - start,
        "stalled": len(client.stalled_cells),
        "wakes": client.wakes,
        "failed": failed,
        "version": version.strip(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", type=Path, help="a notebook to run (default: a synthetic one)")
    parser.add_argument("--cells", type=int, default=300, help="cells in the synthetic notebook")
    parser.add_argument("--runs", type=int, default=20, help="runs alone and runs beside the load, each")
    parser.add_argument("--load", type=int, default=2, help="processes spinning on the CPU during loaded runs")
    parser.add_argument("--stall-after", type=float, default=5.0)
    parser.add_argument("--stall-timeout", type=float, default=60.0)
    parser.add_argument("--kernel-path", type=Path, help="put this folder first on the kernel's PYTHONPATH")
    parser.add_argument("--nudge", type=float, default=0.0, help="every this many seconds, a short-lived connection")
    args = parser.parse_args(argv)

    if args.kernel_path:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.kernel_path), os.environ.get("PYTHONPATH")]))
    if args.notebook:
        import nbformat

        source = args.notebook.resolve()
        path = str(source.parent)

        def make_notebook():
            nb = nbformat.read(source, as_version=4)
            probe = nbformat.v4.new_code_cell("import ipykernel\nprint('ipykernel', ipykernel.__version__)")
            nb.cells.insert(0, probe)
            return nb

        label = args.notebook.name
    else:
        path = str(ROOT)
        make_notebook = lambda: synthetic(args.cells)  # noqa: E731
        label = f"synthetic ({args.cells} cells)"

    nudging = f"; a short-lived connection every {args.nudge} s" if args.nudge else ""
    print(f"notebook: {label}; {args.runs} runs alone, {args.runs} beside {args.load} spinning processes{nudging}")
    totals = {}
    for setting in ("alone", "loaded"):
        load = []
        rows = []
        for _ in range(args.runs):
            if setting == "loaded":
                load = [multiprocessing.Process(target=spin, args=(time.monotonic() + 3600,)) for _ in range(args.load)]
                for p in load:
                    p.start()
            try:
                rows.append(one_run(make_notebook, path, args.stall_after, args.stall_timeout, args.nudge))
            finally:
                for p in load:
                    p.terminate()
            row = rows[-1]
            print(
                f"  {setting:6s} run {len(rows):3d}: {row['seconds']:6.1f} s, {row['version']}, stalled cells "
                f"{row['stalled']}, wakes {row['wakes']}" + (f", FAILED {row['failed']}" if row["failed"] else ""),
                flush=True,
            )
        totals[setting] = rows
    print("\nsetting  runs  runs with a stall  stalled cells  wakes  failed runs  median s")
    for setting, rows in totals.items():
        seconds = sorted(r["seconds"] for r in rows)
        print(
            f"{setting:7s} {len(rows):5d} {sum(r['stalled'] > 0 for r in rows):18d} "
            f"{sum(r['stalled'] for r in rows):14d} {sum(r['wakes'] for r in rows):6d} "
            f"{sum(bool(r['failed']) for r in rows):12d} {seconds[len(seconds) // 2]:9.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
