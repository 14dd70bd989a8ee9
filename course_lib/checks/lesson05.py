"""Checks for lesson 05 (attention): one per exercise, each with hints for the usual mistakes.

Each check is in three steps (draw, run, judge). Inputs come from a generator seeded by the
draw (the notebook's random state is never touched) with sizes drawn every run; the judge
compares the answer with a reference written here, and with what each known mistake would
give: when every answer matches one mistake, its hint is shown. NaN never passes.
"""

from __future__ import annotations

import contextlib
import math
import re

import numpy as np
import torch

from course_lib.checks import Mistake, probes
from course_lib.checks.plain import _is_tensor
from course_lib.checks.protocol import Exercise, expect_answers, seeded, size_error
from course_lib.seq2seq import Seq2Seq, Seq2SeqConfig


def _tensor(record, name, shape):
    value = record["returned"]
    if not _is_tensor(value):
        raise Mistake(f"return a torch.Tensor (the {name}), got {record['type']}")
    if tuple(value.shape) != tuple(shape):
        raise Mistake(f"the {name} should have shape {tuple(shape)}, got {tuple(value.shape)}")
    return value


# --- Exercise 5.1 -----------------------------------------------------------------------------------------


def _draw_additive(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    # d_q = d_k first, so that swapped projections still run and are caught by their values; the last case keeps
    # them apart (d_q != d_k), so a size taken from the wrong input fails on every draw
    sizes = [(2, 5, 4, 4, 3), (3, 6, 4, 4, 5), (1, 4, 6, 6, 6)]
    d = int(rng.integers(2, 8))
    sizes.append((int(rng.integers(1, 5)), int(rng.integers(2, 9)), d, d, int(rng.integers(2, 8))))
    d_q = int(rng.integers(2, 8))
    sizes.append((int(rng.integers(1, 5)), int(rng.integers(2, 9)), d_q, d_q + int(rng.integers(1, 4)), 4))
    cases = [
        [
            torch.randn(B, d_q, generator=g),
            torch.randn(B, T, d_k, generator=g),
            torch.randn(a, d_q, generator=g),
            torch.randn(a, d_k, generator=g),
            torch.randn(a, generator=g),
        ]
        for B, T, d_q, d_k, a in sizes
    ]
    first = cases[0]  # the batch probe: case 1's first sequence alone (B = 1), to set beside its row in case 1
    return cases + _layout_probes(rng, g) + [[first[0][:1].clone(), first[1][:1].clone(), *first[2:]]]


def _one_entry(rng, rows, cols):
    """A (rows, cols) matrix of zeros but for one 1 at [r, c], placed where a reshape to (cols, rows) would move
    it to another column (so a weight read in another layout reads another input feature)."""
    pairs = [(r, c) for r in range(rows) for c in range(cols) if (r * cols + c) // rows != c]
    r, c = pairs[int(rng.integers(len(pairs)))]
    W = torch.zeros(rows, cols)
    W[r, c] = 1.0
    return W


def _layout_probes(rng, g):
    """Two cases that show each weight's layout: W_q zero but for W_q[r, c] = 1 and W_k = 0 (every score is
    tanh(s_c): attention feature r reads query feature c), then the same for W_k; v = 1. The sizes differ
    (a != d_q != d_k), so a weight used untransposed fails by its shape."""
    d_q = int(rng.integers(2, 5))
    d_k = d_q + int(rng.integers(1, 3))
    a = d_k + int(rng.integers(1, 3))
    B, T = 1, int(rng.integers(2, 5))
    query, keys = torch.randn(B, d_q, generator=g), torch.randn(B, T, d_k, generator=g)
    return [
        [query, keys, _one_entry(rng, a, d_q), torch.zeros(a, d_k), torch.ones(a)],
        [query.clone(), keys.clone(), torch.zeros(a, d_q), _one_entry(rng, a, d_k), torch.ones(a)],
    ]


def _layout_property(cases, got, expected) -> str:
    """Each weight's layout, named whatever code broke it: on a layout probe (one weight with a single 1 at
    [r, c], the other zero) the scores must be tanh of input feature c."""
    for (_, _, W_q, W_k, _), g, e in zip(cases, got, expected):
        for name, W, other, x, rows in (
            ("W_q", W_q, W_k, "query", "q = query @ W_q.T"),
            ("W_k", W_k, W_q, "keys", "k = keys @ W_k.T"),
        ):
            if int((W != 0).sum()) != 1 or bool(other.any()) or not probes.unchanged_mistake([g, e], "", ""):
                continue
            r, c = (int(i) for i in W.nonzero()[0])
            return (
                f"{name}'s layout: with {name} zero but for {name}[{r}, {c}] = 1 (attention feature {r} reads "
                f"feature {c} of the {x}), the other weight zero and v = 1, every score is tanh of that feature "
                f"and yours are not: {name} is (a, d), one row per attention feature, so {rows} (not {name} "
                "untransposed, nor reshaped)"
            )
    return ""


ADDITIVE_HINTS = [
    "you forgot the tanh: e_j = v^T tanh(W_q s + W_k h_j). Without it the scorer is linear and "
    "the query adds the same amount to every key's score",
    "apply tanh to W_q s + W_k h_j, before the dot product with v, not after it",
    "W_q and W_k are swapped: W_q projects the query (the decoder state s), W_k the keys (the encoder states h_j)",
    "the score is the dot product with the learned vector v, not a plain sum over the attention features",
    "the non-linearity is tanh (Bahdanau et al.), not ReLU",
    "the non-linearity is tanh (Bahdanau et al.), not the sigmoid",
    "return the scores e_j themselves: the softmax comes after, in exercise 5.2",
]


def _judge_additive(cases, records):
    got, expected, wrong = [], [], {h: [] for h in ADDITIVE_HINTS}
    for (query, keys, W_q, W_k, v), r in zip(cases, records):
        B, T, _ = keys.shape
        got.append(_tensor(r, "scores", (B, T)))
        hidden = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T  # (B, T, a)
        expected.append(
            torch.stack(
                [torch.stack([v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, j]) for j in range(T)]) for b in range(B)]
            )
        )  # the formula, one score at a time
        for h, x in zip(
            ADDITIVE_HINTS,
            [
                hidden @ v,
                torch.tanh(hidden @ v),
                torch.tanh((query @ W_k.T).unsqueeze(1) + keys @ W_q.T) @ v if W_q.shape == W_k.shape else None,
                torch.tanh(hidden).sum(-1),
                torch.relu(hidden) @ v,
                torch.sigmoid(hidden) @ v,
                torch.softmax(torch.tanh(hidden) @ v, dim=-1),
            ],
        ):
            wrong[h].append(x)
    try:
        expect_answers(got, expected, wrong, [f"the scores for keys {tuple(k.shape)}" for _, k, *_ in cases])
    except Mistake as mistake:
        if " should be " not in str(mistake):
            raise
        factor = probes.constant_factor(got, expected)  # a property: right up to one scale factor per case
        if factor is not None:
            raise Mistake(
                f"your scores are the right ones times {factor:.4g} (case 1): additive attention is not scaled, "
                "e_j = v^T tanh(W_q s + W_k h_j) (the 1/sqrt(d) belongs to dot-product attention)"
            ) from None
        raise Mistake(_layout_property(cases, got, expected) or _batch_property(cases, got) or str(mistake)) from None


def _batch_property(cases, got) -> str:
    """Batch independence, named whatever code broke it: a sequence's scores alone (B = 1) are its row of the
    scores beside the others (the last case is case 1's first sequence alone)."""
    if len(cases) < 2 or len(got) < len(cases):
        return ""
    (q0, k0, *w0), (q1, k1, *w1) = cases[0], cases[-1]
    alone = q1.shape[0] == 1 and torch.equal(q1[0], q0[0]) and torch.equal(k1[0], k0[0])
    if (
        alone
        and all(torch.equal(a, b) for a, b in zip(w0, w1))
        and probes.unchanged_mistake([got[0][:1], got[-1]], "", "")
    ):
        return (
            f"batch independence: sequence 0's scores alone (B = 1) differ from its row beside another sequence "
            f"(B = {q0.shape[0]}): query b meets only the keys of row b, q[:, None, :] of shape (B, 1, a) "
            "against k (B, T, a)"
        )
    return ""


def _additive_errors(case, record):
    """A crash of a matrix product or a broadcast, named by the layout the text gives."""
    query, keys, W_q, W_k, _ = case
    message = record.get("message") if isinstance(record.get("message"), str) else ""
    shapes = [tuple(int(n) for n in m) for m in re.findall(r"\((\d+)x(\d+) and (\d+)x(\d+)\)", message)]
    B, T, d_k = keys.shape
    for left, right in ((m[:2], m[2:]) for m in shapes):  # torch names the two matrices' shapes
        for x, rows, name, W in (("query", (B, query.shape[1]), "W_q", W_q), ("keys", (B * T, d_k), "W_k", W_k)):
            if left == rows and right == tuple(W.shape):
                return f"{name} is (a, d) with one row per attention feature: {x} @ {name}.T, not {x} @ {name}"
    if "must match the size of tensor" in message:
        return (
            "the query's projection (B, a) is added to every one of the T keys' (B, T, a): put the new axis in the "
            "middle, q[:, None, :] (B, 1, a), not q[None] (1, B, a)"
        )
    if size_error(record):
        return (
            f"a shape mismatch with d_q = {query.shape[1]} and d_k = {keys.shape[2]}: W_q (a, d_q) projects the "
            "query s, W_k (a, d_k) the keys h_j"
        )
    return ""


check_additive_scores = Exercise(
    "5.1",
    "additive (Bahdanau) attention scores",
    "additive_scores",
    ("query", "keys", "W_q", "W_k", "v"),
    _draw_additive,
    _judge_additive,
    errors=_additive_errors,
    forbidden=("course_lib.seq2seq.AdditiveScore",),
)


# --- Exercise 5.2: the attention decoder (the build) ------------------------------------------------------
#
# The lesson's equations, for decoding step i (teacher forcing: y_{i-1} is tgt_in[:, i]):
#     e_ij = h_{i-1}^d . h_j^e / sqrt(H)   alpha_i = softmax_j(e_i) (padding j >= length gets -inf)
#     c_i = sum_j alpha_ij h_j^e           h_i^d = GRUCell([y_{i-1}; c_i], h_{i-1}^d)   logits_i = W_out [h_i^d; c_i]
# with h_0^d = h_n^e, the last *real* encoder state of each sentence.

FORBIDDEN_ATTENTION = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "course_lib.attention.scaled_dot_product_attention",
    "course_lib.attention.masked_softmax",
    "course_lib.attention.MultiHeadAttention",
    "course_lib.seq2seq.attend",
    "course_lib.seq2seq.DotScore",
    "course_lib.seq2seq.Seq2Seq.forward",
    "course_lib.seq2seq.Seq2Seq.step",
    "course_lib.seq2seq.Seq2Seq.context",
)


def build_model(recipe, model_class=None):
    """The model a case stands for: the lesson's Seq2Seq without a built-in attention, from a seed (``model_class``:
    a subclass of it, see :func:`build_decoding_model`)."""
    with seeded(recipe["seed"]):
        config = Seq2SeqConfig(recipe["V"], attention="none", embed_dim=recipe["E"], hidden_size=recipe["H"])
        return (model_class or Seq2Seq)(config)


def build_decoding_model(recipe):
    """The same model whose forward decodes with the reference decoder, as the notebook's model with yours (5.3's).
    A function of its own, not a flag of build_model: what 5.2's run path names must not reach its own reference
    (the grader lets the check's frames call only what its run path names, see harness._run_path)."""
    return build_model(recipe, _ReferenceSeq2Seq)


def reference_decode(
    model,
    states,
    lengths,
    tgt_in,
    *,
    scale=True,
    axis=-1,
    extra=0,
    fill=float("-inf"),
    query="previous",
    start="last",
    pool="weighted",
    detach=False,
    order="yc",
):
    """The decoder of the lesson's equations (the keyword arguments give the known mistakes)."""
    B, T, H = states.shape
    real = torch.arange(T)[None, :] < (lengths[:, None] + extra)  # (B, T): the sentence's own positions
    h0 = {
        "last": lambda: states[torch.arange(B), lengths - 1],
        "column": lambda: states[:, -1],
        "first": lambda: states[:, 0],
        "zeros": lambda: torch.zeros_like(states[:, 0]),
        "minus": lambda: states[torch.arange(B), lengths - 2],  # lengths - 1 taken for the length (-1 wraps)
    }[start]()
    divisor = {  # scale=True: sqrt(H); the others are the known wrong sizes
        True: math.sqrt(H),
        "T_in": math.sqrt(T),
        "T_out": math.sqrt(tgt_in.shape[1]),
        "E": math.sqrt(model.tgt_embed.embedding_dim),
        "H": H,
    }.get(scale)
    hidden, context = h0, torch.zeros_like(h0)
    embedded = model.tgt_embed(tgt_in)  # (B, T_out, E)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        if query == "new":  # Luong's order: update first (with the previous context), then attend
            hidden = model.decoder(torch.cat([embedded[:, i], context], dim=-1), hidden)
        q = h0 if query == "encoder" else hidden
        e = (states * q[:, None, :]).sum(-1)  # (B, T): h_{i-1}^d . h_j^e
        if scale:
            e = e / divisor
        if fill is not None and fill != "after":
            e = e.masked_fill(~real, fill)
        alpha = torch.softmax(e, dim=axis)
        if fill == "after":  # the weights zeroed after the softmax: rows no longer sum to 1
            alpha = alpha.masked_fill(~real, 0.0)
        context = (alpha[..., None] * states).sum(1) if pool == "weighted" else states.mean(1)
        if detach:
            context = context.detach()
        if query != "new":
            parts = [embedded[:, i], context] if order == "yc" else [context, embedded[:, i]]
            hidden = model.decoder(torch.cat(parts, dim=-1), hidden)
        if query == "twice":  # a second attention with the new state h_i^d, for the output and the weights
            e = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
            alpha = torch.softmax(e.masked_fill(~real, float("-inf")), dim=-1)
            context = (alpha[..., None] * states).sum(1)
        outputs.append(torch.cat([hidden, context], dim=-1))
        weights.append(alpha)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)


class _ReferenceSeq2Seq(Seq2Seq):
    def forward(self, src, src_lengths, tgt_in):
        states, _, _ = self.encode(src, src_lengths)
        return reference_decode(self, states, src_lengths, tgt_in)


def _probe(logits):
    """A fixed weighting of the logits: its gradient says whether (and how) the decoder is differentiable."""
    return (logits * torch.cos(torch.arange(logits.numel(), dtype=logits.dtype)).reshape(logits.shape)).sum()


def _describe_decode(returned, live):
    if not (isinstance(returned, tuple) and len(returned) == 2 and all(_is_tensor(x) for x in returned)):
        if isinstance(returned, (tuple, list)):  # name what is inside: (Tensor, list) says which is not a tensor
            inside = ", ".join(type(x).__name__ for x in returned[:3]) + (", ..." if len(returned) > 3 else "")
            return {"form": f"{type(returned).__name__} ({inside})"}
        return {"form": type(returned).__name__}
    logits, weights = returned
    grad = None
    if logits.requires_grad:
        (grad,) = torch.autograd.grad(_probe(logits), live[1], allow_unused=True)
    return {"logits": logits.detach(), "weights": weights.detach(), "grad": None if grad is None else grad.detach()}


def _draw_decode(seed):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(3):
        V, B, T_in = int(rng.integers(6, 12)), int(rng.integers(2, 5)), int(rng.integers(4, 8))
        T_out = int(rng.choice([t for t in range(2, 7) if t != T_in]))  # never square: a transpose shows
        # H, E, T_in and T_out all differ, so that a scale by sqrt(T_in), sqrt(T_out) or sqrt(E) instead of
        # sqrt(H) shows, with its own hint, on every draw
        E = int(rng.choice([e for e in range(3, 7) if e not in (T_in, T_out)]))
        H = int(rng.choice([h for h in range(4, 10) if h not in (E, T_in, T_out)]))
        lengths = rng.integers(1, T_in, size=B)  # shorter sentences: padding to mask ...
        full = int(rng.integers(B))
        lengths[full] = T_in  # ... one of full length ...
        # ... and one of 2 to T_in - 2: a start one past the last real state, states[b, lengths[b]], is then not the
        # padded last column states[:, -1] on every row, and alpha_0 over two or more keys shows which state it was
        # (over one key it is 1 whatever the start), so each start-state mistake gets its own hint
        lengths[(full + 1) % B] = int(rng.integers(2, T_in - 1))
        g = torch.Generator().manual_seed(int(rng.integers(2**31)))
        states = torch.randn(B, T_in, H, generator=g)  # h_j^e (random: any encoder's states)
        tgt_in = torch.randint(3, V, (B, T_out), generator=g)
        tgt_in[:, 0] = 1  # BOS first
        recipe = {"V": V, "E": E, "H": H, "seed": int(rng.integers(2**31))}
        cases.append([recipe, states, torch.tensor(lengths, dtype=torch.long), tgt_in])
    return cases


DECODE_HINTS = {
    "divide the scores by sqrt(H), H = the hidden size: e_ij = h_{i-1}^d . h_j^e / sqrt(H)": {"scale": False},
    "divide by sqrt(H), H = the hidden size states.shape[-1], not by the square root of the source length T_in": {
        "scale": "T_in"
    },
    "divide by sqrt(H), H = the hidden size states.shape[-1], not by the square root of the number of "
    "decoding steps T_out": {"scale": "T_out"},
    "divide by sqrt(H), H = the hidden size states.shape[-1] (the vectors in the dot product), not by the "
    "square root of the embedding size E": {"scale": "E"},
    "divide the scores by sqrt(H), not by H itself": {"scale": "H"},
    "mask the scores before the softmax (fill them with -inf): weights zeroed after it no longer sum to 1": {
        "fill": "after"
    },
    "softmax over the wrong axis: each sentence's weights run over its source positions j (dim=-1), "
    "not over the batch": {"axis": 0},
    "the padding mask is off by one: positions j < lengths[b] are real (lengths count the end marker), "
    "j >= lengths[b] is padding": {"extra": 1},
    "a padded position with score 0 still gets weight e^0 = 1: fill the masked scores with -inf before the softmax": {
        "fill": 0.0
    },
    "you ignored the padding: the positions j >= lengths[b] must get weight 0": {"fill": None},
    "the query of step i is the decoder's previous state h_{i-1}^d, which changes every step, "
    "not the encoder's last state h_n^e": {"query": "encoder"},
    "context from the wrong state: attend with h_{i-1}^d, then update (the lesson's order, as Bahdanau); "
    "you updated first and attended with h_i^d (Luong's order)": {"query": "new"},
    "one attention per step: alpha_i and c_i come from h_{i-1}^d and serve both the GRUCell's input and the "
    "output [h_i^d; c_i]; you attended again with the new state h_i^d": {"query": "twice"},
    "the decoder starts from the last *real* encoder state, states[b, lengths[b] - 1], "
    "not the padded last column states[:, -1]": {"start": "column"},
    "the decoder starts from the last real encoder state h_n^e = states[b, lengths[b] - 1], not from zeros": {
        "start": "zeros"
    },
    "the decoder starts from the last real encoder state h_n^e = states[b, lengths[b] - 1], "
    "not from the first one states[:, 0]": {"start": "first"},
    "lengths[b] already counts the end marker: h_n^e = states[b, lengths[b] - 1] and the positions "
    "j < lengths[b] are real; you took one position fewer": {"extra": -1, "start": "minus"},
    "the GRUCell's input is [y_{i-1}; c_i]: the embedding first, then the context": {"order": "cy"},
    "that is mean-pooling: c_i must weight each h_j^e by alpha_ij (and ignore the padding)": {"pool": "mean"},
}
DETACHED = (
    "your values are right but the gradient is not: no .detach() or torch.no_grad() in the decoder, "
    "training needs the gradient through every step"
)


@contextlib.contextmanager
def _one_thread():
    """Tiny tensors: one thread is fastest, and on a busy machine many threads are far slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _judge_decode(cases, records):
    with _one_thread():
        _judge_decode_all(cases, records)


def _judge_decode_all(cases, records):
    got, expected, wrong = [], [], {h: [] for h in DECODE_HINTS}  # the weights
    expected_logits, wrong_logits = [], {h: [] for h in DECODE_HINTS}
    for (recipe, states, lengths, tgt_in), r in zip(cases, records):
        B, T_in, _ = states.shape
        T_out, V = tgt_in.shape[1], recipe["V"]
        out = r["returned"]
        if not isinstance(out, dict) or "form" in out:
            form = out.get("form") if isinstance(out, dict) else r["type"]
            raise Mistake(f"return a tuple (logits, weights) of two tensors, got {form}")
        if tuple(out["logits"].shape) != (B, T_out, V):
            raise Mistake(f"logits should have shape (B, T_out, V) = {(B, T_out, V)}, got {tuple(out['logits'].shape)}")
        if tuple(out["weights"].shape) != (B, T_out, T_in):
            raise Mistake(
                f"weights should have shape (B, T_out, T_in) = {(B, T_out, T_in)} (one row alpha_i per step), "
                f"got {tuple(out['weights'].shape)}"
            )
        model = build_model(recipe)
        with torch.no_grad():
            logits, weights = reference_decode(model, states, lengths, tgt_in)
            expected.append(weights)
            expected_logits.append(logits)
            got.append(out["weights"])
            for hint, variant in DECODE_HINTS.items():
                logits, weights = reference_decode(model, states, lengths, tgt_in, **variant)
                wrong[hint].append(weights)
                wrong_logits[hint].append(logits)
    what = [f"the weights alpha for a batch of lengths {c[2].tolist()}" for c in cases]
    try:
        expect_answers(got, expected, wrong, what, atol=1e-5)
    except Mistake as mistake:
        if " should be " not in str(mistake):
            raise
        raise Mistake(_decode_property(cases, got) or str(mistake)) from None
    # Right weights, wrong logits: a mistake the weights cannot show on this draw (e.g. the padded start
    # state, when every padded sentence has length 1 and so weight 1 on its one word whatever the query)
    # is still named by its logits.
    got_logits = [r["returned"]["logits"] for r in records]

    def logits_match(values):
        return all(_matches(g, v) for g, v in zip(got_logits, values))

    if not logits_match(expected_logits):
        named = next((hint for hint, values in wrong_logits.items() if logits_match(values)), None)
        raise Mistake(
            named
            or "the weights are right but the logits are not: h_i^d = decoder([y_{i-1}; c_i], h_{i-1}^d) "
            "with y_{i-1} = tgt_embed(tgt_in[:, i]), and logits = out([h_i^d; c_i])"
        )
    for (recipe, states, lengths, tgt_in), r in zip(cases, records):
        model = build_model(recipe)
        live = states.clone().requires_grad_(True)
        logits, _ = reference_decode(model, live, lengths, tgt_in)
        (grad,) = torch.autograd.grad(_probe(logits), live)
        if r["returned"]["grad"] is None or not _matches(r["returned"]["grad"], grad):
            raise Mistake(DETACHED)


def _decode_property(cases, got) -> str:
    """The properties of the weights, named whatever code broke them: the padding (keys j < lengths[b] are real,
    the rest get 0), then the start state (step 0's query is h_0^d: which encoder state gives your alpha_0)."""
    for (_, states, lengths, _), weights in zip(cases, got):
        weights = weights.detach().double()
        for b, L in enumerate(lengths.tolist()):
            if L < states.shape[1] and float(weights[b, :, L:].abs().max()) > 1e-6:
                return (
                    f"padding: for a sentence of length {L}, key j = {L} gets weight {float(weights[b, 0, L]):.3g}: "
                    "the real keys are j < lengths[b], the others get weight 0"
                )
            if float(weights[b, :, L - 1].min()) <= 1e-12:
                return (
                    f"the mask's edge: for a sentence of length {L} the last real key j = {L - 1} gets weight 0: "
                    "lengths[b] already counts the end marker, so the real keys are j < lengths[b]"
                )
    for (_, states, lengths, _), weights in zip(cases, got):
        states, H = states.detach().double(), states.shape[2]
        for b, L in enumerate(lengths.tolist()):
            first = weights[b, 0].detach().double()
            for j in range(states.shape[1]):  # which start state h_0^d explains alpha_0?
                alpha = torch.softmax(states[b, :L] @ states[b, j] / math.sqrt(H), dim=0)
                if (
                    j != L - 1
                    and torch.allclose(first[:L], alpha, atol=1e-5)
                    and not torch.allclose(
                        alpha, torch.softmax(states[b, :L] @ states[b, L - 1] / math.sqrt(H), dim=0), atol=1e-5
                    )
                ):
                    return (
                        f"the start state: for a sentence of length {L} your decoder starts from states[b, {j}]: "
                        f"h_0^d is the last real encoder state, states[b, lengths[b] - 1] = states[b, {L - 1}]"
                    )
    return _first_query_property(cases, got)


def _first_query_property(cases, got) -> str:
    """Step 0's query is h_0^d = states[b, L - 1], before any update: log alpha_0 over the real keys is then an
    affine function of the scores h_0^d . h_j^e (any scale: a wrong scale has its own hints). The first sentence
    of 3 or more real keys where it is not (so the weights came from another query) is named."""
    for (_, states, lengths, _), weights in zip(cases, got):
        states = states.detach().double()
        for b, L in enumerate(lengths.tolist()):
            if L < 3:  # over one or two keys any query fits some scale
                continue
            scores = states[b, :L] @ states[b, L - 1]
            logs = weights[b, 0, :L].detach().double().clamp(min=1e-300).log()
            design = torch.stack([scores, torch.ones_like(scores)], dim=1)
            fit = design @ torch.linalg.lstsq(design, logs[:, None]).solution
            if float((fit[:, 0] - logs).abs().max()) > 1e-4:
                return (
                    f"step 0's weights: for a sentence of length {L}, your alpha_0 is not a softmax of the start "
                    f"state's scores h_0^d . h_j^e, h_0^d = states[b, {L - 1}]: step i attends with h_{{i-1}}^d, "
                    "the state before the GRUCell's update, then updates (not with h_i^d, the state after it)"
                )
    return _recurrence_property(cases, got)


def _recurrence_property(cases, got) -> str:
    """The recurrence, judged on the answer's own weights: with alpha_0 right (so h_0^d is), each alpha_{i+1}
    must be the softmax of the scores of h_i^d = decoder([y_{i-1}; c_i], h_{i-1}^d), c_i = sum_j alpha_ij h_j^e
    from the answer's alpha_i. The first step where it breaks names the update (its input, or its state)."""
    for (recipe, states, lengths, tgt_in), weights in zip(cases, got):
        B, T_in, H = states.shape
        model = build_model(recipe)
        with torch.no_grad():
            real = torch.arange(T_in)[None, :] < lengths[:, None]
            hidden = states[torch.arange(B), lengths - 1]
            embedded = model.tgt_embed(tgt_in)
            weights = weights.detach().float()
            for i in range(tgt_in.shape[1]):
                e = ((states * hidden[:, None, :]).sum(-1) / math.sqrt(H)).masked_fill(~real, float("-inf"))
                if not torch.allclose(weights[:, i], torch.softmax(e, dim=-1), rtol=1e-4, atol=1e-4):
                    if i == 0:
                        break  # step 0 is judged by the other properties
                    return (
                        f"step {i}'s weights do not follow from your step {i - 1}: with c = sum_j alpha_{i - 1},j h_j^e "
                        f"from your own alpha_{i - 1}, the state h^d = decoder([y; c], h^d) of that step (its "
                        "embedding, then this step's context, computed before the update, not the previous "
                        f"step's) gives other weights at step {i} than yours"
                    )
                context = (weights[:, i, :, None] * states).sum(1)
                hidden = model.decoder(torch.cat([embedded[:, i], context], dim=-1), hidden)
    return ""


def _matches(got, expected):
    return got.shape == expected.shape and torch.allclose(got.double(), expected.double(), rtol=1e-4, atol=1e-5)


def _decode_errors(case, record):
    recipe, states, lengths, _ = case
    if size_error(record):
        return (
            f"your function fails for states of shape {tuple(states.shape)} (B, T_in, H) and lengths "
            f"{lengths.tolist()}: take every size from the inputs, and give the decoder [y_{{i-1}}; c_i] "
            f"(E + H = {recipe['E'] + recipe['H']} numbers)"
        )
    return ""


check_decode = Exercise(
    "5.2",
    "the attention decoder",
    "decode",
    ("model", "states", "lengths", "tgt_in"),
    _draw_decode,
    _judge_decode,
    materialise=lambda args: [build_model(args[0]), args[1].clone().requires_grad_(True), args[2], args[3]],
    observe=lambda args, live: [args[0], live[1].detach(), live[2], live[3]],  # the model is a recipe
    describe=_describe_decode,
    errors=_decode_errors,
    forbidden=FORBIDDEN_ATTENTION,
)


# --- Exercise 5.3: your own heatmap (the experiment) -------------------------------------------------------

_PAIRS = None


def _pairs():
    global _PAIRS
    if _PAIRS is None:
        from course_lib.dates import make_pairs

        pairs = make_pairs(30, "val", seed=0, max_dates=2)
        _PAIRS = list(zip(pairs.sources, pairs.targets))
    return _PAIRS


def _vocab():
    from course_lib.dates import build_vocab

    return build_vocab()


def _draw_alignment(seed):
    rng = np.random.default_rng(seed)
    # a pair whose matrix is square would hide a transposed answer's shape: draw from the others
    pairs = [(source, target) for source, target in _pairs() if len(source) != len(target)]
    V = len(_vocab())
    cases = []
    for k in rng.choice(len(pairs), size=2, replace=False):
        recipe = {"V": V, "E": int(rng.integers(3, 7)), "H": int(rng.integers(4, 10)), "seed": int(rng.integers(2**31))}
        cases.append([recipe, *pairs[int(k)], None])
    return cases


def _reference_alignment(recipe, source, target, teacher="tgt_in"):
    from course_lib.seq2seq import encode_pairs

    model = build_decoding_model(recipe)
    src, lengths, tgt_in, tgt_out = encode_pairs([source], [target], _vocab())
    with torch.no_grad():
        return model(src, lengths, tgt_in if teacher == "tgt_in" else tgt_out)[1][0]


TGT_OUT = (
    "the decoder reads tgt_in (BOS, then the target: the previous character at each step), "
    "not tgt_out (the characters it should write)"
)


def _judge_alignment(cases, records):
    with _one_thread():
        _judge_alignment_all(cases, records)


def _judge_alignment_all(cases, records):
    got, expected, wrong = [], [], {TGT_OUT: []}
    for (recipe, source, target, _), r in zip(cases, records):
        shape = (len(target) + 1, len(source) + 1)
        value = r["returned"]
        if _is_tensor(value) and value.dim() == 3 and value.shape[0] == 1:
            raise Mistake("return the matrix of the one sentence, (T_out, T_in): drop the batch axis (weights[0])")
        if _is_tensor(value) and tuple(value.shape) == shape[::-1] and shape[0] != shape[1]:
            raise Mistake(
                "rows are the output characters (queries) and columns the source characters (keys): no transpose, "
                "and the source first in encode_pairs([source], [target], vocab)"
            )
        if _is_tensor(value) and value.dim() == 2 and tuple(value.shape) != shape:
            raise Mistake(
                f"for {source!r} -> {target!r} the matrix is (len(target) + 1, len(source) + 1) = {shape}: "
                "the source ends with EOS, and the decoder takes one step per character of BOS + target "
                f"(encode_pairs gives both), got {tuple(value.shape)}"
            )
        got.append(_tensor(r, "attention matrix", shape))
        expected.append(_reference_alignment(recipe, source, target))
        wrong[TGT_OUT].append(_reference_alignment(recipe, source, target, teacher="tgt_out"))
    what = [f"the attention matrix of {c[1]!r}" for c in cases]
    expect_answers(got, expected, wrong, what, atol=1e-5)


check_alignment = Exercise(
    "5.3",
    "your decoder's attention on one sentence",
    "alignment",
    ("model", "source", "target", "vocab"),
    _draw_alignment,
    _judge_alignment,
    materialise=lambda args: [build_decoding_model(args[0]), args[1], args[2], _vocab()],
    observe=lambda args, live: [args[0], live[1], live[2], None],
)
