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
from course_lib.checks import Mistake, exercise, expect, expect_values


def _as_numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def _cases(gen: torch.Generator, n_blocks: int):
    """Three fresh (x, h, c, W_xh, W_hh, b_xh, b_hh) with I != H and large enough weights to
    push the gates away from 0.5 (so that swapping gates shows)."""
    out = []
    for B, I, H in ((3, 5, 4), (2, 3, 6), (1, 4, 2)):

        def r(*shape, scale=1.0):
            return torch.randn(*shape, generator=gen, device="cpu") * scale

        out.append(
            (r(B, I), r(B, H), r(B, H), r(n_blocks * H, I), r(n_blocks * H, H), r(n_blocks * H), r(n_blocks * H))
        )
    return out


def _lstm_variant(x, h, c, W_xh, W_hh, b_xh, b_hh, order="ifgo", acts=None, carry=True, squash=True, both_biases=True):
    """One LSTM step with a mistake switched on (the defaults are torch's LSTMCell)."""
    pre = x @ W_xh.T + b_xh + h @ W_hh.T + (b_hh if both_biases else 0)
    chunks = dict(zip(order, pre.chunk(4, dim=-1)))
    acts = {"i": torch.sigmoid, "f": torch.sigmoid, "g": torch.tanh, "o": torch.sigmoid, **(acts or {})}
    i, f, g, o = (acts[k](chunks[k]) for k in "ifgo")
    c_new = f * c + i * g if carry else i * g
    h_new = o * (torch.tanh(c_new) if squash else c_new)
    return h_new, c_new


@exercise("4.1", "one LSTM step")
def check_lstm_step(lstm_step):
    gen = torch.Generator(device="cpu").manual_seed(int(np.random.default_rng().integers(2**31)))
    cases = _cases(gen, 4)
    got, expected = [], []
    wrong = {
        "gate order: torch stacks the four blocks as i, f, g, o (input, forget, candidate, output), "
        "so chunk(4) gives them in that order, not i, f, o, g": [],
        "the output gate o_t is a sigmoid (a gate lets through a share between 0 and 1): "
        "you used tanh where sigmoid belongs": [],
        "the forget gate f_t is a sigmoid, not tanh: tanh where sigmoid belongs": [],
        "the input gate i_t is a sigmoid, not tanh: tanh where sigmoid belongs": [],
        "the candidate g_t (C~_t) uses tanh, not sigmoid: it proposes values in (-1, 1)": [],
        "the cell state is not carried: c_t = f_t * c_{t-1} + i_t * g_t keeps the old cell "
        "state through the forget gate": [],
        "squash the cell state before the output gate: h_t = o_t * tanh(c_t)": [],
        "torch's LSTMCell adds both biases: b_xh and b_hh": [],
    }
    variants = [
        dict(order="ifog"),
        dict(acts={"o": torch.tanh}),
        dict(acts={"f": torch.tanh}),
        dict(acts={"i": torch.tanh}),
        dict(acts={"g": torch.sigmoid}),
        dict(carry=False),
        dict(squash=False),
        dict(both_biases=False),
    ]
    for x, h, c, W_xh, W_hh, b_xh, b_hh in cases:
        cell = nn.LSTMCell(W_xh.shape[1], h.shape[1])
        with torch.no_grad():
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_xh, W_hh, b_xh, b_hh)):
                p.copy_(v)
            h_ref, c_ref = cell(x, (h, c))  # the oracle
        out = lstm_step(x.clone(), h.clone(), c.clone(), W_xh.clone(), W_hh.clone(), b_xh.clone(), b_hh.clone())
        expect(
            isinstance(out, (tuple, list)) and len(out) == 2, f"return the pair (h_t, c_t), got {type(out).__name__}"
        )
        for name, t in zip(("h_t", "c_t"), out):
            expect(
                isinstance(t, torch.Tensor) and tuple(t.shape) == tuple(h.shape),
                f"{name} must be a tensor of shape (batch, hidden) = {tuple(h.shape)}, got "
                f"{tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__}",
            )
        got.append(np.concatenate([_as_numpy(out[0]), _as_numpy(out[1])], axis=1))
        expected.append(np.concatenate([h_ref.numpy(), c_ref.numpy()], axis=1))
        for hint, kwargs in zip(wrong, variants):
            hv, cv = _lstm_variant(x, h, c, W_xh, W_hh, b_xh, b_hh, **kwargs)
            wrong[hint].append(np.concatenate([hv.numpy(), cv.numpy()], axis=1))
    expect_values(
        got,
        expected,
        wrong,
        what=["(h_t, c_t), first case", "(h_t, c_t), second case", "(h_t, c_t), third case"],
        rtol=1e-4,
        atol=1e-5,
    )


def _gru_variant(
    x, h, W_xh, W_hh, b_xh, b_hh, swap_z=False, swap_rz=False, n_act=torch.tanh, reset_before=False, no_reset=False
):
    x_r, x_z, x_n = (x @ W_xh.T + b_xh).chunk(3, dim=-1)
    h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    if swap_rz:
        r, z = z, r
    H = h.shape[-1]
    if reset_before:  # the lecture's (Cho et al. 2014) form: W_hn (r * h) + b_hn
        n = n_act(x_n + (r * h) @ W_hh[2 * H :].T + b_hh[2 * H :])
    elif no_reset:
        n = n_act(x_n + h_n)
    else:
        n = n_act(x_n + r * h_n)
    return (1 - z) * h + z * n if swap_z else z * h + (1 - z) * n


@exercise("4.2", "one GRU step")
def check_gru_step(gru_step):
    gen = torch.Generator(device="cpu").manual_seed(int(np.random.default_rng().integers(2**31)))
    got, expected = [], []
    wrong = {
        "z_t and 1 - z_t are swapped: in torch's convention h_t = z_t * h_{t-1} + (1 - z_t) * n_t "
        "(z_t near 1 keeps the old state); (1 - z) h_{t-1} + z h~ is colah's convention": [],
        "gate order: torch stacks the blocks as r, z, n (reset, update, candidate); you swapped r and z": [],
        "the candidate n_t uses tanh, not sigmoid": [],
        "you applied the reset gate before the product, W_hn (r_t * h_{t-1}): that is the lecture's "
        "(Cho et al. 2014) form; torch multiplies r_t with (W_hn h_{t-1} + b_hn), after the product": [],
        "the reset gate r_t is missing from the candidate: n_t = tanh(W_xn x_t + b_xn + r_t * (W_hn h_{t-1} + b_hn))": [],
    }
    variants = [
        dict(swap_z=True),
        dict(swap_rz=True),
        dict(n_act=torch.sigmoid),
        dict(reset_before=True),
        dict(no_reset=True),
    ]
    for x, h, _, W_xh, W_hh, b_xh, b_hh in _cases(gen, 3):
        cell = nn.GRUCell(W_xh.shape[1], h.shape[1])
        with torch.no_grad():
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_xh, W_hh, b_xh, b_hh)):
                p.copy_(v)
            h_ref = cell(x, h)  # the oracle
        out = gru_step(x.clone(), h.clone(), W_xh.clone(), W_hh.clone(), b_xh.clone(), b_hh.clone())
        expect(
            isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(h.shape),
            f"return h_t, a tensor of shape (batch, hidden) = {tuple(h.shape)}, got "
            f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}",
        )
        got.append(_as_numpy(out))
        expected.append(h_ref.numpy())
        for hint, kwargs in zip(wrong, variants):
            wrong[hint].append(_gru_variant(x, h, W_xh, W_hh, b_xh, b_hh, **kwargs).numpy())
    expect_values(
        got, expected, wrong, what=["h_t, first case", "h_t, second case", "h_t, third case"], rtol=1e-4, atol=1e-5
    )


def _count(kind, I, H, L, bias_vectors=2, same_input=False, lstm_blocks=4, gru_blocks=3):
    blocks = lstm_blocks if kind == "lstm" else gru_blocks
    return sum(blocks * H * ((I if layer == 0 or same_input else H) + H + bias_vectors) for layer in range(L))


@exercise("4.3", "the parameter count")
def check_param_count(param_count):
    rng = np.random.default_rng()
    cases = []
    for kind in ("lstm", "gru", "lstm", "gru", "lstm"):
        I, H = (int(v) for v in rng.choice(np.arange(2, 40), size=2, replace=False))  # I != H
        cases.append((kind, I, H, int(rng.integers(1, 4))))
    cases[0] = ("lstm", cases[0][1], cases[0][2], 2)  # at least one deep case per kind
    cases[1] = ("gru", cases[1][1], cases[1][2], 3)
    got, expected = [], []
    for kind, I, H, L in cases:
        value = param_count(kind, I, H, L)
        expect(
            isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer()),
            f"return a whole number of parameters, got {value!r}",
        )
        got.append(value)
        module = (nn.LSTM if kind == "lstm" else nn.GRU)(I, H, num_layers=L, device="meta")  # the oracle
        expected.append(sum(p.numel() for p in module.parameters()))
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
    }
    expect_values(
        got, expected, wrong, what=[f"the count for {k}, I={I}, H={H}, num_layers={L}" for k, I, H, L in cases]
    )


@exercise("4.4", "the forget-gate bias")
def check_set_forget_bias(set_forget_bias):
    rng = np.random.default_rng()
    for _ in range(2):
        I, H, L = int(rng.integers(2, 6)), int(rng.integers(2, 7)), int(rng.integers(2, 4))
        value = float(rng.uniform(0.5, 3.0))
        lstm = rnn.LSTM(I, H, num_layers=L)
        before = [(c.b_xh.detach().clone(), c.b_hh.detach().clone()) for c in lstm.cells]
        weights = [c.W_hh.detach().clone() for c in lstm.cells]
        set_forget_bias(lstm, value)
        expect(
            all(torch.equal(c.W_hh, w) for c, w in zip(lstm.cells, weights)), "change only the biases, not the weights"
        )
        for layer, (cell, (bx, bh)) in enumerate(zip(lstm.cells, before)):
            old, new = bx + bh, (cell.b_xh + cell.b_hh).detach()  # only the sum matters
            f = slice(H, 2 * H)
            if torch.allclose(new, old):
                if layer == 0:
                    raise Mistake("nothing changed: write into cell.b_xh / cell.b_hh in place (under torch.no_grad())")
                raise Mistake(
                    f"layer {layer} is unchanged: set the forget bias of every layer (lstm.cells), not only the first"
                )
            if torch.allclose(new[f], torch.full_like(new[f], value)) and not torch.allclose(
                torch.cat([new[:H], new[2 * H :]]), torch.cat([old[:H], old[2 * H :]])
            ):
                raise Mistake("set only the forget slice [H:2H]; the other gates' biases must stay as they were")
            if torch.allclose(new[f], torch.full_like(new[f], 2 * value)):
                raise Mistake(
                    "both biases are added (b_f = b_xh[H:2H] + b_hh[H:2H]): setting both to the value "
                    "gives twice the value; set one to the value and the other to 0"
                )
            if torch.allclose(cell.b_xh[f], torch.full_like(new[f], value)) and not torch.allclose(
                new[f], torch.full_like(new[f], value)
            ):
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
            expect(
                torch.allclose(new[f], torch.full_like(new[f], value)),
                f"layer {layer}: b_xh[H:2H] + b_hh[H:2H] should be {value:.3f} everywhere, got {new[f].tolist()}",
            )
