"""Checks for lesson 03 (recurrent networks on balanced colored parentheses), each with targeted hints.

Each check runs the student's function on fresh inputs and compares it with the right answer
and with what known mistakes would give, so a wrong answer gets the hint for its mistake.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from course_lib import parentheses as P
from course_lib.checks import Mistake, exercise, expect

# --------------------------------------------------------------------------- 3.1 is_balanced


def _empty_stack_ok(seq, n):  # a closer on an empty stack is skipped instead of rejected
    stack = []
    for s in seq:
        if s < n // 2:
            stack.append(s)
        elif stack and stack.pop() != n - 1 - s:
            return False
    return not stack


def _left_open_ok(seq, n):  # forgets that the stack must be empty at the end
    stack = []
    for s in seq:
        if s < n // 2:
            stack.append(s)
        elif not stack or stack.pop() != n - 1 - s:
            return False
    return True


def _shifted_pairs(seq, n):  # pairs i with i + n/2 (0 with 5) instead of n - 1 - i (0 with 9)
    stack = []
    for s in seq:
        if s < n // 2:
            stack.append(s)
        elif not stack or stack.pop() != s - n // 2:
            return False
    return not stack


def _always_ten(seq, n):  # ignores n_symbols
    return P.is_balanced(seq, 10) if max(seq, default=0) < 10 else False


def _five_openers(seq, n):  # opens on s < 5 whatever n_symbols is, but closes with n_symbols - 1 - s
    stack = []
    for s in seq:
        if s < 5:
            stack.append(s)
        elif not stack or stack.pop() != n - 1 - s:
            return False
    return not stack


def _battery(rng) -> list[tuple[list[int], int]]:
    """(sequence, n_symbols) cases: the lecture's examples, hand-picked traps, and fresh random ones."""
    cases = [(P.from_signs(s), 2) for s, _ in P.SEED_BINARY] + [(s, 10) for s, _ in P.SEED_COLORED]
    cases += [
        ([], 10),
        ([9, 0], 10),
        ([0, 9, 9], 10),
        ([9, 0, 9], 10),
        ([1, 0, 1], 2),
        ([0, 8], 10),
        ([1, 0, 9, 8], 10),
        ([1, 0, 8, 9], 10),
        ([0, 9, 9, 0], 10),
        ([0, 0, 9], 10),
        ([0, 5], 10),
        ([1, 2], 4),
        ([0, 3], 4),
        ([0, 2, 1, 3], 4),
        ([1, 0], 2),
    ]
    for n in (2, 4, 10, 10, 10, 6):
        for kind in P.KINDS:
            if kind == "colour_swap" and n < 4 or kind == "transposition" and n < 4:
                continue
            length = 2 * int(rng.integers(2, 8))
            cases.append((P.sample(kind, length, rng, n), n))
    return cases


_BALANCED_MISTAKES = {
    "the colours matter: a closer must close the most recent open parenthesis of its own colour, i.e. the "
    "top of the stack must be n_symbols - 1 - closer (your function accepts 0 8, a 0 closed by the closer of 1)": P.colour_blind_rule,
    "counting each colour is not enough: in 1 0 9 8 every colour opens and closes once, but the 0 opened last "
    "is closed last. Push openers on a stack and compare each closer with the top": P.per_colour_rule,
    "a closer that arrives when nothing is open (empty stack) makes the sequence unbalanced: return False": _empty_stack_ok,
    "parentheses left open at the end (a non-empty stack) make the sequence unbalanced": _left_open_ok,
    "symbol i is closed by n_symbols - 1 - i (0 by 9, 4 by 5), not by i + n_symbols / 2": _shifted_pairs,
    "use the n_symbols you are given (2 for the binary task), not always 10": _always_ten,
    "use the n_symbols you are given: openers are the symbols below n_symbols // 2 (0 for the binary task), "
    "not below 5": _five_openers,
}


@exercise("3.1", "is_balanced with a stack")
def check_is_balanced(is_balanced):
    rng = np.random.default_rng()
    cases = _battery(rng)
    got = []
    for seq, n in cases:
        answer = is_balanced(list(seq), n)
        expect(
            isinstance(answer, (bool, np.bool_)),
            f"return True or False, got {type(answer).__name__} for {seq} (n_symbols={n})",
        )
        got.append(bool(answer))
    expected = [P.is_balanced(s, n) for s, n in cases]
    if got == expected:
        return
    for hint, mistake in _BALANCED_MISTAKES.items():
        if got == [mistake(s, n) for s, n in cases]:
            raise Mistake(hint)
    i = next(i for i, (g, e) in enumerate(zip(got, expected)) if g != e)
    seq, n = cases[i]
    raise Mistake(f"is_balanced({seq}, n_symbols={n}) should be {expected[i]}, got {got[i]}")


# --------------------------------------------------------------------------- 3.2 transpositions


def _valid_pairs_matching(seq, n):
    """The exercise's pairs: closers p < q of different colours, q's opener before p (open under p's)."""
    match, stack = {}, []
    for i, s in enumerate(seq):
        if s < n // 2:
            stack.append(i)
        else:
            match[i] = stack.pop()
    return [(p, q) for p, q in itertools.combinations(sorted(match), 2) if seq[p] != seq[q] and match[q] < p]


def _structure(seq, n):
    return [s < n // 2 for s in seq]


def _check_one_transposition(transpose_closers, seq, rng):
    given = list(seq)
    out = transpose_closers(given, rng, 10)
    expect(given == seq, "do not change the sequence you were given: copy it (list(seq)) and change the copy")
    expect(isinstance(out, (list, tuple)) and len(out) == len(seq), f"return a list of {len(seq)} symbols, got {out!r}")
    out = [int(s) for s in out]
    changed = [i for i in range(len(seq)) if out[i] != seq[i]]
    if any(seq[i] < 5 for i in changed):
        raise Mistake("exchange the colours of two closers (symbols 5..9); leave the openers as they are")
    if len(changed) == 1:
        raise Mistake(
            "that is a colour swap (one closer recoloured): then a colour's opens and closes no longer "
            "balance and a per-colour counter catches it. Exchange two closers instead"
        )
    if not changed:
        raise Mistake(
            f"the two closers must have different colours: from {seq} you exchanged two equal closers, "
            "which changes nothing"
        )
    expect(
        len(changed) == 2 and out[changed[0]] == seq[changed[1]] and out[changed[1]] == seq[changed[0]],
        f"exactly two closers should trade places; from {seq} you returned {out}",
    )
    if not P.per_colour_rule(out):
        raise Mistake(
            f"from {seq} you returned {out}, which a per-colour counter rejects: the colour you move "
            "to the earlier closer p must still be open there (its opener before p, its closer at q)"
        )


@exercise("3.2", "the transposition negative generator")
def check_transpose_closers(transpose_closers):
    rng = np.random.default_rng()
    fixed = [0, 1, 2, 7, 8, 9]  # three valid pairs
    traps = [
        [0, 1, 1, 8, 8, 9],  # the two 8s are nested: exchanging them changes nothing
        [1, 0, 9, 8, 2, 7, 3, 6, 4, 5],
    ]  # ten pairs of different colours, only (2, 3) is hard
    fresh = [P.random_positive(2 * int(rng.integers(3, 9)), rng) for _ in range(40)]
    fresh = [s for s in fresh if _valid_pairs_matching(s, 10)][:10]
    for seq, draws in [(fixed, 5)] + [(t, 25) for t in traps] + [(f, 1) for f in fresh]:
        for _ in range(draws):
            _check_one_transposition(transpose_closers, seq, rng)
    # every valid pair must be possible: draw many times from the fixed sequence
    seen = {tuple(int(s) for s in transpose_closers(list(fixed), rng, 10)) for _ in range(60)}
    wanted = set()
    for p, q in _valid_pairs_matching(fixed, 10):
        t = list(fixed)
        t[p], t[q] = t[q], t[p]
        wanted.add(tuple(t))
    if not wanted <= seen:
        raise Mistake(
            f"draw the pair at random with rng (e.g. rng.integers): from {fixed} you only ever returned "
            f"{sorted(seen)}, but {len(wanted)} transpositions are possible"
        )
    # no valid pair: a ValueError
    try:
        out = transpose_closers([0, 9, 1, 8], rng, 10)
    except ValueError:
        return
    raise Mistake(
        f"in [0, 9, 1, 8] no closer has another colour open beneath it, so no transposition is hard: "
        f"raise ValueError, not return {out!r}"
    )


# --------------------------------------------------------------------------- 3.3 / 3.4 recurrent steps


def _tensors(gen, B, I, H, gated=False):
    t = {
        "x_t": torch.randn(B, I, generator=gen),
        "h_prev": torch.randn(B, H, generator=gen).abs(),
        "W_xh": torch.randn(H, I, generator=gen) / I**0.5,
        "W_hh": torch.randn(H, H, generator=gen) / H**0.5,
        "b_h": torch.randn(H, generator=gen),
    }
    if gated:
        t.update(
            {
                "W_xz": torch.randn(H, I, generator=gen) / I**0.5,
                "W_hz": torch.randn(H, H, generator=gen) / H**0.5,
                "b_z": torch.randn(H, generator=gen),
            }
        )
    return t


def _call(fn, t):
    before = {k: v.clone() for k, v in t.items()}
    try:
        out = fn(**{k: v.clone() for k, v in t.items()})
    except RuntimeError as exc:
        if "shape" in str(exc) or "size" in str(exc) or "dimension" in str(exc):
            raise Mistake(
                "a shape mismatch: x_t is (batch, I) with one example per row and W_xh is (H, I), so the "
                "lecture's W_xh x_t is x_t @ W_xh.T (and W_hh h_{t-1} is h_prev @ W_hh.T)"
            ) from None
        raise
    expect(all(torch.equal(before[k], t[k]) for k in t), "do not change the tensors you were given in place")
    expect(isinstance(out, torch.Tensor), f"return a tensor, got {type(out).__name__}")
    expect(
        out.shape == t["h_prev"].shape,
        f"h_t should have the shape of h_prev {tuple(t['h_prev'].shape)} (batch, H), got {tuple(out.shape)}",
    )
    return out


def _first_match(out, expected, wrong: dict) -> None:
    if torch.allclose(out, expected, atol=1e-5):
        return
    for hint, value in wrong.items():
        if value is not None and value.shape == out.shape and torch.allclose(out, value, atol=1e-5):
            raise Mistake(hint)
    raise Mistake(f"h_t differs from the expected value by up to {(out - expected).abs().max().item():.3g}")


@exercise("3.3", "the Elman step")
def check_elman_step(elman_step):
    gen = torch.Generator().manual_seed(int(np.random.default_rng().integers(0, 2**31)))
    for B, I, H in [(4, 10, 6), (1, 3, 5), (7, 5, 5)]:
        t = _tensors(gen, B, I, H)
        x, h, W_xh, W_hh, b = t["x_t"], t["h_prev"], t["W_xh"], t["W_hh"], t["b_h"]
        out = _call(elman_step, t)
        pre = x @ W_xh.T + h @ W_hh.T + b
        square = I == H
        _first_match(
            out,
            torch.relu(pre),
            {
                "the lecture's Elman network uses ReLU, not tanh: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)": torch.tanh(
                    pre
                ),
                "apply the non-linearity: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)": pre,
                "add the bias b_h inside the ReLU": torch.relu(x @ W_xh.T + h @ W_hh.T),
                "apply the ReLU to the whole sum, after adding W_hh h_{t-1}": torch.relu(x @ W_xh.T + b) + h @ W_hh.T,
                "the recurrence needs the previous state: add W_hh h_{t-1}": torch.relu(x @ W_xh.T + b),
                "transpose the weights: rows are examples, so W_xh x_t is x_t @ W_xh.T": torch.relu(
                    x @ W_xh + h @ W_hh + b
                )
                if square
                else None,
            },
        )


@exercise("3.4", "the gated update")
def check_gated_step(gated_step):
    gen = torch.Generator().manual_seed(int(np.random.default_rng().integers(0, 2**31)))
    for B, I, H in [(4, 10, 6), (1, 3, 5), (6, 4, 4)]:
        t = _tensors(gen, B, I, H, gated=True)
        x, h = t["x_t"], t["h_prev"]
        z_pre = x @ t["W_xz"].T + h @ t["W_hz"].T + t["b_z"]
        hb_pre = x @ t["W_xh"].T + h @ t["W_hh"].T + t["b_h"]
        z, h_bar = torch.sigmoid(z_pre), torch.relu(hb_pre)
        out = _call(gated_step, t)
        _first_match(
            out,
            z * h + (1 - z) * h_bar,
            {
                "z and 1 - z are swapped: z_t is the share of the OLD state kept, h_t = z_t h_{t-1} + (1 - z_t) h_bar_t": (
                    1 - z
                )
                * h
                + z * h_bar,
                "the gate needs a sigmoid, so that z_t lies between 0 and 1": z_pre * h + (1 - z_pre) * h_bar,
                "the candidate h_bar_t uses ReLU in the lecture's gated RNN (tanh is the GRU's)": z * h
                + (1 - z) * torch.tanh(hb_pre),
                "the gate z_t has its own weights W_xz, W_hz, b_z": (lambda zz: zz * h + (1 - zz) * h_bar)(
                    torch.sigmoid(hb_pre)
                ),
                "h_t mixes the old state and the candidate: z_t h_{t-1} + (1 - z_t) h_bar_t, not the candidate alone": h_bar,
                "the update uses z_t times the previous state h_{t-1}, plus (1 - z_t) times the candidate h_bar_t; "
                "you multiplied z_t by the candidate only": z * h_bar,
            },
        )
