"""Train the checkpoints that lesson 03 loads: four recurrent networks, two training mixes.

    python scripts/train_parentheses.py --out my_weights     # all 8 runs, 2 at a time
    python scripts/train_parentheses.py --models lstm --regimes with_transpositions --steps 2000 --out my_weights
    python scripts/train_parentheses.py --replace-shipped    # retrain the shipped checkpoints (maintainers)

Without --out (or --replace-shipped) the script stops before it overwrites the shipped checkpoints.

For each model ("elman", "gated", "gru", "lstm") and each mix of course_lib.parentheses.MIXES
("no_transpositions", "with_transpositions") it trains a SequenceClassifier (one-hot input,
hidden size 64) with Adam and a cosine learning-rate decay, using course_lib.train.fit on
length-grouped batches, and writes <--out>/parentheses_<model>_<regime>.safetensors (shipped: course_lib/weights)
(course_lib.checkpoint's format, through course_lib.rnn.save_classifier): the weights, the config and,
as its info, the training history (loss at every step; accuracy on every held-out set every
--eval-every steps) and the settings. The held-out sets are the ones the lesson evaluates on
(test split, 1000 sequences per negative kind, 50/50 with positives, lengths 2..20 and
22..40), so the curves end at the numbers the lesson shows.

The committed checkpoints took 29 minutes with the defaults on a shared 2-core CPU (other
jobs kept its load near 10), runs in parallel: per run (each checkpoint's info records its seconds)
3.4 to 6.5 minutes for the Elman and gated networks, 6.8 to 11.8 minutes for the GRU and the LSTM.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from course_lib import checkpoint  # noqa: E402
from course_lib import parentheses as P  # noqa: E402
from course_lib.rnn import RNN_TYPES, SequenceClassifier, save_classifier  # noqa: E402
from course_lib.train import History, fit  # noqa: E402

N_TEST = 1000  # sequences per held-out set (the lesson uses the same sets)
TEST_SEEDS = {"short": 1, "long": 11}


def held_out_sets(n_test: int = N_TEST) -> dict[str, P.ParenthesesSet]:
    """'<kind>' at lengths 2..20 and '<kind>_long' at 22..40, as lesson 03 builds them (with n_test = 1000)."""
    sets = P.test_sets(n_test, P.SHORT_LENGTHS, seed=TEST_SEEDS["short"])
    sets.update({f"{k}_long": s for k, s in P.test_sets(n_test, P.LONG_LENGTHS, seed=TEST_SEEDS["long"]).items()})
    return sets


def train_one(model_name: str, regime: str, args) -> dict:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started = time.perf_counter()
    train = P.make_dataset(args.n_train, P.MIXES[regime], P.SHORT_LENGTHS, seed=args.seed)
    sets = held_out_sets(args.n_test)
    tokens, lengths, labels = train.tensors()
    batches = P.length_batches(
        tokens, lengths, labels, args.batch_size, generator=torch.Generator().manual_seed(args.seed)
    )
    model = SequenceClassifier(model_name, n_symbols=10, hidden_size=args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    history = History()
    for start in range(0, args.steps, args.eval_every):  # a cosine decay, one chunk of steps at a time
        lr = args.lr_min + 0.5 * (args.lr - args.lr_min) * (1 + math.cos(math.pi * start / args.steps))
        for group in optimizer.param_groups:
            group["lr"] = lr
        history = fit(
            model,
            P.batch_loss,
            optimizer,
            batches,
            epochs=10_000,
            max_steps=min(args.eval_every, args.steps - start),
            clip_grad_norm=1.0,
            progress=False,
            evaluate=lambda m: P.accuracies(m, sets),
            history=history,
        )
        e = history.evals[-1]
        print(
            f"{model_name:>5} {regime:<19} step {e['step']:>6}  lr {lr:.1e}  loss {history.smoothed_loss()[-1]:.4f}  "
            + " ".join(f"{k[:5]}{'_L' if k.endswith('_long') else ''} {v:.3f}" for k, v in e.items() if k != "step"),
            flush=True,
        )
    path = Path(args.out) / P.checkpoint_path(model_name, regime).name
    info = {
        "regime": regime,
        "mix": P.MIXES[regime],
        "n_train": args.n_train,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "lr_min": args.lr_min,
        "seed": args.seed,
        "torch_version": str(torch.__version__),
        "seconds": time.perf_counter() - started,
        "history": {"step": history.step, "loss": history.loss, "evals": history.evals, "seconds": history.seconds},
    }
    save_classifier(path, model, info=info)  # float32: the lesson's accuracies are these weights' own
    print(f"wrote {path} after {time.perf_counter() - started:.0f} s", flush=True)
    return {"model": model_name, "regime": regime, **history.evals[-1]}


def _run(job):
    return train_one(*job)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["lstm", "gru", "gated", "elman"], choices=sorted(RNN_TYPES))
    ap.add_argument(
        "--regimes", nargs="+", default=["with_transpositions", "no_transpositions"], choices=sorted(P.MIXES)
    )
    ap.add_argument("--steps", type=int, default=12_000)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--n-train", type=int, default=200_000)
    ap.add_argument("--n-test", type=int, default=N_TEST, help="sequences per held-out set (the lesson's: 1000)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--lr-min", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel (processes)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run")
    ap.add_argument("--out", default=str(ROOT / "course_lib" / "weights"))
    ap.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped files")
    args = ap.parse_args(argv)
    checkpoint.refuse_to_replace_shipped(args.out, replace_shipped=args.replace_shipped)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    jobs = [(m, r, args) for r in args.regimes for m in args.models]
    if args.jobs > 1:
        with mp.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(_run, jobs, chunksize=1)
    else:
        results = [_run(job) for job in jobs]
    for r in results:
        print(r)
    return results


if __name__ == "__main__":
    main()
