"""course_lib.parentheses: the lecture's test vectors, generator properties, held-out sets, batching."""

import itertools
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import parentheses as P

# --------------------------------------------------------------------------- the lecture's examples


@pytest.mark.parametrize("signs,label", P.SEED_BINARY)
def test_the_lectures_binary_examples(signs, label):
    assert P.is_balanced(P.from_signs(signs), n_symbols=2) == bool(label)


@pytest.mark.parametrize("seq,label", P.SEED_COLORED)
def test_the_lectures_colored_examples(seq, label):
    assert P.is_balanced(seq) == bool(label)  # n_symbols=10 is the default
    assert P.is_balanced(seq, n_symbols=10) == bool(label)


def test_the_test_vectors_are_the_lectures_tables():
    # Galerne's notes: "Sequence / Class" tables, binary then 10 colours
    assert P.SEED_BINARY == [
        ([1, 1, -1, -1, 1, -1], 1),
        ([1, -1, 1, -1], 1),
        ([1, -1, 1, 1, -1, 1, -1, -1], 1),
        ([1, 1, -1, -1, -1, 1, -1, 1], 0),
        ([1, -1, -1, 1, 1, -1], 0),
        ([1, -1, -1, 1], 0),
    ]
    assert P.SEED_COLORED == [
        ([2, 0, 9, 7, 0, 9], 1),
        ([1, 8, 3, 6], 1),
        ([0, 9, 2, 4, 5, 2, 7, 7], 1),
        ([0, 2, 7, 9, 7, 2, 7, 3], 0),
        ([1, 8, 9, 0, 1, 9], 0),
        ([1, 8, 7, 1], 0),
    ]


def _brute_force_balanced(seq, n_symbols):
    """Reference without a stack: repeatedly delete adjacent matching pairs until nothing changes."""
    seq = list(seq)
    while True:
        for i in range(len(seq) - 1):
            if seq[i] < n_symbols // 2 and seq[i + 1] == n_symbols - 1 - seq[i]:
                del seq[i : i + 2]
                break
        else:
            return not seq


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5).flatmap(lambda k: st.tuples(st.just(2 * k), st.lists(st.integers(0, 2 * k - 1), max_size=12))))
def test_is_balanced_equals_pair_deletion(case):
    n_symbols, seq = case
    assert P.is_balanced(seq, n_symbols) == _brute_force_balanced(seq, n_symbols)


def test_is_balanced_rules():
    assert P.is_balanced([])
    assert P.is_balanced([0, 9]) and P.is_balanced([4, 5]) and not P.is_balanced([0, 8])
    assert not P.is_balanced([9, 0])  # a closer on an empty stack
    assert P.is_balanced([0, 1, 8, 9])  # 0( 1( 1) 0)
    assert not P.is_balanced([0, 1, 9, 8])  # crossed: 0( 1( 0) 1)
    assert P.is_balanced(torch.tensor([1, 8]))
    assert P.is_balanced([0, 3], n_symbols=4) and not P.is_balanced([0, 2], n_symbols=4)


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda: P.is_balanced([0, 10]), ValueError, r"symbols in 0..9"),
        (lambda: P.is_balanced([1, -1], n_symbols=2), ValueError, "from_signs"),
        (lambda: P.is_balanced([0, 1], n_symbols=3), ValueError, "even integer"),
        (lambda: P.is_balanced("()"), TypeError, "integer symbols"),
        (lambda: P.is_balanced([0.0, 9]), ValueError, "integer symbols"),
        (lambda: P.from_signs([1, 0]), ValueError, "1 \\(open\\) and -1"),
        (lambda: P.random_positive(7), ValueError, "even integer"),
        (lambda: P.sample("transposition", 2), ValueError, ">= 4"),
        (lambda: P.sample("nonsense", 4), ValueError, "kind must be one of"),
        (lambda: P.transpose_closers([0, 9, 0, 9], 0), ValueError, "no two closers"),
        (lambda: P.transposition_pairs([9, 0]), ValueError, "balanced"),
        (lambda: P.make_dataset(10, {"positive": 1, "odd": 1}), ValueError, "unknown kinds"),
        (lambda: P.make_dataset(10, split="val"), ValueError, "split must be"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --------------------------------------------------------------------------- generators


def _structure(seq, n_symbols=10):
    return tuple(s < n_symbols // 2 for s in seq)


def test_positive_structures_are_uniform():
    """All Catalan(4) = 14 balanced structures of length 8 come out equally often (chi-square)."""
    rng = np.random.default_rng(0)
    n = 14_000
    counts = Counter(_structure(P.random_positive(8, rng)) for _ in range(n))
    assert len(counts) == 14
    chi2 = sum((c - n / 14) ** 2 / (n / 14) for c in counts.values())
    assert chi2 < 36.1  # 99.9% quantile of chi-square with 13 degrees of freedom is 34.5


def test_positive_colours_are_uniform_and_matched():
    rng = np.random.default_rng(1)
    seqs = [P.random_positive(12, rng) for _ in range(2000)]
    assert all(P.is_balanced(s) for s in seqs)
    openers = Counter(x for s in seqs for x in s if x < 5)
    assert set(openers) == set(range(5)) and max(openers.values()) / min(openers.values()) < 1.1


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(P.KINDS), st.integers(2, 20), st.integers(0, 2**32 - 1), st.sampled_from([4, 6, 10]))
def test_generator_labels_match_is_balanced(kind, half, seed, n_symbols):
    length = 2 * half
    if kind == "transposition" and length < 4:
        return
    seq = P.sample(kind, length, np.random.default_rng(seed), n_symbols)
    assert len(seq) == length and all(0 <= s < n_symbols for s in seq)
    assert P.is_balanced(seq, n_symbols) == (kind == "positive")


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 20), st.integers(0, 2**32 - 1))
def test_each_negative_kind_is_what_it_says(half, seed):
    rng = np.random.default_rng(seed)
    length = 2 * half
    # wrong structure: equal counts per colour, but a prefix dips below zero
    s = P.wrong_structure(length, rng)
    assert not P.colour_blind_rule(s) and sum(x < 5 for x in s) == half
    assert Counter(P.colour_of(x) for x in s if x < 5) == Counter(P.colour_of(x) for x in s if x >= 5)
    # colour swap: right structure, exactly one closer changed
    pos = P.random_positive(length, rng)
    swapped = P.colour_swap(pos, rng)
    diff = [i for i in range(length) if swapped[i] != pos[i]]
    assert len(diff) == 1 and pos[diff[0]] >= 5 and swapped[diff[0]] >= 5
    assert P.colour_blind_rule(swapped) and not P.per_colour_rule(swapped)
    # transposition: right structure, two closers exchanged, every counter still satisfied
    if P.transposition_pairs(pos):
        t = P.transpose_closers(pos, rng)
        diff = [i for i in range(length) if t[i] != pos[i]]
        assert len(diff) == 2 and sorted(t) == sorted(pos) and _structure(t) == _structure(pos)
        assert t[diff[0]] == pos[diff[1]] and t[diff[1]] == pos[diff[0]]
        assert P.per_colour_rule(t) and not P.is_balanced(t)


def test_transposition_pairs_are_exactly_the_swaps_no_counter_catches():
    rng = np.random.default_rng(2)
    for _ in range(500):
        seq = P.random_positive(2 * int(rng.integers(2, 9)), rng)
        expected = []
        for p, q in itertools.combinations([i for i, s in enumerate(seq) if s >= 5], 2):
            t = list(seq)
            t[p], t[q] = t[q], t[p]
            if seq[p] != seq[q] and P.per_colour_rule(t):
                expected.append((p, q))
        assert P.transposition_pairs(seq) == expected
    # the smallest case: b( a( a) b) -> b( a( b) a)
    assert P.transposition_pairs([1, 0, 9, 8]) == [(2, 3)]
    assert P.transpose_closers([1, 0, 9, 8], 0) == [1, 0, 8, 9]
    # q stops where colour b has no open parenthesis left: 1( 0( 9) 8) 1( 8) -> only (2, 3)
    assert P.transposition_pairs([1, 0, 9, 8, 1, 8]) == [(2, 3)]


def test_transpose_closers_draws_every_pair():
    seq = [0, 1, 2, 7, 8, 9]
    pairs = P.transposition_pairs(seq)
    rng = np.random.default_rng(3)
    seen = Counter(tuple(P.transpose_closers(seq, rng)) for _ in range(600))
    assert len(seen) == len(pairs) == 3 and min(seen.values()) > 150


def test_stack_tops_and_depths():
    seq = [2, 0, 9, 7, 0, 9]
    assert P.stack_depths(seq) == [1, 2, 1, 0, 1, 0]
    assert P.stack_tops(seq) == [2, 0, 2, -1, 0, -1]
    assert P.stack_tops(seq, position=1) == [-1, 2, -1, -1, -1, -1]


def test_brackets_and_parse():
    assert P.to_brackets([2, 0, 9, 7, 0, 9]) == "{()}()"
    assert P.to_brackets([0, 1], n_symbols=2) == "()"
    for seq, _ in P.SEED_COLORED:
        assert P.parse(P.to_brackets(seq)) == seq
    assert P.parse("2 0 9 7, 0 9") == [2, 0, 9, 7, 0, 9] == P.parse("{( )}()")
    assert P.parse("") == []
    with pytest.raises(ValueError, match="cannot read 'x'"):
        P.parse("(x)")
    with pytest.raises(ValueError, match="0..9"):
        P.parse("0 12")


def test_baselines():
    assert P.colour_blind_rule([0, 8]) and not P.per_colour_rule([0, 8])
    assert P.per_colour_rule([1, 0, 8, 9]) and not P.is_balanced([1, 0, 8, 9])
    for seq, label in P.SEED_COLORED:
        if label:
            assert P.colour_blind_rule(seq) and P.per_colour_rule(seq)


# --------------------------------------------------------------------------- datasets and batches


def test_dataset_mix_lengths_and_determinism():
    d = P.make_dataset(1000, lengths=[4, 8])
    assert d.counts() == {"positive": 500, "random": 125, "structure": 125, "colour_swap": 125, "transposition": 125}
    assert {len(s) for s in d.seqs} == {4, 8}
    assert all(P.is_balanced(s) == bool(y) for s, y in zip(d.seqs, d.labels))
    assert P.make_dataset(1000, lengths=[4, 8]).seqs == d.seqs
    assert P.make_dataset(1000, lengths=[4, 8], seed=5).seqs != d.seqs
    only = P.make_dataset(50, {"transposition": 1}, lengths=[2, 6])
    assert {len(s) for s in only.seqs} == {6}  # no transposition exists at length 2


def test_held_out_sets_share_no_sequence_with_training():
    train = P.make_dataset(3000, lengths=range(2, 11, 2), seed=4)
    tests = P.test_sets(400, range(2, 11, 2))
    assert not any(P.is_held_out(s) for s in train.seqs)
    for kind, s in tests.items():
        assert s.counts() == {"positive": 200, kind: 200}
        assert all(P.is_held_out(x) for x in s.seqs) and not set(s.seqs) & set(train.seqs)
        assert all(P.is_balanced(x) == bool(y) for x, y in zip(s.seqs, s.labels))
    # the split is a fixed property of the sequence: about one in HELD_OUT_BUCKETS is held out
    rng = np.random.default_rng(0)
    share = np.mean([P.is_held_out(P.random_positive(12, rng)) for _ in range(5000)])
    assert abs(share - 1 / P.HELD_OUT_BUCKETS) < 0.02


def test_baselines_on_the_test_sets():
    """Colour-blind counting fails colour swaps; per-colour counting fails transpositions; the stack fails nothing."""
    tests = P.test_sets(400, range(4, 21, 2))

    def acc(rule, s):
        return np.mean([rule(x) == bool(y) for x, y in zip(s.seqs, s.labels)])

    assert acc(P.colour_blind_rule, tests["structure"]) == 1.0
    assert acc(P.colour_blind_rule, tests["colour_swap"]) == 0.5
    assert acc(P.per_colour_rule, tests["colour_swap"]) == 1.0
    assert acc(P.colour_blind_rule, tests["transposition"]) == acc(P.per_colour_rule, tests["transposition"]) == 0.5
    assert all(acc(P.is_balanced, s) == 1.0 for s in tests.values())


def test_pad_and_length_batches():
    tokens, lengths = P.pad([[1, 8], [0, 2, 7, 9], [3, 6]])
    assert tokens.tolist() == [[1, 8, 0, 0], [0, 2, 7, 9], [3, 6, 0, 0]] and lengths.tolist() == [2, 4, 2]
    d = P.make_dataset(500, lengths=range(2, 21, 2))
    tok, L, y = d.tensors()
    epoch = P.length_batches(tok, L, y, batch_size=32, generator=torch.Generator().manual_seed(0))
    seen, spread = [], []
    for bt, bl, by in epoch():
        assert bt.shape[1] == bl.max() and len(bt) == len(bl) == len(by) <= 32
        seen += [tuple(row[:n].tolist()) + (int(lab),) for row, n, lab in zip(bt, bl, by)]
        spread.append(int(bl.max() - bl.min()))
    assert sorted(seen) == sorted(tuple(s) + (lab,) for s, lab in zip(d.seqs, d.labels))  # every example once
    assert np.mean(spread) <= 2  # batches hold sequences of (nearly) one length


@pytest.mark.parametrize("model", ["elman", "gated", "gru", "lstm"])
@pytest.mark.parametrize("regime", sorted(P.MIXES))
def test_shipped_checkpoints_load_with_their_history(model, regime):
    net, info = P.load_checkpoint(model, regime)
    assert net.config["rnn"] == model and info["regime"] == regime and info["mix"] == P.MIXES[regime]
    evals = info["history"]["evals"]
    assert evals[-1]["step"] == info["steps"] == len(info["history"]["loss"])
    assert set(evals[-1]) == {"step"} | set(P.NEGATIVE_KINDS) | {k + "_long" for k in P.NEGATIVE_KINDS}


def test_shipped_checkpoints_are_course_lib_checkpoints_only():
    """One format: every parentheses checkpoint is a safetensors file of course_lib.checkpoint, no .pt left."""
    from course_lib import checkpoint

    weights = checkpoint.WEIGHTS_DIR
    assert not list(weights.glob("parentheses_*.pt"))
    files = sorted(weights.glob("parentheses_*.safetensors"))
    assert len(files) == 8 and all(checkpoint.read(f).kind == "sequence_classifier" for f in files)


@pytest.mark.parametrize("model", ["elman", "gated", "gru", "lstm"])
@pytest.mark.parametrize("regime", sorted(P.MIXES))
def test_converted_checkpoints_reproduce_their_recorded_accuracies(model, regime):
    """The accuracies the training script measured at its last step (on the same held-out sets), recomputed
    from the converted weights: the conversion lost nothing."""
    torch.set_num_threads(1)
    net, info = P.load_checkpoint(model, regime)
    recorded = info["history"]["evals"][-1]
    sets = P.test_sets(1000, P.SHORT_LENGTHS, seed=1)
    sets.update({f"{k}_long": s for k, s in P.test_sets(1000, P.LONG_LENGTHS, seed=11).items()})
    measured = P.accuracies(net, sets)
    for name, acc in measured.items():
        assert abs(acc - recorded[name]) <= 1e-3, (name, acc, recorded[name])  # at most one sequence in 1000


def test_the_shipped_lstm_meets_the_transposition_goal():
    """Lesson 03's goal: >= 0.99 on held-out transpositions (50/50 with positives, lengths 2..20)."""
    net, _ = P.load_checkpoint("lstm", "with_transpositions")
    sets = P.test_sets(1000, P.SHORT_LENGTHS, seed=1, kinds=["transposition"])
    assert P.accuracies(net, sets)["transposition"] >= 0.99


def test_the_training_script_writes_a_checkpoint_the_loader_reads(tmp_path):
    """scripts/train_parentheses.py saves through course_lib.checkpoint; load_classifier reads it back."""
    import importlib.util
    from pathlib import Path

    from course_lib.rnn import load_classifier

    path = Path(__file__).resolve().parents[1] / "scripts" / "train_parentheses.py"
    spec = importlib.util.spec_from_file_location("train_parentheses", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    args = "--models elman --regimes no_transpositions --steps 3 --eval-every 3 --n-train 100 --n-test 20 --jobs 1"
    (result,) = script.main(args.split() + ["--out", str(tmp_path)])
    net, info = load_classifier(tmp_path / "parentheses_elman_no_transpositions.safetensors")
    assert net.config["rnn"] == "elman" and info["steps"] == 3 and len(info["history"]["loss"]) == 3
    recorded = {k: v for k, v in result.items() if k not in ("model", "regime")}
    assert info["history"]["evals"][-1] == recorded and result["model"] == "elman"
