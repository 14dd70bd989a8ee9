"""Balanced (colored) parentheses, the generators: positives and negatives of named kinds, easy to hard.

Positives have a bracket structure uniform over all balanced structures of the length and
uniform colours. Negatives (:data:`~course_lib.parentheses_symbols.NEGATIVE_KINDS`):

- ``random``: uniform random symbols (rejected if balanced by chance);
- ``structure``: as many opens as closes, colours that balance too, but a prefix closes more
  than it opened (a depth counter catches it);
- ``colour_swap``: a positive with one closer recoloured (a per-colour counter catches it);
- ``transposition``: a positive with the colours of two closers of different colours
  exchanged, chosen so that every colour's counts stay valid in every prefix: no counter
  catches it, only a stack does.

Every sequence has even length (an odd length alone would give a negative away).
Everything here is re-exported by :mod:`course_lib.parentheses`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import comb

import numpy as np

from course_lib.parentheses_symbols import KINDS, _check_n_symbols, _check_seq, is_balanced

__all__ = [
    "random_structure",
    "random_positive",
    "random_symbols",
    "wrong_structure",
    "colour_swap",
    "transpose_closers",
    "transposition_pairs",
    "sample",
]

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
