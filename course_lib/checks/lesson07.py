"""Checks for lesson 07 (the transformer): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge; see :mod:`course_lib.checks.protocol`), with sizes,
head counts and lengths drawn every run. Warm-ups: 7.1 position encodings, 7.2 splitting the heads.
The build ("let's build GPT"): 7.3 Head, 7.4 MultiHeadAttention, 7.5 FeedForward, 7.6 Block and 7.7 GPT
are nn.Module classes; their check builds the student's class, sets its parameters to values drawn
from the case's seed, runs forward, and compares with the lecture's formulas computed here (float64)
from the student's own parameters, independently of course_lib and of torch's attention modules
(which the student may not call: ``forbidden``). Each known mistake is computed too, and when every
answer matches one, its hint is shown. Around that comparison, the probes of :mod:`course_lib.checks.probes`
judge what a reference built from the student's own parameters cannot see (the parameters' names and shapes
against the text, the initial weights, dtype, state across calls) and name the class of a difference no
known mistake explains (batch independence, causality). 7.8 is the build-up experiment (a written answer, no check);
7.9 is top-k sampling.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course_lib.checks import Mistake, tensors
from course_lib.checks import probes as probes_lib
from course_lib.checks.borrowed import Borrowed
from course_lib.checks.lesson06 import _tensor_of_shape
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, matches, size_error

# --- Exercise 7.1 -----------------------------------------------------------------------------------------


def _pe(T, d, pos_offset=0, swap=False, exponent="2i", layout="interleaved", odd=np.cos):
    """The lecture's encoding (Vaswani et al.) and the realistic ways to get it wrong."""
    pos = np.arange(pos_offset, T + pos_offset, dtype=np.float64)[:, None]
    pe = np.zeros((T, d))
    if exponent == "j":  # channel index j instead of the pair index 2i
        angle = pos / 10000 ** (np.arange(d) / d)
        even_angle, odd_angle = angle[:, 0::2], angle[:, 1::2]
    else:
        two_i = np.arange(0, d, 2)
        freq = 10000.0 ** ((two_i / 2 if exponent == "i" else two_i) / d)
        even_angle = odd_angle = pos * freq if exponent == "mul" else pos / freq
    first, second = (odd, np.sin) if swap else (np.sin, odd)
    if layout == "concat":
        return np.concatenate([first(even_angle), second(odd_angle)], axis=1)
    pe[:, 0::2], pe[:, 1::2] = first(even_angle), second(odd_angle)
    return pe


def _draw_pe(seed):
    rng = np.random.default_rng(seed)
    # d even; several d per run (so a fixed d fails), a long sequence (slow clocks), T = 1 and d = 2
    return [[5, 4], [int(rng.integers(6, 30)), 2 * int(rng.integers(3, 11))], [50, 16], [1, 2], [7, 2]]


PE_HINTS = [
    "sin and cos are swapped: the course follows Vaswani et al., sin on even channels 2i and cos on odd 2i+1 "
    "(Galerne's slide puts cos first)",
    "the exponent is 2i/d where i indexes the sin/cos PAIR: channels 2i and 2i+1 share one frequency "
    "(you used the channel index j/d)",
    "the exponent is 2i/d, not i/d: the slowest clock must turn once every 10000 * 2 pi positions",
    "positions start at 0, not 1: the first token's encoding is [0, 1, 0, 1, ...]",
    "interleave the channels (PE[:, 0::2] = sin, PE[:, 1::2] = cos); you put all the sines first",
    "the odd channels 2i+1 hold the cosine: you put sin on every channel",
]
PE_MULTIPLY = (
    "divide the position by 10000^(2i/d), do not multiply: the frequencies fall from 1 (channel pair 0) towards 1/10000"
)


def _judge_pe(cases, records):
    got, expected, wrong = [], [], {h: [] for h in PE_HINTS}
    for (T, d), r in zip(cases, records):
        got.append(_tensor_of_shape(r, f"the encodings for T = {T}, d = {d}", (T, d)))
        expected.append(_pe(T, d))
        variants = [
            _pe(T, d, swap=True),
            _pe(T, d, exponent="j"),
            _pe(T, d, exponent="i"),
            _pe(T, d, pos_offset=1),
            _pe(T, d, layout="concat"),
            _pe(T, d, odd=np.sin),
        ]
        for h, v in zip(PE_HINTS, variants):
            wrong[h].append(v)
    # multiplied angles reach 10^5 radians, where float32's sin is off by 1e-2: judged on the short cases only
    short = [i for i, (T, d) in enumerate(cases) if T * d <= 20 and not matches(got[i], expected[i])]
    if short and all(matches(got[i], _pe(*cases[i], exponent="mul")) for i in short):
        raise Mistake(PE_MULTIPLY)
    try:
        expect_answers(got, expected, wrong, [f"the encodings for T = {T}, d = {d}" for T, d in cases])
    except Mistake as mistake:
        if " should be " not in str(mistake):
            raise
        raise Mistake(_pe_property(cases, got) or str(mistake)) from None


def _pe_property(cases, got) -> str:
    """The properties of the table, named on the smallest case that breaks one: position 0 is [0, 1, 0, 1, ...]
    (sin 0, cos 0), and channel pair i turns at the frequency 1/10000^(2i/d) (read back from position 1)."""
    for (T, d), table in sorted(zip(cases, got), key=lambda c: c[0][0] * c[0][1]):
        pe = table.detach().double().numpy()
        if not matches(pe[0], _pe(1, d)[0]):
            return (
                f"position 0 (the first row, for T = {T}, d = {d}) should be [0, 1, 0, 1, ...] (sin 0 and cos 0): "
                f"got {np.round(pe[0, :4], 4).tolist()}: positions run 0, ..., T - 1"
            )
        if T < 2 or not np.allclose(pe[1, 0::2] ** 2 + pe[1, 1::2] ** 2, 1, atol=1e-3):
            continue  # not a (sin, cos) pair per channel pair: left to the first difference
        angle = np.arctan2(pe[1, 0::2], pe[1, 1::2])  # the angle of position 1 = the frequency of each pair
        want = 10000.0 ** (-np.arange(0, d, 2) / d)
        bad = [i for i in range(d // 2) if not np.isclose(angle[i], want[i], rtol=1e-3, atol=1e-6)]
        if bad and angle[bad[0]] > 0:
            i = bad[0]
            return (
                f"the frequency of channel pair i = {i} (channels {2 * i}, {2 * i + 1}; d = {d}) should be "
                f"1/10000^(2i/d) = 1/10000^({2 * i}/{d}), got 1/10000^({-np.log(angle[i]) / np.log(10000) * d:.3g}/{d})"
            )
    return ""


def _pe_errors(case, record):
    T, d = case
    if size_error(record):
        return f"your function fails for T = {T}, d = {d}: take the sizes from T and d, not a fixed number"
    return ""


check_positional_encoding = Exercise(
    "7.1",
    "sinusoidal position encodings",
    "positional_encoding",
    ("T", "d"),
    _draw_pe,
    _judge_pe,
    errors=_pe_errors,
    forbidden=("course_lib.transformer.sinusoidal_positions",),  # and with it, in a build exercise, all course_lib
)


# --- Exercise 7.2 -----------------------------------------------------------------------------------------


def _draw_heads(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    H1, H2 = (int(h) for h in rng.choice([2, 4, 5, 6, 8], size=2, replace=False))  # two head counts per run
    shapes = [(2, 5, 3, 7), (1, int(rng.integers(2, 9)), H1, int(rng.integers(2, 6))), (2, 4, 1, 6)]
    shapes.append((int(rng.integers(1, 4)), int(rng.integers(2, 7)), H2, int(rng.integers(2, 5))))
    return [[torch.randn(B, T, H * D, generator=g), H] for B, T, H, D in shapes]


HEAD_HINTS = [
    "a plain view(B, H, T, D) mixes time steps into the heads: split the LAST axis (the C features) into "
    "(H, D) first, then move H in front of T",
    "each head must get a contiguous slice of features (head h: h*D .. (h+1)*D - 1, as torch splits W^Q); "
    "you gave head h every H-th feature: view as (B, T, H, D), not (B, T, D, H)",
    "transpose the head axis in front of time: (B, T, H, D) -> (B, H, T, D), so each head attends over its "
    "own (T, D) matrix",
]


def _judge_heads(cases, records):
    got, expected, wrong = [], [], {h: [] for h in HEAD_HINTS}
    for (x, H), r in zip(cases, records):
        B, T, C = x.shape
        D = C // H
        value = r["returned"]
        shape = tuple(value.shape) if _is_tensor(value) else None
        if shape in ((B, T, H, D), (B, T, D, H)) and shape != (B, H, T, D):
            raise Mistake(f"shape {shape}: {HEAD_HINTS[2]}")
        if shape and shape != (B, H, T, D) and sorted(shape) == sorted((B, H, T, D)) and len(set(shape)) == 4:
            raise Mistake(
                f"shape {shape}: the axes are in the wrong order, (B, H, T, D) = {(B, H, T, D)} is wanted: "
                "view as (B, T, H, D), then swap only axes 1 and 2 (transpose(1, 2))"
            )
        if shape and len(shape) == 4 and shape[1] != H and shape[0] == B and shape[1] * shape[3] == C:
            raise Mistake(
                f"for n_head = {H} the heads axis (axis 1) should have size {H}, got shape {shape}: "
                "use n_head, not a fixed number"
            )
        got.append(_tensor_of_shape(r, f"the heads for x of shape (B, T, C) = {(B, T, C)}, n_head = {H}", (B, H, T, D)))
        expected.append(torch.stack([x[:, :, h * D : (h + 1) * D] for h in range(H)], dim=1))  # head h: its slice
        variants = [x.reshape(B, H, T, D), torch.stack([x[:, :, h::H] for h in range(H)], dim=1), x.reshape(B, T, H, D)]
        for h, v in zip(HEAD_HINTS, variants):
            wrong[h].append(v if tuple(v.shape) == (B, H, T, D) else None)
    wrong = {h: [e if v is None else v for v, e in zip(vs, expected)] for h, vs in wrong.items()}
    expect_answers(got, expected, wrong, [f"the heads for x {tuple(x.shape)}, n_head = {H}" for x, H in cases])


def _heads_errors(case, record):
    x, H = case
    message = record["message"]
    if record["raised"] == "TypeError" and "float" in message:
        return "C / n_head is a float: the head size is D = C // n_head (integer division)"
    if size_error(record):
        return f"your function fails for x of shape {tuple(x.shape)} and n_head = {H}: use n_head, not a fixed number"
    return ""


check_split_heads = Exercise(
    "7.2",
    "splitting the heads",
    "split_heads",
    ("x", "n_head"),
    _draw_heads,
    _judge_heads,
    errors=_heads_errors,
    forbidden=("course_lib.attention.MultiHeadAttention",),  # whose forward splits the heads
)


# --- Exercises 7.3 to 7.7: the modules of "let's build GPT" -----------------------------------------------
#
# The student's class is called with the constructor arguments of a case; ``describe`` then sets every
# parameter to values drawn from the case's seed (so a layer norm's gamma and beta are not 1 and 0, and a
# mix-up shows), runs forward on the case's input and sends back the output and the parameters. The judge
# rebuilds the module from those parameters with the formulas below (float64) and compares.

ATTENTION_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "course_lib.attention.scaled_dot_product_attention",
    "course_lib.attention.MultiHeadAttention",
    "course_lib.buildup.Head",
    "course_lib.buildup.MultiHead",
)
BLOCK_FORBIDDEN = ATTENTION_FORBIDDEN + (
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.TransformerEncoder",
    "torch.nn.TransformerDecoder",
    "torch.nn.Transformer",
    "course_lib.transformer.SelfAttentionBlock",
    "course_lib.transformer.GPT",
    "course_lib.buildup.FeedForward",
    "course_lib.buildup.Block",
    "course_lib.buildup.BuildUpLM",
)


class _Call(list):
    """The constructor's arguments (the list itself); ``forward`` and ``seed`` ride along as attributes."""


def _module_materialise(n_ctor):
    def materialise(args):
        call = _Call(args[:n_ctor])
        call.forward, call.seed = list(args[n_ctor:-1]), args[-1]
        return call

    return materialise


def _module_observe(args, live):
    return [*live, *live.forward, live.seed]


def _randomise(module, seed) -> dict:
    """Every parameter drawn from ``seed``: weights ~ N(0, 1/fan_in), gains in [0.5, 1.5], biases in [-0.5, 0.5].
    Returns the parameters it drew, by name."""
    g = torch.Generator().manual_seed(seed)
    params = tensors.parameters(module)
    for name, p in sorted(params.items()):
        size = tensors.shape(p, name)
        if len(size) >= 2:
            tensors.write(p, torch.randn(size, generator=g) / size[-1] ** 0.5, name)
        elif name.endswith("weight"):
            tensors.write(p, torch.rand(size, generator=g) + 0.5, name)
        else:
            tensors.write(p, torch.rand(size, generator=g) - 0.5, name)
    return params


def _module_describe(probes, ids):
    """In the student's kernel: the module's initial weights, its forward on the case's input after its
    parameters are drawn from the case's seed, its parameters, and what the ``probes`` measure (plain data)."""

    def describe(returned, live):
        if not isinstance(returned, nn.Module):
            return {"not_a_module": type(returned).__name__}
        try:
            init = probes_lib.init_ranges(returned)
            # judged from the parameters as drawn: a forward that changed them would be judged by its own changes
            drawn = {name: tensors.read(p, name) for name, p in _randomise(returned, live.seed).items()}
            out = returned(*live.forward)
            measured = probes_lib.measure(returned, live.forward, probes, vocab=live[0] if ids else None)
            now = tensors.parameters(returned)
            changed = [n for n, p in drawn.items() if n not in now or not tensors.equal(now[n], p)]
        except Borrowed:  # a forbidden call: the protocol records it
            raise
        except Exception as exc:  # the student's forward crashed: recorded like a crash of the constructor
            from course_lib.checks.protocol import crash_record

            return crash_record(exc)
        # Karpathy's video adds dropout; the exercises' formulas have none (and it makes forward random)
        dropout = [
            name or "the module" for name, m in returned.named_modules() if isinstance(m, nn.Dropout) and m.p > 0
        ]
        return {
            "out": out,
            "params": drawn,
            "changed": changed[:1],
            "dropout": dropout[:1],
            "init": list(init),
            "probes": measured,
        }

    return describe


class ModuleExercise(Exercise):
    """An exercise whose answer is an nn.Module class: a crash in forward counts as a crash of the call."""

    def judge(self, cases, records):
        fixed = []
        for r in records if isinstance(records, list) else []:
            value = r.get("returned") if isinstance(r, dict) else None
            if isinstance(value, dict) and "raised" in value:
                r = {k: value.get(k, "") for k in ("raised", "message", "where")}
            fixed.append(r)
        return super().judge(cases, fixed if isinstance(records, list) else records)


def _answer(record, cls):
    """(output, float64 parameters) of a module record, or a Mistake naming what is wrong."""
    value = record["returned"]
    if not isinstance(value, dict) or ("not_a_module" not in value and "params" not in value):
        raise Mistake(f"{cls}(...) should build a module whose forward returns tensors; it returned something else")
    if "not_a_module" in value:
        raise Mistake(f"{cls}(...) should build an nn.Module (class {cls}(nn.Module)), got {value['not_a_module']}")
    if value.get("changed"):
        raise Mistake(
            f"{cls}: forward changed the parameter {value['changed'][0]}: a forward only reads the module's "
            "weights (the optimiser is what changes them)"
        )
    if value.get("dropout"):
        raise Mistake(
            f"{cls}: leave out the dropout ({value['dropout'][0]}): the exercise's formula has none, and in "
            "training mode it zeroes random entries, so forward no longer gives the formula's output"
        )
    params = {k: v.double() for k, v in value["params"].items()}
    return value["out"], params


# The properties judged before the values (they can hold or fail whatever the values are: a bias the text
# leaves out is not seen by a reference built from the student's own parameters), and after them (they
# name the class of a difference no known mistake explains).
FIRST, THEN = ("dtype", "again"), ("causal", "batch")


def _with_probes(judge, cls, spec, *, x_at, ids=False, probes=FIRST + THEN):
    """``judge`` with the probes around it: the parameters against the text's ``spec(case)`` (a dict
    name -> (shape, how the text writes it), the optional names, the prefixes whose names are free), the
    initial weights, the dtype and state across calls first; then, for a difference that no targeted hint
    explains, causality and batch independence, which name its class."""

    def judged(cases, records):
        for case, r in zip(cases, records):
            _answer(r, cls)
            value = r["returned"]
            shapes = {k: tuple(v.shape) for k, v in value["params"].items()}
            init = value.get("init") if isinstance(value.get("init"), list) else [{}, {}]
            spec_, optional, free = spec(case)
            hint = probes_lib.spec_mistake(cls, shapes, spec_, optional=optional, free=free) or probes_lib.init_mistake(
                cls, *init
            )
            hint = hint or _property(cls, value, case[x_at], ids, [p for p in FIRST if p in probes])
            if hint:
                raise Mistake(hint)
        try:
            judge(cases, records)
        except Mistake as mistake:
            if " should be " not in str(mistake):  # a targeted hint, or a shape: kept
                raise
            for case, r in zip(cases, records):
                hint = _property(cls, r["returned"], case[x_at], ids, [p for p in THEN if p in probes])
                if hint:
                    raise Mistake(hint) from None
            raise

    return judged


def _property(cls, value, x, ids, which):
    measured = value.get("probes") if isinstance(value.get("probes"), dict) else {}
    return probes_lib.property_mistake(cls, {k: v for k, v in measured.items() if k in which}, tuple(x.shape), ids=ids)


def _module_check(
    number, title, cls, args, draw, *, n_ctor, x_at, forbidden, spec, ids=False, judge=None, hints=None,
    reference=None, shape=None, what=None, shape_what=None, before=None,
):  # fmt: skip
    """A build exercise's check, the one shape of 7.3 to 7.7: the class built with the case's first ``n_ctor``
    arguments, its parameters randomised, its forward run on the rest (``x_at`` is the input whose T a size hint
    names, token ids when ``ids``); ``spec(case)``: the parameters the text states (see ``_with_probes``). A module
    with one output declares ``hints``, ``reference``, ``shape``, ``what`` (and ``shape_what``, ``before``) for
    :func:`_judge_module`; another (GPT's pair) gives its own ``judge``."""
    if judge is None:
        judge = _judge_module(
            cls, hints, reference, x_at=x_at, shape=shape, what=what, shape_what=shape_what, before=before
        )
    return ModuleExercise(
        number,
        title,
        cls,
        args,
        draw,
        _with_probes(judge, cls, spec, x_at=x_at, ids=ids),
        materialise=_module_materialise(n_ctor),
        observe=_module_observe,
        describe=_module_describe(FIRST + THEN, ids),
        errors=_module_errors(cls, lambda case: case[x_at].shape[1]),
        forbidden=forbidden,
    )


def _judge_module(cls, hints, reference, *, x_at, shape, what, shape_what=None, before=None):
    """The judge of a module with one output: ``reference(x, params, case, **flags)`` computed from the student's
    own parameters, right (no flags) and with each hint's mistake (its flags); ``shape(case)`` is the output's
    shape, ``what(case)`` names it in a difference (``shape_what(case)`` in a shape mistake, if it says it
    otherwise), and ``before(case, out, params)`` raises the mistakes to name before the values."""

    def judge(cases, records):
        got, expected, wrong = [], [], {h: [] for h in hints}
        for case, r in zip(cases, records):
            out, params = _answer(r, cls)
            if before is not None:
                before(case, out, params)
            got.append(_out_tensor(out, shape(case), (shape_what or what)(case)))
            x = case[x_at].double()
            expected.append(reference(x, params, case))
            for hint, flags in hints.items():
                wrong[hint].append(reference(x, params, case, **flags))
        expect_answers(got, expected, wrong, [what(case) for case in cases])

    return judge


# What the texts of 7.3 to 7.7 state about the parameters: {name: (shape, how the text writes it)}, the names
# that may be left out, and the prefixes under which the names are the student's (FeedForward's layers).


def _head_spec(C, hs, prefix="", how="(head_size, d_model)"):
    return {f"{prefix}{p}.weight": ((hs, C), how) for p in ("key", "query", "value")}


def _mha_spec(C, H, prefix=""):
    how = f"(d_k, d_model) with d_k = d_model // n_heads = {C // H}"
    spec = {}
    for h in range(H):
        spec.update(_head_spec(C, C // H, f"{prefix}heads.{h}.", how))
    spec[f"{prefix}proj.weight"] = ((C, C), "W^O (d_model, d_model)")
    spec[f"{prefix}proj.bias"] = ((C,), "b^O")
    return spec


def _block_spec(C, H, prefix=""):
    spec = _mha_spec(C, H, f"{prefix}sa.")
    for name in ("ln1", "ln2"):
        spec.update({f"{prefix}{name}.{p}": ((C,), "nn.LayerNorm(d_model)") for p in ("weight", "bias")})
    return spec


def _gpt_spec(V, C, H, L, block_size):
    spec = {
        "token_embedding.weight": ((V, C), "nn.Embedding(vocab_size, d_model)"),
        "position_embedding.weight": ((block_size, C), "nn.Embedding(block_size, d_model), one row per position"),
    }
    for i in range(L):
        spec.update(_block_spec(C, H, f"blocks.{i}."))
    spec.update({f"ln_f.{p}": ((C,), "nn.LayerNorm(d_model)") for p in ("weight", "bias")})
    spec["lm_head.weight"] = ((V, C), "nn.Linear(d_model, vocab_size)")
    spec["lm_head.bias"] = ((V,), "nn.Linear(d_model, vocab_size)")
    return spec


def _missing(cls, params, want, hint):
    names = ", ".join(sorted(params)[:8]) or "none"
    raise Mistake(f"{cls} has no parameter {want}: {hint} (its parameters: {names})")


def _lin(x, W, b=None):
    y = x @ W.T
    return y if b is None else y + b


def _get(params, prefix, part, cls):
    w = params.get(f"{prefix}{part}.weight")
    if w is None:
        _missing(
            cls,
            params,
            f"{prefix}{part}.weight",
            "name the projections self.key, self.query and self.value, each nn.Linear(d_model, head_size, bias=False)",
        )
    return w, params.get(f"{prefix}{part}.bias")


def _head(x, params, prefix="", cls="Head", *, dim=-1, k=0, masked=True, scale="d_k", swap=False, after=False,
          upper=False):  # fmt: skip
    """One head: softmax(q k^T / sqrt(d_k) with the future at -inf) v, and the switches its mistakes flip."""
    q, kk, v = (_lin(x, *_get(params, prefix, part, cls)) for part in ("query", "key", "value"))
    d_k, T = kk.shape[-1], x.shape[1]
    s = kk @ q.transpose(-2, -1) if swap else q @ kk.transpose(-2, -1)
    s = s * {"d_k": d_k**-0.5, "none": 1.0, "d_model": x.shape[-1] ** -0.5, "no_sqrt": 1.0 / d_k}[scale]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=k)
    if upper:  # the mask transposed: query i sees keys j >= i
        allowed = allowed.T
    if masked and not after:
        s = s.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(s, dim=dim)
    if after:
        w = w.masked_fill(~allowed, 0.0)
    return w @ v


def _mha(x, params, n_heads, prefix="", cls="MultiHeadAttention", *, order=1, proj=True, split="ok", **head):
    """Multi-head attention from the heads' parameters: concat(head_0 .. head_{H-1}) W^O + b^O."""
    for h in range(n_heads):
        if f"{prefix}heads.{h}.query.weight" not in params:
            if f"{prefix}heads.0.query.weight" in params and n_heads > 1:
                raise Mistake(
                    f"{cls}: only one head has parameters: build the heads with a loop, "
                    "nn.ModuleList([Head(...) for _ in range(n_heads)]); [Head(...)] * n_heads repeats ONE head"
                )
            _missing(
                cls, params, f"{prefix}heads.{h}.query.weight", "keep the heads in self.heads = nn.ModuleList(...)"
            )
    if split != "ok":  # the packed computation (all heads' W^Q stacked), with a reshape mistake
        B, T, C = x.shape
        W = {
            p: torch.cat([params[f"{prefix}heads.{h}.{p}.weight"] for h in range(n_heads)])
            for p in ("query", "key", "value")
        }
        D = W["query"].shape[0] // n_heads
        qkv = [x @ W[p].T for p in ("query", "key", "value")]
        if split == "split":  # view(B, H, T, D) without the transpose
            q, k, v = (t.reshape(B, n_heads, T, D) for t in qkv)
        else:
            q, k, v = (t.view(B, T, n_heads, D).transpose(1, 2) for t in qkv)
        s = (q @ k.transpose(-2, -1)) / D**0.5
        s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        out = torch.softmax(s, -1) @ v  # (B, H, T, D)
        cat = out.reshape(B, T, n_heads * D) if split == "merge" else out.transpose(1, 2).reshape(B, T, n_heads * D)
    else:
        outs = [_head(x, params, f"{prefix}heads.{h}.", cls, **head) for h in range(n_heads)]
        cat = torch.cat(outs[::order], dim=-1)
    if not proj:
        return cat
    W_O = params.get(f"{prefix}proj.weight")
    if W_O is None:
        _missing(
            cls, params, f"{prefix}proj.weight", "the output projection is self.proj = nn.Linear(d_model, d_model)"
        )
    return _lin(cat, W_O, params.get(f"{prefix}proj.bias"))


FFN_HINT = "FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 with d_ff = 4 d_model: two nn.Linear layers with their biases"


def _ffn_params(params, prefix, d, cls="FeedForward"):
    """W_1, b_1, W_2, b_2 found by their shapes among the parameters under ``prefix`` (any names)."""
    mine = {k: v for k, v in params.items() if k.startswith(prefix)}
    by_shape = {tuple(v.shape): v for v in mine.values()}
    if (d, d) in by_shape and (4 * d, d) not in by_shape:
        raise Mistake(f"{cls}: the hidden layer has d_ff = 4 * d_model = {4 * d} units, you used {d}")
    if (4 * d, d) not in by_shape or (d, 4 * d) not in by_shape:
        _missing(cls, mine, f"W_1 of shape {(4 * d, d)} and W_2 of shape {(d, 4 * d)}", FFN_HINT)
    if (4 * d,) not in by_shape or (d,) not in by_shape:
        raise Mistake(f"{cls}: keep the biases b_1 and b_2 (nn.Linear's default bias=True): {FFN_HINT}")
    # the text lets the student name and lay out the layers: nn.Linear's (out, in) weights, used as x @ W.T, or
    # raw matrices used as x @ W_1 (W_1 of shape (d, 4d)). W_1 is the one made first.
    first = next(tuple(v.shape) for v in mine.values() if tuple(v.shape) in ((4 * d, d), (d, 4 * d)))
    W1, W2 = by_shape[(4 * d, d)], by_shape[(d, 4 * d)]
    if first == (d, 4 * d):
        W1, W2 = W2.T, W1.T
    return W1, by_shape[(4 * d,)], W2, by_shape[(d,)]


def _ffn(x, params, prefix="", cls="FeedForward", *, act="relu", after=False, before=False):
    W1, b1, W2, b2 = _ffn_params(params, prefix, x.shape[-1], cls)
    f = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "none": lambda z: z}[act]
    h = f(_lin(f(x) if before else x, W1, b1))
    y = _lin(h, W2, b2)
    return f(y) if after else y


def _ln(x, params, name, cls):
    if f"{name}.weight" not in params:
        _missing(
            cls,
            params,
            f"{name}.weight",
            f"name the layer norms as the exercise does (self.{name} = nn.LayerNorm(d_model))",
        )
    mu, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    return (x - mu) / torch.sqrt(var + 1e-5) * params[f"{name}.weight"] + params.get(f"{name}.bias", 0.0)


def _block(x, params, n_heads, prefix="", cls="Block", *, post=False, res=(True, True), lns=("ln1", "ln2"),
           normed_res=False, no_ln=False, parallel=False, ffn_first=False):  # fmt: skip
    def sa(h):
        return _mha(h, params, n_heads, f"{prefix}sa.", cls)

    def ffwd(h):
        return _ffn(h, params, f"{prefix}ffwd.", cls)

    def ln(h, which):
        return h if no_ln else _ln(h, params, f"{prefix}{which}", cls)

    if post:
        x = ln(x + sa(x), lns[0])
        return ln(x + ffwd(x), lns[1])
    if parallel:  # x + SA(LN_1(x)) + FFN(LN_2(x)), both from the same x (GPT-J's parallel block)
        return x + sa(ln(x, lns[0])) + ffwd(ln(x, lns[1]))
    if ffn_first:
        x = x + ffwd(ln(x, lns[1]))
        return x + sa(ln(x, lns[0]))
    if normed_res:  # x = LN_1(x); x = x + SA(x): the residual stream itself normalised
        x = ln(x, lns[0])
        x = x + sa(x)
        return x + ffwd(ln(x, lns[1]))
    a = sa(ln(x, lns[0]))
    x = x + a if res[0] else a
    f = ffwd(ln(x, lns[1]))
    return x + f if res[1] else f


def _gpt(idx, targets, params, n_heads, n_layers, *, pos=True, ln_f=True, shift=False, softmax=False, total=False):
    cls = "GPT"
    for name in ("token_embedding.weight", "position_embedding.weight", "lm_head.weight"):
        if name not in params:
            _missing(cls, params, name, "name the parts as the exercise does (token_embedding, position_embedding, "
                     "blocks, ln_f, lm_head)")  # fmt: skip
    if "blocks.0.ln1.weight" not in params:
        raise Mistake(
            "GPT has no parameters blocks.0...: keep the blocks in nn.Sequential or nn.ModuleList (in a plain "
            "Python list their parameters are hidden from .parameters(), so the optimiser never trains them)"
        )
    built = sum(f"blocks.{i}.ln1.weight" in params for i in range(n_layers))
    if built < n_layers:
        raise Mistake(
            f"GPT has parameters for {built} block(s), n_layers = {n_layers}: build n_layers separate blocks, "
            "nn.Sequential(*[Block(...) for _ in range(n_layers)]); [Block(...)] * n_layers repeats ONE block"
        )
    T = idx.shape[1]
    x = params["token_embedding.weight"][idx]
    if pos:
        x = x + params["position_embedding.weight"][:T]
    for i in range(n_layers):
        x = _block(x, params, n_heads, f"blocks.{i}.", cls)
    if ln_f:
        x = _ln(x, params, "ln_f", cls)
    logits = _lin(x, params["lm_head.weight"], params.get("lm_head.bias"))
    z = torch.softmax(logits, -1) if softmax else logits
    if shift:
        loss = torch.nn.functional.cross_entropy(z[:, :-1].flatten(0, 1), targets[:, 1:].flatten())
    else:
        loss = torch.nn.functional.cross_entropy(z.flatten(0, 1), targets.flatten())
    return logits, loss * targets.numel() if total else loss


def _out_tensor(out, shape, what):
    if not _is_tensor(out):
        raise Mistake(f"forward should return a tensor ({what}), got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise Mistake(f"{what} should have shape {tuple(shape)}, got {tuple(out.shape)}: take the sizes from x")
    return out


def _module_errors(cls, sizes):
    def errors(case, record):
        message = record.get("message", "")
        if record.get("raised") == "IndexError" and "index" in message and cls == "GPT":
            return "the position embedding has block_size rows: look up positions 0 .. T-1 (torch.arange(T))"
        if size_error(record) or record.get("raised") in ("ValueError", "IndexError"):
            if cls == "GPT" and "must match" in message:
                return (
                    f"GPT: a size mismatch with T = {sizes(case)}: look up the positions 0 .. T-1 "
                    "(torch.arange(T)), not all block_size of them, and take every size from idx"
                )
            if cls in ("Head", "MultiHeadAttention", "Block") and "must match" in message:
                return (
                    f"{cls}: a size mismatch with T = {sizes(case)}: slice the causal mask to the sequence "
                    "length (self.tril[:T, :T]) and take every size from x, never a fixed number"
                )
            if cls == "GPT" and ("Expected" in message or "target" in message):
                return (
                    "cross_entropy wants (N, V) logits and (N,) targets: flatten, "
                    "F.cross_entropy(logits.view(B * T, V), targets.view(B * T))"
                )
            if cls == "MultiHeadAttention":
                return (
                    "the heads, concatenated along the features (dim=-1), must give d_model features: "
                    "each head has d_k = d_model // n_heads"
                )
            if cls == "FeedForward":
                return "d_ff = 4 * d_model: W_1 maps d_model features to 4 * d_model, W_2 maps them back to d_model"
            return f"{cls} fails for these sizes ({message[:80]}): take every size from the arguments and from x"
        return ""

    return errors


# Exercise 7.3: Head

ATTENTION_HINTS = {
    "softmax over the wrong axis: normalise each query's row over the keys, torch.softmax(scores, dim=-1)": dict(
        dim=-2
    ),
    "the mask is missing: set the scores of the future keys (j > i) to -inf before the softmax": dict(masked=False),
    "off by one: the mask lets query i see key i + 1; allow j <= i (torch.tril, diagonal 0)": dict(k=1),
    "off by one: query i must see itself (j <= i), you masked the diagonal too": dict(k=-1),
    "the mask is transposed: query i must see keys j <= i (torch.tril), yours sees j >= i (the future)": dict(
        upper=True
    ),
    "the scores are not scaled: divide q @ k^T by sqrt(d_k) (the lecture's scaled dot product)": dict(scale="none"),
    "scale by sqrt(d_k), the head size, not by sqrt(d_model)": dict(scale="d_model"),
    "divide by sqrt(d_k), not by d_k": dict(scale="no_sqrt"),
    "the scores are q @ k^T (row i: query i against every key); you computed k @ q^T": dict(swap=True),
    "mask before the softmax (scores to -inf): zeroing weights after it leaves rows that do not sum to 1": dict(
        after=True
    ),
}


def _draw_head(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []

    def sizes():  # d_model and d_k with d_k^2 != d_model, so dividing by d_k is not dividing by sqrt(d_model)
        hs = int(rng.integers(2, 6))
        return int(rng.choice([c for c in range(6, 13) if c != hs * hs])), hs

    for B, T, extra, C, hs in [
        (2, int(rng.integers(3, 8)), int(rng.integers(1, 4)), *sizes()),
        (1, int(rng.integers(5, 10)), 0, *sizes()),
        (3, 1, 2, 4, 2),
    ]:
        x = torch.randn(B, T, C, generator=g)
        cases.append([C, hs, T + extra, x, int(rng.integers(0, 2**31))])
    return cases


def _head_before(case, out, params):
    C, hs, _, x, _ = case
    if _is_tensor(out) and out.dim() == 3 and torch.isnan(out[:, -1]).any() and not torch.isnan(out[:, 0]).any():
        raise Mistake(  # the last query sees no key: the mask hides j <= i and keeps the future
            "the last query's output is nan (all its scores are -inf): your mask hides the past and keeps the "
            "future; hide j > i, e.g. masked_fill(tril[:T, :T] == 0, -inf)"
        )
    if _is_tensor(out) and tuple(out.shape) == (*x.shape[:2], C) and hs != C:
        raise Mistake("multiply the weights by the values v = self.value(x), not by x itself")


check_head = _module_check(
    "7.3",
    "one head of self-attention",
    "Head",
    ("d_model", "head_size", "block_size", "x", "seed"),
    _draw_head,
    hints=ATTENTION_HINTS,
    reference=lambda x, params, case, **flags: _head(x, params, **flags),
    shape=lambda case: (*case[3].shape[:2], case[1]),
    what=lambda case: f"the head's output for x of shape {tuple(case[3].shape)}",
    before=_head_before,
    n_ctor=3,
    x_at=3,
    forbidden=ATTENTION_FORBIDDEN,
    spec=lambda case: (_head_spec(case[0], case[1]), (), ()),
)


# Exercise 7.4: MultiHeadAttention

MHA_HINTS = {
    "concatenate the heads in order, head 0 first: torch.cat([h(x) for h in self.heads], dim=-1)": dict(order=-1),
    "apply the output projection W^O (self.proj) to the concatenated heads": dict(proj=False),
    "split the features into heads with view(B, T, H, D) and then transpose(1, 2): a plain view(B, H, T, D) "
    "mixes time steps into the heads": dict(split="split"),
    "merge the heads back with transpose(1, 2) before reshape(B, T, C): reshaping (B, H, T, D) directly "
    "mixes the heads into the time steps": dict(split="merge"),
}


def _head_size(rng, H, low, high):
    """A head size D in [low, high] other than H: with D = H, heads and head size swapped are invisible."""
    return int(rng.choice([d for d in range(low, high + 1) if d != H]))


def _draw_mha(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    H1, H2 = (int(h) for h in rng.choice([2, 3, 4], size=2, replace=False))
    cases = []
    for B, T, extra, H, D in [
        (2, int(rng.integers(3, 8)), int(rng.integers(1, 4)), H1, _head_size(rng, H1, 2, 4)),
        (1, int(rng.integers(4, 9)), 0, H2, _head_size(rng, H2, 2, 4)),
    ]:
        cases.append([H * D, H, T + extra, torch.randn(B, T, H * D, generator=g), int(rng.integers(0, 2**31))])
    return cases


check_multi_head = _module_check(
    "7.4",
    "multi-head attention",
    "MultiHeadAttention",
    ("d_model", "n_heads", "block_size", "x", "seed"),
    _draw_mha,
    hints=MHA_HINTS,
    reference=lambda x, params, case, **flags: _mha(x, params, case[1], **flags),
    shape=lambda case: tuple(case[3].shape),
    what=lambda case: f"the output for x {tuple(case[3].shape)}, n_heads = {case[1]}",
    shape_what=lambda case: f"the output for x of shape {tuple(case[3].shape)}, n_heads = {case[1]}",
    n_ctor=3,
    x_at=3,
    forbidden=ATTENTION_FORBIDDEN,
    spec=lambda case: (_mha_spec(case[0], case[1]), (), ()),
)


# Exercise 7.5: FeedForward

FFN_HINTS = {
    "the nonlinearity is missing: without ReLU between them, the two linear layers are one linear map": dict(
        act="none"
    ),
    "no ReLU after the second layer: FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2 ends with the linear layer": dict(after=True),
    "the lecture's FFN uses ReLU (GPT-2's GELU is a variant; this exercise follows the formula)": dict(act="gelu"),
    "ReLU goes between the two layers, after W_1 x + b_1, not on the input": dict(before=True),
}


def _draw_ffn(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []
    for B, T, C in [(2, int(rng.integers(2, 7)), int(rng.integers(3, 9))), (1, 3, int(rng.integers(9, 17)))]:
        cases.append([C, torch.randn(B, T, C, generator=g), int(rng.integers(0, 2**31))])
    return cases


check_feed_forward = _module_check(
    "7.5",
    "the feed-forward layer",
    "FeedForward",
    ("d_model", "x", "seed"),
    _draw_ffn,
    hints=FFN_HINTS,
    reference=lambda x, params, case, **flags: _ffn(x, params, **flags),
    shape=lambda case: tuple(case[1].shape),
    what=lambda case: f"the output for x of shape {tuple(case[1].shape)}",
    before=lambda case, out, params: _ffn_params(params, "", case[0]),
    n_ctor=1,
    x_at=1,
    forbidden=BLOCK_FORBIDDEN,
    spec=lambda case: ({}, (), ("",)),
)


# Exercise 7.6: Block

BLOCK_HINTS = {
    "that is post-norm, x = LN(x + SA(x)); this block is pre-norm: x = x + SA(LN_1(x)), then x = x + FFN(LN_2(x))": dict(
        post=True
    ),
    "the residual connections are missing: x = x + self.sa(self.ln1(x)), then x = x + self.ffwd(self.ln2(x))": dict(
        res=(False, False)
    ),
    "the attention's residual is missing: x = x + self.sa(self.ln1(x))": dict(res=(False, True)),
    "the feed-forward's residual is missing: x = x + self.ffwd(self.ln2(x))": dict(res=(True, False)),
    "use ln2 before the feed-forward, not ln1 again": dict(lns=("ln1", "ln1")),
    "ln1 and ln2 are swapped: ln1 goes before the attention, ln2 before the feed-forward": dict(lns=("ln2", "ln1")),
    "add each sub-layer's output to x itself, not to its normalised copy: x = x + self.sa(self.ln1(x))": dict(
        normed_res=True
    ),
    "the layer norms are missing: pre-norm normalises the input of each sub-layer, x + SA(LN_1(x))": dict(no_ln=True),
    "the feed-forward reads x AFTER the attention's residual: x = x + SA(LN_1(x)) first, then "
    "x = x + FFN(LN_2(x)) on that new x (not both from the block's input)": dict(parallel=True),
    "attention first, then the feed-forward: x = x + SA(LN_1(x)), then x = x + FFN(LN_2(x))": dict(ffn_first=True),
}


def _draw_block(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []
    H1 = int(rng.choice([2, 3]))
    for B, T, extra, H, D in [
        (2, int(rng.integers(3, 7)), int(rng.integers(1, 3)), H1, _head_size(rng, H1, 2, 4)),
        (1, int(rng.integers(2, 6)), 0, 2, _head_size(rng, 2, 2, 4)),
    ]:
        x = torch.randn(B, T, H * D, generator=g) * 2 + 0.5  # not normalised already, so a missing norm shows
        cases.append([H * D, H, T + extra, x, int(rng.integers(0, 2**31))])
    return cases


check_block = _module_check(
    "7.6",
    "the transformer block",
    "Block",
    ("d_model", "n_heads", "block_size", "x", "seed"),
    _draw_block,
    hints=BLOCK_HINTS,
    reference=lambda x, params, case, **flags: _block(x, params, case[1], **flags),
    shape=lambda case: tuple(case[3].shape),
    what=lambda case: f"the block's output for x of shape {tuple(case[3].shape)}",
    n_ctor=3,
    x_at=3,
    forbidden=BLOCK_FORBIDDEN,
    spec=lambda case: (_block_spec(case[0], case[1]), (), ("ffwd.",)),
)


# Exercise 7.7: GPT

GPT_LOGIT_HINTS = {
    "the position embeddings are missing: x = token_embedding(idx) + position_embedding(torch.arange(T))": dict(
        pos=False
    ),
    "apply the final layer norm ln_f before lm_head (pre-norm leaves the residual stream unnormalised)": dict(
        ln_f=False
    ),
}
GPT_LOSS_HINTS = {
    "targets are already the next tokens (y is x shifted by one): compare logits[:, t] with targets[:, t], "
    "do not shift again": dict(shift=True),
    "cross_entropy takes the logits (it applies log-softmax itself): do not softmax first": dict(softmax=True),
    "the loss is the MEAN cross-entropy over the B * T positions (F.cross_entropy's default), not the sum": dict(
        total=True
    ),
}


def _draw_gpt(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cases = []
    # d_model = H * D >= 6: a layer norm over few features is steep where they are close, and float32 parts
    # from the float64 reference by up to the tolerance (d_model = 2 failed the lesson's GPT in 2 draws of
    # 1000; d_model = 4 used up to 72% of the tolerance in 6000; 6 or more, with the logits' tolerance
    # below, at most 5.4% in 6000)
    # n_heads != d_model // n_heads (heads and head size swapped show); block_size != V (a position table of
    # vocab_size rows shows); and in the second case T > V (positions looked up as tokens crash)
    single = int(rng.choice([1, 3]))
    for B, T, extra, H, D, L, V in [
        (2, int(rng.integers(3, 7)), int(rng.integers(1, 3)), 2, int(rng.integers(3, 5)), 2, int(rng.integers(9, 15))),
        (1, int(rng.integers(5, 9)), 0, single, 6 if single == 1 else 2, 1, None),
    ]:
        V = V or int(rng.integers(3, T))
        idx = torch.randint(0, V, (B, T), generator=g)
        targets = torch.randint(0, V, (B, T), generator=g)
        cases.append([V, H * D, H, L, T + extra, idx, targets, int(rng.integers(0, 2**31))])
    return cases


def _judge_gpt(cases, records):
    logits_got, logits_want, loss_got, loss_want = [], [], [], []
    wrong_logits = {h: [] for h in GPT_LOGIT_HINTS}
    wrong_loss = {h: [] for h in GPT_LOSS_HINTS}
    for (V, _, H, L, _, idx, targets, _), r in zip(cases, records):
        out, params = _answer(r, "GPT")
        B, T = idx.shape
        if not (isinstance(out, tuple) and len(out) == 2):
            raise Mistake("forward(idx, targets) should return a pair (logits, loss), as the lesson's GPT does")
        logits_got.append(_out_tensor(out[0], (B, T, V), f"the logits for idx of shape {(B, T)}, V = {V}"))
        if not _is_tensor(out[1]) or out[1].numel() != 1:
            raise Mistake("the loss should be one number (a 0-d tensor): the mean cross-entropy over every position")
        loss_got.append(out[1].reshape(()))
        want = _gpt(idx, targets, params, H, L)
        logits_want.append(want[0])
        loss_want.append(want[1])
        for hint, flags in GPT_LOGIT_HINTS.items():
            wrong_logits[hint].append(_gpt(idx, targets, params, H, L, **flags)[0])
        for hint, flags in GPT_LOSS_HINTS.items():
            wrong_loss[hint].append(_gpt(idx, targets, params, H, L, **flags)[1])
    # float32 rounding grows through the embeddings, the blocks and ln_f (the lesson's GPT used up to 54% of
    # the default tolerance in 3000 draws): a tolerance 10 times wider, still far below any mistake
    expect_answers(
        logits_got,
        logits_want,
        wrong_logits,
        [f"the logits for idx of shape {tuple(c[5].shape)}" for c in cases],
        rtol=1e-3,
        atol=1e-4,
    )
    try:
        expect_answers(
            loss_got, loss_want, wrong_loss, [f"the loss for idx of shape {tuple(c[5].shape)}" for c in cases]
        )
    except Mistake as mistake:
        if " should be " not in str(mistake):
            raise
        # the property: your logits are right, so your loss must be their mean cross-entropy against targets
        for c, logits, loss in zip(cases, logits_got, loss_got):
            idx, targets = c[5], c[6]
            pairs = torch.nn.functional.cross_entropy(
                logits.double().reshape(-1, logits.shape[-1]), targets.reshape(-1)
            )
            if not matches(loss, pairs):
                B, T = idx.shape
                raise Mistake(
                    f"your logits are right but your loss is not their cross-entropy against targets (idx {B} x "
                    f"{T}): pair logits[b, t] with targets[b, t], flattening both the same way (.view(B * T, ...))"
                ) from None
        raise


check_gpt = _module_check(
    "7.7",
    "the GPT",
    "GPT",
    ("vocab_size", "d_model", "n_heads", "n_layers", "block_size", "idx", "targets", "seed"),
    _draw_gpt,
    judge=_judge_gpt,
    n_ctor=5,
    x_at=5,
    forbidden=BLOCK_FORBIDDEN,
    spec=lambda case: (_gpt_spec(*case[:5]), ("lm_head.bias",), tuple(f"blocks.{i}.ffwd." for i in range(case[3]))),
    ids=True,
)

# --- Exercise 7.9 -----------------------------------------------------------------------------------------


def _softmax(z):
    p = np.exp(z - z[np.isfinite(z)].max())
    return p / p.sum()


def _top_k(logits, k, temperature):
    """The exercise's rule: softmax(logits / temperature) over every logit >= the k-th largest (ties kept)."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    kth = np.sort(z)[-k]
    return _softmax(np.where(z >= kth, z, -np.inf))


def _draw_top_k(seed):
    rng = np.random.default_rng(seed)
    V = [int(rng.integers(8, 15)), int(rng.integers(15, 40))]
    cases = [
        [rng.normal(0, 2, size=10), 3, 1.0],
        [rng.normal(0, 2, size=V[0]), 2, 0.5],
        [rng.normal(0, 2, size=V[1]), int(rng.integers(2, 6)), 2.0],
        [rng.normal(0, 2, size=V[0]), int(rng.integers(2, 6)), float(rng.uniform(0.3, 3.0))],
        [rng.normal(0, 2, size=9), 1, 1.0],  # k = 1: greedy decoding
        [rng.normal(0, 2, size=V[0]), V[0], 0.7],  # k = V: nothing removed
    ]
    tie = rng.normal(0, 2, size=12).round(1)
    order = np.argsort(-tie)
    tie[order[3]] = tie[order[2]]  # the 3rd and 4th largest are equal: with k = 3 both stay
    cases.append([tie, 3, 1.0])
    return [[torch.tensor(z, dtype=torch.float32), k, t] for z, k, t in cases]


TOP_K_HINTS = [
    "turn the logits into probabilities with a softmax (exp, then divide by the sum): logits are not probabilities",
    "after removing all but the top k, renormalise so the kept probabilities sum to 1",
    "off by one: keep the k largest, the k-th largest logit included (>= it, not >)",
    "divide the logits by the temperature (p = softmax(logits / T)), do not multiply",
    "you ignored the temperature: p = softmax(logits / temperature)",
    "you used the k-th smallest logit as the threshold: keep the k largest (torch.topk's default, largest=True)",
]
TIES = (
    "ties: every logit equal to the k-th largest is kept (as the exercise says), so compare with the k-th "
    "largest value (z >= kth) instead of keeping exactly k indices"
)


def _judge_top_k(cases, records):
    got, expected, wrong, exactly_k = [], [], {h: [] for h in TOP_K_HINTS}, []
    for (logits, k, t), r in zip(cases, records):
        V = logits.shape[0]
        got.append(_tensor_of_shape(r, f"the probabilities for V = {V}, k = {k}", (V,)))
        z = logits.double().numpy()
        want = _top_k(z, k, t)
        expected.append(want)
        keep = z / t >= np.sort(z / t)[-k]
        above = z / t > np.sort(z / t)[-k]  # the off-by-one rule: NaN (no logit left) when k = 1
        kept_logits = np.where(keep, z / t, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):  # the raw-logits mistake may divide by 0
            raw = kept_logits / kept_logits.sum()
        variants = [
            raw,
            np.where(keep, _softmax(z / t), 0.0),
            _softmax(np.where(above, z / t, -np.inf)) if above.any() else np.full(V, np.nan),
            _top_k(z * t * t, k, t),
            _top_k(z * t, k, t),
            _softmax(np.where(z / t >= np.sort(z / t)[k - 1], z / t, -np.inf)),  # threshold: the k-th smallest
        ]
        for h, v in zip(TOP_K_HINTS, variants):
            wrong[h].append(v)
        answer = got[-1].detach().double().numpy()
        if (want > 0).sum() > k:  # a tie at the k-th largest
            exactly_k.append((answer > 0).sum() == k and np.all(answer[want == 0] == 0))
    untied = [i for i, (z, k, _) in enumerate(cases) if (expected[i] > 0).sum() == k]
    if exactly_k and all(exactly_k) and all(matches(got[i], expected[i]) for i in untied):
        raise Mistake(TIES)
    try:
        expect_answers(got, expected, wrong, [f"the probabilities for k = {k}, temperature = {t}" for _, k, t in cases])
    except Mistake as mistake:
        if " should be " not in str(mistake):
            raise
        # the property: how many tokens keep a probability (whatever rule chose them), on the first case it fails
        for (logits, k, _), g, e in zip(cases, got, expected):
            kept, want = int((g.detach().double().numpy() > 0).sum()), int((e > 0).sum())
            if kept != want:
                raise Mistake(
                    f"for k = {k} (V = {logits.shape[0]}) your distribution gives a probability to {kept} tokens, "
                    f"not {want} (the k largest logits, ties included): every other token gets probability 0"
                ) from None
        raise


check_top_k_probs = Exercise(
    "7.9",
    "top-k sampling",
    "top_k_probs",
    ("logits", "k", "temperature"),
    _draw_top_k,
    _judge_top_k,
    forbidden=("course_lib.lm.sample_next",),  # whose top-k rule this is
)
