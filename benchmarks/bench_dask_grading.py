"""Grading throughput on Dask: submissions per minute on a local cluster of 1 and 2 workers, beside the local
grader's `--jobs 2` measured in the same run (a peer, since the machine is shared and timings are noisy).

    python benchmarks/bench_dask_grading.py --lesson 01 --copies 20

Each copy is the exercise notebook with every answer replaced by the solution's (the slowest honest case).
From the per-worker rate it prints how many workers grade 10,000 submissions in under 30 minutes.
"""

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_grading import write_class  # noqa: E402

from course_lib.instructor import grading  # noqa: E402


def rate(subs: Path, out: Path, lesson: str, copies: int, **how) -> tuple[float, int]:
    start = time.perf_counter()
    grading.grade([subs], lesson, out, root=ROOT, progress=None, **how)
    seconds = time.perf_counter() - start
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    return copies / seconds * 60, sum(r["score"] == r["total"] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lesson", default="01")
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-dask-grading-"))
    try:
        write_class(work / "subs", args.lesson, args.copies)
        runs = {
            "local grader, --jobs 2": dict(jobs=2),
            "Dask local cluster, 1 worker": dict(jobs=1, scheduler="local"),
            "Dask local cluster, 2 workers": dict(jobs=2, scheduler="local"),
        }
        results = {}
        for name, how in runs.items():
            per_minute, full = rate(work / "subs", work / f"{len(results)}.csv", args.lesson, args.copies, **how)
            results[name] = per_minute
            print(f"{name}: {per_minute:.1f} submissions/min ({full}/{args.copies} full marks)", flush=True)
        one = results["Dask local cluster, 1 worker"]
        workers = math.ceil(10_000 / 30 / one)
        print(
            f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"2 workers / 1 worker: {results['Dask local cluster, 2 workers'] / one:.2f}x; "
            f"10,000 submissions in 30 min need {10_000 / 30:.0f}/min: about {workers} workers at {one:.1f}/min each"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
