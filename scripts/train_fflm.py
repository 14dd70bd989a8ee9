"""Train lesson 02's feedforward language model longer than the notebook can, and save a checkpoint.

    .venv/bin/python scripts/train_fflm.py --minutes 20 --out my_fflm.safetensors
    .venv/bin/python scripts/train_fflm.py --minutes 20 --replace-shipped  # the course's checkpoint

Without ``--out`` or ``--replace-shipped`` it stops rather than overwrite the checkpoint lesson 02 loads.

The model, its hand-written backward pass and the optimizer are course_lib.backprop's, the
same code the notebook trains live (no autograd here either). Data: the State of the Union
training addresses with lesson 01's vocabulary (NGramLM, unk_cutoff=2). The parameters with
the best validation perplexity are saved with course_lib.checkpoint (safetensors, float16,
with the config and vocabulary; read back with checkpoint.load). The test split plays no part
in training or selection: the test perplexity of the chosen parameters is measured once at the
end and recorded in the checkpoint's info, where a test checks that the file reproduces it.

    .venv/bin/python scripts/train_fflm.py --rescore --replace-shipped

re-measures the shipped parameters (no training) and records the validation and test
perplexities again, e.g. after the count of scored tokens changed (the standard count: one
``</s>`` per sentence, as ``NGramLM``).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import torch
from tqdm import tqdm

from course_lib import checkpoint, set_seed
from course_lib.corpora import load_sotu
from course_lib.fflm import Adam, FeedForwardLM, ngram_windows
from course_lib.ngram import NGramLM

CHECKPOINT = checkpoint.WEIGHTS_DIR / "fflm_sotu.safetensors"


def save(path: Path, model: FeedForwardLM, vocab: list[str], info: dict) -> None:
    """The one way this model is written: course_lib.checkpoint, float16 tensors."""
    checkpoint.save(
        path, model.state_dict(), kind="fflm", config=model.config, vocab=vocab, info=info, dtype=torch.float16
    )


def load(path: Path, vocab: list[str] | None = None) -> FeedForwardLM:
    model, _ = checkpoint.load(path, build=lambda config: FeedForwardLM(**config), kind="fflm", vocab=vocab)
    return model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock training budget")
    parser.add_argument("--d", type=int, default=32, help="embedding size per context word")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--eval-every", type=int, default=2000, help="steps between validation checks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=CHECKPOINT)
    parser.add_argument("--init", type=Path, default=None, help="continue from this checkpoint instead of from scratch")
    parser.add_argument("--rescore", action="store_true", help="only re-measure and re-record --out's perplexities")
    parser.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped files")
    args = parser.parse_args(argv)
    checkpoint.refuse_to_replace_shipped(args.out, replace_shipped=args.replace_shipped)
    if args.rescore:
        return rescore(args.out)

    set_seed(args.seed)
    corpus = load_sotu()
    torch.set_num_threads(1)  # a shared machine
    itos = NGramLM(4, smoothing="kneser-ney", unk_cutoff=2).fit(corpus.train).vocab  # lesson 01's vocabulary
    vocab = {w: i for i, w in enumerate(itos)}
    train = ngram_windows(corpus.train, vocab, order=4)
    val = ngram_windows(corpus.val, vocab, order=4)
    model = FeedForwardLM(len(vocab), context=3, d=args.d, hidden=args.hidden, seed=args.seed)
    if args.init is not None:  # continue training (Adam's running averages start afresh)
        model = load(args.init, itos)
    print(model, f"\n{len(train):,} training windows, {len(val):,} validation windows")
    optimizer = Adam(model.params, lr=args.lr)

    deadline = time.time() + 60 * args.minutes
    best = model.perplexity(val) if args.init is not None else math.inf
    if args.init is not None:
        print(f"starting from {args.init}: validation perplexity {best:.1f}")
    step, epoch = 0, 0
    total_steps = int(args.minutes * 60 * 20)  # a guess for the cosine schedule; refined below
    start = time.time()
    while time.time() < deadline:
        epoch += 1
        order = torch.randperm(len(train))
        bar = tqdm(range(0, len(train), args.batch_size), desc=f"epoch {epoch}", mininterval=5)
        for s in bar:
            batch = train[order[s : s + args.batch_size]]
            loss, grads = model.loss_and_grads(batch[:, :-1], batch[:, -1])
            step += 1
            if step % 100 == 0:  # measure the speed, and plan a cosine decay that ends at the deadline
                total_steps = int(step + (deadline - time.time()) * step / (time.time() - start))
            optimizer.lr = args.lr * 0.5 * (1 + math.cos(math.pi * min(step / total_steps, 1.0)))
            optimizer.step(grads)
            bar.set_postfix(loss=f"{loss:.3f}", lr=f"{optimizer.lr:.1e}")
            if step % args.eval_every == 0 or time.time() >= deadline:
                ppl = model.perplexity(val)
                print(f"step {step}: validation perplexity {ppl:.1f}")
                if ppl < best:
                    best = ppl
                    save(args.out, model, itos, {"val_perplexity": ppl, "steps": step})
                if time.time() >= deadline:
                    break
    best_model = load(args.out, itos)  # float16 weights, as the lesson will read them
    info = {"val_perplexity": best_model.perplexity(val), "minutes": round((time.time() - start) / 60, 1)}
    info["test_perplexity"] = best_model.perplexity(ngram_windows(corpus.test, vocab, order=4))
    save(args.out, best_model, itos, {**checkpoint.read(args.out).info, **info})
    print(
        f"test perplexity {info['test_perplexity']:.2f}; "
        f"best validation perplexity {best:.1f} after {step} steps ({(time.time() - start) / 60:.1f} min); "
        f"saved to {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)"
    )


def rescore(path: Path) -> None:
    """Record the validation and test perplexities of the saved parameters again (no training)."""
    torch.set_num_threads(1)
    corpus = load_sotu()
    itos = NGramLM(4, smoothing="kneser-ney", unk_cutoff=2).fit(corpus.train).vocab
    vocab = {w: i for i, w in enumerate(itos)}
    model = load(path, itos)
    old = checkpoint.read(path).info
    info = {
        "val_perplexity": model.perplexity(ngram_windows(corpus.val, vocab, order=4)),
        "test_perplexity": model.perplexity(ngram_windows(corpus.test, vocab, order=4)),
        "scored": "every word and one </s> per sentence (the standard count)",
    }
    save(path, model, itos, {**old, **info})
    print(
        f"{path}: validation perplexity {old.get('val_perplexity', float('nan')):.2f} -> {info['val_perplexity']:.2f}, "
        f"test {old.get('test_perplexity', float('nan')):.2f} -> {info['test_perplexity']:.2f}"
    )


if __name__ == "__main__":
    main()
