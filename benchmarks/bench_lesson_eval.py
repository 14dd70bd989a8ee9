"""What lesson 02's evaluation costs: the feedforward LM on the test set, and the windows it reads (issue 32).

    .venv/bin/python benchmarks/bench_lesson_eval.py [--repeats 3]

On lesson 02's data (the State of the Union test split, 215,755 windows of 3 context words and a target,
lesson 01's vocabulary of 17,810 ids) and its shipped checkpoint, interleaved and repeated (median; wall and
CPU seconds, one torch thread as the lesson has):
  * ``FeedForwardLM.log_probs`` (each distinct context scored once, the normaliser by logsumexp) against the
    reference it replaced here: one (batch, V) log-softmax per window, batches of 256;
  * ``ngram_windows`` (all sentences in one sliding window) against one sliding window per sentence.
Each pair must agree (the windows exactly, the log-probabilities within float32 rounding). Prints a markdown
table; the numbers go to the "Test suite" section of RESULTS.md by hand. The machine is shared: compare the
two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib import checkpoint, fflm  # noqa: E402
from course_lib.corpora import load_sotu  # noqa: E402
from course_lib.ngram import NGramLM  # noqa: E402


@torch.no_grad()
def log_probs_one_softmax_per_window(model, windows, batch_size=256):
    """The reference: every window's own (V,) log-softmax, its target's entry kept."""
    out = []
    for s in range(0, len(windows), batch_size):
        batch = windows[s : s + batch_size]
        z, _ = model.forward(batch[:, :-1])
        out.append(torch.log_softmax(z, dim=1).gather(1, batch[:, -1:])[:, 0])
    return torch.cat(out)


def windows_one_sentence_at_a_time(sentences, word_to_id, order=4):
    """The reference: each padded sentence's own sliding window, concatenated."""
    p, unk = order - 1, word_to_id["<UNK>"]
    rows = []
    for sentence in sentences:
        ids = [word_to_id["<s>"]] * p + [word_to_id.get(w, unk) for w in sentence] + [word_to_id["</s>"]]
        rows.append(np.lib.stride_tricks.sliding_window_view(np.array(ids, dtype=np.int64), order))
    return torch.from_numpy(np.concatenate(rows))


def timed(f):
    wall, cpu = time.perf_counter(), time.process_time()
    result = f()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    corpus = load_sotu(level="word")
    lm = NGramLM(4, smoothing="kneser-ney", unk_cutoff=2).fit(corpus.train)
    model, _ = checkpoint.load(
        checkpoint.weights_path("fflm_sotu"),
        build=lambda config: fflm.FeedForwardLM(**config),
        kind="fflm",
        vocab=lm.vocab,
    )
    test = fflm.ngram_windows(corpus.test, lm.word_to_id, order=4)
    cases = {
        "FF LM log-probs of the test windows": (
            lambda: model.log_probs(test),
            lambda: log_probs_one_softmax_per_window(model, test),
            lambda a, b: float((a - b).abs().max()) < 1e-4,
        ),
        "ngram_windows of train + val + test": (
            lambda: [fflm.ngram_windows(corpus[s], lm.word_to_id) for s in ("train", "val", "test")],
            lambda: [windows_one_sentence_at_a_time(corpus[s], lm.word_to_id) for s in ("train", "val", "test")],
            lambda a, b: all(torch.equal(x, y) for x, y in zip(a, b)),
        ),
    }
    print("| work | now: wall s | now: CPU s | reference: wall s | reference: CPU s | CPU ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (now, reference, agree) in cases.items():
        times = {"now": [], "reference": []}
        for _ in range(args.repeats):
            a, *t_now = timed(now)
            b, *t_ref = timed(reference)
            if not agree(a, b):
                raise AssertionError(f"{name}: the two paths disagree")
            times["now"].append(t_now)
            times["reference"].append(t_ref)
        med = {k: [statistics.median(t[i] for t in v) for i in (0, 1)] for k, v in times.items()}
        print(
            f"| {name} | {med['now'][0]:.1f} | {med['now'][1]:.1f} | {med['reference'][0]:.1f} | "
            f"{med['reference'][1]:.1f} | {med['now'][1] / med['reference'][1]:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
