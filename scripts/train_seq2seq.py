"""Train lesson 05's date translators longer than the notebook can, and save small checkpoints.

    .venv/bin/python scripts/train_seq2seq.py --attention dot --out my_dot.safetensors
    .venv/bin/python scripts/train_seq2seq.py --attention none --replace-shipped  # the course's checkpoint

Without ``--out`` it writes course_lib/weights/seq2seq_<attention>.safetensors, and stops rather than
overwrite a checkpoint lesson 05 loads (none, dot) unless ``--replace-shipped``.

Task: course_lib.dates (English lists of 1 to 3 dates -> French, character level), seed 0.
Model: course_lib.seq2seq.Seq2Seq, the same code the notebook trains live, with
course_lib.train.fit. Batches hold examples of similar length (less padding, same loss).
Saved: course_lib/weights/seq2seq_<attention>.safetensors, a course_lib.checkpoint file (weights
without pickle; the config, the vocabulary and what this run measured in its header: the task and
the exact-match accuracy on the first CHECK_N test examples, which tests/test_seq2seq.py recomputes).
Read it back with course_lib.seq2seq.load_checkpoint("<attention>").
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

import course_lib
from course_lib import checkpoint
from course_lib.checkpoint import WEIGHTS_DIR
from course_lib.dates import build_vocab, make_pairs
from course_lib.seq2seq import (
    Seq2Seq,
    Seq2SeqConfig,
    encode_pairs,
    exact_match_by_length,
    load_checkpoint,
    save_checkpoint,
    seq2seq_loss,
    translate,
)
from course_lib.train import fit

TASK = {"seed": 0, "max_dates": 3, "source_locale": "en_US", "target_locale": "fr_FR", "format": "full"}
CHECK_N = 300  # test examples whose accuracy is recorded (and re-checked by the tests)


def length_sorted_batches(tensors, batch_size, generator):
    """One epoch: examples sorted by source length, cut into batches, the batches in random order."""
    src, src_lengths, tgt_in, tgt_out = tensors
    order = torch.argsort(src_lengths + torch.rand(len(src_lengths), generator=generator))  # ties in random order
    chunks = list(order.split(batch_size))

    def epoch():
        for i in torch.randperm(len(chunks), generator=generator).tolist():
            idx = chunks[i]
            yield src[idx], src_lengths[idx], tgt_in[idx], tgt_out[idx]

    return epoch


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attention", default="additive", choices=["none", "dot", "scaled", "bilinear", "additive"])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--n-train", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--init", default=None, help="continue from this checkpoint name (e.g. dot) or a path")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped files")
    args = parser.parse_args(argv)
    out = args.out or WEIGHTS_DIR / f"seq2seq_{args.attention}.safetensors"
    checkpoint.refuse_to_replace_shipped(out, replace_shipped=args.replace_shipped)

    course_lib.setup(seed=0, threads=args.threads, device="cpu")
    vocab = build_vocab((TASK["source_locale"], TASK["target_locale"]), TASK["format"])
    train = make_pairs(args.n_train, "train", **TASK)
    val = make_pairs(300, "val", **TASK)
    test = make_pairs(CHECK_N, "test", **TASK)
    earlier = {"examples_seen": 0, "train_minutes": 0.0, "runs": []}
    if args.init:
        model, ckpt, init_vocab = load_checkpoint(args.init)
        earlier = ckpt.info
        if model.attention != args.attention or earlier["task"] != TASK or init_vocab.itos != vocab.itos:
            raise SystemExit(f"--init {args.init}: its attention, task or vocabulary differs from this run's")
        model.train()
    else:
        model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention=args.attention, hidden_size=args.hidden))
    print(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Decay the learning rate linearly to 10% over the run: the last steps polish the details.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - 0.9 * min(step / args.steps, 1))

    def loss_fn(m, batch):
        # fit() has no scheduler hook: step it here, once per training batch after the first
        if m.training and optimizer.state:
            schedule.step()
        return seq2seq_loss(m, batch)

    def evaluate(m):
        predictions, _ = translate(m, val.sources, vocab)
        return {"val_exact": sum(p == t for p, t in zip(predictions, val.targets)) / len(val)}

    generator = torch.Generator().manual_seed(len(earlier["runs"]))  # a continued run sees a new order
    batches = length_sorted_batches(encode_pairs(train.sources, train.targets, vocab), args.batch_size, generator)
    started = time.perf_counter()
    history = fit(
        model,
        loss_fn,
        optimizer,
        batches,
        epochs=100,
        max_steps=args.steps,
        evaluate=evaluate,
        eval_every=500,
        clip_grad_norm=1.0,
        desc=f"seq2seq ({args.attention})",
    )
    minutes = (time.perf_counter() - started) / 60

    predictions, _ = translate(model, test.sources, vocab)
    exact = sum(p == t for p, t in zip(predictions, test.targets)) / len(test)
    rows = exact_match_by_length(test.sources, predictions, test.targets, [0, 30, 60, 100])
    print(f"test exact match {exact:.3f};", rows)
    runs = earlier["runs"] + [{"steps": args.steps, "batch_size": args.batch_size, "lr": args.lr}]
    save_checkpoint(
        model,
        out,
        vocab,
        {
            "task": TASK,
            "train_examples": args.n_train,
            "runs": runs,
            "examples_seen": earlier["examples_seen"] + args.steps * args.batch_size,
            "train_minutes": round(earlier["train_minutes"] + minutes, 1),
            "last_batch_loss": round(history.loss[-1], 4),  # one length-sorted batch: not a measure of fit
            "val_exact": history.last("val_exact"),
            "check_n": CHECK_N,
            "test_exact": exact,
        },
    )
    print("saved", out, f"({out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
