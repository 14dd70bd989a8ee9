"""Checks for lesson 03 (recurrent networks on balanced colored parentheses), each with targeted hints.

Each check runs the student's function on fresh inputs and compares it with the right answer
and with what known mistakes would give, so a wrong answer gets the hint for its mistake.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course_lib import parentheses as P
from course_lib.checks import Mistake, probes, tensors
from course_lib.checks.protocol import (
    Exercise,
    expect_answers,
    expect_module_parts,
    materialise_module,
    seeded,
    size_error,
)
from course_lib.rnn import SequenceClassifier

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


def _middle_opens(seq, n):  # opens on s <= n // 2: the first closer (5 of 10, 1 of 2) opens too
    stack = []
    for s in seq:
        if s <= n // 2:
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
    "openers are the symbols s < n_symbols // 2 (0..4 of 10, 0 of 2): n_symbols // 2 itself (5 of 10, 1 of 2) "
    "is a closer": _middle_opens,
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
    forbidden=("course_lib.parentheses.is_balanced", "course_lib.parentheses_symbols.is_balanced"),
)


# --------------------------------------------------------------------------- 3.2 transpositions


def _valid_pairs_matching(seq, n):
    """The exercise's pairs, the lesson's rule: closers p < q of different colours, q's colour open from p to q."""
    return P.transposition_pairs(seq, n)


def _structure(seq, n):
    return [s < n // 2 for s in seq]


FIXED = [0, 1, 2, 7, 8, 9]  # three hard pairs
REOPENED = [0, 1, 8, 0, 9, 9]  # (2, 4) is a pair although 9 at 4 closes the 0 opened at 3, after p = 2
CLOSED_BETWEEN = [0, 1, 8, 9, 0, 9]  # only (2, 3): colour 0 is closed at 3, so (2, 5) is no pair
COVERAGE = 40  # draws from FIXED with different seeds: each pair is missed with probability (2/3)^40
REPEATS = 12  # seeds drawn twice: a generator other than rng agrees on all with probability (1/3)^12
NESTED = list(range(10))  # five nested colours: every two closers make a hard pair (10 pairs)
UNIFORM = 600  # draws from NESTED: a uniform draw gives each pair 60 +- 7.3 times; a closer p first, then q,
# gives (8, 9) 150 times. Counts outside [UNIFORM_LOW, UNIFORM_HIGH] are > 5 sd from uniform.
UNIFORM_LOW, UNIFORM_HIGH = 20, 105


def _draw_transpose(seed):
    rng = np.random.default_rng(seed)
    seeds = [int(s) for s in rng.integers(0, 2**31, size=COVERAGE + 120)]
    cases = [[list(FIXED), s, 10] for s in seeds[:COVERAGE]]
    cases += [[list(FIXED), s, 10] for s in seeds[:REPEATS]]  # the same seeds again: the same answers
    more = iter(seeds[COVERAGE:])
    cases += [[[0, 1, 1, 8, 8, 9], next(more), 10] for _ in range(25)]  # the two 8s are equal
    cases += [[[1, 0, 9, 8, 2, 7, 3, 6, 4, 5], next(more), 10] for _ in range(10)]  # one hard pair among many
    cases += [[list(REOPENED), next(more), 10] for _ in range(COVERAGE)]  # q's opener after p: a pair too
    cases += [[list(CLOSED_BETWEEN), next(more), 10] for _ in range(20)]  # (2, 5) is not a pair
    cases.append([[0, 1, 2, 3, 4, 5], next(more), 6])  # n_symbols = 6: 3 closes 2
    fresh = [P.random_positive(2 * int(rng.integers(3, 9)), rng) for _ in range(40)]
    fresh = [f for f in fresh if _valid_pairs_matching(f, 10)][:5]
    cases += [[f, next(more), 10] for f in fresh]
    cases.append([[0, 9, 1, 8], seeds[1], 10])  # no hard pair: ValueError
    cases += [[list(NESTED), int(s), 10] for s in rng.integers(0, 2**31, size=UNIFORM)]
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
            "to the earlier closer p must stay open from p until q"
        )
    return tuple(out)


def _judge_transpose(cases, records):
    outs = []
    for (seq, _seed, n), r in zip(cases, records):
        if not _valid_pairs_matching(seq, n):
            if r.get("raised") != "ValueError":
                raise Mistake(
                    f"in {seq} no two closers of different colours can trade places with every count valid: "
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
    reopened = [o for (seq, _, _), o in zip(cases, outs) if seq == REOPENED]
    if (0, 1, 9, 0, 8, 9) not in reopened:
        raise Mistake(
            f"from {REOPENED}, exchanging positions 2 and 4 is a pair too: colour 0 stays open from 2 to 4, "
            "even though the 9 at 4 closes the 0 opened at 3, after 2. Keep every pair the counts allow"
        )
    counts = {}
    for out in outs[-UNIFORM:]:
        counts[out] = counts.get(out, 0) + 1
    n_pairs = len(_valid_pairs_matching(NESTED, 10))
    top, low = max(counts.items(), key=lambda kv: kv[1]), min(counts.items(), key=lambda kv: kv[1])
    if len(counts) < n_pairs or top[1] > UNIFORM_HIGH or low[1] < UNIFORM_LOW:
        out, count = top if top[1] - UNIFORM // n_pairs >= UNIFORM // n_pairs - low[1] else low
        raise Mistake(
            f"draw the pair uniformly among ALL pairs: from {NESTED} ({n_pairs} pairs) {UNIFORM} generators "
            f"gave {out} {count} times and {len(counts)} different answers, about {UNIFORM // n_pairs} each "
            "expected. List every pair, then pairs[rng.integers(len(pairs))] (drawing p first, then q, is "
            "not uniform)"
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
    forbidden=(
        "course_lib.parentheses.transpose_closers",
        "course_lib.parentheses.transposition_pairs",
        "course_lib.parentheses_generators.transpose_closers",
        "course_lib.parentheses_generators.transposition_pairs",
    ),
)


# --------------------------------------------------------------------------- 3.3 the Elman network, batched

# The student's class is called with (input_size, hidden_size); the check then copies drawn weights into
# the parameters it registered (W_xh, W_hh, b_h), runs forward on a drawn batch (with and without h0),
# and takes the gradients of a drawn linear function of the outputs. torch.nn.RNN(nonlinearity="relu")
# with the same weights (bias_hh = 0) is the oracle.

ELMAN_SIZES = [(4, 4), (3, 5), (6, 2), (5, 7)]  # (I, H): square first, so exchanged weights show by their values


def _guarded(describe):
    """describe(module, live) with the student's crash recorded as plain data instead of raised."""
    from course_lib.checks.protocol import _where

    def run(returned, live):
        try:
            return describe(returned, live)
        except Exception as exc:  # the student's forward crashed: say where
            return {"raised": type(exc).__name__, "message": str(exc)[:300], "where": _where(exc)}

    return run


def _elman_draw(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for I, H in ELMAN_SIZES:
        B = int(rng.integers(2, 5))
        T = int(rng.integers(B + 1, 7))  # T > B: a batch-first answer or a loop over range(B) shows by its shape
        recipe = {"T": T, "B": B, "seed": int(rng.integers(2**31))}
        cases.append([I, H, recipe])
    return cases


def _elman_tensors(I, H, recipe):
    """The weights, inputs, h0 and loss weights of one case (float32, as a student's module holds them)."""
    g = torch.Generator().manual_seed(recipe["seed"])
    T, B = recipe["T"], recipe["B"]
    return {
        "W_xh": torch.randn(H, I, generator=g) / I**0.5,
        "W_hh": torch.randn(H, H, generator=g) / H**0.5,
        "b_h": torch.randn(H, generator=g) * 0.5,
        "x": torch.randn(T, B, I, generator=g),
        "h0": torch.randn(B, H, generator=g).abs(),
        "R": torch.randn(T, B, H, generator=g),  # loss = sum(R * output) + sum(R_T * h_T)
        "R_T": torch.randn(B, H, generator=g),
    }


ELMAN_PARAMS = {"W_xh": lambda I, H: (H, I), "W_hh": lambda I, H: (H, H), "b_h": lambda I, H: (H,)}


def init_too_wide(params, names, H):
    """The first of ``names`` whose initial values leave (-1/sqrt(H), 1/sqrt(H)), torch's init: (name, max |w|)."""
    k = H**-0.5
    for n in names:
        top = tensors.extent(params[n], n)[2]
        if top > k * (1 + 1e-6):
            return [n, top]
    return None


def init_hint(wide, H, I=None):
    """The hint for too wide an initialisation; with the input size I, it names k = 1/sqrt(I) when that fits."""
    n, top = wide
    why = "torch.randn is not it"
    if I is not None and I < H and top <= I**-0.5 * (1 + 1e-6):
        why = f"k comes from the hidden size H = {H}, not the input size I = {I}"
    return (
        f"initialise uniformly in (-1/sqrt(H), 1/sqrt(H)) as torch does: torch.empty(...).uniform_(-k, k) with "
        f"k = 1/sqrt(H) = {H**-0.5:.3g}; your {n} starts with values up to {top:.3g} ({why})"
    )


def _elman_describe(module, live):
    I, H = live[0], live[1]
    if not isinstance(module, torch.nn.Module):
        return {"problem": f"ElmanRNN(input_size, hidden_size) should build an nn.Module, got {type(module).__name__}"}
    try:  # as nn.Module keeps them, read by torch's own C methods: nothing of the student's class answers
        params = tensors.parameters(module)
    except tensors.NotATensor as exc:
        return {"problem": str(exc)}
    missing = [n for n in ELMAN_PARAMS if n not in params]
    if missing:
        return {"missing": missing, "attributes": [n for n in ELMAN_PARAMS if hasattr(module, n)]}
    shapes = {n: tensors.shape(params[n], n) for n in ELMAN_PARAMS}
    init_zero = [n for n in ("W_xh", "W_hh") if not tensors.extent(params[n], n)[2] > 0]
    init_wide = init_too_wide(params, ELMAN_PARAMS, H)
    init = probes.init_ranges(module)
    # the text states the range of all three, b_h included: their (min, max) as the constructor made them
    init_all = {n: tensors.extent(params[n], n)[:2] for n in ELMAN_PARAMS}
    t = _elman_tensors(I, H, live.recipe)
    if any(shapes[n] != ELMAN_PARAMS[n](I, H) for n in ELMAN_PARAMS):
        return {"shapes": shapes}
    for n in ELMAN_PARAMS:
        tensors.write(params[n], t[n], n)
    x, h0 = t["x"].clone(), t["h0"].clone()
    x_req = x.clone().requires_grad_()
    result = module(x_req)
    if not (isinstance(result, tuple) and len(result) == 2 and all(isinstance(v, torch.Tensor) for v in result)):
        return {"problem": f"forward should return the pair (output, h_T) of tensors, got {type(result).__name__}"}
    output, h_T = result
    if tuple(output.shape) != tuple(t["R"].shape) or tuple(h_T.shape) != tuple(t["R_T"].shape):
        return {"out_shapes": [tuple(output.shape), tuple(h_T.shape)]}
    loss = (t["R"] * output).sum() + (t["R_T"] * h_T).sum()
    wrt = [params[n] for n in ELMAN_PARAMS] + [x_req]
    grads = torch.autograd.grad(loss, wrt, allow_unused=True) if loss.requires_grad else [None] * len(wrt)
    grads = [torch.zeros_like(w) if g is None else g for w, g in zip(wrt, grads)]
    with torch.no_grad():
        out_h0 = module(x, h0)
        # time first: the batch on axis 1
        measured = probes.measure(module, [x], ELMAN_PROBES, batch_axis=1, time_axis=0)
    float64 = probes.float64_run(module, lambda m: m(t["x"].double()))
    return {
        "output": output.detach(),
        "h_T": h_T.detach(),
        "grads": torch.cat([g.detach().reshape(-1) for g in grads]),
        "output_h0": out_h0[0].detach() if isinstance(out_h0, tuple) else None,
        "changed": [not torch.equal(x, t["x"]), not torch.equal(h0, t["h0"])],
        "sizes": [getattr(module, "input_size", None), getattr(module, "hidden_size", None)],
        "init_zero": init_zero,
        "init_wide": init_wide,
        "init": list(init),
        "init_all": init_all,
        "float64": float64,
        "probes": measured,
    }


def _elman_variant(
    t,
    h0=None,
    act=torch.relu,
    bias=True,
    transpose_hh=False,
    transpose_xh=False,
    detach=False,
    shift=False,
    swap=False,
    h_T_first=False,
    ignore_h0=False,
):
    """The outputs, last state and gradients of an Elman network with one mistake switched on (float64)."""
    W_xh, W_hh, b_h = (t[n].double().requires_grad_() for n in ELMAN_PARAMS)
    x = t["x"].double().requires_grad_()
    if swap:
        W_in, W_rec = W_hh, W_xh
    else:
        W_in, W_rec = W_xh, W_hh
    h = torch.zeros(x.shape[1], W_hh.shape[0], dtype=torch.float64) if h0 is None or ignore_h0 else h0.double()
    outputs = []
    for x_t in x.unbind(0):
        new = act(
            x_t @ (W_in if transpose_xh else W_in.T) + h @ (W_rec if transpose_hh else W_rec.T) + (b_h if bias else 0)
        )
        outputs.append(h if shift else new)
        h = new.detach() if detach else new
    output = torch.stack(outputs)
    h_T = outputs[0] if h_T_first else h
    if h0 is not None:
        return output.detach()
    loss = (t["R"].double() * output).sum() + (t["R_T"].double() * h_T).sum()
    wrt = [W_xh, W_hh, b_h, x]
    grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    grads = torch.cat([(torch.zeros_like(w) if g is None else g).reshape(-1) for w, g in zip(wrt, grads)])
    return output.detach(), h_T.detach(), grads


ELMAN_HINTS = {
    "the lecture's Elman network uses ReLU, not tanh: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)": dict(act=torch.tanh),
    "add the bias b_h inside the ReLU: h_t = ReLU(W_xh x_t + W_hh h_{t-1} + b_h)": dict(bias=False),
    "transpose W_hh: rows are examples, so W_hh h_{t-1} is h @ W_hh.T": dict(transpose_hh=True),
    "transpose W_xh: rows are examples, so W_xh x_t is x[t] @ W_xh.T": dict(transpose_xh=True),
    "W_xh multiplies the input x_t and W_hh the previous state h_{t-1}: you exchanged them": dict(swap=True),
    "output[t] should be h_t, the state after reading x_t (you stored h_{t-1}, the state before it)": dict(shift=True),
    "h_T is the last state, output[-1] (you returned the first)": dict(h_T_first=True),
}


def _elman_errors(case, record):
    if size_error(record):
        return (
            "a shape mismatch: x[t] is (B, I) with one example per row and W_xh is (H, I), so the lecture's "
            "W_xh x_t is x[t] @ W_xh.T (and W_hh h_{t-1} is h @ W_hh.T)"
        )
    return ""


def _judge_elman(cases, records):
    outputs, states, grads, with_h0 = [], [], [], []
    crash = ""
    for (I, H, recipe), r in zip(cases, records):
        d = r["returned"]
        if not isinstance(d, dict):
            raise Mistake(f"ElmanRNN({I}, {H}) should build an nn.Module, got {r['type']}")
        if "raised" in d:  # judged after the cases before it, which may name the mistake
            crash = _elman_errors(None, d) or f"your forward raised {d['raised']}: {d['message']}{d.get('where', '')}"
            break
        expect_module_parts(
            d, "name the parameters as the lecture does: self.W_xh (H, I), self.W_hh (H, H), self.b_h (H,)"
        )
        if "shapes" in d:
            raise Mistake(
                f"for input_size={I}, hidden_size={H}: W_xh should be {(H, I)}, W_hh {(H, H)} and b_h {(H,)}, "
                f"got {d['shapes']['W_xh']}, {d['shapes']['W_hh']} and {d['shapes']['b_h']}"
            )
        if "out_shapes" in d:
            T, B = recipe["T"], recipe["B"]
            raise Mistake(
                f"for x of shape (T, B, I) = {(T, B, I)} the output should be (T, B, H) = {(T, B, H)} and h_T "
                f"(B, H) = {(B, H)}, got {d['out_shapes'][0]} and {d['out_shapes'][1]}"
            )
        if d["changed"][0] or d["changed"][1]:
            raise Mistake("your forward changed its input x or h0 in place: work on new tensors")
        if d["sizes"] != [I, H]:
            raise Mistake(
                "store self.input_size and self.hidden_size (SequenceClassifier reads them), "
                f"got {d['sizes'][0]!r} and {d['sizes'][1]!r} for ElmanRNN({I}, {H})"
            )
        if d["init_zero"]:
            raise Mistake(
                f"{d['init_zero'][0]} starts at zero: initialise the weights at random "
                "(e.g. uniform in (-1/sqrt(H), 1/sqrt(H)), as torch does), or every unit learns the same thing"
            )
        if d.get("init_wide"):
            raise Mistake(init_hint(d["init_wide"], H, I))
        hint = (
            probes.init_mistake("ElmanRNN", *d.get("init", [{}, {}]))
            or probes.init_range_mistake(
                "ElmanRNN", d.get("init_all", {}), H**-0.5, "uniform in (-1/sqrt(H), 1/sqrt(H))"
            )
            or _elman_property(d, ("dtype", "again"))
            or probes.float64_mistake("ElmanRNN", d.get("float64"), "x")
        )
        if hint:
            raise Mistake(hint)
        outputs.append(d["output"])
        states.append(d["h_T"])
        grads.append(d["grads"])
        with_h0.append(d["output_h0"])
    cases = cases[: len(outputs)]
    tensors = [_elman_tensors(I, H, recipe) for I, H, recipe in cases]
    expected = [_elman_oracle(t) for t in tensors]
    wrong = {hint: [] for hint in ELMAN_HINTS}
    for (I, H, _), t in zip(cases, tensors):
        for hint, kwargs in ELMAN_HINTS.items():
            square_only = kwargs.get("swap") or kwargs.get("transpose_xh")
            wrong[hint].append(None if square_only and I != H else _elman_variant(t, **kwargs))
    sizes = [f"I={I}, H={H}, x {tuple(t['x'].shape)}" for (I, H, _), t in zip(cases, tensors)]
    try:
        expect_answers(
            outputs,
            [e[0] for e in expected],
            {h: [None if v is None else v[0] for v in vs] for h, vs in wrong.items()},
            [f"output for {s}" for s in sizes],
        )
    except Mistake as mistake:  # a difference no known mistake explains: name the property it breaks, if any
        found = (
            []
            if " should be " not in str(mistake)
            else [
                _elman_property(r["returned"], ("batch", "causal")) or _elman_memory(r["returned"], rc, I, H)
                for r, (I, H, rc) in zip(records[: len(outputs)], cases)
            ]
        )
        raise Mistake(next((h for h in found if h), str(mistake))) from None
    expect_answers(
        states,
        [e[1] for e in expected],
        {h: [None if v is None else v[1] for v in vs] for h, vs in wrong.items()},
        [f"h_T for {s}" for s in sizes],
    )
    expect_answers(
        with_h0,
        [_elman_oracle(t, t["h0"]) for t in tensors],
        {
            "use h0 when it is given (start the loop from h0; zeros only when h0 is None)": [
                _elman_variant(t, t["h0"], ignore_h0=True) for t in tensors
            ]
        },
        [f"output with h0 given, for {s}" for s in sizes],
    )
    expect_answers(
        grads,
        [e[2] for e in expected],
        {
            "your outputs are right but the gradients are not: the hidden state was detached between steps, so "
            "the loss cannot reach earlier steps (backpropagation through time needs the graph)": [
                _elman_variant(t, detach=True)[2] for t in tensors
            ]
        },
        [f"the gradients (W_xh, W_hh, b_h, then x, flattened) for {s}" for s in sizes],
    )
    if crash:
        raise Mistake(crash)


ELMAN_PROBES = ("again", "causal", "batch", "dtype", "memory")


def _elman_memory(d, recipe, I, H):
    """The ``memory`` property against the lecture's network on the probe's two inputs (x[:2, :1], then x[0] + 1)."""
    measured = d.get("probes") if isinstance(d.get("probes"), dict) else {}
    t = _elman_tensors(I, H, recipe)
    W_xh, W_hh, b_h = (t[n].double() for n in ELMAN_PARAMS)
    x = t["x"][:2, :1].double()
    changed = x.clone()
    changed[0] += 1

    def run(xs):
        h, out = torch.zeros(1, H, dtype=torch.float64), []
        for x_t in xs:
            h = torch.relu(x_t @ W_xh.T + h @ W_hh.T + b_h)
            out.append(h)
        return torch.stack(out)

    return probes.memory_mistake("ElmanRNN", measured.get("memory"), [run(x), run(changed)], time_axis=0)


def _elman_property(d, which):
    measured = d.get("probes") if isinstance(d.get("probes"), dict) else {}
    shape = tuple(d["output"].shape) if "output" in d else ()
    got = {k: v for k, v in measured.items() if k in which}
    return probes.property_mistake("ElmanRNN", got, shape, batch_axis=1, time_axis=0)


def _elman_oracle(t, h0=None):
    """torch.nn.RNN(nonlinearity="relu") with the case's weights (bias_hh = 0), in float64."""
    H, I = t["W_xh"].shape
    rnn = torch.nn.RNN(I, H, nonlinearity="relu", dtype=torch.float64, device="meta").to_empty(device="cpu")
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(t["W_xh"])
        rnn.weight_hh_l0.copy_(t["W_hh"])
        rnn.bias_ih_l0.copy_(t["b_h"])
        rnn.bias_hh_l0.zero_()
    x = t["x"].double().requires_grad_()
    if h0 is not None:
        with torch.no_grad():
            return rnn(x, h0.double()[None])[0]
    output, h_n = rnn(x)
    loss = (t["R"].double() * output).sum() + (t["R_T"].double() * h_n[0]).sum()
    wrt = [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, x]
    grads = torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, wrt)])
    return output.detach(), h_n[0].detach(), grads


check_elman_rnn = Exercise(
    "3.3",
    "the Elman network, batched",
    "ElmanRNN",
    ("input_size", "hidden_size"),
    _elman_draw,
    _judge_elman,
    materialise=materialise_module,
    observe=lambda args, live: args,
    describe=_guarded(_elman_describe),
    errors=_elman_errors,
    forbidden=(
        "torch.nn.RNN",
        "torch.nn.RNNCell",
        "course_lib.rnn.ElmanRNN",
        "course_lib.rnn.ElmanCell",
        "course_lib.rnn.unroll",
    ),
)


# --------------------------------------------------------------------------- 3.4 the training loop

# The student's loop runs for one pass over a few tiny drawn batches; a reference loop runs from the same
# initial weights, on the same batches in the same order, and every loss and the final weights are compared.


def _train_draw(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for optimizer in ({"name": "sgd", "lr": 0.5, "momentum": 0.9}, {"name": "adam", "lr": 0.05}):
        batches = []
        for _ in range(int(rng.integers(3, 5))):
            seqs = [
                P.sample(str(rng.choice(P.KINDS)), 2 * int(rng.integers(2, 5)), rng)
                for _ in range(int(rng.integers(3, 7)))
            ]
            tokens, lengths = P.pad(seqs)
            labels = torch.tensor([int(P.is_balanced(s)) for s in seqs])
            batches.append((tokens, lengths, labels))
        model = {"H": int(rng.integers(3, 7)), "seed": int(rng.integers(2**31))}
        cases.append([model, batches, optimizer])
    return cases


def _train_model(recipe):
    with seeded(recipe["seed"]):
        return SequenceClassifier("elman", n_symbols=10, hidden_size=recipe["H"])


def _train_optimizer(model, recipe):
    if recipe["name"] == "sgd":
        return torch.optim.SGD(model.parameters(), lr=recipe["lr"], momentum=recipe["momentum"])
    return torch.optim.Adam(model.parameters(), lr=recipe["lr"])


def _materialise_train(args):
    model = _train_model(args[0])
    return [model, args[1], _train_optimizer(model, args[2])]


def _losses(returned):
    """A list of plain floats from what the loop returned, or None when it is not one number per batch."""
    if not isinstance(returned, (list, tuple)):
        return None
    out = []
    for v in returned:
        if isinstance(v, torch.Tensor) and v.numel() == 1:
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)):
            return None
        out.append(float(v))
    return out


def _train_describe(returned, live):
    return {
        "losses": _losses(returned),
        "with_graph": isinstance(returned, (list, tuple))
        and any(isinstance(v, torch.Tensor) and v.requires_grad for v in returned),
        "type": type(returned).__name__,
        "state": tensors.state(live[0]),  # as the model keeps it (see tensors), not through its state_dict
    }


def _reference_loop(case, mistake=None):
    """One pass of the right loop (or of one known mistake): (losses, final state dict)."""
    model = _train_model(case[0])
    optimizer = _train_optimizer(model, case[2])
    losses = []
    for tokens, lengths, labels in case[1]:
        logits = model(tokens) if mistake == "no lengths" else model(tokens, lengths)
        if mistake == "nll":
            loss = F.nll_loss(logits, labels)
        else:
            loss = F.cross_entropy(logits, labels, reduction="sum" if mistake == "sum" else "mean")
        if mistake != "no zero_grad":
            optimizer.zero_grad()
        loss.backward()
        if mistake != "no step":
            optimizer.step()
        losses.append(loss.item())
    return losses, {k: v.detach().clone() for k, v in model.state_dict().items()}


TRAIN_HINTS = {
    "call optimizer.zero_grad() before loss.backward() at every step: without it the gradients of all "
    "earlier batches add up": "no zero_grad",
    "pass the lengths: model(tokens, lengths) reads each sequence's prediction at its own last step, "
    "not at the padding": "no lengths",
    "the weights never change: the order is optimizer.zero_grad(), loss.backward(), optimizer.step() (a step "
    "needs the gradient that backward just computed)": "no step",
    "use the mean cross-entropy over the batch (F.cross_entropy's default), not the sum": "sum",
    "the model returns logits: F.cross_entropy(logits, labels) takes the log-softmax itself, F.nll_loss "
    "expects log-probabilities": "nll",
}


def _train_errors(case, record):
    if "does not require grad" in record.get("message", ""):
        return "the loss has no graph to backpropagate through: do not compute it under torch.no_grad() or detach it"
    return ""


def _judge_train(cases, records):
    got_losses, got_states = [], []
    for case, r in zip(cases, records):
        d = r["returned"]
        n = len(case[1])
        if d["losses"] is None or len(d["losses"]) != n:
            raise Mistake(
                f"return a list with one loss (a number) per batch: {n} batches, got {d['type']}"
                + (f" of length {len(d['losses'])}" if d["losses"] is not None else "")
            )
        if d.get("with_graph"):
            raise Mistake(
                "append loss.item(), a number: the loss tensor keeps the graph of its batch alive, so the memory "
                "grows with every batch of the epoch"
            )
        got_losses.append(d["losses"])
        got_states.append(torch.cat([v.reshape(-1).double() for v in d["state"].values()]))
    right = [_reference_loop(c) for c in cases]
    what = [f"the losses ({c[2]['name']}, {len(c[1])} batches)" for c in cases]
    weights = [f"the weights after the pass ({c[2]['name']})" for c in cases]
    try:  # the known mistakes are run only when the answer is wrong
        expect_answers(got_losses, [losses for losses, _ in right], None, what)
        expect_answers(got_states, [_flat(state) for _, state in right], None, weights)
    except Mistake:
        runs = {hint: [_reference_loop(c, m) for c in cases] for hint, m in TRAIN_HINTS.items()}
        expect_answers(
            got_losses,
            [losses for losses, _ in right],
            {h: [losses for losses, _ in run] for h, run in runs.items()},
            what,
        )
        expect_answers(
            got_states,
            [_flat(state) for _, state in right],
            {h: [_flat(state) for _, state in run] for h, run in runs.items()},
            weights,
        )


def _flat(state):
    return torch.cat([v.reshape(-1).double() for v in state.values()])


check_train_epoch = Exercise(
    "3.4",
    "the training loop",
    "train_epoch",
    ("model", "batches", "optimizer"),
    _train_draw,
    _judge_train,
    materialise=_materialise_train,
    observe=lambda args, live: [args[0], live[1], args[2]],  # the batches must come back unchanged
    describe=_train_describe,
    errors=_train_errors,
    forbidden=("course_lib.train.fit",),
)


# --------------------------------------------------------------------------- 3.5 accuracy over epochs


def _epochs_draw(seed):
    rng = np.random.default_rng(seed)
    model, batches, optimizer = _train_draw(seed)[0]
    test_sets = {}
    for name in ("colour_swap", "transposition")[: 1 + int(rng.integers(2))] + ("random",):
        negatives = [P.sample(name, 2 * int(rng.integers(2, 5)), rng) for _ in range(6)]
        positives = [P.random_positive(2 * int(rng.integers(1, 5)), rng) for _ in range(int(rng.integers(1, 5)))]
        test_sets[name] = negatives + positives  # more negatives than positives: the two answers differ
    return [[model, batches, optimizer, test_sets, int(rng.integers(2, 5))]]


def _as_set(seqs):
    seqs = [tuple(s) for s in seqs]
    return P.ParenthesesSet(seqs=seqs, labels=[int(P.is_balanced(s)) for s in seqs], kinds=["drawn"] * len(seqs))


def _materialise_epochs(args):
    """The model starts by answering "not balanced" to everything; the stand-in for train_epoch flips its
    answer at every call, so the accuracies after each epoch are known (and differ from those before it)."""
    model = _train_model(args[0])
    with torch.no_grad():
        model.W_hy.weight.zero_()
        model.W_hy.bias.copy_(torch.tensor([10.0, -10.0]))
    optimizer = _train_optimizer(model, args[2])
    batches = args[1]

    def train_epoch(m, b, o):
        if m is not model or b is not batches or o is not optimizer:
            raise ValueError("call train_epoch(model, batches, optimizer) with the model, batches and optimizer given")
        with torch.no_grad():
            model.W_hy.bias.neg_()
        return [0.0] * len(batches)

    sets = {name: _as_set(s) for name, s in args[3].items()}
    return [model, optimizer, batches, sets, args[4], train_epoch]


def _epochs_expected(case, mistake=None):
    """{set: accuracies} when the answer is "balanced" after odd epochs and "not balanced" after even ones."""
    out = {}
    for name, seqs in case[3].items():
        share = float(np.mean([P.is_balanced(s) for s in seqs]))  # accuracy when answering "balanced"
        flips = range(case[4]) if mistake == "before" else range(1, case[4] + 1)
        out[name] = [1 - share if mistake == "no training" or e % 2 == 0 else share for e in flips]
    return out


def _judge_epochs(cases, records):
    for case, r in zip(cases, records):
        got, epochs, names = r["returned"], case[4], sorted(case[3])
        if not isinstance(got, dict) or sorted(map(str, got)) != names:
            raise Mistake(
                f"return a dict with one list per test set, keys {names}, got {r['type']}"
                + (f" with keys {sorted(map(str, got))}" if isinstance(got, dict) else "")
            )
        for name in names:
            if not isinstance(got[name], (list, tuple)) or len(got[name]) != epochs:
                raise Mistake(f"{name}: one accuracy per epoch ({epochs} epochs), got {got[name]!r}")
        expected = _epochs_expected(case)
        wrong = {
            "measure the accuracy after each epoch's training, not before it": _epochs_expected(case, "before"),
            "train in every epoch: call train_epoch(model, batches, optimizer) once per epoch": _epochs_expected(
                case, "no training"
            ),
        }
        expect_answers(
            [got[n] for n in names],
            [expected[n] for n in names],
            {h: [w[n] for n in names] for h, w in wrong.items()},
            [f"the accuracies on {n}" for n in names],
        )


check_accuracy_over_epochs = Exercise(
    "3.5",
    "accuracy over epochs",
    "accuracy_over_epochs",
    ("model", "optimizer", "batches", "test_sets", "epochs", "train_epoch"),
    _epochs_draw,
    _judge_epochs,
    materialise=_materialise_epochs,
    observe=lambda args, live: [args[0], live[2], args[2], args[3], live[4], None],
)
