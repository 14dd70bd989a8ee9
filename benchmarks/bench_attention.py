"""Benchmark: course_lib.attention, explicit path vs PyTorch's fused kernel (lessons 05-07).

Run: python benchmarks/bench_attention.py [--repeats 15] [--threads 1]

In one run, forward passes (no gradients), medians of ``repeats`` timings after a warm-up:
  * scaled dot-product attention at T = 128 and 512 (B = 4, H = 8, d_k = 64, causal mask):
    course_lib.attention.scaled_dot_product_attention (softmax(Q K^T / sqrt(d_k)) V, written
    out) against torch.nn.functional.scaled_dot_product_attention;
  * multi-head attention (C = 512, 8 heads) at the same lengths: course_lib's
    MultiHeadAttention.from_torch(m) on its explicit path (need_weights=True) and on its fused
    path (need_weights=False), against torch.nn.MultiheadAttention m itself (need_weights=False).
Outputs are checked to agree within 1e-5 before anything is timed. Prints a markdown table and
writes it to the "## Attention (lesson 05)" section of benchmarks/RESULTS.md. Machines are
shared and noisy: we report medians and ratios measured side by side, interleaved.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib.attention import MultiHeadAttention, causal_mask, scaled_dot_product_attention  # noqa: E402

SECTION = "## Attention (lesson 05)"
B, H, D_K, C = 4, 8, 64, 512


def interleaved_medians(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, timed in turn (so load spikes hit all of them alike)."""
    for fn in fns.values():
        fn()  # warm-up
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def write_section(text: str, path: Path) -> None:
    """Replace (or append) our section of RESULTS.md, leaving the other sections alone."""
    old = path.read_text() if path.exists() else "# Benchmarks\n\nWritten by the scripts in `benchmarks/`.\n"
    pattern = re.compile(re.escape(SECTION) + r".*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lengths", type=int, nargs="+", default=[128, 512])
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch RESULTS.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    rows = []
    for T in args.lengths:
        q, k, v = torch.randn(3, B, H, T, D_K).unbind(0)
        mask = causal_mask(T)
        explicit, _ = scaled_dot_product_attention(q, k, v, mask=mask)
        fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        diff = (explicit - fused).abs().max().item()
        assert diff < 1e-5, diff
        with torch.no_grad():
            t = interleaved_medians(
                {
                    "explicit": lambda: scaled_dot_product_attention(q, k, v, mask=mask),
                    "fused": lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                },
                args.repeats,
            )
        rows.append(
            (
                f"scaled dot-product attention, T = {T}",
                "course_lib explicit",
                "torch fused",
                t["explicit"],
                t["fused"],
                diff,
            )
        )

        x = torch.randn(B, T, C)
        theirs = torch.nn.MultiheadAttention(C, H, batch_first=True).eval()
        ours = MultiHeadAttention.from_torch(theirs).eval()
        attn_mask = ~causal_mask(T)  # nn.MultiheadAttention's convention: True = may NOT attend
        ref, _ = theirs(x, x, x, attn_mask=attn_mask, need_weights=False)
        ours_explicit, _ = ours(x, x, x, attn_mask=attn_mask, need_weights=True)
        ours_fused, _ = ours(x, x, x, attn_mask=attn_mask, need_weights=False)
        diff_mha = max((ours_explicit - ref).abs().max().item(), (ours_fused - ref).abs().max().item())
        assert diff_mha < 1e-5, diff_mha
        with torch.no_grad():
            t = interleaved_medians(
                {
                    "ours explicit": lambda: ours(x, x, x, attn_mask=attn_mask, need_weights=True),
                    "ours fused": lambda: ours(x, x, x, attn_mask=attn_mask, need_weights=False),
                    "torch": lambda: theirs(x, x, x, attn_mask=attn_mask, need_weights=False),
                },
                args.repeats,
            )
        rows.append(
            (
                f"multi-head attention, T = {T}",
                "MultiHeadAttention explicit",
                "nn.MultiheadAttention",
                t["ours explicit"],
                t["torch"],
                diff_mha,
            )
        )
        rows.append(
            (
                f"multi-head attention, T = {T}",
                "MultiHeadAttention fused",
                "nn.MultiheadAttention",
                t["ours fused"],
                t["torch"],
                diff_mha,
            )
        )
        print(rows[-3:], flush=True)

    lines = [
        SECTION,
        "",
        "`python benchmarks/bench_attention.py`: forward passes without gradients, causal mask, "
        f"B = {B}, {H} heads, d_k = {D_K} (multi-head: C = {C}). Median of {args.repeats} interleaved runs "
        "after a warm-up; the ratio is ours / peer (above 1: ours is slower).",
        "",
        f"- Machine: {datetime.date.today()}, {platform.machine()} {platform.system()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), Python {platform.python_version()}.",
        "",
        "| what | ours | peer | ours (median) | peer (median) | ratio | max abs difference |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for what, ours_name, peer_name, t_ours, t_peer, diff in rows:
        lines.append(
            f"| {what} | {ours_name} | {peer_name} | {ms(t_ours)} | {ms(t_peer)} | "
            f"**{t_ours / t_peer:.1f}x** | {diff:.1e} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(text, args.results)


if __name__ == "__main__":
    main()
