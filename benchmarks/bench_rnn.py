"""Lesson 04: course_lib.rnn's LSTM and GRU against torch.nn.LSTM / GRU, forward plus backward.

    python benchmarks/bench_rnn.py                 # print the table
    python benchmarks/bench_rnn.py --write         # and replace this benchmark's section of RESULTS.md

Batch 64, length 50, input and hidden size 128, float32 on the CPU. One timed call is
``net(x)``, a loss, and ``backward()``. Columns, timed interleaved in the same run (so load
from other jobs hits them alike), medians over ``--repeats``:

- torch.nn.LSTM / GRU (the peer);
- ours: the input projection for all steps in one product, then a loop over ``unbind(0)``;
- ours, sliced per step: ``W_xh x[t]`` inside the loop (memory.run_sliced), with an input that
  needs its gradient, as it does after an embedding layer: every slice's backward writes a
  full-size (T, B, I) gradient, so backward grows like T^2 (the trap the lesson shows);
- the same sliced loop with an input that needs no gradient (raw features).
"""

from __future__ import annotations

import argparse
import platform
import re
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from course_lib import memory, rnn  # noqa: E402

SECTION = "## Recurrent layers: LSTM and GRU (lesson 04)"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(batch: int, length: int, hidden: int, repeats: int, threads: int) -> list[dict]:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rows = []
    for name, torch_cls, ours_cls in [("LSTM", nn.LSTM, rnn.LSTM), ("GRU", nn.GRU, rnn.GRU)]:
        theirs = torch_cls(hidden, hidden)
        ours = ours_cls.from_torch(theirs)
        x = torch.randn(length, batch, hidden)
        x_grad = x.clone().requires_grad_()
        out_t, out_o = theirs(x)[0], ours(x)[0]
        max_diff = (out_t - out_o).abs().max().item()

        def backward(out):
            out.square().mean().backward()

        calls = {
            "torch": lambda: backward(theirs(x)[0]),
            "ours": lambda: backward(ours(x)[0]),
            "sliced, input needs grad": lambda: backward(memory.run_sliced(ours, x_grad)[0]),
            "sliced, input needs no grad": lambda: backward(memory.run_sliced(ours, x)[0]),
        }
        for fn in calls.values():  # warm-up
            fn()
        times = {k: [] for k in calls}
        for _ in range(repeats):
            for k, fn in calls.items():  # interleaved
                times[k].append(timed(fn))
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append({"name": name, "median": med, "max_diff": max_diff})
        print(
            f"{name}: " + ", ".join(f"{k} {1000 * v:.1f} ms (x{v / med['torch']:.2f})" for k, v in med.items()),
            flush=True,
        )
    return rows


def markdown(rows, args) -> str:
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_rnn.py --repeats {args.repeats}`: one training step's forward plus backward "
        f"(`net(x)`, mean-square loss, `backward()`), batch {args.batch}, length {args.length}, input and hidden "
        f"size {args.hidden}, float32. Medians of {args.repeats} interleaved runs after a warm-up; ratios are "
        "against torch.nn in the same run (above 1: slower than torch).",
        "",
        f"- Machine: {date.today().isoformat()}, {platform.machine()} {platform.system()}, torch {torch.__version__}, "
        f"{args.threads} thread(s), Python {platform.python_version()}; a shared 2-core CPU with other jobs running.",
        "",
        "| layer | torch.nn | ours (one input product, `unbind` loop) | ours, sliced per step, input needs grad "
        "| ours, sliced per step, input needs no grad | max abs difference of outputs |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        m, t = r["median"], r["median"]["torch"]
        cells = [
            f"{1000 * m[k]:.1f} ms (**x{m[k] / t:.2f}**)"
            for k in ("ours", "sliced, input needs grad", "sliced, input needs no grad")
        ]
        lines.append(f"| {r['name']} | {1000 * t:.1f} ms | " + " | ".join(cells) + f" | {r['max_diff']:.1e} |")
    lines += [
        "",
        "torch.nn's CPU kernels fuse the gate arithmetic; ours is the lecture's equations in eager PyTorch. "
        "Slicing `x[t]` inside the loop costs T small products instead of one large one, and when the "
        "input needs its gradient (after an embedding) each slice's backward allocates a full-size zero "
        "gradient.",
        "",
    ]
    return "\n".join(lines)


def write_section(text: str) -> None:
    path = ROOT / "benchmarks" / "RESULTS.md"
    current = path.read_text(encoding="utf-8")  # re-read right before editing: others write their sections
    pattern = re.compile(re.escape(SECTION) + r".*?(?=^## |\Z)", re.S | re.M)
    new = (
        pattern.sub(lambda _: text + "\n", current) if pattern.search(current) else current.rstrip("\n") + "\n\n" + text
    )
    path.write_text(new, encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=50)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of benchmarks/RESULTS.md")
    args = ap.parse_args(argv)
    text = markdown(run(args.batch, args.length, args.hidden, args.repeats, args.threads), args)
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
