"""The probes (course_lib/checks/probes.py) name each class of mistake on small modules built to have it, and
stay silent on modules that have the property (torch's own layers are the oracle of a right module)."""

import torch
from torch import nn

from course_lib.checks import probes

ALL = ("again", "causal", "batch", "dtype")


def _hint(forward, x, **kw):
    with torch.no_grad():
        got = probes.measure(forward, [x], ALL, **kw)
    axes = {k: v for k, v in kw.items() if k in ("batch_axis", "time_axis")}
    return probes.property_mistake("M", got, tuple(x.shape), ids=kw.get("vocab") is not None, **axes)


def test_a_right_causal_module_breaks_no_property():
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4, batch_first=True)  # causal, batch-independent, deterministic, float32
    assert _hint(lambda x: lstm(x)[0], torch.randn(2, 5, 3)) == ""
    time_first = nn.RNN(3, 4)
    assert _hint(lambda x: time_first(x)[0], torch.randn(5, 2, 3), batch_axis=1, time_axis=0) == ""


def test_each_property_is_named():
    x = torch.randn(2, 5, 3)
    assert "causality" in _hint(lambda x: x.flip(1).cumsum(1).flip(1), x)  # each step reads the future
    assert "batch independence" in _hint(lambda x: x - x.mean(0), x)
    assert "dtype" in _hint(lambda x: x.double(), x)
    calls = []

    def stateful(x):
        calls.append(1)
        return x * len(calls)

    assert "state across calls" in _hint(stateful, x)


def test_token_ids_change_to_the_next_id():
    emb = nn.Embedding(4, 2)
    ids = torch.tensor([[3, 1, 2]])
    assert _hint(lambda i: emb(i).cumsum(1), ids, vocab=4) == ""  # causal: only earlier tokens summed
    assert "causality" in _hint(lambda i: emb(i).sum(1, keepdim=True).expand(-1, i.shape[1], -1), ids, vocab=4)


def test_the_parameters_against_the_text():
    spec = {"key.weight": ((2, 6), "(head_size, d_model)"), "proj.bias": ((6,), "b^O"), "proj.weight": ((6, 6), "W^O")}
    ok = {"key.weight": (2, 6), "proj.weight": (6, 6), "proj.bias": (6,)}
    assert probes.spec_mistake("M", ok, spec) == ""
    assert "bias=False" in probes.spec_mistake("M", {**ok, "key.bias": (2,)}, spec)
    assert "(head_size, d_model) = (2, 6)" in probes.spec_mistake("M", {**ok, "key.weight": (3, 6)}, spec)
    assert "b^O" in probes.spec_mistake("M", {"key.weight": (2, 6), "proj.weight": (6, 6)}, spec)
    assert probes.spec_mistake("M", {"key.weight": (2, 6), "proj.weight": (6, 6)}, spec, optional=("proj.bias",)) == ""
    assert probes.spec_mistake("M", {**ok, "ffwd.anything": (9,)}, spec, free=("ffwd.",)) == ""
    assert "no parameter extra" in probes.spec_mistake("M", {**ok, "extra": (1,)}, spec)


def test_the_initial_weights():
    assert probes.init_mistake("M", *probes.init_ranges(nn.Linear(8, 8))) == ""  # torch's init: both signs
    zero = nn.Linear(8, 8)
    nn.init.zeros_(zero.weight)
    assert "all zero" in probes.init_mistake("M", *probes.init_ranges(zero))
    one_sign = nn.Linear(8, 8)
    nn.init.uniform_(one_sign.weight, 0, 1)
    assert "one sign" in probes.init_mistake("M", *probes.init_ranges(one_sign))
    small = nn.Linear(2, 2)  # 4 entries may share a sign by chance: not judged
    nn.init.uniform_(small.weight, 0, 1)
    assert probes.init_mistake("M", *probes.init_ranges(small)) == ""


def test_a_crash_where_two_dtypes_meet_is_named():
    try:
        torch.zeros(3, 2).index_add_(0, torch.tensor([0]), torch.ones(1, 2, dtype=torch.float64))
    except RuntimeError as exc:
        record = {"raised": "RuntimeError", "message": str(exc)}
    assert "dtype" in probes.crash_mistake(record)
    assert probes.crash_mistake({"raised": "RuntimeError", "message": "shape mismatch"}) == ""
