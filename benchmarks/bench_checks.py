"""What the borrowed-answer observer costs: each lesson's solution through its check, before and after.

    python benchmarks/bench_checks.py --before 8966204 --rounds 5
    python benchmarks/bench_checks.py --before 9f2161e --change "tampered() by dict look-ups" --rounds 3

``--before`` is a git revision without the observer (its tree is exported to a temporary folder), or, with
``--change``, any earlier revision: the section then says what changed and is a section of its own. Each round
runs both trees, alternately, in fresh processes (so the machine's load falls on both alike); each process
times ``check(solution)`` for the exercises below, after one warm-up call, and the medians over rounds are
compared. Writes its section of RESULTS.md.
"""

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_section  # noqa: E402 - benchmarks/_results.py (scripts run from this folder)

ROOT = Path(__file__).resolve().parents[1]
# one exercise of each kind of rule: gradients (profile hook + both torch modes), kernels (function mode),
# course_lib only, and lesson 07's larger modules (the most calls per check)
EXERCISES = [
    ("02", "02_backprop", "2.2"),
    ("02", "02_backprop", "2.4"),
    ("03", "03_parentheses", "3.1"),
    ("03", "03_parentheses", "3.3"),
    ("04", "04_lstm_gru", "4.1"),
    ("05", "05_attention", "5.2"),
    ("06", "06_masked_attention", "6.3"),
    ("07", "07_transformer", "7.6"),
    ("07", "07_transformer", "7.7"),
]

WORKER = """
import json, sys, time
sys.path.insert(0, ".")
from course_lib import checks
from tests.mutants.mutate import exercise_cells, load
repeats = int(sys.argv[1])
out = {}
spaces = {}
for lesson, name, ex_id in json.loads(sys.argv[2]):
    ex = checks.exercises(lesson)[ex_id]
    if name not in spaces:
        spaces[name] = load(exercise_cells(name))
    fn = spaces[name][ex.function]
    assert ex.check(fn, quiet=True, seed=0).passed
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        result = ex.check(fn, quiet=True, seed=seed + 1)
        times.append(time.perf_counter() - start)
        assert result.passed, result
    out[ex_id] = times
print(json.dumps(out))
"""


def run(tree: Path, repeats: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(repeats), json.dumps(EXERCISES)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="a git revision without the observer (or see --change)")
    ap.add_argument("--change", default="", help="what changed since --before (any revision): its own section")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="timed checks per exercise per process")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-checks-") as tmp:
        before = Path(tmp)
        archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        times: dict = {"before": {}, "after": {}}
        start = time.time()
        for r in range(args.rounds):
            order = [("before", before), ("after", ROOT)] if r % 2 == 0 else [("after", ROOT), ("before", before)]
            for label, tree in order:
                for ex_id, ts in run(tree, args.repeats).items():
                    times[label].setdefault(ex_id, []).extend(ts)
        minutes = (time.time() - start) / 60
    rows = []
    ratios = []
    for _, _, ex_id in EXERCISES:
        b, a = statistics.median(times["before"][ex_id]), statistics.median(times["after"][ex_id])
        ratios.append(a / b)
        rows.append(f"| {ex_id} | {b * 1000:.0f} ms | {a * 1000:.0f} ms | {a / b:.2f}x |")
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    heading = "## The borrowed-answer observer: what a check costs"
    if args.change:
        heading = f"## What a check costs: {args.change}"
        what = f"before (revision {args.before}) and after this change ({args.change})"
    else:
        what = (
            f"before the observer (revision {args.before}: stand-ins for forbidden names and the look at the source "
            "only) and after it (profile hook on every call, torch's function mode where a kernel is refused, its "
            "dispatch mode too where gradients are the exercise)"
        )
    text = (
        f"{heading}\n\n"
        f"`python benchmarks/bench_checks.py --before {args.before}"
        + (f' --change "{args.change}"' if args.change else "")
        + f" --rounds {args.rounds}`: the solution of each "
        f"exercise below through its check (`check(solution)`: draw, run under the observer, judge), {what}. "
        "Medians over "
        f"{args.rounds} rounds x {args.repeats} checks, both trees alternately in fresh processes.\n\n"
        f"- Machine: {time.strftime('%Y-%m-%d')}, {platform.machine()} {platform.system()}, Python "
        f"{platform.python_version()}, shared by other jobs (load average {load} at the end, {minutes:.0f} min): "
        "absolute times are noisy, the ratios less so.\n"
        f"- Median ratio over the exercises: {statistics.median(ratios):.2f}x (from {min(ratios):.2f}x to "
        f"{max(ratios):.2f}x).\n\n"
        "| exercise | before | after | after / before |\n| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n"
    )
    print(text)
    write_section(heading, text)


if __name__ == "__main__":
    main()
