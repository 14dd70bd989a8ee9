"""Checks for lesson 03 (recurrent networks on balanced colored parentheses), each with targeted hints.

Each check runs the student's function on fresh inputs and compares it with the right answer
and with what known mistakes would give, so a wrong answer gets the hint for its mistake.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from course_lib import parentheses as P
from course_lib.checks import Mistake
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, size_error

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


def _draw_balanced(seed):
    rng = np.random.default_rng(seed)
    return [[list(seq), n] for seq, n in _battery(rng)]


def _judge_balanced(cases, records):
    got = []
    for (seq, n), r in zip(cases, records):
        if r["type"] not in ("bool", "bool_") or not (
            isinstance(r["returned"], bool) or getattr(r["returned"], "dtype", None) == np.bool_
        ):
            raise Mistake(f"return True or False, got {r['type']} for {seq} (n_symbols={n})")
        got.append(bool(r["returned"]))
    expected = [P.is_balanced(s, n) for s, n in cases]
    if got == expected:
        return
    for hint, mistake in _BALANCED_MISTAKES.items():
        if got == [mistake(s, n) for s, n in cases]:
            raise Mistake(hint)
    i = next(i for i, (g, e) in enumerate(zip(got, expected)) if g != e)
    seq, n = cases[i]
    raise Mistake(f"is_balanced({seq}, n_symbols={n}) should be {expected[i]}, got {got[i]}")


def _balanced_errors(case, record):
    if record["raised"] == "IndexError" and "pop from empty list" in record["message"]:
        return "a closer that arrives when nothing is open (empty stack) makes the sequence unbalanced: return False"
    return ""


check_is_balanced = Exercise(
    "3.1",
    "is_balanced with a stack",
    "is_balanced",
    ("seq", "n_symbols"),
    _draw_balanced,
    _judge_balanced,
    errors=_balanced_errors,
)


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


FIXED = [0, 1, 2, 7, 8, 9]  # three hard pairs
COVERAGE = 40  # draws from FIXED with different seeds: each pair is missed with probability (2/3)^40
REPEATS = 12  # seeds drawn twice: a generator other than rng agrees on all with probability (1/3)^12


def _draw_transpose(seed):
    rng = np.random.default_rng(seed)
    seeds = [int(s) for s in rng.integers(0, 2**31, size=COVERAGE + 50)]
    cases = [[list(FIXED), s, 10] for s in seeds[:COVERAGE]]
    cases += [[list(FIXED), s, 10] for s in seeds[:REPEATS]]  # the same seeds again: the same answers
    more = iter(seeds[COVERAGE:])
    cases += [[[0, 1, 1, 8, 8, 9], next(more), 10] for _ in range(25)]  # the two 8s are equal
    cases += [[[1, 0, 9, 8, 2, 7, 3, 6, 4, 5], next(more), 10] for _ in range(10)]  # one hard pair among many
    cases.append([[0, 1, 2, 3, 4, 5], next(more), 6])  # n_symbols = 6: 3 closes 2
    fresh = [P.random_positive(2 * int(rng.integers(3, 9)), rng) for _ in range(40)]
    fresh = [f for f in fresh if _valid_pairs_matching(f, 10)][:5]
    cases += [[f, next(more), 10] for f in fresh]
    cases.append([[0, 9, 1, 8], seeds[1], 10])  # no hard pair: ValueError
    return cases


def _judge_one_transposition(seq, n, out):
    if (
        not isinstance(out, (list, tuple))
        or len(out) != len(seq)
        or not all(type(s) is int or np.ndim(s) == 0 for s in out)
    ):
        raise Mistake(f"return a list of {len(seq)} symbols, got {type(out).__name__}")
    out = [int(s) for s in out]
    changed = [i for i in range(len(seq)) if out[i] != seq[i]]
    if any(seq[i] < n // 2 for i in changed):
        raise Mistake("exchange the colours of two closers; leave the openers as they are")
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
    if not (len(changed) == 2 and out[changed[0]] == seq[changed[1]] and out[changed[1]] == seq[changed[0]]):
        raise Mistake(f"exactly two closers should trade places; from {seq} you returned {out}")
    if not P.per_colour_rule(out, n):
        raise Mistake(
            f"from {seq} you returned {out}, which a per-colour counter rejects: the colour you move "
            "to the earlier closer p must still be open there (its opener before p, its closer at q)"
        )
    return tuple(out)


def _judge_transpose(cases, records):
    outs = []
    for (seq, _seed, n), r in zip(cases, records):
        if not _valid_pairs_matching(seq, n):
            if r.get("raised") != "ValueError":
                raise Mistake(
                    f"in {seq} no closer has another colour open beneath it, so no transposition is hard: "
                    f"raise ValueError, not return {r.get('returned')!r}"
                )
            outs.append(None)
            continue
        if "raised" in r and "high <= 0" in r["message"]:
            raise Mistake(
                f"draw the pair at random, uniformly among all pairs, with rng.integers(len(pairs)) (0 to len - 1): "
                f"for {seq}, with one pair, you asked for an integer below 0"
            )
        if "raised" in r:
            raise Mistake(f"{seq} has a hard transposition, but you raised ValueError: {r['message']}")
        outs.append(_judge_one_transposition(seq, n, r["returned"]))
    if outs[COVERAGE : COVERAGE + REPEATS] != outs[:REPEATS]:
        raise Mistake(
            "two calls with generators seeded alike gave different answers: draw the pair with the `rng` "
            "you are given (rng.integers), not with random, np.random or a new generator"
        )
    seen = set(outs[:COVERAGE])
    wanted = set()
    for p, q in _valid_pairs_matching(FIXED, 10):
        t = list(FIXED)
        t[p], t[q] = t[q], t[p]
        wanted.add(tuple(t))
    if not wanted <= seen:
        raise Mistake(
            f"draw the pair at random, uniformly among all pairs, with rng.integers(len(pairs)): from {FIXED} "
            f"{COVERAGE} generators with different seeds gave only {sorted(seen)}, but {len(wanted)} are possible"
        )


check_transpose_closers = Exercise(
    "3.2",
    "the transposition negative generator",
    "transpose_closers",
    ("seq", "rng", "n_symbols"),
    _draw_transpose,
    _judge_transpose,
    materialise=lambda args: [args[0], np.random.default_rng(args[1]), args[2]],  # the recipe: a seed
    observe=lambda args, live: [live[0], args[1], live[2]],
    allowed_errors=("ValueError",),
)


# --------------------------------------------------------------------------- 3.3 / 3.4 recurrent steps


STEP_SIZES = [(5, 5), (3, 5), (4, 4), (6, 2)]  # (I, H): square first, so an untransposed W shows by its values
SHAPES = (
    "a shape mismatch: x_t is (batch, I) with one example per row and W_xh is (H, I), so the "
    "lecture's W_xh x_t is x_t @ W_xh.T (and W_hh h_{t-1} is h_prev @ W_hh.T)"
)


def _draw_step(seed, gated):
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []
    for I, H in STEP_SIZES:
        B = int(rng.integers(1, 6))
        t = [
            torch.randn(B, I, generator=gen),
            torch.randn(B, H, generator=gen).abs(),
            torch.randn(H, I, generator=gen) / I**0.5,
            torch.randn(H, H, generator=gen) / H**0.5,
            torch.randn(H, generator=gen),
        ]
        if gated:
            t += [
                torch.randn(H, I, generator=gen) / I**0.5,
                torch.randn(H, H, generator=gen) / H**0.5,
                torch.randn(H, generator=gen),
            ]
        cases.append(t)
    return cases


def _step_output(record, h):
    out = record["returned"]
    if not _is_tensor(out):
        raise Mistake(f"return h_t as a torch tensor, got {record['type']}")
    if tuple(out.shape) != tuple(h.shape):
        raise Mistake(f"h_t should have the shape of h_prev {tuple(h.shape)} (batch, H), got {tuple(out.shape)}")
    return out


def _step_errors(case, record):
    if size_error(record):
        return SHAPES
    return ""


def _judge_elman(cases, records):
    got, expected = [], []
    hints = [
        "the lecture's Elman network uses ReLU, not tanh: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)",
        "apply the non-linearity: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)",
        "add the bias b_h inside the ReLU",
        "apply the ReLU to the whole sum, after adding W_hh h_{t-1}",
        "the recurrence needs the previous state: add W_hh h_{t-1}",
        "transpose the weights: rows are examples, so W_xh x_t is x_t @ W_xh.T",
        "W_xh multiplies the input x_t and W_hh the previous state h_{t-1}: you exchanged them",
        "transpose W_xh too: rows are examples, so W_xh x_t is x_t @ W_xh.T",
        "transpose W_hh too: rows are examples, so W_hh h_{t-1} is h_prev @ W_hh.T",
    ]
    wrong = {h: [] for h in hints}
    for (x, h, W_xh, W_hh, b), r in zip(cases, records):
        got.append(_step_output(r, h))
        pre = x @ W_xh.T + h @ W_hh.T + b
        square = x.shape[1] == h.shape[1]
        expected.append(torch.relu(pre))
        for k, v in zip(
            hints,
            [
                torch.tanh(pre),
                pre,
                torch.relu(x @ W_xh.T + h @ W_hh.T),
                torch.relu(x @ W_xh.T + b) + h @ W_hh.T,
                torch.relu(x @ W_xh.T + b),
                torch.relu(x @ W_xh + h @ W_hh + b) if square else None,
                torch.relu(x @ W_hh.T + h @ W_xh.T + b) if square else None,
                torch.relu(x @ W_xh + h @ W_hh.T + b) if square else None,
                torch.relu(x @ W_xh.T + h @ W_hh + b),
            ],
        ):
            wrong[k].append(v)
    expect_answers(got, expected, wrong, [f"h_t for I={c[0].shape[1]}, H={c[1].shape[1]}" for c in cases])


def _judge_gated(cases, records):
    hints = [
        "z and 1 - z are swapped: z_t is the share of the OLD state kept, h_t = z_t h_{t-1} + (1 - z_t) h_bar_t",
        "the gate needs a sigmoid, so that z_t lies between 0 and 1",
        "the candidate h_bar_t uses ReLU in the lecture's gated RNN (tanh is the GRU's)",
        "the gate z_t has its own weights W_xz, W_hz, b_z",
        "h_t mixes the old state and the candidate: z_t h_{t-1} + (1 - z_t) h_bar_t, not the candidate alone",
        "the update uses z_t times the previous state h_{t-1}, plus (1 - z_t) times the candidate h_bar_t; "
        "you multiplied z_t by the candidate only",
        "the candidate h_bar_t has its own weights W_xh, W_hh, b_h (not the gate's)",
    ]
    got, expected, wrong = [], [], {k: [] for k in hints}
    for (x, h, W_xh, W_hh, b_h, W_xz, W_hz, b_z), r in zip(cases, records):
        got.append(_step_output(r, h))
        z_pre = x @ W_xz.T + h @ W_hz.T + b_z
        hb_pre = x @ W_xh.T + h @ W_hh.T + b_h
        z, h_bar = torch.sigmoid(z_pre), torch.relu(hb_pre)
        expected.append(z * h + (1 - z) * h_bar)
        zz = torch.sigmoid(hb_pre)
        for k, v in zip(
            hints,
            [
                (1 - z) * h + z * h_bar,
                z_pre * h + (1 - z_pre) * h_bar,
                z * h + (1 - z) * torch.tanh(hb_pre),
                zz * h + (1 - zz) * h_bar,
                h_bar,
                z * h_bar,
                z * h + (1 - z) * torch.relu(z_pre),
            ],
        ):
            wrong[k].append(v)
    expect_answers(got, expected, wrong, [f"h_t for I={c[0].shape[1]}, H={c[1].shape[1]}" for c in cases])


check_elman_step = Exercise(
    "3.3",
    "the Elman step",
    "elman_step",
    ("x_t", "h_prev", "W_xh", "W_hh", "b_h"),
    lambda seed: _draw_step(seed, gated=False),
    _judge_elman,
    errors=_step_errors,
)
check_gated_step = Exercise(
    "3.4",
    "the gated update",
    "gated_step",
    ("x_t", "h_prev", "W_xh", "W_hh", "b_h", "W_xz", "W_hz", "b_z"),
    lambda seed: _draw_step(seed, gated=True),
    _judge_gated,
    errors=_step_errors,
)
