"""Train lesson 07's character-level GPT longer than the notebook can, and save a checkpoint.

    .venv/bin/python scripts/train_gpt.py --minutes 30 --out my_gpt.safetensors

Without ``--out`` it stops rather than overwrite the checkpoint lesson 07 loads (``--replace-shipped``
retrains the course's own, as the commands below did).

The shipped checkpoint (4 layers, 6 heads, d_model = 192: 1.83M parameters; 45M characters, about
4.7 epochs) came from the first command below (its float16 weights were later moved, unchanged,
from a torch .pt file into course_lib.checkpoint's format); the second trains on from it:

    .venv/bin/python scripts/train_gpt.py --minutes 80 --threads 2 --bf16 --replace-shipped
    .venv/bin/python scripts/train_gpt.py --minutes 30 --replace-shipped \
        --init course_lib/weights/gpt_sotu_char.safetensors

The model is course_lib.transformer.GPT, the same code the notebook trains live, on the State
of the Union training addresses at the character level (lesson 01's corpus and split), with
course_lib.train.fit as the loop (called in chunks so the learning rate can follow a warm-up
and a cosine decay that ends at the deadline). The checkpoint keeps the best validation loss
seen (measured on the first --eval-tokens of the validation stream); at the end the full
validation loss of the saved (float16) weights is measured and stored with them.
The checkpoint is written by course_lib.checkpoint (safetensors, float16 weights; the config, the
vocabulary and the measured numbers in its header): read it back with course_lib.transformer.GPT.load.
The test split is never looked at.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from pathlib import Path

import torch

from course_lib import checkpoint, set_seed
from course_lib.corpora import load_sotu
from course_lib.lm import char_vocab, encode_stream, evaluate_lm, lm_batches
from course_lib.train import History, fit
from course_lib.transformer import GPT, GPTConfig

CHECKPOINT = checkpoint.WEIGHTS_DIR / "gpt_sotu_char.safetensors"


def save(model: GPT, vocab, path: Path, info: dict) -> None:
    """float16 weights (half the size; fine for inference), the config and the vocabulary."""
    checkpoint.save(
        path,
        model,
        kind="gpt",
        config=dataclasses.asdict(model.config),
        vocab=vocab.itos,
        info=info,
        dtype=torch.float16,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="wall-clock training budget")
    parser.add_argument("--n-layers", type=int, default=4)
    parser.add_argument("--n-heads", type=int, default=6)
    parser.add_argument("--d-model", type=int, default=192)
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=200, help="steps of linear warm-up")
    parser.add_argument("--chunk", type=int, default=50, help="steps per fit() call (the lr is set between calls)")
    parser.add_argument("--eval-every", type=int, default=500, help="steps between validation checks")
    parser.add_argument("--eval-tokens", type=int, default=100_000, help="validation tokens per check")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="autocast matrix products to bfloat16 (faster on CPUs with AVX-512 BF16; weights stay float32)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        help="continue from this checkpoint (its size; the size options are ignored; Adam starts afresh)",
    )
    parser.add_argument("--out", type=Path, default=CHECKPOINT)
    parser.add_argument(
        "--record",
        action="store_true",
        help="do not train: measure the saved checkpoint again and store its validation losses",
    )
    parser.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped files")
    args = parser.parse_args(argv)
    checkpoint.refuse_to_replace_shipped(args.out, replace_shipped=args.replace_shipped)
    if args.record:
        record(args.out)
        return

    torch.set_num_threads(args.threads)
    set_seed(args.seed)
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    train, val = encode_stream(corpus.train, vocab), encode_stream(corpus.val, vocab)
    val_part = val[: args.eval_tokens + 1]
    done = {"steps": 0, "tokens": 0, "minutes": 0.0}  # training already in the weights we start from
    if args.init is not None:
        model, init = GPT.load(args.init, vocab)
        config = model.config
        done = {k: init.info[k] for k in done}
    else:
        config = GPTConfig(
            vocab_size=len(vocab),
            block_size=args.block_size,
            n_layers=args.n_layers,
            n_heads=args.n_heads,
            d_model=args.d_model,
        )
        model = GPT(config)
    print(config, f"\n{model.num_params():,} parameters; {len(train):,} training and {len(val):,} validation tokens")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.01)
    generator = torch.Generator().manual_seed(args.seed)
    batches = lm_batches(train, args.block_size, args.batch_size, steps=args.chunk, generator=generator)

    def loss_fn(m, batch):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
            return m(*batch)[1]

    start = time.time()
    deadline = start + 60 * args.minutes
    history, saved = History(), False
    best = evaluate_lm(model, val_part) if args.init is not None else math.inf
    while time.time() < deadline:
        step = len(history.step)
        # The cosine follows the clock, not the step count, so it ends at the deadline even if the
        # machine gets slower or faster on the way.
        progress = min((time.time() - start) / (deadline - start), 1.0)
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        fit(
            model,
            loss_fn,
            optimizer,
            batches,
            max_steps=args.chunk,
            history=history,
            clip_grad_norm=1.0,
            progress=False,
        )
        step = len(history.step)
        if step % args.eval_every < args.chunk or time.time() >= deadline:
            val_loss = evaluate_lm(model, val_part)
            train_loss = sum(history.loss[-args.chunk :]) / args.chunk
            print(
                f"step {step} ({(time.time() - start) / 60:.1f} min, {step * args.batch_size * args.block_size:,} "
                f"tokens): train {train_loss:.4f}, val {val_loss:.4f} (ppl {math.exp(val_loss):.3f}), lr {lr:.1e}",
                flush=True,
            )
            if val_loss < best:
                best = val_loss
                save(
                    model,
                    vocab,
                    args.out,
                    {
                        "steps": done["steps"] + step,
                        "tokens": done["tokens"] + step * args.batch_size * args.block_size,
                        "minutes": done["minutes"] + (time.time() - start) / 60,
                    },
                )
                saved = True
    if not saved:
        raise SystemExit(f"nothing saved to {args.out}: no validation check improved on {best:.4f}")
    print(f"trained for {checkpoint.read(args.out).info['minutes']:.1f} min in all")
    record(args.out)


def record(path: Path, head_tokens: int = 20_000) -> None:
    """Reload the saved (float16) weights, measure them on the whole validation split and on its
    first ``head_tokens`` predicted tokens (what the test reproduces quickly), and store both."""
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    model, ckpt = GPT.load(path, vocab)
    val = encode_stream(corpus.val, vocab)
    info = dict(ckpt.info)
    info["val_loss"] = evaluate_lm(model, val)
    info["val_head_tokens"] = head_tokens
    info["val_head_loss"] = evaluate_lm(model, val[: head_tokens + 1])
    save(model, vocab, path, info)  # the weights are float16 already: saving them again changes nothing
    print(
        f"saved {path} ({path.stat().st_size / 1e6:.1f} MB) after {info['steps']} steps: full validation "
        f"loss {info['val_loss']:.4f} nats/char, perplexity {math.exp(info['val_loss']):.3f}"
    )


if __name__ == "__main__":
    main()
