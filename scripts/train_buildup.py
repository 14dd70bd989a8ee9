"""Train every step of lesson 07's build-up with the same budget and write their validation losses.

    .venv/bin/python scripts/train_buildup.py            # about 10 CPU minutes on one thread

Each step of course_lib.buildup.STEPS (bigram -> one head -> multi-head -> + feed-forward ->
+ residual -> + LayerNorm) is trained from the same seed on the same batches (--steps batches of
--batch-size windows of --block-size characters of the State of the Union training split, AdamW,
gradient clipping at 1), and evaluated every --eval-every steps on the first --val-tokens
characters of the validation split (course_lib.lm.evaluate_lm). The table and the validation
curves go to course_lib/weights/gpt_buildup_sotu_char.json, which lesson 07 reads.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

from course_lib import checkpoint, set_seed
from course_lib.buildup import STEPS, build_step
from course_lib.corpora import load_sotu
from course_lib.lm import char_vocab, encode_stream, evaluate_lm, lm_batches
from course_lib.train import fit

OUT = checkpoint.WEIGHTS_DIR / "gpt_buildup_sotu_char.json"


def train_step(name, vocab, train, val, args):
    """Train build-up step ``name`` with the budget in ``args``: (model, history)."""
    set_seed(args.seed)
    model = build_step(name, len(vocab), block_size=args.block_size, d_model=args.d_model)
    batches = lm_batches(
        train, args.block_size, args.batch_size, args.steps, generator=torch.Generator().manual_seed(args.seed)
    )
    history = fit(
        model,
        lambda m, batch: m(*batch)[1],
        torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01),
        batches,
        clip_grad_norm=1.0,
        evaluate=lambda m: {"val_loss": evaluate_lm(m, val, block_size=args.block_size)},
        eval_every=args.eval_every,
        desc=name,
    )
    return model, history


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="training steps per build-up step")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--val-tokens", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", choices=list(STEPS), default=None, help="train one step, write nothing")
    parser.add_argument("--out", default=str(OUT))
    return parser.parse_args(argv)


def data(args):
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    train = encode_stream(corpus.train, vocab)
    val = encode_stream(corpus.val, vocab)[: args.val_tokens + 1]
    return vocab, train, val


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    vocab, train, val = data(args)
    results = {}
    for name in [args.only] if args.only else STEPS:
        start = time.process_time()
        model, history = train_step(name, vocab, train, val, args)
        seconds = time.process_time() - start
        results[name] = {
            "val_loss": history.last("val_loss"),
            "params": sum(p.numel() for p in model.parameters()),
            "cpu_seconds": round(seconds, 1),
            "curve": {"step": [e["step"] for e in history.evals], "val_loss": [e["val_loss"] for e in history.evals]},
        }
        print(f"{name:>15}: val {results[name]['val_loss']:.4f} ({math.exp(results[name]['val_loss']):.3f} per char), "
              f"{results[name]['params']:,} params, {seconds:.0f} CPU s", flush=True)  # fmt: skip
    if args.only:
        return
    budget = {k: getattr(args, k) for k in ("steps", "batch_size", "block_size", "d_model", "lr", "val_tokens", "seed")}
    with open(args.out, "w") as f:
        json.dump({"budget": budget, "torch": torch.__version__, "steps": results}, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
