"""How many torch threads should a lesson use on a small machine? 1 vs 2, quiet and beside a busy process.

    .venv/bin/python benchmarks/bench_threads.py [--repeats 5]

The workloads are the shapes the lessons train live: a small pre-norm transformer layer stack
(lesson 07), a batched LSTM classifier step (lessons 03 and 04) and a GRU seq2seq-sized step
(lesson 05), each forward + backward + Adam. For each, steps per second with 1 and 2 threads,
interleaved and repeated (median), first on the machine as it is, then with one CPU-bound
process (``yes > /dev/null``) running beside it, the case the course's budget must survive.
course_lib.notebook.setup picks its default thread count from these numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time

import torch
from torch import nn

from _results import write_section  # benchmarks/_results.py (scripts run from this folder)


def transformer_step():
    layer = nn.TransformerEncoderLayer(96, 4, 384, dropout=0.0, batch_first=True, norm_first=True)
    model = nn.Sequential(nn.Embedding(100, 96), nn.TransformerEncoder(layer, 3), nn.Linear(96, 100))
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    x = torch.randint(0, 100, (32, 64))
    mask = nn.Transformer.generate_square_subsequent_mask(64)

    def step():
        logits = model[2](model[1](model[0](x), mask=mask, is_causal=True))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), x.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def recurrent_step(cell: type[nn.Module], hidden: int, batch: int, T: int):
    rnn, head = cell(16, hidden, batch_first=True), nn.Linear(hidden, 2)
    opt = torch.optim.Adam([*rnn.parameters(), *head.parameters()], 1e-3)
    x, y = torch.randn(batch, T, 16), torch.randint(0, 2, (batch,))

    def step():
        out, _ = rnn(x)
        loss = nn.functional.cross_entropy(head(out[:, -1]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


WORKLOADS = {
    "transformer (lesson 07)": transformer_step,
    "LSTM, H=64, B=64, T=20 (lessons 03-04)": lambda: recurrent_step(nn.LSTM, 64, 64, 20),
    "GRU, H=128, B=64, T=40 (lesson 05)": lambda: recurrent_step(nn.GRU, 128, 64, 40),
}


def steps_per_second(step, seconds: float = 1.5) -> float:
    step()  # warm-up
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        n += 1
    return n / (time.perf_counter() - start)


def measure(repeats: int) -> dict[str, dict[int, float]]:
    out = {}
    for name, make in WORKLOADS.items():
        torch.manual_seed(0)
        step = make()
        runs = {1: [], 2: []}
        for _ in range(repeats):
            for threads in (1, 2):  # interleaved, so drifting load hits both alike
                torch.set_num_threads(threads)
                runs[threads].append(steps_per_second(step))
        out[name] = {t: statistics.median(v) for t, v in runs.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    quiet = measure(args.repeats)
    busy_proc = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
    try:
        busy = measure(args.repeats)
    finally:
        busy_proc.kill()
        busy_proc.wait()
    rows = []
    for name in WORKLOADS:
        q, b = quiet[name], busy[name]
        rows.append(
            f"| {name} | {q[1]:.1f} | {q[2]:.1f} | {q[2] / q[1]:.2f}x | {b[1]:.1f} | {b[2]:.1f} | {b[2] / b[1]:.2f}x |"
        )
    text = (
        "## Torch threads on a 2-core machine (setup's default)\n\n"
        "`python benchmarks/bench_threads.py`: training steps per second, median of "
        f"{args.repeats} interleaved runs of 1.5 s; 'beside yes' = one CPU-bound process running too.\n\n"
        f"- Machine: {time.strftime('%Y-%m-%d')}, {platform.machine()} {platform.system()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}; load average before the run {load_before:.2f}.\n\n"
        "| workload | 1 thread | 2 threads | 2 vs 1 | 1 thread, beside yes | 2 threads, beside yes | 2 vs 1 |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n"
    )
    print(text)
    write_section("## Torch threads on a 2-core machine", text)


if __name__ == "__main__":
    main()
