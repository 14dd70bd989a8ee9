"""Balanced (colored) parentheses: the sequences, their generators and the baselines of lesson 03.

With ``n_symbols`` symbols (an even number), symbol ``i < n_symbols / 2`` opens a parenthesis
of colour ``i`` and symbol ``n_symbols - 1 - i`` closes it. With 10 symbols (the lecture's
colored parentheses) 0..4 open and 9..5 close: ``0`` is closed by ``9``, ``2`` by ``7``.
``n_symbols=2`` is the plain binary task (0 opens, 1 closes; the lecture writes 1 and -1,
see :func:`from_signs`).

A sequence is balanced when a stack accepts it (:func:`is_balanced`). The generators make
positives whose bracket structure is uniform over all balanced structures of the length and
whose colours are uniform, and negatives of named kinds (:data:`NEGATIVE_KINDS`), from easy
to hard:

- ``random``: uniform random symbols (rejected if balanced by chance);
- ``structure``: as many opens as closes, colours that balance too, but a prefix closes more
  than it opened (a depth counter catches it);
- ``colour_swap``: a positive with one closer recoloured (a per-colour counter catches it);
- ``transposition``: a positive with the colours of two closers of different colours
  exchanged, chosen so that every colour's counts stay valid in every prefix: no counter
  catches it, only a stack does.

Every sequence has even length (an odd length alone would give a negative away).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from math import comb
from pathlib import Path

import numpy as np
import torch

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
    "SHORT_LENGTHS",
    "LONG_LENGTHS",
    "MIXES",
    "batch_loss",
    "predict",
    "accuracies",
    "rule_accuracies",
    "checkpoint_path",
]

KINDS = ("positive", "random", "structure", "colour_swap", "transposition")
NEGATIVE_KINDS = KINDS[1:]

# The lecture's test vectors (seed 003): binary in its +1 / -1 notation, and 10 colours.
SEED_BINARY = [
    ([1, 1, -1, -1, 1, -1], 1),
    ([1, -1, 1, -1], 1),
    ([1, -1, 1, 1, -1, 1, -1, -1], 1),
    ([1, 1, -1, -1, -1, 1, -1, 1], 0),
    ([1, -1, -1, 1, 1, -1], 0),
    ([1, -1, -1, 1], 0),
]
SEED_COLORED = [
    ([2, 0, 9, 7, 0, 9], 1),
    ([1, 8, 3, 6], 1),
    ([0, 9, 2, 4, 5, 2, 7, 7], 1),
    ([0, 2, 7, 9, 7, 2, 7, 3], 0),
    ([1, 8, 9, 0, 1, 9], 0),
    ([1, 8, 7, 1], 0),
]


# --------------------------------------------------------------------------- symbols


def _check_n_symbols(n_symbols) -> int:
    if isinstance(n_symbols, bool) or not isinstance(n_symbols, (int, np.integer)) or n_symbols < 2 or n_symbols % 2:
        raise ValueError(f"n_symbols must be an even integer >= 2 (half open, half close), got {n_symbols!r}")
    return int(n_symbols)


def _check_seq(seq, n_symbols: int) -> list[int]:
    if isinstance(seq, torch.Tensor):
        seq = seq.tolist()
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Iterable):
        raise TypeError(f"seq must be a sequence of integer symbols, got {type(seq).__name__}")
    out = []
    for s in seq:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < n_symbols:
            raise ValueError(
                f"seq must hold integer symbols in 0..{n_symbols - 1} (n_symbols={n_symbols}), "
                f"got {s!r}" + (": for the lecture's 1 / -1 notation use from_signs(seq)" if s == -1 else "")
            )
        out.append(int(s))
    return out


def colour_of(symbol: int, n_symbols: int = 10) -> int:
    """The colour 0 .. n_symbols/2 - 1 of an opener or a closer."""
    return symbol if symbol < n_symbols // 2 else n_symbols - 1 - symbol


def from_signs(seq: Sequence[int]) -> list[int]:
    """The lecture's binary notation (1 opens, -1 closes) to symbols (0 opens, 1 closes, n_symbols=2)."""
    out = []
    for s in seq:
        if s not in (1, -1) or isinstance(s, bool):
            raise ValueError(f"the binary notation uses 1 (open) and -1 (close), got {s!r}")
        out.append(0 if s == 1 else 1)
    return out


def is_balanced(seq: Sequence[int], n_symbols: int = 10) -> bool:
    """True when every closer closes the most recent open parenthesis of its colour and none stays open.

    The stack holds the opened symbols; a closer must match the top.
    """
    n_symbols = _check_n_symbols(n_symbols)
    stack = []
    for s in _check_seq(seq, n_symbols):
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack


def stack_depths(seq: Sequence[int], n_symbols: int = 10) -> list[int]:
    """Number of open parentheses after each symbol (it may go negative for an unbalanced sequence)."""
    n_symbols = _check_n_symbols(n_symbols)
    depth, out = 0, []
    for s in _check_seq(seq, n_symbols):
        depth += 1 if s < n_symbols // 2 else -1
        out.append(depth)
    return out


def stack_tops(seq: Sequence[int], n_symbols: int = 10, position: int = 0) -> list[int]:
    """After each symbol, the colour of the stack entry ``position`` below the top (0 = the top), or -1 if none.

    Computed with a stack that pops whatever is on top at every closer, so it is defined for
    any sequence; for a balanced one it is the true stack.
    """
    n_symbols = _check_n_symbols(n_symbols)
    stack, out = [], []
    for s in _check_seq(seq, n_symbols):
        if s < n_symbols // 2:
            stack.append(s)
        elif stack:
            stack.pop()
        out.append(stack[-1 - position] if len(stack) > position else -1)
    return out


OPEN_BRACKETS, CLOSE_BRACKETS = "([{<⟨", ")]}>⟩"  # colour c opens with OPEN_BRACKETS[c]


def to_brackets(seq: Sequence[int], n_symbols: int = 10) -> str:
    """Draw a sequence with one bracket shape per colour: [2, 0, 9, 7, 0, 9] -> '{()}()'."""
    n_symbols = _check_n_symbols(n_symbols)
    if n_symbols > 2 * len(OPEN_BRACKETS):
        raise ValueError(f"to_brackets draws at most {len(OPEN_BRACKETS)} colours, got n_symbols={n_symbols}")
    return "".join(
        OPEN_BRACKETS[s] if s < n_symbols // 2 else CLOSE_BRACKETS[n_symbols - 1 - s]
        for s in _check_seq(seq, n_symbols)
    )


def parse(text: str, n_symbols: int = 10) -> list[int]:
    """A sequence from brackets ('{()}()') or from numbers ('2 0 9 7 0 9' or '2,0,9'); spaces are ignored."""
    n_symbols = _check_n_symbols(n_symbols)
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    numbers = text.replace(",", " ").split()
    if numbers and all(t.lstrip("-").isdigit() for t in numbers):
        return _check_seq([int(t) for t in numbers], n_symbols)
    seq = []
    for ch in text:
        if ch.isspace() or ch == ",":
            continue
        if ch in OPEN_BRACKETS[: n_symbols // 2]:
            seq.append(OPEN_BRACKETS.index(ch))
        elif ch in CLOSE_BRACKETS[: n_symbols // 2]:
            seq.append(n_symbols - 1 - CLOSE_BRACKETS.index(ch))
        else:
            raise ValueError(
                f"cannot read {ch!r}: write symbols as numbers (0..{n_symbols - 1}) or brackets "
                f"{OPEN_BRACKETS[: n_symbols // 2]} {CLOSE_BRACKETS[: n_symbols // 2]}"
            )
    return seq


# --------------------------------------------------------------------------- baselines


def colour_blind_rule(seq: Sequence[int], n_symbols: int = 10) -> bool:
    """Counting without colours: as many opens as closes, and no prefix with more closes than opens."""
    depths = stack_depths(seq, n_symbols)
    return all(d >= 0 for d in depths) and (not depths or depths[-1] == 0)


def per_colour_rule(seq: Sequence[int], n_symbols: int = 10) -> bool:
    """One counter per colour plus the depth check, and no stack: the colour-blind rule, and for every
    colour, no prefix closes it more often than it opened it, and it ends closed."""
    n_symbols = _check_n_symbols(n_symbols)
    if not colour_blind_rule(seq, n_symbols):
        return False
    counts = [0] * (n_symbols // 2)
    for s in _check_seq(seq, n_symbols):
        c = colour_of(s, n_symbols)
        counts[c] += 1 if s < n_symbols // 2 else -1
        if counts[c] < 0:
            return False
    return not any(counts)


# --------------------------------------------------------------------------- generators


def _rng(rng) -> np.random.Generator:
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng must be a numpy Generator, a seed or None, got {type(rng).__name__}")


def _check_length(length, minimum: int = 2) -> int:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < minimum or length % 2:
        raise ValueError(f"length must be an even integer >= {minimum}, got {length!r}")
    return int(length)


@cache
def _n_completions(steps: int, height: int) -> int:
    """Number of ways to finish a balanced structure: ``steps`` symbols left, ``height`` parentheses open.

    Reflection principle: paths from ``height`` to 0 with ``steps`` +-1 steps, minus those that touch -1.
    """
    if height < 0 or height > steps or (steps - height) % 2:
        return 0
    ups = (steps - height) // 2
    return comb(steps, ups) - (comb(steps, ups - 1) if ups >= 1 else 0)


def random_structure(length: int, rng=None) -> list[bool]:
    """A bracket structure (True = open), uniform over all balanced structures of ``length``.

    Each symbol opens with probability (completions after opening) / (completions from here),
    which makes every one of the Catalan(length/2) structures equally likely.
    """
    length, rng = _check_length(length), _rng(rng)
    out, height = [], 0
    for left, u in zip(range(length, 0, -1), rng.random(length).tolist()):
        opens = u < _p_open(left, height)
        out.append(opens)
        height += 1 if opens else -1
    return out


@cache
def _p_open(left: int, height: int) -> float:
    return _n_completions(left - 1, height + 1) / _n_completions(left, height)


def _colour(structure: Sequence[bool], rng: np.random.Generator, n_symbols: int) -> list[int]:
    """Uniform colours for the openers; each closer gets its opener's closing symbol."""
    n_colours = n_symbols // 2
    colours = rng.integers(0, n_colours, size=len(structure))
    seq, stack = [], []
    for i, opens in enumerate(structure):
        if opens:
            stack.append(int(colours[i]))
            seq.append(int(colours[i]))
        else:
            seq.append(n_symbols - 1 - stack.pop())
    return seq


def random_positive(length: int, rng=None, n_symbols: int = 10) -> list[int]:
    """A balanced sequence: structure uniform over balanced structures, colours uniform."""
    n_symbols = _check_n_symbols(n_symbols)
    rng = _rng(rng)
    return _colour(random_structure(length, rng), rng, n_symbols)


def random_symbols(length: int, rng=None, n_symbols: int = 10) -> list[int]:
    """Uniform random symbols that happen not to be balanced."""
    n_symbols, length, rng = _check_n_symbols(n_symbols), _check_length(length), _rng(rng)
    while True:
        seq = [int(s) for s in rng.integers(0, n_symbols, size=length)]
        if not is_balanced(seq, n_symbols):
            return seq


def wrong_structure(length: int, rng=None, n_symbols: int = 10) -> list[int]:
    """As many opens as closes (and as many of each colour), but some prefix closes more than it opened.

    The structure is uniform over the arrangements of length/2 opens and closes that are not
    balanced; openers get uniform colours and the closers a random order of the matching
    closing symbols, so only the depth gives it away.
    """
    n_symbols, length, rng = _check_n_symbols(n_symbols), _check_length(length), _rng(rng)
    half = length // 2
    while True:
        structure = [True] * half + [False] * half
        rng.shuffle(structure)
        if not _never_below_zero(structure):
            break
    colours = [int(c) for c in rng.integers(0, n_symbols // 2, size=half)]
    closing = [n_symbols - 1 - c for c in colours]
    rng.shuffle(closing)
    opens, closes = iter(colours), iter(closing)
    return [next(opens) if o else next(closes) for o in structure]


def _never_below_zero(structure: Sequence[bool]) -> bool:
    depth = 0
    for opens in structure:
        depth += 1 if opens else -1
        if depth < 0:
            return False
    return True


def _closer_positions(seq: list[int], n_symbols: int) -> list[int]:
    return [i for i, s in enumerate(seq) if s >= n_symbols // 2]


def colour_swap(seq: Sequence[int], rng=None, n_symbols: int = 10) -> list[int]:
    """A balanced ``seq`` with one closer replaced by the closer of another colour."""
    n_symbols, rng = _check_n_symbols(n_symbols), _rng(rng)
    seq = _check_seq(seq, n_symbols)
    if not is_balanced(seq, n_symbols) or not seq:
        raise ValueError("colour_swap needs a non-empty balanced sequence")
    if n_symbols < 4:
        raise ValueError("colour_swap needs at least 2 colours (n_symbols >= 4)")
    out = list(seq)
    i = _closer_positions(seq, n_symbols)[rng.integers(0, len(seq) // 2)]
    others = [s for s in range(n_symbols // 2, n_symbols) if s != seq[i]]
    out[i] = int(others[rng.integers(0, len(others))])
    return out


def transposition_pairs(seq: Sequence[int], n_symbols: int = 10) -> list[tuple[int, int]]:
    """Every pair of closer positions (p, q), p < q, whose exchange makes a hard negative.

    The closers have different colours a (at p) and b (at q), and colour b stays open
    (its count of opens minus closes is >= 1) from p up to q. After the exchange the closer
    of b at p still has an open b to count against and the closer of a merely comes later,
    so every colour's counts stay valid in every prefix: no counter notices, only the order
    of the stack shows the sequence is wrong (at p, the top of the stack is a, not b).
    """
    n_symbols = _check_n_symbols(n_symbols)
    seq = _check_seq(seq, n_symbols)
    if not is_balanced(seq, n_symbols):
        raise ValueError("transposition negatives are made from balanced sequences")
    return _transposition_pairs(seq, n_symbols)


def _transposition_pairs(seq: list[int], n_symbols: int) -> list[tuple[int, int]]:
    half = n_symbols // 2
    counts, open_after = [0] * half, []  # open_after[t][c]: opens minus closes of colour c in seq[:t+1]
    for s in seq:
        if s < half:
            counts[s] += 1
        else:
            counts[n_symbols - 1 - s] -= 1
        open_after.append(tuple(counts))
    pairs = []
    for p, s in enumerate(seq):
        if s < half:
            continue
        for b in range(half):
            if b == n_symbols - 1 - s or open_after[p][b] < 1:
                continue
            # q runs from p + 1 up to the first step where colour b has no open parenthesis left
            for q in range(p + 1, len(seq)):
                if seq[q] == n_symbols - 1 - b:
                    pairs.append((p, q))
                if open_after[q][b] == 0:
                    break
    pairs.sort()
    return pairs


def transpose_closers(seq: Sequence[int], rng=None, n_symbols: int = 10) -> list[int]:
    """A balanced ``seq`` with the colours of two closers exchanged, uniformly among
    :func:`transposition_pairs` (a ValueError when there is none, e.g. all one colour)."""
    rng = _rng(rng)
    pairs = transposition_pairs(seq, n_symbols)
    if not pairs:
        raise ValueError(f"no two closers of {list(seq)} can be exchanged into a hard negative")
    p, q = pairs[rng.integers(0, len(pairs))]
    out = [int(s) for s in seq]
    out[p], out[q] = out[q], out[p]
    return out


def sample(kind: str, length: int, rng=None, n_symbols: int = 10) -> list[int]:
    """One sequence of ``kind`` (one of :data:`KINDS`) and ``length``."""
    n_symbols, rng = _check_n_symbols(n_symbols), _rng(rng)
    if kind == "positive":
        return random_positive(length, rng, n_symbols)
    if kind == "random":
        return random_symbols(length, rng, n_symbols)
    if kind == "structure":
        return wrong_structure(length, rng, n_symbols)
    if kind == "colour_swap":
        return colour_swap(random_positive(length, rng, n_symbols), rng, n_symbols)
    if kind == "transposition":
        _check_length(length, minimum=4)
        if n_symbols < 4:
            raise ValueError("transpositions need at least 2 colours (n_symbols >= 4)")
        for _ in range(10_000):
            positive = random_positive(length, rng, n_symbols)
            pairs = _transposition_pairs(positive, n_symbols)
            if pairs:
                p, q = pairs[rng.integers(0, len(pairs))]
                positive[p], positive[q] = positive[q], positive[p]
                return positive
        raise RuntimeError(f"found no positive of length {length} with a transposition")  # pragma: no cover
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


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
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
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
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")

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


@torch.no_grad()
def predict(model, data: ParenthesesSet, batch_size: int = 2000) -> torch.Tensor:
    """P(balanced) for every sequence of ``data`` (model in eval mode, on the model's device)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    tokens, lengths, _ = data.tensors()
    probs = [
        torch.softmax(model(tokens[i : i + batch_size].to(device), lengths[i : i + batch_size].to(device)), -1)[:, 1]
        for i in range(0, len(data), batch_size)
    ]
    model.train(was_training)
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


def checkpoint_path(model: str, regime: str):
    """Where scripts/train_parentheses.py writes the checkpoint of ``model`` trained on ``MIXES[regime]``."""
    if regime not in MIXES:
        raise ValueError(f"regime must be one of {sorted(MIXES)}, got {regime!r}")
    return Path(__file__).resolve().parent / "weights" / f"parentheses_{model}_{regime}.pt"
