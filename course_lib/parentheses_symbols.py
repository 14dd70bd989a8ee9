"""Balanced (colored) parentheses, the symbols: the stack test, drawing and reading brackets, counting rules.

With ``n_symbols`` symbols (an even number), symbol ``i < n_symbols / 2`` opens a parenthesis
of colour ``i`` and symbol ``n_symbols - 1 - i`` closes it. With 10 symbols (the lecture's
colored parentheses) 0..4 open and 9..5 close: ``0`` is closed by ``9``, ``2`` by ``7``.
``n_symbols=2`` is the plain binary task (0 opens, 1 closes; the lecture writes 1 and -1,
see :func:`from_signs`). A sequence is balanced when a stack accepts it (:func:`is_balanced`);
:func:`colour_blind_rule` and :func:`per_colour_rule` are the baselines that count instead.
Everything here is re-exported by :mod:`course_lib.parentheses`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
    "to_brackets",
    "parse",
    "KINDS",
    "NEGATIVE_KINDS",
    "SEED_BINARY",
    "SEED_COLORED",
]

KINDS = ("positive", "random", "structure", "colour_swap", "transposition")
NEGATIVE_KINDS = KINDS[1:]

# The lecture's test vectors (Galerne's notes): binary in its +1 / -1 notation, and 10 colours.
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
