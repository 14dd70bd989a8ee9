"""Lesson 07's measured findings, over several seeds: the build-up, pre- vs post-norm, GPT vs LSTM.

    .venv/bin/python scripts/train_buildup.py --out-dir my_findings          # all three experiments, 3 seeds each
    .venv/bin/python scripts/train_buildup.py --experiment norm --out-dir my_findings  # one of them
    .venv/bin/python scripts/train_buildup.py --tiny --out-dir /tmp/x        # the test's setting: seconds
    .venv/bin/python scripts/train_buildup.py --replace-shipped              # rewrite the course's files

Without ``--out-dir`` or ``--replace-shipped`` it stops: the default folder holds the files lessons 07
and 07b read.

Three experiments, each trained from seeds 0, 1, 2 (``--seeds``) on the same batches per seed
(windows of the State of the Union training characters, AdamW, gradient clipping at 1 unless a
setting says otherwise) and
evaluated on the first ``--val-tokens`` characters of the validation split
(course_lib.lm.evaluate_lm). Per setting the results keep every seed, their mean and standard
deviation (lesson 07 and 07b show the tables; no lesson cell trains this much):

* ``buildup``: every step of course_lib.buildup.STEPS (bigram -> one head -> multi-head ->
  + feed-forward -> + residual -> + LayerNorm, all after the bigram at the same depth), with the
  validation curves; written to course_lib/weights/gpt_buildup_sotu_char.json.
* ``norm``: a pre-norm and a post-norm GPT (course_lib.transformer.GPT, ``norm_first``), shallow
  (2 layers, lr 3e-3) and deep (``--deep-layers`` layers, lr 1e-2), no warm-up, and, to test the
  explanation, deep without gradient clipping and twice as deep with and without it: the final
  training loss (mean of the last 20 steps), the validation loss, and whether a run diverged
  (a non-finite loss, or a final training loss above the unigram's);
* ``lstm``: the lesson's GPT against the character LSTM (course_lib.rnn.RNNLanguageModel), the
  same number of steps on the same batches;
the last two go to course_lib/weights/gpt_findings_sotu_char.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import torch

from course_lib import checkpoint, set_seed
from course_lib.buildup import STEPS, build_step
from course_lib.corpora import load_sotu
from course_lib.lm import char_vocab, encode_stream, evaluate_lm, lm_batches
from course_lib.rnn import RNNLanguageModel
from course_lib.train import fit
from course_lib.transformer import GPT, GPTConfig

BUILDUP = "gpt_buildup_sotu_char.json"
FINDINGS = "gpt_findings_sotu_char.json"
EXPERIMENTS = ("buildup", "norm", "lstm")
NORM_SETTINGS = ["shallow", "deep", "deep, no clipping", "deeper", "deeper, no clipping"]


def spread(values: list[float]) -> dict:
    """Every seed's value, their mean and (sample) standard deviation, min and max."""
    finite = [v for v in values if math.isfinite(v)]
    return {
        "seeds": values,
        "mean": statistics.fmean(finite) if finite else float("nan"),
        "sd": statistics.stdev(finite) if len(finite) > 1 else 0.0,
        "min": min(finite) if finite else float("nan"),
        "max": max(finite) if finite else float("nan"),
    }


def train(model, train_stream, val, seed, args, *, steps, lr, evaluate_every=None, clip=1.0):
    """``steps`` AdamW steps from ``seed``'s batches, gradients clipped at norm ``clip`` (None: not
    clipped): (history, validation loss, CPU seconds)."""
    batches = lm_batches(
        train_stream, args.block_size, args.batch_size, steps, generator=torch.Generator().manual_seed(seed)
    )
    start = time.process_time()
    history = fit(
        model,
        lambda m, batch: m(*batch)[1],
        torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01),
        batches,
        clip_grad_norm=clip,
        evaluate=(lambda m: {"val_loss": evaluate_lm(m, val, block_size=args.block_size)}) if evaluate_every else None,
        eval_every=evaluate_every,
        progress=False,
    )
    seconds = time.process_time() - start
    val_loss = (
        evaluate_lm(model, val, block_size=args.block_size) if all(map(math.isfinite, history.loss)) else math.inf
    )
    return history, val_loss, seconds


def buildup(vocab, train_stream, val, args) -> dict:
    steps = {}
    for name in args.only_steps or STEPS:
        runs = []
        for seed in args.seeds:
            set_seed(seed)
            model = build_step(name, len(vocab), block_size=args.block_size, d_model=args.d_model)
            history, val_loss, seconds = train(
                model, train_stream, val, seed, args, steps=args.steps, lr=args.lr, evaluate_every=args.eval_every
            )
            runs.append((val_loss, seconds, history))
        curves = [[e["val_loss"] for e in h.evals] for _, _, h in runs]
        steps[name] = {
            "val_loss": spread([r[0] for r in runs]),
            "params": sum(p.numel() for p in model.parameters()),
            "cpu_seconds": round(statistics.fmean(r[1] for r in runs), 1),
            "curve": {
                "step": [e["step"] for e in runs[0][2].evals],
                "val_loss_mean": [statistics.fmean(c) for c in zip(*curves)],
                "val_loss_min": [min(c) for c in zip(*curves)],
                "val_loss_max": [max(c) for c in zip(*curves)],
            },
        }
        v = steps[name]["val_loss"]
        print(f"{name:>15}: val {v['mean']:.4f} +- {v['sd']:.4f} over {len(args.seeds)} seeds", flush=True)
    return steps


def unigram_loss(train_stream, vocab_size) -> float:
    """The cross-entropy of the unigram distribution on its own data: the plateau of a model that ignores context."""
    counts = torch.bincount(train_stream, minlength=vocab_size).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * p.log()).sum())


def norm_settings(args) -> dict:
    """name -> (layers, learning rate, gradient clipping norm or None). The last three test the
    explanation of the first two: clipping tames the large early gradients Xiong et al. blame, and
    their argument is about depth."""
    deep, deeper = args.deep_layers, 2 * args.deep_layers
    return {
        "shallow": (2, 3e-3, 1.0),
        "deep": (deep, 1e-2, 1.0),
        "deep, no clipping": (deep, 1e-2, None),
        "deeper": (deeper, 1e-2, 1.0),
        "deeper, no clipping": (deeper, 1e-2, None),
    }


def norm(vocab, train_stream, val, args) -> dict:
    plateau = unigram_loss(train_stream, len(vocab))
    out = {"unigram_loss": plateau, "settings": {}}
    for setting, (n_layers, lr, clip) in norm_settings(args).items():
        if args.only_settings and setting not in args.only_settings:
            continue
        out["settings"][setting] = {"n_layers": n_layers, "lr": lr, "clip": clip, "runs": {}}
        for name, norm_first in (("pre-norm", True), ("post-norm", False)):
            finals, vals, diverged = [], [], []
            for seed in args.seeds:
                set_seed(seed)
                config = GPTConfig(
                    vocab_size=len(vocab),
                    block_size=args.block_size,
                    n_layers=n_layers,
                    n_heads=4,
                    d_model=args.d_model,
                    norm_first=norm_first,
                )
                history, val_loss, _ = train(
                    GPT(config), train_stream, val, seed, args, steps=args.norm_steps, lr=lr, clip=clip
                )
                final = statistics.fmean(history.loss[-20:])
                finals.append(final if math.isfinite(final) else math.inf)
                vals.append(val_loss)
                diverged.append(not math.isfinite(final) or final > plateau)
            out["settings"][setting]["runs"][name] = {
                "train_loss_last20": spread(finals),
                "val_loss": spread(vals),
                "stuck_or_diverged": diverged,
            }
            print(f"{setting:>8} {name:>9}: val {spread(vals)['mean']:.4f}, stuck/diverged {diverged}", flush=True)
    out["steps"] = args.norm_steps
    return out


def lstm(vocab, train_stream, val, args) -> dict:
    makers = {
        "GPT (2 layers, 4 heads, d_model 64)": lambda: GPT(
            GPTConfig(vocab_size=len(vocab), block_size=args.block_size, n_layers=2, n_heads=4, d_model=64)
        ),
        "LSTM (embedding 32, hidden 128)": lambda: RNNLanguageModel(len(vocab), 32, 128, rnn="lstm"),
    }
    out = {"steps": args.lstm_steps, "models": {}}
    for name, make in makers.items():
        if args.only_models and not any(name.startswith(m) for m in args.only_models):
            continue
        vals, seconds = [], []
        for seed in args.seeds:
            set_seed(seed)
            model = make()
            _, val_loss, s = train(model, train_stream, val, seed, args, steps=args.lstm_steps, lr=3e-3)
            vals.append(val_loss)
            seconds.append(s)
        out["models"][name] = {
            "params": sum(p.numel() for p in model.parameters()),
            "val_loss": spread(vals),
            "cpu_seconds": spread(seconds),
        }
        print(f"{name}: val {spread(vals)['mean']:.4f} +- {spread(vals)['sd']:.4f}", flush=True)
    return out


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", choices=EXPERIMENTS, action="append", help="default: all three")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=500, help="training steps per build-up step")
    parser.add_argument("--norm-steps", type=int, default=200)
    parser.add_argument("--deep-layers", type=int, default=4)
    parser.add_argument("--lstm-steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--val-tokens", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tiny", action="store_true", help="a few steps of each, on small sizes (the test's setting)")
    parser.add_argument("--out-dir", default=str(checkpoint.WEIGHTS_DIR))
    parser.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped files")
    # to spread one experiment over several processes, then --merge their output folders
    parser.add_argument("--only-steps", nargs="+", choices=list(STEPS), help="buildup: only these steps")
    parser.add_argument("--only-settings", nargs="+", choices=NORM_SETTINGS, help="norm: only these settings")
    parser.add_argument("--only-models", nargs="+", choices=["GPT", "LSTM"], help="lstm: only these models")
    parser.add_argument("--merge", nargs="+", metavar="DIR", help="merge the files written in these folders")
    args = parser.parse_args(argv)
    if args.tiny:
        args.steps, args.norm_steps, args.lstm_steps, args.eval_every = 4, 4, 4, 2
        args.batch_size, args.block_size, args.d_model, args.deep_layers, args.val_tokens = 4, 8, 16, 3, 200
    return args


def data(args):
    corpus = load_sotu(level="char")
    vocab = char_vocab(corpus.train)
    train_stream = encode_stream(corpus.train, vocab)
    val = encode_stream(corpus.val, vocab)[: args.val_tokens + 1]
    return vocab, train_stream, val


def merge(folders, out_dir: Path) -> dict:
    """One file per name from the parts written in ``folders`` (build-up steps in STEPS order)."""
    written = {}
    for name in (BUILDUP, FINDINGS):
        parts = [json.loads((Path(f) / name).read_text()) for f in folders if (Path(f) / name).exists()]
        if not parts:
            continue
        record = parts[0]
        for part in parts[1:]:
            for key, value in part.items():
                if key == "steps" and name == BUILDUP:
                    record["steps"] |= value
                elif key == "norm" and "norm" in record:
                    record["norm"]["settings"] |= value["settings"]
                elif key == "lstm" and "lstm" in record:
                    record["lstm"]["models"] |= value["models"]
                else:
                    record.setdefault(key, value)
        if name == BUILDUP:
            record["steps"] = {k: record["steps"][k] for k in STEPS if k in record["steps"]}
        if "norm" in record:
            record["norm"]["settings"] = {
                k: record["norm"]["settings"][k] for k in NORM_SETTINGS if k in record["norm"]["settings"]
            }
        written[name] = record
    return written


def main(argv=None) -> dict:
    args = parse_args(argv)
    checkpoint.refuse_to_replace_shipped(args.out_dir, replace_shipped=args.replace_shipped, option="--out-dir")
    if args.merge:
        out_dir = Path(args.out_dir)
        written = merge(args.merge, out_dir)
        for name, record in written.items():
            (out_dir / name).write_text(json.dumps(record, indent=1))
            print(f"wrote {out_dir / name}")
        return written
    torch.set_num_threads(args.threads)
    vocab, train_stream, val = data(args)
    budget = {
        k: getattr(args, k) for k in ("steps", "batch_size", "block_size", "d_model", "lr", "val_tokens", "seeds")
    }
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    experiments = args.experiment or EXPERIMENTS
    if "buildup" in experiments:
        record = {"budget": budget, "torch": torch.__version__, "steps": buildup(vocab, train_stream, val, args)}
        written[BUILDUP] = record
    findings_path = out_dir / FINDINGS
    findings = json.loads(findings_path.read_text()) if findings_path.exists() else {}
    for name, run in (("norm", norm), ("lstm", lstm)):
        if name in experiments:
            findings[name] = run(vocab, train_stream, val, args) | {"budget": budget}
    if "norm" in experiments or "lstm" in experiments:
        written[FINDINGS] = findings | {"torch": torch.__version__}
    for name, record in written.items():
        (out_dir / name).write_text(json.dumps(record, indent=1))
        print(f"wrote {out_dir / name}")
    return written


if __name__ == "__main__":
    main()
