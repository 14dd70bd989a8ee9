"""Run the whole outsider set: per exercise one kernel for its right answer and its mistakes (in that order),
and one kernel per borrowed answer (they may patch things); 5 draws each. Appends to results.jsonl.

Usage: python runner.py [--jobs 2] [--only 7.3,7.4] [--ids B7.1.3,M5.2.6] [--out results.jsonl]
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from entries import ENTRIES  # noqa: E402


def groups(only, ids=frozenset()):
    out = []
    exercises = sorted({e["exercise"] for e in ENTRIES}, key=lambda s: tuple(int(x) for x in s.split(".")))
    for ex in exercises:
        if only and ex not in only:
            continue
        mine = [e for e in ENTRIES if e["exercise"] == ex and (not ids or e["id"] in ids)]
        first = [e for e in mine if e["kind"] == "right"] + [e for e in mine if e["kind"] == "mistake"]
        if first:
            out.append(first)
        out += [[e] for e in mine if e["kind"] == "borrowed"]
    return out


def run(group, out):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(group, f)
    t0 = time.time()
    try:
        subprocess.run([sys.executable, str(HERE / "run_entry.py"), f.name, str(out)], timeout=1800, check=False)
    except subprocess.TimeoutExpired:
        with open(out, "a") as fh:
            for e in group:
                fh.write(
                    json.dumps(
                        {"id": e["id"], "exercise": e["exercise"], "kind": e["kind"], "runner_error": "group timeout"}
                    )
                    + "\n"
                )
    print(f"{group[0]['id']} (+{len(group) - 1}): {time.time() - t0:.0f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(HERE / "results.jsonl"))
    ap.add_argument("--ids", default="", help="only these entries (comma-separated)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    gs = groups(only, frozenset(filter(None, args.ids.split(","))))
    gs.sort(key=len, reverse=True)  # the long groups first
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda g: run(g, args.out), gs))


if __name__ == "__main__":
    main()
