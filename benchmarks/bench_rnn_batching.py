"""Benchmark: batched training against the lecture's one-sample-at-a-time loop (lesson 03).

Run: python benchmarks/bench_rnn_batching.py [--samples 3000] [--repeats 3] [--no-write]

Same model (course_lib.rnn.SequenceClassifier, one-hot input, hidden 50 as in the lecture),
same data (colored parentheses of lengths 2..20), same optimizer (Adam, lr 1e-3), in one run:

  * per sample: the lecture's loop, one sequence, one forward, one backward, one Adam step;
  * batched: course_lib.train.fit on batches of 64 sequences of similar length
    (course_lib.parentheses.length_batches: padding, and each prediction read at its own last step).

Reports training samples per second (median of --repeats runs) and the speed-up, for the
Elman network and the LSTM, and writes them to the "## RNN batching (lesson 03)" section
of benchmarks/RESULTS.md. Machines are shared and noisy: medians and ratios.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from course_lib import parentheses as P  # noqa: E402
from course_lib.rnn import SequenceClassifier  # noqa: E402
from course_lib.train import fit  # noqa: E402

from _results import write_section  # benchmarks/_results.py (scripts run from this folder)

SECTION = "## RNN batching (lesson 03)"
GOAL = 15


def per_sample(model, data: P.ParenthesesSet) -> float:
    """The lecture's loop: one sequence at a time. Returns seconds."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    started = time.perf_counter()
    for seq, label in zip(data.seqs, data.labels):
        tokens = torch.tensor([seq])
        loss = P.batch_loss(model, (tokens, torch.tensor([len(seq)]), torch.tensor([label])))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - started


def batched(model, data: P.ParenthesesSet, batch_size: int) -> float:
    """course_lib.train.fit on length-grouped batches. Returns seconds."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, lengths, labels = data.tensors()
    batches = P.length_batches(tokens, lengths, labels, batch_size, generator=torch.Generator().manual_seed(0))
    started = time.perf_counter()
    fit(model, P.batch_loss, optimizer, batches, epochs=1, progress=False)
    return time.perf_counter() - started


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3000, help="training sequences per run")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch RESULTS.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    data = P.make_dataset(args.samples, P.MIXES["with_transpositions"], P.SHORT_LENGTHS, seed=0)
    mean_length = sum(map(len, data.seqs)) / len(data)
    rows = []
    for kind in ("elman", "lstm"):
        times = {"per sample": [], "batched": []}
        for r in range(args.repeats):  # interleaved, so both see the same machine load
            torch.manual_seed(r)
            times["per sample"].append(per_sample(SequenceClassifier(kind, 10, args.hidden), data))
            torch.manual_seed(r)
            times["batched"].append(batched(SequenceClassifier(kind, 10, args.hidden), data, args.batch_size))
        rate = {k: len(data) / statistics.median(v) for k, v in times.items()}
        ratio = rate["batched"] / rate["per sample"]
        rows.append((kind, rate["per sample"], rate["batched"], ratio))
        print(
            f"{kind}: per sample {rate['per sample']:,.0f} samples/s, batched {rate['batched']:,.0f} samples/s, "
            f"speed-up {ratio:.1f}x",
            flush=True,
        )

    machine = (
        f"{datetime.date.today()}, {platform.machine()} {platform.system()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), Python {platform.python_version()}"
    )
    lines = [
        SECTION,
        "",
        "`python benchmarks/bench_rnn_batching.py`: training samples per second, the lecture's loop (one",
        "sequence per forward, backward and Adam step) against `course_lib.train.fit` on batches of",
        f"{args.batch_size} sequences of similar length (`course_lib.parentheses.length_batches`: padding, each",
        "prediction read at its sequence's own last step). Same model, data and optimizer.",
        "",
        f"- Data: {len(data):,} colored-parenthesis sequences, lengths 2..20 (mean {mean_length:.1f}), the lesson's",
        "  training mix with transpositions. Model: one-hot input, hidden size "
        f"{args.hidden}, read-out W_hy h_T + b_y; Adam, lr 1e-3.",
        f"- Machine: {machine}.",
        f"- Median of {args.repeats} interleaved runs of one epoch each.",
        "",
        "| model | per sample (samples/s) | batched (samples/s) | speed-up |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {kind} | {a:,.0f} | {b:,.0f} | **{r:.0f}x** (goal >= {GOAL}x) |" for kind, a, b, r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(SECTION, text, args.results)
        print(f"wrote the section to {args.results}")


if __name__ == "__main__":
    main()
