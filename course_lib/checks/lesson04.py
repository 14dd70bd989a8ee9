"""Checks for lesson 04 (LSTM vs GRU), each with targeted hints.

Every check builds fresh weights and inputs, asks torch.nn (LSTMCell, GRUCell, LSTM, GRU) for
the right answer, and computes what each known mistake would give, so a wrong answer gets the
hint for its mistake (only when that mistake explains every case).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_lib import rnn
from course_lib.checks import Mistake, probes, tensors
from course_lib.checks.lesson03 import init_hint, init_too_wide
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import (
    Exercise,
    expect_answers,
    expect_module_parts,
    materialise_module,
    seeded,
    size_error,
)


def _as_numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def _draw_cell(seed, n_blocks, with_c):
    """Fresh (x, h, [c,] W_xh, W_hh, b_xh, b_hh) with I != H in most cases, sizes drawn every run, and
    weights large enough to push the gates away from 0.5 (so that swapping gates shows)."""
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    sizes = [
        (3, 5, 4),
        (2, 3, 6),
        (1, 4, 2),
        (int(rng.integers(2, 5)), int(rng.integers(2, 8)), int(rng.integers(2, 8))),
    ]
    out = []
    for B, I, H in sizes:

        def r(*shape):
            return torch.randn(*shape, generator=gen)

        case = [r(B, I), r(B, H)] + ([r(B, H)] if with_c else [])
        out.append(case + [r(n_blocks * H, I), r(n_blocks * H, H), r(n_blocks * H), r(n_blocks * H)])
    return out


def _pair(record, names, h):
    value = record["returned"]
    values = [value] if len(names) == 1 else value
    if len(names) > 1 and (not isinstance(value, (tuple, list)) or len(value) != len(names)):
        raise Mistake(f"return the pair ({', '.join(names)}), got {record['type']}")
    for name, t in zip(names, values):
        if not _is_tensor(t) or tuple(t.shape) != tuple(h.shape):
            got = tuple(t.shape) if _is_tensor(t) else (record["type"] if len(names) == 1 else type(t).__name__)
            raise Mistake(f"{name} must be a tensor of shape (batch, hidden) = {tuple(h.shape)}, got {got}")
    return torch.cat([t.double() for t in values], dim=1)


def _lstm_variant(
    x,
    h,
    c,
    W_xh,
    W_hh,
    b_xh,
    b_hh,
    order="ifgo",
    acts=None,
    carry=True,
    squash=True,
    both_biases=True,
    one_minus_f=False,
    c_from_h=False,
    old_c=False,
):
    """One LSTM step with a mistake switched on (the defaults are torch's LSTMCell)."""
    pre = x @ W_xh.T + b_xh + h @ W_hh.T + (b_hh if both_biases else 0)
    chunks = dict(zip(order, pre.chunk(4, dim=-1)))
    acts = {"i": torch.sigmoid, "f": torch.sigmoid, "g": torch.tanh, "o": torch.sigmoid, **(acts or {})}
    i, f, g, o = (acts[k](chunks[k]) for k in "ifgo")
    if one_minus_f:
        f = 1 - f
    c_new = f * (h if c_from_h else c) + i * g if carry else i * g
    h_new = o * (torch.tanh(c if old_c else c_new) if squash else c_new)
    return h_new, c_new


LSTM_HINTS = {
    "gate order: torch stacks the four blocks as i, f, g, o (input, forget, candidate, output), "
    "so chunk(4) gives them in that order, not i, f, o, g": dict(order="ifog"),
    "the output gate o_t is a sigmoid (a gate lets through a share between 0 and 1): "
    "you used tanh where sigmoid belongs": dict(acts={"o": torch.tanh}),
    "the forget gate f_t is a sigmoid, not tanh: tanh where sigmoid belongs": dict(acts={"f": torch.tanh}),
    "the input gate i_t is a sigmoid, not tanh: tanh where sigmoid belongs": dict(acts={"i": torch.tanh}),
    "the candidate g_t (C~_t) uses tanh, not sigmoid: it proposes values in (-1, 1)": dict(acts={"g": torch.sigmoid}),
    "the cell state is not carried: c_t = f_t * c_{t-1} + i_t * g_t keeps the old cell "
    "state through the forget gate": dict(carry=False),
    "squash the cell state before the output gate: h_t = o_t * tanh(c_t)": dict(squash=False),
    "torch's LSTMCell adds both biases: b_xh and b_hh": dict(both_biases=False),
    "gate order: i, f, g, o; you took the forget gate first (f, i, g, o)": dict(order="figo"),
    "f_t is the share of c_{t-1} that is KEPT: c_t = f_t * c_{t-1} + i_t * g_t (you used 1 - f_t)": dict(
        one_minus_f=True
    ),
    "the forget gate keeps the old cell state: c_t = f_t * c_{t-1} + i_t * g_t (you used h_{t-1} for c_{t-1})": dict(
        c_from_h=True
    ),
    "h_t = o_t * tanh(c_t) uses the new cell state c_t: compute c_t first (you used c_{t-1})": dict(old_c=True),
}


# --------------------------------------------------------------------------- 4.1 the LSTM cell as a module

# The student's class is called with (input_size, hidden_size); the check copies drawn weights into the
# parameters it registered (W_xh, W_hh, b_xh, b_hh), runs three steps from a drawn state (and one from
# state=None), and takes the gradients of a drawn linear function of every h_t and c_t.
# torch.nn.LSTMCell with the same weights is the oracle.

CELL_SIZES = [(4, 4), (3, 5), (6, 2), (2, 3)]  # (I, H): square first, so a concatenation in the wrong order shows
LSTM_PARAMS = {
    "W_xh": lambda I, H: (4 * H, I),
    "W_hh": lambda I, H: (4 * H, H),
    "b_xh": lambda I, H: (4 * H,),
    "b_hh": lambda I, H: (4 * H,),
}
STEPS = 3


def _cell_draw(seed):
    rng = np.random.default_rng(seed)
    return [[I, H, {"B": int(rng.integers(2, 5)), "seed": int(rng.integers(2**31))}] for I, H in CELL_SIZES]


def _cell_tensors(I, H, recipe):
    g = torch.Generator().manual_seed(recipe["seed"])
    B = recipe["B"]

    def r(*shape):
        return torch.randn(*shape, generator=g)

    t = {n: r(*LSTM_PARAMS[n](I, H)) for n in LSTM_PARAMS}
    t.update(x=r(STEPS, B, I), h0=r(B, H), c0=r(B, H), R=r(STEPS, 2, B, H))
    return t


def _cell_describe(module, live):
    from course_lib.checks.protocol import _where

    I, H = live[0], live[1]
    if not isinstance(module, nn.Module):
        return {"problem": f"LSTMCell(input_size, hidden_size) should build an nn.Module, got {type(module).__name__}"}
    try:  # as nn.Module keeps them, read by torch's own C methods: nothing of the student's class answers
        params = tensors.parameters(module)
    except tensors.NotATensor as exc:
        return {"problem": str(exc)}
    missing = [n for n in LSTM_PARAMS if n not in params]
    if missing:
        return {"missing": missing, "attributes": [n for n in LSTM_PARAMS if hasattr(module, n)]}
    shapes = {n: tensors.shape(params[n], n) for n in LSTM_PARAMS}
    if any(shapes[n] != LSTM_PARAMS[n](I, H) for n in LSTM_PARAMS):
        return {"shapes": shapes}
    t = _cell_tensors(I, H, live.recipe)
    init_wide = init_too_wide(params, LSTM_PARAMS, H)
    extents = {n: tensors.extent(params[n], n) for n in LSTM_PARAMS}
    init_top = max(top for _, _, top, _ in extents.values())  # the judge: too narrow?
    # the text states the range of all four, biases included: (min, max) and size as the constructor made them
    init_all = {n: (lo, hi) for n, (lo, hi, _, _) in extents.items()}
    init_sizes = {n: size for n, (*_, size) in extents.items()}
    try:
        for n in LSTM_PARAMS:
            tensors.write(params[n], t[n], n)
        x = t["x"].clone().requires_grad_()
        h0, c0 = t["h0"].clone(), t["c0"].clone()
        state, states = (h0, c0), []
        for step in range(STEPS):
            state = module(x[step], state)
            if not (isinstance(state, tuple) and len(state) == 2 and all(isinstance(v, torch.Tensor) for v in state)):
                return {"problem": f"forward should return the pair (h_t, c_t) of tensors, got {type(state).__name__}"}
            if any(tuple(v.shape) != tuple(h0.shape) for v in state):
                return {
                    "problem": f"h_t and c_t should have the shape (B, H) = {tuple(h0.shape)}, "
                    f"got {tuple(state[0].shape)} and {tuple(state[1].shape)}"
                }
            states.append(torch.stack(state))
            if not (torch.equal(h0, t["h0"]) and torch.equal(c0, t["c0"])):
                return {"problem": "your forward changed the state (h, c) it was given in place: return new tensors"}
        states = torch.stack(states)  # (STEPS, 2, B, H)
        loss = (t["R"] * states).sum()
        wrt = [params[n] for n in LSTM_PARAMS] + [x]
        grads = torch.autograd.grad(loss, wrt, allow_unused=True) if loss.requires_grad else [None] * len(wrt)
        with torch.no_grad():
            from_none = module(t["x"][0].clone())
        from_none = torch.stack(from_none) if isinstance(from_none, tuple) else None
        float64 = probes.float64_run(module, lambda m: m(t["x"][0].double()))
    except Exception as exc:  # the student's forward crashed: say where
        return {"raised": type(exc).__name__, "message": str(exc)[:300], "where": _where(exc)}
    candidate = _candidate_probe(module, t, H)
    return {
        "states": states.detach(),
        "grads": torch.cat(
            [(torch.zeros_like(w) if g is None else g).detach().reshape(-1) for w, g in zip(wrt, grads)]
        ),
        "from_none": from_none,
        "changed": not (torch.equal(h0, t["h0"]) and torch.equal(c0, t["c0"])),
        "sizes": [getattr(module, "input_size", None), getattr(module, "hidden_size", None)],
        "init_wide": init_wide,
        "init_top": init_top,
        "init": [init_all, init_sizes],
        "float64": float64,
        "candidate": candidate,
    }


def _candidate_probe(module, t, H):
    """The cell state's dependence on the candidate: with the candidate's block g of every parameter zero
    (g_t = tanh(0) = 0), c_t = f_t * c_{t-1} must not move when only the input gate's bias does (i_t scales g_t
    and nothing else). One step on a copy of the module: c_t before and after, or None if it does not run."""
    import copy

    try:
        probe = copy.deepcopy(module)
        params = tensors.parameters(probe)
        for n in LSTM_PARAMS:
            values = tensors.read(params[n], n)
            values[2 * H : 3 * H] = 0.0
            tensors.write(params[n], values, n)
        cs = []
        with torch.no_grad():
            for _ in range(2):
                cs.append(probe(t["x"][0].clone(), (t["h0"].clone(), t["c0"].clone()))[1].detach().clone())
                values = tensors.read(params["b_xh"], "b_xh")
                values[:H] += 2.0  # the input gate only
                tensors.write(params["b_xh"], values, "b_xh")
        return cs
    except Exception:  # noqa: BLE001 - the cases judge a forward that fails; this probe only names a property
        return None


def _oracle_step(x, state, W):
    """torch.nn.LSTMCell's step, with W as its weights (differentiable), in float64."""
    from torch.func import functional_call

    cell = nn.LSTMCell(x.shape[1], state[0].shape[1], dtype=torch.float64, device="meta")
    weights = dict(zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), W.values()))
    return functional_call(cell, weights, (x, state))


def _swapped_step(x, state, W):
    """colah's concatenation with h and x in the other order than the weights (the shapes still fit)."""
    h, c = state
    pre = torch.cat([h, x], dim=1) @ torch.cat([W["W_xh"], W["W_hh"]], dim=1).T + W["b_xh"] + W["b_hh"]
    i, f, g, o = pre.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _variant_step(**variant):
    def step(x, state, W):
        return _lstm_variant(x, *state, W["W_xh"], W["W_hh"], W["b_xh"], W["b_hh"], **variant)

    return step


def _cell_run(t, step=_oracle_step, detach=False, zero_state=False):
    """States (STEPS, 2, B, H) and gradients (W_xh, W_hh, b_xh, b_hh, x) of three steps of ``step``."""
    W = {n: t[n].double().requires_grad_() for n in LSTM_PARAMS}
    x = t["x"].double().requires_grad_()
    h, c = (t["h0"].double() * (0 if zero_state else 1), t["c0"].double() * (0 if zero_state else 1))
    states = []
    for k in range(STEPS):
        h, c = step(x[k], (h, c), W)
        states.append(torch.stack([h, c]))
        if detach:
            h, c = h.detach(), c.detach()
    states = torch.stack(states)
    wrt = [*W.values(), x]
    grads = torch.autograd.grad((t["R"].double() * states).sum(), wrt, allow_unused=True)
    grads = torch.cat([(torch.zeros_like(w) if g is None else g).reshape(-1) for w, g in zip(wrt, grads)])
    return states.detach(), grads


def _cell_errors(case, record):
    if size_error(record):
        return (
            "a shape mismatch: x is (B, I) and h_{t-1} is (B, H); W_xh is (4H, I) and W_hh is (4H, H), so the "
            "gates are x @ W_xh.T + h @ W_hh.T (concatenated: torch.cat([x, h], dim=1) with "
            "torch.cat([W_xh, W_hh], dim=1), in the same order)"
        )
    return ""


def _judge_cell(cases, records):
    got_states, got_grads, got_none = [], [], []
    crash = ""
    for (I, H, _), r in zip(cases, records):
        d = r["returned"]
        if not isinstance(d, dict):
            raise Mistake(f"LSTMCell({I}, {H}) should build an nn.Module, got {r['type']}")
        if "raised" in d:  # judged after the cases before it, which may name the mistake
            crash = _cell_errors(None, d) or f"your forward raised {d['raised']}: {d['message']}{d.get('where', '')}"
            break
        expect_module_parts(
            d,
            "name the parameters as torch stacks them: self.W_xh (4H, I), self.W_hh (4H, H), self.b_xh and "
            "self.b_hh (4H,)",
        )
        if "shapes" in d:
            raise Mistake(
                f"for input_size={I}, hidden_size={H}: W_xh should be {(4 * H, I)}, W_hh {(4 * H, H)}, b_xh and "
                f"b_hh {(4 * H,)}, got {[d['shapes'][n] for n in LSTM_PARAMS]}"
            )
        if d["changed"]:
            raise Mistake("your forward changed the state (h, c) it was given in place: return new tensors")
        if d["sizes"] != [I, H]:
            raise Mistake(
                "store self.input_size and self.hidden_size (the sequence model reads them), "
                f"got {d['sizes'][0]!r} and {d['sizes'][1]!r} for LSTMCell({I}, {H})"
            )
        if d.get("init_wide"):
            raise Mistake(init_hint(d["init_wide"], H))
        # too narrow (zeros, or k = 1/H): none of the 4H(I + H + 2) values reaches k/2 (for torch's init: 2^-80 at most)
        if d.get("init_top", H) < H**-0.5 / 2:
            raise Mistake(
                f"initialise uniformly in (-1/sqrt(H), 1/sqrt(H)) as torch does, k = 1/sqrt(H) = {H**-0.5:.3g}: your "
                f"parameters start no larger than {d['init_top']:.3g} (zeros, or k = 1/H, leave the units alike)"
            )
        init = d.get("init", [{}, {}])
        hint = (
            probes.init_mistake("LSTMCell", *init)  # one sign only (torch.rand), or all zero
            or probes.init_range_mistake("LSTMCell", init[0], H**-0.5, "uniform in (-1/sqrt(H), 1/sqrt(H))")
            or probes.float64_mistake("LSTMCell", d.get("float64"), "x")
        )
        if hint:
            raise Mistake(hint)
        got_states.append(d["states"])
        got_grads.append(d["grads"])
        got_none.append(d["from_none"])
    cases = cases[: len(got_states)]
    tensors = [_cell_tensors(I, H, recipe) for I, H, recipe in cases]
    right = [_cell_run(t) for t in tensors]
    what = [f"(h_t, c_t) over {STEPS} steps for I={I}, H={H}" for I, H, _ in cases]
    try:  # the known mistakes are run only when the answer is wrong
        expect_answers(got_states, [s for s, _ in right], None, what)
    except Mistake:
        wrong = {hint: [_cell_run(t, _variant_step(**kw))[0] for t in tensors] for hint, kw in LSTM_HINTS.items()}
        wrong["return (h_t, c_t) in this order: you returned (c_t, h_t)"] = [
            _cell_run(t, lambda x, s, W: _oracle_step(x, s, W)[::-1])[0] for t in tensors
        ]
        wrong["the state is (h_{t-1}, c_{t-1}), in this order: h, c = state (you read it as (c, h))"] = [
            _cell_run(t, lambda x, s, W: _oracle_step(x, s[::-1], W))[0] for t in tensors
        ]
        wrong["the state is (h, c), in this order, both in and out: h, c = state and return (h_t, c_t)"] = [
            _cell_run(t, lambda x, s, W: _oracle_step(x, s[::-1], W)[::-1])[0] for t in tensors
        ]
        wrong["start from the state you are given; zeros only when state is None"] = [
            _cell_run(t, lambda x, s, W: _oracle_step(x, (s[0] * 0, s[1] * 0), W))[0] for t in tensors
        ]
        wrong["the order of the concatenation: [x, h] goes with [W_xh, W_hh] (you put h first)"] = [
            _cell_run(t, _swapped_step)[0] for t in tensors
        ]
        try:
            expect_answers(got_states, [s for s, _ in right], wrong, what)
        except Mistake as mistake:  # a first difference: name the property that fails, if one does
            if " should be " not in str(mistake):
                raise
            raise Mistake(_cell_property([r["returned"] for r in records]) or str(mistake)) from None
    detached = (
        "your states are right but the gradients are not: the state was detached, so the loss cannot reach "
        "earlier steps (backpropagation through time needs the graph)"
    )
    try:
        expect_answers(
            got_grads,
            [g for _, g in right],
            {detached: [_cell_run(t, detach=True)[1] for t in tensors]},
            [f"the gradients (W_xh, W_hh, b_xh, b_hh, then x, flattened) for I={I}, H={H}" for I, H, _ in cases],
        )
    except Mistake as mistake:
        if str(mistake) == detached:
            raise
        raise Mistake(
            "your states are right but the gradients are not: keep the graph (no .detach(), .data or "
            f"torch.no_grad() on h, c or the gates). {mistake}"
        ) from None
    expect_answers(
        got_none,
        [_cell_run(t, zero_state=True)[0][0] for t in tensors],
        None,
        [f"(h_1, c_1) from state=None (zeros) for I={I}, H={H}" for I, H, _ in cases],
    )
    if crash:
        raise Mistake(crash)


def _cell_property(described: list) -> str:
    """The properties of the cell, named whatever code broke them: c_t depends on the input gate only through
    the candidate g_t."""
    for d in described:
        hint = probes.unchanged_mistake(
            d.get("candidate") if isinstance(d, dict) else None,
            "LSTMCell: with the candidate's weights zero (g_t = tanh(0) = 0) and only the input gate's bias changed",
            "the input gate scales the candidate g_t and nothing else, c_t = f_t * c_{t-1} + i_t * g_t",
            "c_t",
        )
        if hint:
            return hint
    return ""


check_lstm_cell = Exercise(
    "4.1",
    "the LSTM cell as a module",
    "LSTMCell",
    ("input_size", "hidden_size"),
    _cell_draw,
    _judge_cell,
    materialise=materialise_module,
    observe=lambda args, live: args,
    describe=_cell_describe,
    errors=_cell_errors,
    forbidden=(
        "torch.nn.LSTMCell",
        "torch.nn.LSTM",
        "torch.nn.GRUCell",
        "torch.nn.GRU",
        "course_lib.rnn.LSTMCell",
        "course_lib.rnn.LSTMCell.gates",
        "course_lib.rnn.LSTMCell.step",
        "course_lib.rnn.LSTM",
        "course_lib.rnn.GRUCell",
        "course_lib.rnn.GRUCell.gates",
        "course_lib.rnn.GRUCell.step",
        "torch.lstm_cell",
    ),
)


def _gru_variant(
    x, h, W_xh, W_hh, b_xh, b_hh, swap_z=False, swap_rz=False, n_act=torch.tanh, reset_before=False, no_reset=False,
    b_hn_outside=False, both_biases=True,
):  # fmt: skip
    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)
    h_r, h_z, h_n = (h @ W_hh.T + (b_hh if both_biases else 0)).chunk(3, dim=-1)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    if swap_rz:
        r, z = z, r
    H = h.shape[-1]
    if reset_before:  # the lecture's (Cho et al. 2014) form: W_hn (r * h) + b_hn
        n = n_act(x_n + (r * h) @ W_hh[2 * H :].T + b_hh[2 * H :])
    elif no_reset:
        n = n_act(x_n + h_n)
    elif b_hn_outside:  # r_t * (W_hn h_{t-1}) + b_hn: the bias left outside the reset gate
        n = n_act(x_n + r * (h_n - b_hh[2 * H :]) + b_hh[2 * H :])
    else:
        n = n_act(x_n + r * h_n)
    return (1 - z) * h + z * n if swap_z else z * h + (1 - z) * n


GRU_HINTS = {
    "z_t and 1 - z_t are swapped: in torch's convention h_t = z_t * h_{t-1} + (1 - z_t) * n_t "
    "(z_t near 1 keeps the old state); (1 - z) h_{t-1} + z h~ is colah's convention": dict(swap_z=True),
    "gate order: torch stacks the blocks as r, z, n (reset, update, candidate); you swapped r and z": dict(
        swap_rz=True
    ),
    "the candidate n_t uses tanh, not sigmoid": dict(n_act=torch.sigmoid),
    "you applied the reset gate before the product, W_hn (r_t * h_{t-1}): that is the lecture's "
    "(Cho et al. 2014) form; torch multiplies r_t with (W_hn h_{t-1} + b_hn), after the product": dict(
        reset_before=True
    ),
    "the reset gate r_t is missing from the candidate: n_t = tanh(W_xn x_t + b_xn + r_t * (W_hn h_{t-1} + b_hn))": dict(
        no_reset=True
    ),
    "b_hn goes inside the reset gate: r_t * (W_hn h_{t-1} + b_hn), not r_t * (W_hn h_{t-1}) + b_hn": dict(
        b_hn_outside=True
    ),
    "torch's GRUCell adds both biases: b_xh on the input side and b_hh on the hidden side (you left out b_hh)": dict(
        both_biases=False
    ),
}


def _judge_gru(cases, records):
    got, expected, wrong = [], [], {k: [] for k in GRU_HINTS}
    for (x, h, W_xh, W_hh, b_xh, b_hh), r in zip(cases, records):
        got.append(_pair(r, ("h_t",), h))
        cell = nn.GRUCell(W_xh.shape[1], h.shape[1], device="meta").to_empty(device="cpu")
        with torch.no_grad():
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_xh, W_hh, b_xh, b_hh)):
                p.copy_(v)
            expected.append(cell(x, h))  # the oracle
        for hint, kwargs in GRU_HINTS.items():
            wrong[hint].append(_gru_variant(x, h, W_xh, W_hh, b_xh, b_hh, **kwargs))
    try:
        expect_answers(got, expected, wrong, [f"h_t for I={c[0].shape[1]}, H={c[1].shape[1]}" for c in cases])
    except Mistake as mistake:  # a first difference: name the property that fails, if one does
        if " should be " not in str(mistake):
            raise
        raise Mistake(_gru_property(cases, got, expected) or str(mistake)) from None


def _draw_gru(seed):
    """_draw_cell's cases, then the candidate's probe: the last case twice with the gates' input weights zero
    (x_t reaches h_t only through n_t), the second time with x_t + 1."""
    cases = _draw_cell(seed, 3, with_c=False)
    x, h, W_xh, W_hh, b_xh, b_hh = cases[-1]
    W_xh = W_xh.clone()
    W_xh[: 2 * h.shape[1]] = 0.0  # r and z no longer read x_t
    return cases + [[x, h, W_xh, W_hh, b_xh, b_hh], [x + 1.0, h.clone(), W_xh.clone(), W_hh, b_xh, b_hh]]


def _gru_property(cases, got, expected) -> str:
    """The properties of one GRU step, named whatever code broke them: h_t mixes h_{t-1} with n_t, which a tanh
    keeps in (-1, 1); and h_t depends on x_t through n_t (the probe's two cases, x_t and x_t + 1)."""
    for (x, h, *_), g in zip(cases, got):
        hint = probes.bound_mistake(
            g,
            torch.clamp(h.abs(), min=1.0),
            f"h_t for I={x.shape[1]}, H={h.shape[1]}",
            "h_t = z_t * h_{t-1} + (1 - z_t) * n_t mixes h_{t-1} with n_t, and the tanh keeps n_t in (-1, 1): the "
            "whole sum W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn) goes inside the tanh",
        )
        if hint:
            return hint
    probe = len(got) == len(expected) == len(cases) >= 2 and all(
        not c[2][: 2 * c[1].shape[1]].any() for c in cases[-2:]
    )  # the last two cases are the probe's (a crash before them leaves them out)
    if not probe or not probes.unchanged_mistake(list(expected[-2:]), "", ""):
        return ""  # no probe, or the reference does not move either (cannot happen with drawn weights)
    if not probes.unchanged_mistake(list(got[-2:]), "", ""):
        return (
            "with the gates' input weights zero, h_t did not change when only x_t changed: x_t reaches h_t through "
            "the candidate, n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn)): keep its input term"
        )
    return ""


check_gru_step = Exercise(
    "4.2",
    "one GRU step",
    "gru_step",
    ("x", "h", "W_xh", "W_hh", "b_xh", "b_hh"),
    _draw_gru,
    _judge_gru,
    forbidden=(
        "torch.nn.GRUCell",
        "torch.nn.GRU",
        "torch.gru_cell",
        "course_lib.rnn.GRUCell",
        "course_lib.rnn.GRUCell.gates",
        "course_lib.rnn.GRUCell.step",
        "course_lib.rnn.GRU",
    ),
)


def _count(kind, I, H, L, bias_vectors=2, same_input=False, lstm_blocks=4, gru_blocks=3):
    blocks = lstm_blocks if kind == "lstm" else gru_blocks
    return sum(blocks * H * ((I if layer == 0 or same_input else H) + H + bias_vectors) for layer in range(L))


def _draw_count(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for kind, L in (("lstm", 2), ("gru", 3), ("lstm", 1), ("gru", 1), ("lstm", int(rng.integers(1, 4)))):
        I, H = (int(v) for v in rng.choice(np.arange(2, 40), size=2, replace=False))  # I != H
        cases.append([kind, I, H, L])
    return cases


def _judge_count(cases, records):
    got = []
    for r in records:
        value = r["returned"]
        whole = type(value) is int or (type(value) is float and value.is_integer())
        whole = whole or (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu")
        if not whole:
            raise Mistake(f"return a whole number of parameters, got {r['type']} {value!r}")
        got.append(int(value))
    expected = [
        sum(p.numel() for p in (nn.LSTM if k == "lstm" else nn.GRU)(I, H, num_layers=L, device="meta").parameters())
        for k, I, H, L in cases
    ]  # the oracle
    wrong = {
        "torch keeps two bias vectors per layer (b_xh and b_hh), so each gate block has H * (I + H + 2) "
        "parameters, not H * (I + H + 1)": [_count(*c, bias_vectors=1) for c in cases],
        "only the first layer reads the input x (size I): the layers above read h from the layer below (size H)": [
            _count(*c, same_input=True) for c in cases
        ],
        "an LSTM has 4 blocks of weights (i, f, g, o): the candidate g counts too": [
            _count(*c, lstm_blocks=3) for c in cases
        ],
        "a GRU has 3 blocks of weights (r, z, n), not 4 like the LSTM": [_count(*c, gru_blocks=4) for c in cases],
        "count every layer, not only the first": [_count(k, I, H, 1) for k, I, H, _ in cases],
        "count num_layers layers, range(num_layers): you counted one fewer": [
            _count(k, I, H, L - 1) for k, I, H, L in cases
        ],
        "the first layer is layer 0 (range(num_layers)), and it reads the input of size I: yours read H": [
            _count(k, H, H, L) for k, I, H, L in cases
        ],
        "the biases are vectors of size H in every block, not two numbers per layer: H * (I + H + 2) per block": [
            _count(*c, bias_vectors=0) + 2 * c[3] for c in cases
        ],
    }
    expect_answers(
        got,
        expected,
        wrong,
        [f"the count for {k}, I={I}, H={H}, num_layers={L}" for k, I, H, L in cases],
        rtol=0,
        atol=1e-9,
    )


check_param_count = Exercise(
    "4.3",
    "the parameter count",
    "param_count",
    ("kind", "input_size", "hidden_size", "num_layers"),
    _draw_count,
    _judge_count,
    # counting the parameters of a built module is not counting them: any module (nn.Module, the base of every
    # one: torch's RNNBase and cells, the course's) as well as the two named
    forbidden=("torch.nn.LSTM", "torch.nn.GRU", "course_lib.rnn.LSTM", "course_lib.rnn.GRU", "torch.nn.Module"),
)


# ---------------------------------------------------------------- 4.4


def _build_lstm(recipe):
    """The model a 4.4 case stands for: a course_lib.rnn.LSTM with random biases from the recipe's seed."""
    with seeded(recipe["seed"]):
        lstm = rnn.LSTM(recipe["I"], recipe["H"], num_layers=recipe["L"])
        with torch.no_grad():
            for cell in lstm.cells:
                cell.b_xh.normal_()
                cell.b_hh.normal_()
    return lstm


class _Handed(list):
    """The arguments handed to the student, with the lstm's parameter objects as it was given: kept here, where
    the student's function (which gets the list's items) cannot rewrite them."""

    given: tuple = ()


def _given_lstm(args):
    """The lstm handed to the student, with its parameter objects noted: they are to be changed, not replaced."""
    lstm = _build_lstm(args[0])
    live = _Handed([lstm, args[1]])
    live.given = tuple(tensors.parameters(lstm).values())
    return live


def _draw_forget(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for L in (2, 3, int(rng.integers(1, 4))):
        I, H = (int(v) for v in rng.choice(np.arange(2, 8), size=2, replace=False))  # I != H
        cases.append(
            [{"I": I, "H": H, "L": L, "seed": int(rng.integers(2**31))}, round(float(rng.uniform(0.5, 3.0)), 3)]
        )
    return cases


def _judge_forget(cases, records):
    for (recipe, value), r in zip(cases, records):
        state = r["returned"]["state"]
        if not r["returned"]["same"]:
            raise Mistake(
                "return the lstm you were given (the exercise says: set the biases in place, then return lstm)"
            )
        if not r["returned"]["kept"]:
            raise Mistake(
                "change the biases in place (cell.b_xh[H:2 * H] = value, under torch.no_grad()): you replaced a "
                "parameter with a new one, which an optimizer built before would no longer train"
            )
        lstm = _build_lstm(recipe)
        H = recipe["H"]
        for layer, cell in enumerate(lstm.cells):
            if not all(torch.equal(state[f"cells.{layer}.{w}"], getattr(cell, w).detach()) for w in ("W_xh", "W_hh")):
                raise Mistake("change only the biases, not the weights")
        for layer, cell in enumerate(lstm.cells):
            bx, bh = state[f"cells.{layer}.b_xh"], state[f"cells.{layer}.b_hh"]
            old, new = (cell.b_xh + cell.b_hh).detach(), bx + bh  # only the sum matters
            f = slice(H, 2 * H)
            target = torch.full_like(new[f], value)
            if torch.allclose(new, old):
                if all(
                    torch.allclose(state[f"cells.{k}.b_xh"] + state[f"cells.{k}.b_hh"], (c.b_xh + c.b_hh).detach())
                    for k, c in enumerate(lstm.cells)
                ):
                    raise Mistake("nothing changed: write into cell.b_xh / cell.b_hh in place (under torch.no_grad())")
                raise Mistake(
                    f"layer {layer} is unchanged: set the forget bias of every layer (lstm.cells), not only one"
                )
            if torch.allclose(new[f], target) and not torch.allclose(
                torch.cat([new[:H], new[2 * H :]]), torch.cat([old[:H], old[2 * H :]])
            ):
                raise Mistake("set only the forget slice [H:2H]; the other gates' biases must stay as they were")
            if torch.allclose(new[f], 2 * target):
                raise Mistake(
                    "both biases are added (b_f = b_xh[H:2H] + b_hh[H:2H]): setting both to the value "
                    "gives twice the value; set one to the value and the other to 0"
                )
            if torch.allclose(bx[f], target) and not torch.allclose(new[f], target):
                raise Mistake(
                    "the hidden-side bias b_hh is added too: set its forget slice b_hh[H:2H] to 0, "
                    "so that b_xh + b_hh equals the value"
                )
            for name, s in (
                ("input gate i", slice(0, H)),
                ("candidate g", slice(2 * H, 3 * H)),
                ("output gate o", slice(3 * H, 4 * H)),
            ):
                if not torch.allclose(new[s], old[s]):
                    raise Mistake(
                        f"wrong slice: you changed the {name}. torch stacks the gates i, f, g, o, "
                        "so the forget gate is the second block, [H:2H]"
                    )
            if torch.allclose(bx[f], cell.b_xh[f].detach() + value):
                raise Mistake("set the forget bias to the value (=), do not add the value to it (+=)")
            if not torch.allclose(new[f], target):
                i = int((new[f] - target).abs().argmax())
                raise Mistake(
                    f"layer {layer}: b_xh[H:2H] + b_hh[H:2H] should be {value} everywhere, got {float(new[f][i]):.4g} at index {i}"
                )


def _kept(live) -> bool:
    """Does the lstm still hold, in order, the very parameters it was handed out with?"""
    held = tuple(tensors.parameters(live[0]).values())
    return len(held) == len(live.given) and all(a is b for a, b in zip(held, live.given))


check_set_forget_bias = Exercise(
    "4.4",
    "the forget-gate bias",
    "set_forget_bias",
    ("lstm", "value"),
    _draw_forget,
    _judge_forget,
    forbidden=("course_lib.memory.set_forget_bias",),
    materialise=_given_lstm,  # the recipe: sizes and a seed
    observe=lambda args, live: [args[0], live[1]],  # the lstm is meant to change: its state is in "returned"
    errors=lambda case, record: (
        "change the parameters under torch.no_grad(): autograd refuses an in-place write to a parameter"
        if "leaf Variable that requires grad" in record.get("message", "")
        else ""
    ),
    describe=lambda returned, live: {
        "same": returned is live[0],
        # as the lstm keeps them (see tensors), not through its own parameters() or state_dict
        "kept": _kept(live),
        "state": tensors.state(live[0]),
    },
)


# ---------------------------------------------------------------- 4.5 the memory experiment over seeds

# The student's function gets a stand-in for the training run, train(T, seed) -> accuracy, whose answers
# are drawn for every (T, seed), and must return {T: {"runs": [...], "mean": ..., "sd": ...}}.


def _memory_draw(seed):
    rng = np.random.default_rng(seed)
    Ts = sorted(int(v) for v in rng.choice(np.arange(2, 60), size=int(rng.integers(2, 5)), replace=False))
    # 4 to 6 seeds, never the notebook's 3: a count of seeds written into the code fails every draw
    seeds = [int(v) for v in rng.choice(100, size=int(rng.integers(4, 7)), replace=False)]
    # never in the order of sorted(seeds) or of set(seeds) (1 draw in 24 each with 4 seeds): runs taken in
    # that order instead of the order given must show
    while seeds == sorted(seeds) or seeds == list(set(seeds)):
        seeds = [int(v) for v in rng.permutation(seeds)]
    table = {f"{T},{s}": round(float(rng.uniform(0.2, 1.0)), 4) for T in Ts for s in seeds}
    return [[table, Ts, seeds]]


def _materialise_memory(args):
    table = args[0]

    def train(T, seed):
        key = f"{T},{seed}"
        if key not in table:
            raise ValueError(f"train(T, seed) was called with T={T!r}, seed={seed!r}: use the T values and seeds given")
        return table[key]

    return [train, args[1], args[2]]


def _judge_memory(cases, records):
    for (table, Ts, seeds), r in zip(cases, records):
        got = r["returned"]
        if not isinstance(got, dict) or sorted(got) != Ts:
            raise Mistake(
                f"return a dict with one entry per T, keys {Ts}, got {r['type']}"
                + (f" with keys {sorted(got, key=str)}" if isinstance(got, dict) else "")
            )
        for T in Ts:
            entry = got[T]
            if not isinstance(entry, dict) or sorted(entry) != ["mean", "runs", "sd"]:
                raise Mistake(f"got[{T}] should be a dict with the keys 'runs', 'mean' and 'sd', got {entry!r}")
            runs = [table[f"{T},{s}"] for s in seeds]
            returned = list(table.values())
            try:  # the property: the runs are numbers the train it was given returned
                foreign = [g for g in entry["runs"] if not any(abs(float(g) - v) < 1e-9 for v in returned)]
            except (TypeError, ValueError):  # not a list of numbers: expect_answers says what it is
                foreign = []
            if foreign:
                raise Mistake(
                    f"your run {foreign[0]!r} at T={T} is not a number the train you are given returned: runs[k] is "
                    "train(T, seeds[k]) with the function passed as `train` (the check hands in its own), not "
                    "train_memory or another function called by name"
                )
            try:
                shuffled = list(entry["runs"]) != runs and sorted(entry["runs"]) == sorted(runs)
            except TypeError:  # not a list of numbers: expect_answers says what it is
                shuffled = False
            if shuffled:
                raise Mistake(
                    f"the runs at T={T} are right but in another order: runs[k] is train(T, seeds[k]), "
                    "the seeds in the order given (not sorted, not through a set)"
                )
            expect_answers(
                [entry["runs"]],
                [runs],
                {"run every seed at every T: runs[k] is train(T, seeds[k])": [[runs[0]] * len(runs)]},
                [f"the runs at T={T}"],
            )
            expect_answers(
                [entry["mean"]],
                [float(np.mean(runs))],
                {
                    f"the mean over the {len(seeds)} seeds given: divide by len(seeds) (or statistics.mean), "
                    "not by a fixed number": [sum(runs) / 3]
                },
                [f"the mean at T={T}"],
            )
            expect_answers(
                [entry["sd"]],
                [float(np.std(runs, ddof=1))],
                {
                    "the spread of a few runs is the sample standard deviation, with n - 1 in the denominator "
                    "(statistics.stdev, or np.std(runs, ddof=1))": [float(np.std(runs))]
                },
                [f"the standard deviation at T={T}"],
            )


check_memory_table = Exercise(
    "4.5",
    "the memory experiment over seeds",
    "memory_table",
    ("train", "T_values", "seeds"),
    _memory_draw,
    _judge_memory,
    materialise=_materialise_memory,
    observe=lambda args, live: [args[0], live[1], live[2]],
)
