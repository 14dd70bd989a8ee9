"""Balanced (colored) parentheses, lesson 03's task: data sets, batches, evaluation and shipped checkpoints.

The symbols and the stack test are in :mod:`course_lib.parentheses_symbols`, the generators of
positives and of each kind of negative in :mod:`course_lib.parentheses_generators`; both are
re-exported here, so ``from course_lib import parentheses as P`` gives the whole task.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from course_lib import checkpoint
from course_lib._validate import positive_int
from course_lib.parentheses_generators import (
    _check_length,
    colour_swap,
    random_positive,
    random_structure,
    random_symbols,
    sample,
    transpose_closers,
    transposition_pairs,
    wrong_structure,
)
from course_lib.parentheses_symbols import (
    CLOSE_BRACKETS,
    KINDS,
    NEGATIVE_KINDS,
    OPEN_BRACKETS,
    SEED_BINARY,
    SEED_COLORED,
    _check_n_symbols,
    colour_blind_rule,
    colour_of,
    from_signs,
    is_balanced,
    parse,
    per_colour_rule,
    stack_depths,
    stack_tops,
    to_brackets,
)
from course_lib.rnn import SequenceClassifier, load_classifier
from course_lib.train import evaluating

__all__ = [
    "is_balanced",
    "from_signs",
    "colour_of",
    "stack_depths",
    "stack_tops",
    "colour_blind_rule",
    "per_colour_rule",
    "random_structure",
    "random_positive",
    "random_symbols",
    "wrong_structure",
    "colour_swap",
    "transpose_closers",
    "transposition_pairs",
    "sample",
    "KINDS",
    "NEGATIVE_KINDS",
    "ParenthesesSet",
    "make_dataset",
    "test_sets",
    "is_held_out",
    "pad",
    "length_batches",
    "SEED_BINARY",
    "SEED_COLORED",
    "to_brackets",
    "parse",
    "OPEN_BRACKETS",
    "CLOSE_BRACKETS",
    "SHORT_LENGTHS",
    "LONG_LENGTHS",
    "MIXES",
    "batch_loss",
    "predict",
    "accuracies",
    "rule_accuracies",
    "checkpoint_path",
    "load_checkpoint",
]


# --------------------------------------------------------------------------- datasets


@dataclass
class ParenthesesSet:
    """Sequences with their labels (1 = balanced) and the kind each was drawn as."""

    seqs: list[tuple[int, ...]]
    labels: list[int]
    kinds: list[str]
    n_symbols: int = 10

    def __post_init__(self):
        if not len(self.seqs) == len(self.labels) == len(self.kinds):
            raise ValueError(
                f"seqs, labels and kinds must have equal lengths, got "
                f"{len(self.seqs)}, {len(self.labels)}, {len(self.kinds)}"
            )

    def __len__(self) -> int:
        return len(self.seqs)

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(tokens (N, T_max) padded with 0, lengths (N,), labels (N,)), all torch.long."""
        tokens, lengths = pad(self.seqs)
        return tokens, lengths, torch.tensor(self.labels, dtype=torch.long)  # cpu: fit moves batches

    def where(self, kind: str) -> ParenthesesSet:
        """Only the sequences of ``kind``."""
        keep = [i for i, k in enumerate(self.kinds) if k == kind]
        return ParenthesesSet(
            [self.seqs[i] for i in keep], [self.labels[i] for i in keep], [kind] * len(keep), self.n_symbols
        )

    def counts(self) -> dict[str, int]:
        return {k: self.kinds.count(k) for k in KINDS if k in self.kinds}


SHORT_LENGTHS = range(2, 21, 2)  # what the models train on
LONG_LENGTHS = range(22, 41, 2)  # length generalisation: never seen in training

# Training mixes: half positives; the negatives with or without the kind only a stack catches.
MIXES = {
    "no_transpositions": {"positive": 0.5, "random": 0.5 / 3, "structure": 0.5 / 3, "colour_swap": 0.5 / 3},
    "with_transpositions": {
        "positive": 0.5,
        "random": 0.0625,
        "structure": 0.0625,
        "colour_swap": 0.1875,
        "transposition": 0.1875,
    },
}

HELD_OUT_BUCKETS = 5  # one sequence in 5 (by a hash of its symbols) is reserved for held-out sets


def is_held_out(seq: Sequence[int]) -> bool:
    """Whether ``seq`` belongs to the held-out split: a fixed hash of its symbols, so the training and
    test sets share no sequence, whoever draws them and with whatever seed."""
    return zlib.crc32(",".join(map(str, seq)).encode()) % HELD_OUT_BUCKETS == 0


def make_dataset(
    n: int,
    mix: dict[str, float] | None = None,
    lengths: Iterable[int] = SHORT_LENGTHS,
    n_symbols: int = 10,
    seed: int | None = 0,
    split: str = "train",
) -> ParenthesesSet:
    """``n`` sequences, each kind in the proportion ``mix`` gives it (exactly, up to rounding), in random
    order, each length uniform in ``lengths``.

    ``mix`` defaults to half positives, half negatives of all four kinds. ``split`` is "train"
    or "test": a sequence is kept only if :func:`is_held_out` agrees with the split, so held-out
    sets never share a sequence with a training set. Kinds impossible at a length (a
    transposition needs length >= 4) use the other lengths.
    """
    mix = dict(mix or {"positive": 0.5, **{k: 0.5 / len(NEGATIVE_KINDS) for k in NEGATIVE_KINDS}})
    unknown = set(mix) - set(KINDS)
    if unknown:
        raise ValueError(f"mix has unknown kinds {sorted(unknown)}; kinds are {KINDS}")
    if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(f"mix weights must be >= 0 with a positive sum, got {mix}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    lengths = sorted({_check_length(L) for L in lengths})
    if not lengths:
        raise ValueError("lengths is empty")
    positive_int("n", n)
    n_symbols = _check_n_symbols(n_symbols)
    rng = np.random.default_rng(seed)
    kinds_list = list(mix)
    share = np.array([mix[k] for k in kinds_list], dtype=float) * n / sum(mix.values())
    per_kind = np.floor(share).astype(int)  # exact proportions; the remainder by largest fraction
    per_kind[np.argsort(per_kind - share, kind="stable")[: n - per_kind.sum()]] += 1
    drawn_kinds = rng.permutation(np.repeat(np.arange(len(kinds_list)), per_kind))
    held_out = split == "test"
    seqs, labels, kinds = [], [], []
    for k in drawn_kinds:
        kind = kinds_list[k]
        allowed = [L for L in lengths if L >= 4] if kind == "transposition" else lengths
        if not allowed:
            raise ValueError("transpositions need a length >= 4 in lengths")
        for _ in range(1000):
            seq = tuple(sample(kind, int(allowed[rng.integers(0, len(allowed))]), rng, n_symbols))
            if is_held_out(seq) == held_out:
                break
        else:
            raise RuntimeError(f"could not draw a {kind} sequence of the {split} split: use longer lengths")
        seqs.append(seq)
        labels.append(int(kind == "positive"))
        kinds.append(kind)
    return ParenthesesSet(seqs, labels, kinds, n_symbols)


def test_sets(
    n_per_set: int, lengths: Iterable[int], n_symbols: int = 10, seed: int = 1, kinds: Sequence[str] = NEGATIVE_KINDS
) -> dict[str, ParenthesesSet]:
    """One held-out set per negative kind, each mixed 50/50 with positives, from the test split."""
    return {
        kind: make_dataset(n_per_set, {"positive": 0.5, kind: 0.5}, lengths, n_symbols, seed=seed + i, split="test")
        for i, kind in enumerate(kinds)
    }


test_sets.__test__ = False  # not a pytest test, despite its name


def pad(seqs: Sequence[Sequence[int]], value: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens (N, T_max) with ``value`` after each sequence's end, lengths (N,))."""
    if not len(seqs):
        raise ValueError("seqs is empty")
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)  # cpu: data, moved per batch
    if lengths.min() < 1:
        raise ValueError("every sequence needs at least one symbol")
    tokens = torch.full((len(seqs), int(lengths.max())), value, dtype=torch.long)  # cpu: as above
    for i, s in enumerate(seqs):
        tokens[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    return tokens, lengths


def length_batches(
    tokens: torch.Tensor,
    lengths: torch.Tensor,
    labels: torch.Tensor,
    batch_size: int,
    shuffle: bool = True,
    generator: torch.Generator | None = None,
    pool: int = 50,
) -> Callable[[], Iterable[tuple]]:
    """Like ``course_lib.train.make_batches``, but batches hold sequences of similar lengths.

    Each epoch shuffles, sorts every pool of ``pool`` batches by length, cuts batches, shuffles
    their order, and trims each batch's padding to its longest sequence: the loop over time
    steps then runs about as many steps as the batch really needs. Yields (tokens, lengths, labels).
    """
    n = len(tokens)
    if not len(lengths) == len(labels) == n:
        raise ValueError(f"tokens, lengths and labels must align, got {n}, {len(lengths)}, {len(labels)}")
    positive_int("batch_size", batch_size)

    def epoch():
        order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)  # cpu: indices
        chunk = batch_size * pool
        batches = []
        for start in range(0, n, chunk):
            idx = order[start : start + chunk]
            idx = idx[torch.argsort(lengths[idx], stable=True)]
            batches += [idx[i : i + batch_size] for i in range(0, len(idx), batch_size)]
        if shuffle:
            shuffled = torch.randperm(len(batches), generator=generator)  # cpu: shuffles a Python list
            batches = [batches[i] for i in shuffled]
        for idx in batches:
            T = int(lengths[idx].max())
            yield tokens[idx, :T], lengths[idx], labels[idx]

    return epoch


# --------------------------------------------------------------------------- training and evaluation


def batch_loss(model, batch) -> torch.Tensor:
    """The loss for ``course_lib.train.fit``: cross-entropy of the prediction at each sequence's last step."""
    tokens, lengths, labels = batch
    return torch.nn.functional.cross_entropy(model(tokens, lengths), labels)


def predict(model, data: ParenthesesSet, batch_size: int = 2000) -> torch.Tensor:
    """P(balanced) for every sequence of ``data`` (model in eval mode, on the model's device)."""
    device = next(model.parameters()).device
    tokens, lengths, _ = data.tensors()
    with evaluating(model):
        probs = [
            torch.softmax(model(tokens[i : i + batch_size].to(device), lengths[i : i + batch_size].to(device)), -1)[
                :, 1
            ]
            for i in range(0, len(data), batch_size)
        ]
    return torch.cat(probs).cpu()


def accuracies(model, sets: dict[str, ParenthesesSet]) -> dict[str, float]:
    """Accuracy on each named set (threshold 0.5 on P(balanced))."""
    return {
        name: ((predict(model, s) > 0.5).long() == torch.tensor(s.labels)).float().mean().item()  # cpu: predict
        for name, s in sets.items()
    }


def rule_accuracies(rule: Callable, sets: dict[str, ParenthesesSet]) -> dict[str, float]:
    """Accuracy of a hand-written rule (e.g. :func:`per_colour_rule`) on each named set."""
    return {
        name: float(np.mean([rule(x, s.n_symbols) == bool(y) for x, y in zip(s.seqs, s.labels)]))
        for name, s in sets.items()
    }


def checkpoint_path(model: str, regime: str) -> Path:
    """Where scripts/train_parentheses.py writes the checkpoint of ``model`` trained on ``MIXES[regime]``:
    ``course_lib/weights/parentheses_<model>_<regime>.safetensors`` (a :mod:`course_lib.checkpoint` file)."""
    if regime not in MIXES:
        raise ValueError(f"regime must be one of {sorted(MIXES)}, got {regime!r}")
    return checkpoint.WEIGHTS_DIR / f"parentheses_{model}_{regime}.safetensors"


def load_checkpoint(model: str, regime: str, device="cpu") -> tuple[SequenceClassifier, dict]:
    """The shipped classifier ``model`` trained on ``MIXES[regime]`` (eval mode, on ``device``) and its
    info: the training settings and history (loss per step, held-out accuracies every 500 steps)."""
    return load_classifier(checkpoint_path(model, regime), device=device)
