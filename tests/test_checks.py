"""The check protocol itself: three outcomes, hints, recording for graders."""

import contextlib
import inspect
import json
import math
import re
import sys
from collections import Counter

import numpy as np
import pytest

from course_lib import checks
from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED, Mistake
from course_lib.checks.protocol import Exercise, difference, expect_answers


def _draw_numbers(seed):
    rng = np.random.default_rng(seed)
    return [[float(x)] for x in rng.normal(size=3).round(2)]


def _judge_double(cases, records):
    expect_answers(
        [r["returned"] for r in records],
        [2 * x for (x,) in cases],
        {"you added 2 instead of doubling": [x + 2 for (x,) in cases]},
        [f"double({x})" for (x,) in cases],
    )


check_double = Exercise("9.1", "double", "double", ("x",), _draw_numbers, _judge_double)


def test_three_outcomes_and_printing(capsys):
    assert check_double(lambda x: 2 * x).status == PASSED
    assert "✅ Exercise 9.1 (double): passed." in capsys.readouterr().out

    def stub(x):
        raise NotImplementedError("Exercise 9.1: double (about 1 line)")

    r = check_double(stub)
    assert r.status == NOT_IMPLEMENTED and not r
    r = check_double(lambda x: x + 2)
    assert r.status == FAILED and "added 2" in r.message
    r = check_double(lambda x: x * 4, seed=0)
    x = _draw_numbers(0)[0][0]
    assert r.status == FAILED and f"double({x}) should be {2 * x:g}, got {4 * x:g}" in r.message, r.message


def test_crash_is_reported_with_the_students_line():
    def student(x):
        return {}["missing"]

    r = check_double(student, quiet=True)
    assert r.status == FAILED and "KeyError" in r.message and '{}["missing"]' in r.message.replace("'", '"')


def test_not_a_function():
    r = check_double(42, quiet=True)
    assert r.status == FAILED and "pass your function itself" in r.message


def test_results_are_kept_and_the_summary_shows_the_latest_of_each():
    checks.RESULTS.clear()
    check_double(lambda x: 2 * x, quiet=True)
    check_double(lambda x: x, quiet=True)
    assert [r.status for r in checks.RESULTS] == [PASSED, FAILED]
    assert checks.RESULTS[1].message.startswith("Hint:")
    assert "9.1" in checks.summary() and checks.summary().count("9.1") == 1 and "failed" in checks.summary()


def test_a_hint_names_only_a_mistake_that_explains_every_answer():
    expected = [1.0, 2.0, 3.0]
    wrong = {"off by one": [2.0, 3.0, 4.0], "reversed": [3.0, 2.0, 1.0]}
    expect_answers([1.0, 2.0, 3.0], expected, wrong)
    with pytest.raises(Mistake, match="off by one"):
        expect_answers([2.0, 3.0, 4.0], expected, wrong)
    with pytest.raises(Mistake, match="answer 1 should be 1.0, got 2.0"):
        expect_answers([2.0, 2.0, 1.0], expected, wrong)  # partly like both: no hint claims it


def test_difference_handles_shapes_tensors_and_junk():
    torch = pytest.importorskip("torch")
    assert difference(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0])) == ""
    assert "shape" in difference([1.0, 2.0], [[1.0, 2.0]])  # shapes must agree: nothing is broadcast
    assert "should be numbers" in difference("abc", 1.0) and "should be numbers" in difference(None, 1.0)
    assert "at index [1] should be 2.0, got 5.0" in difference([1.0, 5.0], [1.0, 2.0])


def test_plain_data_round_trips_bit_for_bit():
    torch = pytest.importorskip("torch")
    data = {
        "a": [1, 2.5, None, True, "x", float("nan"), float("inf")],
        ("<s>", "we"): 3,
        7: (1, [2, {"k": -0.0}]),
        "arr": np.array([[1.0, np.nan], [np.inf, -2.0]], dtype=np.float32),
        "scalar": np.int64(4),
        "t": torch.tensor([1.5, float("nan")], dtype=torch.bfloat16),
        "t64": torch.arange(6, dtype=torch.int64).reshape(2, 3),
    }
    back = checks.from_plain(json.loads(json.dumps(checks.to_plain(data), allow_nan=False)))
    assert checks.plain.same(back["arr"], data["arr"]) and back["scalar"].dtype == np.int64
    assert back["t"].dtype == torch.bfloat16 and torch.equal(back["t"][:1], data["t"][:1]) and back["t"][1].isnan()
    assert torch.equal(back["t64"], data["t64"]) and back[7] == (1, [2, {"k": -0.0}])
    assert back["a"][:5] == data["a"][:5] and np.isnan(back["a"][5]) and back["a"][6] == float("inf")
    assert back[("<s>", "we")] == 3


@pytest.mark.parametrize("obj", [object(), {1, 2}, np.array(["a"]), b"bytes", lambda: 0, 1 + 2j])
def test_anything_that_is_not_plain_data_is_refused(obj):
    with pytest.raises(TypeError):
        checks.to_plain(obj)


def test_an_object_with_its_own_eq_is_refused_even_when_it_subclasses_a_plain_type():
    class AlwaysEqual(float):
        def __eq__(self, other):
            return True

    with pytest.raises(TypeError):
        checks.to_plain(AlwaysEqual(1.0))
    with pytest.raises(TypeError):
        checks.to_plain([AlwaysEqual(1.0)])


@pytest.mark.parametrize(
    "bad",
    [
        {"float": "1.0"},
        {"set": [1]},
        {"tuple": [1], "dict": []},
        {"ndarray": {"dtype": "float32", "shape": [2], "data": ""}},
        {"ndarray": {"dtype": "object", "shape": [], "data": ""}},
        {"dict": [[[1], 2]]},
        {"dict": [[1]]},
        float("nan"),
    ],
)
def test_from_plain_refuses_what_to_plain_could_not_have_made(bad):
    with pytest.raises(ValueError):
        checks.from_plain(bad)


def _double_exercise():
    from course_lib.checks.protocol import Exercise, expect_answers

    def draw(seed):
        rng = np.random.default_rng(seed)
        return [[rng.normal(size=int(rng.integers(2, 6)))] for _ in range(3)]

    def body(cases, records):
        expect_answers(
            [r["returned"] for r in records],
            [2 * c[0] for c in cases],
            {"you added 2 instead of doubling": [c[0] + 2 for c in cases]},
        )

    return Exercise("9.2", "double an array", "double", ("x",), draw, body)


def test_an_exercise_judges_outside_the_run_and_names_the_mistake():
    ex = _double_exercise()
    assert ex.check(lambda x: 2 * x, quiet=True).status == PASSED
    assert "added 2" in ex.check(lambda x: x + 2, quiet=True).message
    r = ex.check(lambda x: x * 3, quiet=True)
    assert r.status == FAILED and "answer 1 at index [0] should be" in r.message and "\n" not in r.message

    def in_place(x):
        x *= 2
        return x

    r = ex.check(in_place, quiet=True)
    assert r.status == FAILED and "changed its input `x` in place" in r.message

    def last_entry_in_place(x):  # the first entries stay: the hint must point at the one that changed
        doubled = 2 * x
        x[-1] = 99.0
        return doubled

    r = ex.check(last_entry_in_place, quiet=True)
    assert r.status == FAILED and "changed its input `x` in place" in r.message, r
    assert re.search(r"at index \[\d\], -?[\d.e-]+ became 99", r.message), r.message


def test_an_in_place_change_to_a_dict_names_the_entry():
    from course_lib.checks.protocol import Exercise

    def draw(seed):
        rng = np.random.default_rng(seed)
        return [[{"W": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}] for _ in range(2)]

    ex = Exercise("9.3", "sum the bias", "sum_b", ("params",), draw, lambda cases, records: None)

    def sgd_in_place(params):
        params["b"][2] -= 0.5
        return 0.0

    r = ex.check(sgd_in_place, quiet=True)
    assert r.status == FAILED and "changed its input `params` in place (its entry 'b': at index [2]" in r.message, r
    assert "\n" not in r.message, r.message

    def stub(x):
        raise NotImplementedError

    assert ex.check(stub, quiet=True).status == NOT_IMPLEMENTED


def test_a_library_not_implemented_error_is_a_crash_not_the_stub():
    """torch raises NotImplementedError for an operation it lacks (log_softmax of a Long tensor): that is a
    mistake to report with the student's line, not an exercise left unwritten; the student's own raise is."""
    import torch.nn.functional as F

    ex = _double_exercise()

    def swapped(x):
        labels = torch.zeros(len(x), dtype=torch.long)
        return F.cross_entropy(labels, torch.as_tensor(x)).numpy()  # arguments swapped: log_softmax of a Long

    r = ex.check(swapped, quiet=True)
    assert r.status == FAILED, r
    assert "NotImplementedError" in r.message and "not implemented for 'Long'" in r.message, r.message
    assert "F.cross_entropy(labels, torch.as_tensor(x))" in r.message, r.message  # the student's line, not torch's

    def own_placeholder(x):
        raise NotImplementedError("Exercise 9.2: double (about 1 line)")

    def says_why(x):
        raise NotImplementedError("negative x: later")

    assert ex.check(own_placeholder, quiet=True).status == NOT_IMPLEMENTED
    r = ex.check(says_why, quiet=True)  # the student's own message: a crash that says so
    assert r.status == FAILED and "negative x: later" in r.message, r


def test_judge_uses_only_the_records_it_is_given():
    ex = _double_exercise()
    cases = ex.draw(1)
    records = ex.run(lambda x: 2 * x, checks.from_plain(checks.to_plain(cases)))
    wire = json.dumps(checks.to_plain(records), allow_nan=False)
    assert ex.judge(cases, checks.from_plain(json.loads(wire)))[0] == PASSED
    forged = [{"returned": c[0] + 1, "type": "ndarray", "inputs": [c[0]]} for c in cases]
    assert ex.judge(cases, forged)[0] == FAILED
    assert ex.judge(cases, [{"status": "passed"}])[0] == FAILED  # wrong count of records
    assert ex.judge(cases, [{"returned": None} for _ in cases])[0] == FAILED


def test_nan_in_an_answer_is_rejected():
    ex = _double_exercise()
    r = ex.check(lambda x: np.where(x > 0, 2 * x, np.nan), quiet=True, seed=3)
    assert r.status == FAILED and "nan" in r.message.lower()


def test_a_run_leaves_every_global_random_generator_as_it_was():
    torch = pytest.importorskip("torch")
    import random

    ex = _double_exercise()

    def noisy(x):
        torch.rand(3)
        np.random.rand()
        random.random()
        return 2 * x

    torch_state, np_state, py_state = torch.random.get_rng_state(), np.random.get_state(), random.getstate()
    assert ex.check(noisy, quiet=True).status == PASSED
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    assert random.getstate() == py_state and np.array_equal(np.random.get_state()[1], np_state[1])


def test_exercises_lists_every_lesson_with_the_function_names():
    from pathlib import Path

    import nbformat

    from course_lib.instructor.ids import exercise_of

    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "solutions").glob("[0-9][0-9]_*.ipynb")):
        lesson = path.stem[:2]
        found = checks.exercises(lesson)
        nb = nbformat.read(path, as_version=4)
        checked = {  # the exercises whose check cell the solutions notebook holds
            exercise_of(c.metadata["nbgrader"]["grade_id"])
            for c in nb.cells
            if (c.metadata.get("nbgrader") or {}).get("grade_id", "").startswith("check-") and "check" in c.source
        }
        assert set(found) >= checked, (lesson, sorted(found), sorted(checked))
        assert all(e.id.startswith(str(int(lesson)) + ".") for e in found.values())
        assert all(e.function.isidentifier() for e in found.values())
    assert checks.exercises("01")["1.1"].function == "count_ngrams"
    with pytest.raises(ValueError, match="two digits"):
        checks.exercises("1")
    with pytest.raises(ValueError, match="no exercises"):
        checks.exercises("99")


def test_zero_dimensional_values_keep_their_shape():
    torch = pytest.importorskip("torch")
    for x in (np.float64(2.5), np.array(3, dtype=np.int32), torch.tensor(1.5), torch.tensor(True)):
        back = checks.from_plain(checks.to_plain(x))
        assert tuple(back.shape) == () and back.dtype == (x.dtype if hasattr(x, "shape") else np.float64)


def test_summary_of_a_lesson_lists_every_exercise_with_its_status_and_hint():
    checks.RESULTS.clear()
    ex = checks.exercises("01")
    ids, n = list(ex), len(ex)
    picked = ids[n // 2]

    def wrong(*args):
        return None  # the wrong type for every exercise

    result = ex[picked].check(wrong, quiet=True)
    assert result.status == FAILED and checks.RESULTS == [result]
    lines = checks.summary(lesson="01").splitlines()
    assert len(lines) == n + 1 and lines[-1] == f"0 of {n} exercises passed.", (lines, checks.RESULTS)
    assert f"Exercise {picked} ({ex[picked].title}): failed. Hint:" in lines[n // 2], lines
    assert all("not checked yet" in line for i, line in enumerate(lines[:-1]) if i != n // 2)


def _masked_softmax_exercise():
    """A masked softmax over float64 scores: some weights are exactly 0, the reference is float64."""
    torch = pytest.importorskip("torch")

    def draw(seed):
        g = torch.Generator().manual_seed(seed)
        T = int(torch.randint(3, 7, (1,), generator=g))
        return [[torch.randn(T, T, generator=g, dtype=torch.float64)] for _ in range(3)]

    def body(cases, records):
        causal = [torch.ones(s.shape, dtype=torch.bool).tril() for (s,) in cases]
        expect_answers(
            [r["returned"] for r in records],
            [torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1) for (s,), m in zip(cases, causal)],
        )

    return Exercise("9.6", "masked softmax", "weights", ("scores",), draw, body)


def test_a_crafted_nan_where_a_weight_should_be_zero_is_rejected():
    torch = pytest.importorskip("torch")
    ex = _masked_softmax_exercise()

    def right(scores):
        return torch.softmax(scores.masked_fill(~torch.ones_like(scores, dtype=torch.bool).tril(), float("-inf")), -1)

    def crafted(scores):
        weights = right(scores)
        return weights.masked_fill(weights == 0, float("nan"))  # NaN where the weight is 0

    assert ex.check(right, quiet=True).status == PASSED
    for _ in range(3):
        r = ex.check(crafted, quiet=True)
        assert r.status == FAILED and "nan" in r.message.lower(), r


def test_a_float32_solution_passes_where_the_inputs_are_float64():
    torch = pytest.importorskip("torch")
    ex = _masked_softmax_exercise()

    def float32(scores):
        s = scores.float()  # float32, as students write it
        return torch.softmax(s.masked_fill(~torch.ones_like(s, dtype=torch.bool).tril(), float("-inf")), dim=-1)

    assert all(ex.check(float32, quiet=True).passed for _ in range(20))


# ---------------------------------------------------------------- borrowed answers are refused

torch = pytest.importorskip("torch")
F = torch.nn.functional

from course_lib.checks.borrowed import Borrowed, refusing, uses_forbidden  # noqa: E402
from course_lib.parentheses import is_balanced as ib  # an alias bound at import time, as a notebook would  # noqa: E402

HINT = "write it yourself: your function may not call `{}`, which this exercise asks you to replace"


def _from_source(source: str, name: str, namespace: dict | None = None):
    """A function defined by exec (no source for inspect to find): only the run-time refusal can see it."""
    namespace = {"torch": torch, "F": F, "ib": ib, **(namespace or {})}
    exec(compile(source, "<no source>", "exec"), namespace)
    return namespace[name]


def _balanced_exercise():
    from course_lib.parentheses import is_balanced

    def draw(seed):
        rng = np.random.default_rng(seed)
        return [[[int(s) for s in rng.integers(0, 4, size=int(rng.integers(2, 9)))]] for _ in range(6)] + [[[0, 3]]]

    def body(cases, records):  # the reference calls the forbidden function itself: never refused here
        for (seq,), r in zip(cases, records):
            if r["returned"] is not is_balanced(seq, 4):
                raise Mistake(f"balanced({seq}) should be {is_balanced(seq, 4)}")

    return Exercise(
        "9.3", "balanced", "balanced", ("seq",), draw, body, forbidden=("course_lib.parentheses.is_balanced",)
    )


def _grad_exercise():
    def draw(seed):
        g = torch.Generator().manual_seed(seed)
        return [[torch.randn(int(torch.randint(2, 7, (1,), generator=g)), generator=g)] for _ in range(3)]

    def body(cases, records):
        refs = []
        for (x,) in cases:  # the reference uses autograd: never refused here
            x = x.clone().requires_grad_(True)
            refs.append(torch.autograd.grad((x**3).sum(), x)[0])
        expect_answers([r["returned"] for r in records], refs)

    return Exercise(
        "9.4",
        "gradient of sum(x^3)",
        "grad_cube",
        ("x",),
        draw,
        body,
        forbidden=("torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward"),
    )


def _attention_exercise():
    def draw(seed):
        g = torch.Generator().manual_seed(seed)
        T, d = (int(v) for v in torch.randint(2, 6, (2,), generator=g))
        return [[torch.randn(T, d, generator=g), torch.randn(T, d, generator=g), torch.randn(T, d, generator=g)]]

    def body(cases, records):
        expect_answers([r["returned"] for r in records], [F.scaled_dot_product_attention(q, k, v) for q, k, v in cases])

    return Exercise(
        "9.5",
        "attention",
        "attend",
        ("q", "k", "v"),
        draw,
        body,
        forbidden=("torch.nn.functional.scaled_dot_product_attention", "torch.nn.LSTM"),
    )


def test_a_borrowed_course_lib_function_is_refused_and_the_reference_still_uses_it():
    from course_lib import parentheses

    ex = _balanced_exercise()

    def mine(seq):
        stack = []
        for s in seq:
            if s < 2:
                stack.append(s)
            elif not stack or stack.pop() != 3 - s:
                return False
        return not stack

    assert ex.check(mine, quiet=True).status == PASSED  # judge called is_balanced: no refusal there
    borrowed = _from_source("def balanced(seq):\n    return ib(seq, 4)\n", "balanced")  # alias bound before
    r = ex.check(borrowed, quiet=True)
    assert r.status == FAILED and HINT.format("course_lib.parentheses.is_balanced") in r.message, r
    assert r.message.startswith("Hint:") and "\n" not in r.message
    via_module = _from_source(
        "def balanced(seq):\n    return parentheses.is_balanced(seq, 4)\n", "balanced", {"parentheses": parentheses}
    )
    assert ex.check(via_module, quiet=True).status == FAILED
    assert parentheses.is_balanced([0, 3], 4) and ib([0, 3], 4) and not ib([0, 2], 4)  # put back


def test_the_source_is_read_too_for_an_alias_bound_before_the_call():
    ex = _balanced_exercise()

    def balanced(seq):
        return ib(seq, 4)

    assert uses_forbidden(balanced, ex.forbidden) == "course_lib.parentheses.is_balanced"

    def helper(seq):
        return ib(seq, 4)

    def via_helper(seq):  # the student's own helper is followed
        return helper(seq)

    assert uses_forbidden(via_helper, ex.forbidden) == "course_lib.parentheses.is_balanced"
    r = ex.check(via_helper, quiet=True)
    assert r.status == FAILED and HINT.format("course_lib.parentheses.is_balanced") in r.message, r

    import types

    copied = types.FunctionType(ib.__code__, ib.__globals__)  # a copy keeps the original code when it is swapped

    def via_copy(seq):
        return copied(seq, 4)

    assert uses_forbidden(via_copy, ex.forbidden) == "course_lib.parentheses.is_balanced"

    def default_argument(seq, check=ib):
        return check(seq, 4)

    assert uses_forbidden(default_argument, ex.forbidden) == "course_lib.parentheses.is_balanced"


def test_autograd_and_backward_through_an_instance_are_refused_but_allowed_torch_operations_pass():
    ex = _grad_exercise()
    assert ex.check(lambda x: 3 * x**2, quiet=True).status == PASSED
    assert ex.check(lambda x: torch.mul(x.pow(2), 3.0), quiet=True).status == PASSED
    grad = _from_source(
        "def grad_cube(x):\n    x = x.clone().requires_grad_(True)\n    return torch.autograd.grad((x**3).sum(), x)[0]\n",
        "grad_cube",
    )
    r = ex.check(grad, quiet=True)
    assert r.status == FAILED and HINT.format("torch.autograd.grad") in r.message, r
    backward = _from_source(
        "def grad_cube(x):\n    x = x.clone().requires_grad_(True)\n    (x**3).sum().backward()\n    return x.grad\n",
        "grad_cube",
    )
    r = ex.check(backward, quiet=True)
    assert r.status == FAILED and HINT.format("torch.Tensor.backward") in r.message, r
    # torch's own helpers that call autograd are refused too (the function's code is swapped, not a name)
    jacobian = _from_source(
        "def grad_cube(x):\n    return torch.autograd.functional.jacobian(lambda y: (y**3).sum(), x)\n", "grad_cube"
    )
    assert ex.check(jacobian, quiet=True).status == FAILED
    x = torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # put back afterwards
    assert torch.equal(x.grad, torch.full((2,), 2.0))


def test_a_torch_module_and_a_builtin_are_refused_also_through_aliases_and_prebuilt_instances():
    ex = _attention_exercise()

    def attend(q, k, v):
        return torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1) @ v

    assert ex.check(attend, quiet=True).status == PASSED  # judge used F.scaled_dot_product_attention
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    for source in (
        "def attend(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n",
        "def attend(q, k, v):\n    return sdpa(q, k, v)\n",
        "def attend(q, k, v):\n    return torch._C._nn.scaled_dot_product_attention(q, k, v)\n",
    ):
        r = ex.check(_from_source(source, "attend", {"sdpa": sdpa}), quiet=True)
        assert r.status == FAILED and "torch.nn.functional.scaled_dot_product_attention" in r.message, (source, r)
    lstm = torch.nn.LSTM(2, 2)  # built before the check runs: its forward refuses
    for source in (
        "def attend(q, k, v):\n    torch.nn.LSTM(q.shape[-1], 1)\n    return q\n",
        "def attend(q, k, v):\n    lstm(torch.zeros(1, 2))\n    return q\n",
    ):
        r = ex.check(_from_source(source, "attend", {"lstm": lstm}), quiet=True)
        assert r.status == FAILED and HINT.format("torch.nn.LSTM") in r.message, (source, r)
    assert F.scaled_dot_product_attention is sdpa and torch._C._nn.scaled_dot_product_attention is sdpa
    assert lstm(torch.zeros(1, 2))[0].shape == (1, 2) and torch.nn.LSTM(3, 4).hidden_size == 4  # put back


def test_an_alias_in_a_module_loaded_between_two_checks_is_replaced_too(tmp_path, monkeypatch):
    """refusing searches the loaded modules for aliases once and then only those that held one, while the same
    modules stay loaded: a module loaded since (here with an alias of a forbidden builtin) is searched again."""
    names = ("torch.nn.functional.scaled_dot_product_attention",)
    sdpa = F.scaled_dot_product_attention
    (tmp_path / "late_alias_module.py").write_text("import torch\nattend = torch._C._nn.scaled_dot_product_attention\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with refusing(names):
            assert F.scaled_dot_product_attention is not sdpa
            assert torch._C._nn.scaled_dot_product_attention is not sdpa
        import late_alias_module

        assert late_alias_module.attend is sdpa
        with refusing(names) as called:
            with pytest.raises(Borrowed):
                late_alias_module.attend(torch.ones(1, 1), torch.ones(1, 1), torch.ones(1, 1))
    finally:
        sys.modules.pop("late_alias_module", None)
    assert called == list(names) and late_alias_module.attend is sdpa and F.scaled_dot_product_attention is sdpa


def test_a_subclass_of_a_forbidden_module_is_refused():
    ex = _attention_exercise()

    class Mine(torch.nn.LSTM):
        pass

    assert uses_forbidden(Mine, ex.forbidden) == "torch.nn.LSTM"


def test_a_swallowed_refusal_is_still_recorded():
    ex = _grad_exercise()
    sly = _from_source(
        "def grad_cube(x):\n    try:\n        torch.autograd.grad\n        y = x.clone().requires_grad_(True)\n"
        "        return torch.autograd.grad((y**3).sum(), y)[0]\n    except Exception:\n        return 3 * x**2\n",
        "grad_cube",
    )
    r = ex.check(sly, quiet=True)
    assert r.status == FAILED and "torch.autograd.grad" in r.message, r


def test_everything_is_put_back_even_when_the_students_code_raises():
    from course_lib import parentheses

    names = (
        "course_lib.parentheses.is_balanced",
        "torch.autograd.grad",
        "torch.Tensor.backward",
        "torch.nn.LSTM",
        "torch.nn.functional.scaled_dot_product_attention",
    )
    before = (
        parentheses.is_balanced.__code__,
        torch.autograd.grad.__code__,
        torch.Tensor.backward.__code__,
        vars(torch.nn.LSTM).get("__init__"),
        torch.nn.LSTM.forward,
        F.scaled_dot_product_attention,
    )
    with pytest.raises(ZeroDivisionError):
        with refusing(names) as called:
            with pytest.raises(Borrowed):
                ib([0, 3], 4)
            with pytest.raises(Borrowed):
                F.scaled_dot_product_attention(torch.ones(1, 1), torch.ones(1, 1), torch.ones(1, 1))
            raise ZeroDivisionError("the student's code crashed")
    assert called == ["course_lib.parentheses.is_balanced", "torch.nn.functional.scaled_dot_product_attention"]
    after = (
        parentheses.is_balanced.__code__,
        torch.autograd.grad.__code__,
        torch.Tensor.backward.__code__,
        vars(torch.nn.LSTM).get("__init__"),
        torch.nn.LSTM.forward,
        F.scaled_dot_product_attention,
    )
    assert all(a is b for a, b in zip(before, after))
    ex = _grad_exercise()
    crash = _from_source("def grad_cube(x):\n    raise ValueError('mine')\n", "grad_cube")
    assert ex.check(crash, quiet=True).message.startswith("Your function raised ValueError: mine")
    assert torch.autograd.grad.__code__ is before[1]


def test_a_forged_borrowed_record_echoes_only_the_exercises_own_names():
    ex = _grad_exercise()
    cases = ex.draw(0)
    status, hint = ex.judge(cases, [{"raised": "Borrowed", "message": "=cmd|' /C calc'!A0", "where": ""}] * len(cases))
    assert status == FAILED and "calc" not in hint and hint.startswith("Hint: write it yourself")


def test_forbidden_must_be_dotted_names():
    with pytest.raises(ValueError, match="dotted names"):
        Exercise("9.9", "t", "f", ("x",), _draw_numbers, _judge_double, forbidden="torch.autograd.grad")


def test_a_closure_a_builtin_method_and_a_generator_are_refused_and_put_back(monkeypatch):
    from course_lib.checks import borrowed

    def make():
        scale = 3

        def scaled(x):
            return scale * x

        return scaled

    scaled, resolve = make(), borrowed.resolve  # a function with a closure, under a name of its own
    monkeypatch.setattr(borrowed, "resolve", lambda d: (None, "scaled", scaled) if d == "my.scaled" else resolve(d))
    with refusing(("my.scaled", "torch.Tensor.softmax", "torch.nn.Module.parameters")) as called:
        with pytest.raises(Borrowed):
            scaled(2)
        with pytest.raises(Borrowed):
            torch.ones(3).softmax(0)
        with pytest.raises(Borrowed):
            list(torch.nn.Linear(2, 2).parameters())
    assert called == ["my.scaled", "torch.Tensor.softmax", "torch.nn.Module.parameters"]
    assert scaled(2) == 6 and "softmax" not in vars(torch.Tensor)  # put back where it was (inherited from C)
    assert torch.allclose(torch.zeros(2).softmax(0), torch.full((2,), 0.5))
    assert len(list(torch.nn.Linear(2, 2).parameters())) == 2


def test_the_graders_look_at_the_notebook_text_finds_borrowed_answers_without_running_them():
    grad = _grad_exercise()
    cells = ["import torch\nfrom torch import autograd as ag\n", "x = 1\n"]
    assert grad.judge_source([*cells, "def grad_cube(x):\n    return 3 * x**2\n"]) == ""
    for answer in (
        "def grad_cube(x):\n    y = x.clone().requires_grad_(True)\n    return ag.grad((y**3).sum(), y)[0]\n",
        "def grad_cube(x):\n    y = x.clone().requires_grad_(True)\n    (y**3).sum().backward()\n    return y.grad\n",
        "def helper(y):\n    return torch.autograd.grad((y**3).sum(), y)[0]\n\n"
        "def grad_cube(x):\n    return helper(x.clone().requires_grad_(True))\n",
        "g = torch.autograd.grad\ndef grad_cube(x):\n    y = x.clone().requires_grad_(True)\n    return g((y**3).sum(), y)[0]\n",
        "def grad_cube(x):\n    from torch.autograd import backward\n    return backward\n",
    ):
        hint = grad.judge_source([*cells, answer])
        assert hint.startswith("Hint: write it yourself: your function may not call `torch."), (answer, hint)
    # a method of the student's own (micrograd's Value.backward) is theirs to call
    own = "class Value:\n    def backward(self):\n        return 0\n\ndef grad_cube(x):\n    Value().backward()\n    return 3 * x**2\n"
    assert grad.judge_source([*cells, own]) == ""
    attend = _attention_exercise()
    lstm = (
        "import torch.nn as nn\nclass Mine(nn.LSTM):\n    pass\n\ndef attend(q, k, v):\n    Mine(2, 2)\n    return q\n"
    )
    assert "`torch.nn.LSTM`" in attend.judge_source([lstm])
    balanced = _balanced_exercise()
    via = "from course_lib import parentheses as P\n%time\ndef balanced(seq):\n    return P.is_balanced(seq, 4)\n"
    assert "`course_lib.parentheses.is_balanced`" in balanced.judge_source([via])


@pytest.mark.parametrize("message", [None, 3, ["shape"], {"size": 1}])
def test_size_error_reads_a_crafted_record_without_crashing(message):
    """Records cross from the student's kernel: a message that is not text must not crash the judge."""
    from course_lib.checks.protocol import size_error

    assert size_error({"raised": "RuntimeError", "message": message}) is False


def test_building_a_case_model_leaves_the_gpu_generators_alone(monkeypatch):
    # torch.manual_seed also reseeds CUDA's and MPS's generators, which fork_rng(devices=[]) does not
    # restore: a check run in a notebook on a GPU would change the notebook's later random draws there.
    torch = pytest.importorskip("torch")
    from course_lib.checks import lesson03, lesson04, lesson05

    reseeded = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: reseeded.append(("cuda", seed)))
    monkeypatch.setattr(torch.mps, "manual_seed", lambda seed: reseeded.append(("mps", seed)))
    cpu_state = torch.random.get_rng_state()
    first = lesson05.build_model({"V": 7, "E": 3, "H": 4, "seed": 5})
    again = lesson05.build_model({"V": 7, "E": 3, "H": 4, "seed": 5})
    lesson04._build_lstm({"I": 3, "H": 4, "L": 2, "seed": 5})
    lesson03._train_model({"H": 4, "seed": 5})
    assert reseeded == []
    assert torch.equal(torch.random.get_rng_state(), cpu_state)  # the CPU's is forked and put back
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), again.parameters()))  # still seeded


def test_the_solution_decoder_makes_its_tensors_on_the_states_device():
    # Lesson 05 trains the student's decoder on the GPU when there is one, but its check runs on the CPU:
    # run the solution on the meta device, where a tensor made on the CPU (torch.arange(T) without
    # device=) meeting the states raises, as on CUDA.
    import ast
    import math
    from pathlib import Path

    torch = pytest.importorskip("torch")
    from course_lib.checks.lesson05 import build_model

    path = Path(__file__).resolve().parents[1] / "solutions" / "05_attention.py"
    (node,) = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef) and n.name == "decode"]
    namespace = {"torch": torch, "math": math}
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    model = build_model({"V": 9, "E": 3, "H": 4, "seed": 1}).to("meta")
    states, lengths = torch.empty(3, 5, 4, device="meta"), torch.tensor([5, 2, 3], device="meta")
    logits, weights = namespace["decode"](model, states, lengths, torch.zeros(3, 4, dtype=torch.long, device="meta"))
    assert logits.device.type == weights.device.type == "meta"
    assert logits.shape == (3, 4, 9) and weights.shape == (3, 4, 5)


# ---------------------------------------------------------------- refused by what runs (the observer)


def test_the_checks_own_functions_are_refused_in_every_exercise_whatever_the_name():
    """check_double forbids nothing, yet the check's own helpers (course_lib.checks) may not answer it."""
    from course_lib.checks import protocol

    by_alias = _from_source(
        "def double(x):\n    return float(helper([x])[0] * 2)\n", "double", {"helper": protocol.as_array}
    )
    r = check_double(by_alias, quiet=True)
    assert r.status == FAILED and HINT.format("course_lib.checks.protocol.as_array") in r.message, r
    assert check_double(lambda x: 2 * x, quiet=True).status == PASSED  # the check's own steps are not refused
    r = check_double(protocol.as_array, quiet=True)  # the student's function IS the check's code
    assert r.status == FAILED and "course_lib.checks.protocol.as_array" in r.message, r


def test_gradient_routes_that_no_name_list_covers_are_refused():
    ex = _grad_exercise()
    routes = {
        "torch.func.grad": "def grad_cube(x):\n    return torch.func.grad(lambda y: (y**3).sum())(x)\n",
        "torch.func.jvp": "def grad_cube(x):\n    return torch.func.jvp(lambda y: y**3, (x,), (torch.ones_like(x),))[1]\n",
        "the engine": (
            "def grad_cube(x):\n    y = x.clone().requires_grad_(True)\n    s = (y**3).sum()\n"
            "    return torch.autograd.Variable._execution_engine.run_backward(\n"
            "        (s,), (torch.ones_like(s),), False, False, (y,), False)[0]\n"
        ),
        # right values (3 x^2 (1 - 0^2)), but computed by a gradient kernel
        "an aten backward kernel": "def grad_cube(x):\n    return torch.ops.aten.tanh_backward(3 * x**2, 0 * x)\n",
        # the same formula in torch's Python decompositions: plain multiplies and sums, no backward kernel
        "a Python gradient formula": (
            "def grad_cube(x):\n    from torch._decomp import decompositions as d\n"
            "    return d.tanh_backward(3 * x**2, 0 * x)\n"
        ),
    }
    for what, source in routes.items():
        r = ex.check(_from_source(source, "grad_cube"), quiet=True)
        assert r.status == FAILED and "write it yourself: your function may not call `torch." in r.message, (what, r)
    assert ex.check(lambda x: 3 * x**2, quiet=True).status == PASSED
    x = torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # autograd works again afterwards
    assert torch.equal(x.grad, torch.full((2,), 2.0))


def test_a_fused_kernel_is_refused_by_whatever_name_reached_it():
    ex = _attention_exercise()
    for source, called in (
        (
            "def attend(q, k, v):\n    return torch.ops.aten.scaled_dot_product_attention.default(q, k, v)\n",
            "torch.ops.aten.scaled_dot_product_attention",
        ),
        (
            "def attend(q, k, v):\n    o = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(\n"
            "        q[None, None], k[None, None], v[None, None])\n    return o[0][0, 0]\n",
            "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu",
        ),
    ):
        r = ex.check(_from_source(source, "attend"), quiet=True)
        assert r.status == FAILED and f"may not call `{called}" in r.message, (source, r)


def test_a_method_taken_from_a_course_lib_class_is_refused():
    ex = _balanced_exercise()
    from course_lib import rnn

    class Borrowing(torch.nn.Module):  # any method, not only __init__ and forward, taken before the check runs
        input_projection = rnn.LSTMCell.input_projection

    assert "course_lib" in borrowed_course_code(Borrowing, ex)
    r = ex.check(Borrowing, quiet=True)
    assert r.status == FAILED and "course_lib.rnn_cells.LSTMCell.input_projection" in r.message, r


def borrowed_course_code(fn, ex):
    from course_lib.checks.borrowed import course_code_in

    return course_code_in(fn, ex.rules)


def test_a_handed_in_course_lib_object_and_an_allowed_helper_may_be_called_but_nothing_else():
    from course_lib import parentheses

    def draw(seed):
        return [[[0, 3, 1, 2]], [[0, 1]]]

    def body(cases, records):
        for (seq,), r in zip(cases, records):
            if r["returned"] != [parentheses.is_balanced(seq, 4), 2]:
                raise Mistake("wrong")

    ex = Exercise(
        "9.6",
        "handed in",
        "f",
        ("seq",),
        draw,
        body,
        materialise=lambda args: [args[0], parentheses.is_balanced],  # the check hands the student a function
        observe=lambda args, live: args,
        forbidden=("torch.autograd.grad",),
        allowed=("course_lib.corpora.Vocab",),
    )
    ok = _from_source(
        "def f(seq, balanced):\n    return [balanced(seq, 4), len(Vocab([['a', 'b']])) - 1]\n",
        "f",
        {"Vocab": __import__("course_lib.corpora", fromlist=["Vocab"]).Vocab},
    )
    assert ex.check(ok, quiet=True).status == PASSED
    other = _from_source("def f(seq, balanced):\n    return [balanced(seq, 4), len(symbols(4))]\n", "f")
    other.__globals__["symbols"] = parentheses.transposition_pairs
    r = ex.check(other, quiet=True)
    assert r.status == FAILED and "may not call `course_lib.parentheses_generators.transposition_pairs`" in r.message


def test_switching_the_observer_off_is_refused():
    ex = _grad_exercise()
    for source, called in (
        ("def grad_cube(x):\n    __import__('sys').setprofile(None)\n    return 3 * x**2\n", "sys.setprofile"),
        (
            "def grad_cube(x):\n    __import__('threading').setprofile(None)\n    return 3 * x**2\n",
            "threading.setprofile",
        ),
        (
            "def grad_cube(x):\n    from torch.utils._python_dispatch import _pop_mode\n    _pop_mode()\n    return 3 * x**2\n",
            "torch._C._pop_torch_dispatch_stack",
        ),
    ):
        r = ex.check(_from_source(source, "grad_cube"), quiet=True)
        assert r.status == FAILED and f"may not call `{called}" in r.message, (source, r)
    assert ex.check(lambda x: 3 * x**2, quiet=True).status == PASSED  # and everything is back in place


def test_replacing_the_checks_code_or_editing_an_exercise_is_refused():
    from course_lib.checks import protocol

    ex = _grad_exercise()
    original = protocol.call

    def patching(x):
        protocol.call = lambda *a, **k: {"returned": 3 * a[1][0] ** 2, "type": "Tensor", "inputs": a[1]}
        return 3 * x**2

    try:
        r = ex.check(patching, quiet=True)
        assert r.status == FAILED and "may not call `course_lib.checks.protocol.call`" in r.message, r
    finally:
        protocol.call = original
    original_run = Exercise.run
    try:  # replaced before the check runs (in an earlier cell of the notebook)
        Exercise.run = lambda self, fn, cases: [
            {"returned": 3 * c[0] ** 2, "type": "Tensor", "inputs": c} for c in cases
        ]
        r = ex.check(lambda x: torch.autograd.grad((x**3).sum(), x)[0], quiet=True)
        assert r.status == FAILED and "course_lib.checks.protocol.Exercise.run" in r.message, r
    finally:
        Exercise.run = original_run
    forbidden = ex.forbidden
    try:
        object.__setattr__(ex, "forbidden", ())
        r = ex.check(lambda x: 3 * x**2, quiet=True)
        assert r.status == FAILED and "course_lib.checks.protocol.Exercise.forbidden" in r.message, r
    finally:
        object.__setattr__(ex, "forbidden", forbidden)
    assert ex.check(lambda x: 3 * x**2, quiet=True).status == PASSED


def test_replacing_the_refusals_stand_in_or_a_modules_class_is_refused():
    import types

    from course_lib.checks import borrowed

    ex = _grad_exercise()
    original = borrowed._stand_in_code
    try:  # an earlier cell: the "stand-in" is the forbidden function's own code, so calling it would work
        borrowed._stand_in_code = lambda name, code: code
        r = ex.check(lambda x: torch.autograd.grad((x**3).sum(), x)[0], quiet=True)
        assert r.status == FAILED and "course_lib.checks.borrowed._stand_in_code" in r.message, r
    finally:
        borrowed._stand_in_code = original

    # the module's own entry untouched, the name served by a property of a class swapped in under it
    class Sly(types.ModuleType):
        refusing = property(lambda self: contextlib.nullcontext)

    try:
        borrowed.__class__ = Sly
        assert borrowed.tampered() == "course_lib.checks.borrowed.refusing"
    finally:
        borrowed.__class__ = types.ModuleType
    assert borrowed.tampered() == ""
    assert ex.check(lambda x: 3 * x**2, quiet=True).status == PASSED


def test_the_short_reading_of_the_guards_names_every_way_of_editing_an_exercises_declaration():
    """tampered() runs after every call a check makes, so it reads each guard by a dict look-up; every edit that
    inspect.getattr_static sees must still be named (the long way is taken whenever the short one is unsure)."""
    import types

    from course_lib.checks import borrowed

    ex = _grad_exercise()
    name = "course_lib.checks.protocol.Exercise.forbidden"
    assert borrowed.tampered() == ""
    guards = borrowed._GUARDED
    assert all(borrowed._as_guarded(o, a, original, layout) for o, a, original, _, layout in guards), "long way"
    forbidden = ex.forbidden

    class Sub(Exercise):
        forbidden = property(lambda self: ())

    class Shadow(Exercise):
        pass

    Shadow.__dict__  # noqa: B018 - a plain subclass: its own __dict__ descriptor is not Exercise's

    edits = {  # how an earlier cell could edit the declaration: (do, undo)
        "the instance's entry": (
            lambda: ex.__dict__.__setitem__("forbidden", ()),
            lambda: ex.__dict__.__setitem__("forbidden", forbidden),
        ),
        "object.__setattr__": (
            lambda: object.__setattr__(ex, "forbidden", ()),
            lambda: object.__setattr__(ex, "forbidden", forbidden),
        ),
        "a property on the class": (
            lambda: setattr(Exercise, "forbidden", property(lambda self: ())),
            lambda: setattr(Exercise, "forbidden", ()),
        ),
        "the instance's class swapped": (
            lambda: object.__setattr__(ex, "__class__", Sub),
            lambda: object.__setattr__(ex, "__class__", Exercise),
        ),
        "the entry deleted": (
            lambda: ex.__dict__.pop("forbidden"),
            lambda: ex.__dict__.__setitem__("forbidden", forbidden),
        ),
    }
    for what, (do, undo) in edits.items():
        try:
            do()
            long_way = inspect.getattr_static(ex, "forbidden") is not forbidden
            assert long_way, what  # the oracle sees it
            assert borrowed.tampered() == name, what
        finally:
            undo()
        assert borrowed.tampered() == "", what
    # an exercise of a subclass (lesson 07's): a property put on the subclass outranks the instance's entry
    from course_lib.checks import lesson07  # noqa: F401 - its exercises are guarded at import

    sub = next(o for o, a, *_ in guards if isinstance(o, Exercise) and type(o) is not Exercise)
    try:
        type(sub).forbidden = property(lambda self: ())
        assert borrowed.tampered() == name
    finally:
        del type(sub).forbidden
    assert borrowed.tampered() == ""
    # a guarded class's method and a guarded module's function, replaced and put back
    for owner, attr, dotted in [(Exercise, "judge", "Exercise.judge"), (borrowed, "resolve", "borrowed.resolve")]:
        original = owner.__dict__[attr]
        try:
            setattr(owner, attr, lambda *a, **k: None)
            assert borrowed.tampered().endswith(dotted)
        finally:
            setattr(owner, attr, original)
    assert borrowed.tampered() == ""
    assert isinstance(borrowed, types.ModuleType)


def test_every_record_carries_the_observation_as_plain_data_and_the_judge_reads_it():
    ex = _grad_exercise()
    cases = ex.draw(3)
    records = ex.run(lambda x: 3 * x**2, checks.from_plain(checks.to_plain(cases)))
    assert [r["observed"] for r in records] == [{"refused": [], "intact": True, "tampered": ""}] * len(cases)
    records = checks.from_plain(json.loads(json.dumps(checks.to_plain(records))))
    assert ex.judge(cases, records)[0] == PASSED
    # an observation that saw a refused call fails the answer even if the record's own verdict was rewritten
    forged = [{**r, "observed": {"refused": ["torch.func.grad"], "intact": True}} for r in records]
    status, hint = ex.judge(cases, forged)
    assert status == FAILED and HINT.format("torch.func.grad") in hint
    off = [{**r, "observed": {"refused": [], "intact": False}} for r in records]
    assert ex.judge(cases, off)[0] == FAILED


# ---------------------------------------------------------------- every build exercise refuses course_lib

EXPERIMENTS = {"1.3", "3.5", "4.5", "5.3"}  # their texts hand in or name course_lib helpers (P.accuracies, ...)


def _every_exercise():
    return [ex for lesson in ("01", "02", "03", "04", "05", "06", "07") for ex in checks.exercises(lesson).values()]


def test_every_build_exercise_declares_what_it_refuses():
    """A build exercise that declares nothing would let course_lib's own answer through (7.1 did)."""
    undeclared = {ex.id for ex in _every_exercise() if not ex.forbidden}
    assert undeclared == EXPERIMENTS


@pytest.mark.parametrize("ex", [e for e in _every_exercise() if e.forbidden], ids=lambda e: e.id)
def test_any_course_lib_call_is_refused_whatever_the_name(ex):
    """A call into course_lib reached by getattr on names built at run time (no name list can hold it)."""
    source = (
        "import importlib\n"
        "def answer(*args):\n"
        "    getattr(importlib.import_module('course_lib.' + 'corpora'), 'split' + '_of')(0)\n"
        "    raise ValueError('not reached in a refusal')\n"
    )
    cases = ex.draw(1)[:1]  # one case shows it (3.2 draws 754)
    status, hint = ex.judge(cases, ex.run(_from_source(source, "answer"), cases))
    assert status == FAILED and HINT.format("course_lib.corpora.split_of") in hint, hint


def test_course_lib_s_own_positional_encoding_is_refused_through_getattr():
    from course_lib.checks import lesson07

    source = (
        "import importlib\n"
        "def positional_encoding(T, d):\n"
        "    m = importlib.import_module('course_lib.transformer')\n"
        "    return getattr(m, 'sinusoidal_' + 'positions')(T, d, dtype=torch.float64)\n"
    )
    for seed in range(3):
        r = lesson07.check_positional_encoding(_from_source(source, "positional_encoding"), quiet=True, seed=seed)
        assert r.status == FAILED and "write it yourself" in r.message and "sinusoidal_positions" in r.message, r


def test_a_stand_in_is_course_lib_code_so_an_observer_by_file_names_the_forbidden_call():
    """The grader tells the student's frames from course_lib's by file: a stand-in compiled under another name
    made it report the stand-in's call of `_refused` instead of the forbidden name."""
    from course_lib.checks import borrowed

    code = borrowed._stand_in_code("torch.autograd.grad", (lambda: None).__code__)
    assert code.co_filename == borrowed._HERE


def test_calling_the_checks_module_where_it_is_not_defined_reads_as_a_refusal():
    """In the grader's process there is no `checks`: the NameError of an answer that calls it is a refusal."""
    r = check_double(_from_source("def double(x):\n    return checks.double(x)\n", "double"), quiet=True)
    assert r.status == FAILED and r.message.count("\n") == 0 and "may not call the course's checks" in r.message, r


def test_torchs_masked_softmax_is_refused_where_the_masking_is_the_exercise():
    """torch.masked.softmax fills and normalises in one call (a hostile class passed 6.3 with it)."""
    import torch

    ex = checks.exercises("06")["6.3"]
    source = (
        "def masked_attention(scores, values, lengths):\n"
        "    T = scores.shape[-1]\n"
        "    keep = (torch.arange(T)[None, None, :] < lengths[:, None, None]) & torch.ones(T, T, dtype=torch.bool).tril()\n"
        "    weights = torch.masked.softmax(scores, dim=-1, mask=keep).nan_to_num(0.0)\n"
        "    return weights @ values, weights\n"
    )
    r = ex.check(_from_source(source, "masked_attention", {"torch": torch}), quiet=True)
    assert r.status == FAILED and "torch.masked" in r.message, r


NGRAMS_UNDER_OTHER_NAMES = {  # 1.1 forbids nltk.util.ngrams; nltk.util makes the same n-grams under other names
    "everygrams": "Counter(everygrams(padded, min_len=n, max_len=n))",
    "skipgrams": "Counter(skipgrams(padded, n, 0))",
    "pad_sequence": "Counter(tuple(p[i : i + n]) for p in [list(pad_sequence(padded, 1))] for i in range(len(p) - n + 1))",
}


@pytest.mark.parametrize("route", sorted(NGRAMS_UNDER_OTHER_NAMES))
def test_nltks_other_names_for_a_forbidden_function_are_refused(route):
    """nltk.util's everygrams passed 1.1 while only its ngrams was refused by name: nltk is refused whole, by where
    it lives, in every build exercise."""
    from nltk.util import everygrams, pad_sequence, skipgrams

    from course_lib.checks import borrowed

    source = (
        "def count_ngrams(sentence, n):\n"
        "    padded = ['<s>'] * (n - 1) + list(sentence) + ['</s>']\n"
        f"    return {NGRAMS_UNDER_OTHER_NAMES[route]}\n"
    )
    names = {"Counter": Counter, "everygrams": everygrams, "skipgrams": skipgrams, "pad_sequence": pad_sequence}
    r = checks.exercises("01")["1.1"].check(_from_source(source, "count_ngrams", names), quiet=True)
    assert r.status == FAILED and "`nltk.util." in r.message, r  # skipgrams calls ngrams: that name is said first
    assert borrowed._classify(everygrams.__code__) == "library"  # by where it lives: nltk is refused whole


# 1.2 forbids nltk.lm's models; their base class holds fit, score, entropy and perplexity
ADD_K_ON_NLTKS_PERPLEXITY = """
from nltk.lm.api import LanguageModel


class AddK(LanguageModel):
    def __init__(self, k, *a, **kw):
        super().__init__(*a, **kw)
        self.k = k

    def unmasked_score(self, word, context=None):
        counts = self.counts[context] if context else self.counts.unigrams
        return (counts[word] + self.k) / (counts.N() + self.k * (len(self.vocab) - 1))


def add_k_perplexity(train, test, n, k):
    vocab = {w for s in train for w in s} | {"</s>"}

    def grams(s):
        p = ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in s] + ["</s>"]
        return [tuple(p[i - n + 1 : i + 1]) for i in range(n - 1, len(p))]

    lm = AddK(k, order=n)
    lm.fit([grams(s) for s in train], sorted(vocab | {"<s>"}))
    return lm.perplexity([g for s in test for g in grams(s)])
"""


def test_a_subclass_of_nltks_language_model_is_refused():
    """A subclass of nltk.lm.api.LanguageModel with the student's own add-k score passed 1.2 on nltk's perplexity
    (only nltk.lm's models were named): nltk is refused whole. torch's bases (nn.Module) stay the framework every
    exercise builds on."""
    import nltk.lm.api

    from course_lib.checks import borrowed

    assert borrowed._classify(nltk.lm.api.LanguageModel.perplexity.__code__) == "library"
    assert torch.nn.Module.__call__.__code__ not in borrowed.class_code("torch.nn.LSTM")
    r = checks.exercises("01")["1.2"].check(_from_source(ADD_K_ON_NLTKS_PERPLEXITY, "add_k_perplexity"), quiet=True)
    assert r.status == FAILED and "`nltk.lm." in r.message, r


NLTK_ELSEWHERE_11 = """
from collections import Counter

from nltk.probability import FreqDist


def count_ngrams(sentence, n):
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(dict(FreqDist(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))))
"""


def test_nltk_is_refused_whole_in_every_build_exercise():
    """nltk holds every step of lesson 01 ready-made (FreqDist, its ProbDists, nltk.lm's counter, vocabulary,
    models and perplexity): refused by where it lives, as course_lib is, not by a list of its names. Here its
    FreqDist, named by no exercise, making 1.1's counts."""
    from course_lib.checks import borrowed

    r = checks.exercises("01")["1.1"].check(_from_source(NLTK_ELSEWHERE_11, "count_ngrams"), quiet=True)
    assert r.status == FAILED and "`nltk.probability." in r.message, r
    assert borrowed.Rules.of(()).course is False  # an exercise that forbids nothing: nltk is the student's to use


def test_numpys_masked_arrays_are_refused_where_a_masked_softmax_is_the_exercise():
    """numpy.ma fills and normalises as torch.masked does (a hostile class passed 6.1 and 6.3 with it)."""
    source = (
        "import numpy as np\n\n\n"
        "def alpha(scores, i, j):\n"
        "    n = scores.shape[0]\n"
        "    e = np.ma.masked_array(scores.detach().double().numpy(), mask=np.triu(np.ones((n, n), bool), 1))\n"
        "    w = np.ma.exp(e - e.max(axis=-1, keepdims=True))\n"
        "    return float((w / w.sum(axis=-1, keepdims=True)).filled(0.0)[i - 1, j - 1])\n"
    )
    r = checks.exercises("06")["6.1"].check(_from_source(source, "alpha"), quiet=True)
    assert r.status == FAILED and "write it yourself" in r.message, r


# masked-array containers outside torch.masked (hostile class 33p): the layout or the mask does the masking
MASKED_CONTAINERS = {
    "6.3 nested": (
        "masked_attention",
        """
def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    rows = [scores[b, i, : min(i + 1, int(lengths[b]))] for b in range(B) for i in range(T)]
    ragged = torch.nested.nested_tensor(rows)
    weights = torch.nested.to_padded_tensor(ragged.softmax(-1), 0.0, output_size=(B * T, T)).reshape(B, T, T)
    return weights @ values, weights
""",
    ),
    "6.1 pandas": (
        "alpha",
        """
import numpy as np
import pandas as pd


def alpha(scores, i, j):
    row = scores[i - 1].detach().cpu().double().numpy()
    arr = pd.arrays.FloatingArray(row.copy(), np.arange(row.shape[0]) > (i - 1))
    e = np.exp(arr - arr.max())
    return float((e / e.sum()).to_numpy(dtype="float64", na_value=0.0)[j - 1])
""",
    ),
}


@pytest.mark.parametrize("route", sorted(MASKED_CONTAINERS))
def test_masked_containers_are_refused_where_a_masked_softmax_is_the_exercise(route):
    """torch's nested tensors (a ragged row holds only the keys a query may see) and pandas' masked arrays fill and
    normalise as torch.masked and numpy.ma do: refused by place and, for nested tensors, by their aten ops."""
    if "pandas" in route:
        pytest.importorskip("pandas")
    name, source = MASKED_CONTAINERS[route]
    r = checks.exercises("06")[route.split()[0]].check(_from_source(source, name), quiet=True)
    assert r.status == FAILED and "write it yourself" in r.message, r


ATTENTION_WRITTEN_IN_TORCH = {
    # ONNX's Attention op, eager: softmax(QK^T)V written out in Python (softmax_precision takes it off the fused path)
    "onnx": "    out = torch.onnx.ops.attention(q[:, None], k[:, None], v[:, None], attn_mask=mask, softmax_precision=1)[0]\n"
    "    return out[:, 0]\n",
    # flex attention's own math version (its module is loaded by `import torch`)
    "flex math": "    from torch._higher_order_ops.flex_attention import math_attention\n"
    "    def keep(score, b, h, qi, ki):\n"
    "        return torch.where(qi >= ki, score, -float('inf'))\n"
    "    blocks = (T, T) + (None,) * 11 + (128, 128, lambda b, h, qi, ki: qi >= 0)\n"
    "    return math_attention(q[:, None], k[:, None], v[:, None], keep, blocks, k.shape[-1] ** -0.5, {})[0][:, 0]\n",
}


@pytest.mark.parametrize("route", sorted(ATTENTION_WRITTEN_IN_TORCH))
def test_attention_written_in_torchs_own_python_is_refused_where_attention_is_the_exercise(route):
    """torch keeps attention written out in Python outside torch.nn.attention (ONNX's op, flex attention's math
    version, nested tensors'): refused by where it lives, as torch.nn.attention is, not by a list of names. A
    hostile class's ONNX route was refused only because its import happened to read a frame: here it is imported
    before the check, so only the folder rule can refuse it."""
    import sys

    import torch
    import torch.onnx.ops  # noqa: F401 - loaded before the check: its import is not what is refused

    from course_lib.checks import borrowed

    flex = sys.modules["torch._higher_order_ops.flex_attention"]
    for fn in (torch.onnx.ops._impl._get_scale_factor, flex.math_attention):
        assert borrowed._classify(fn.__code__) == "attention", fn
    source = (
        "class Head(nn.Module):\n"
        "    def __init__(self, d_model, head_size, block_size):\n"
        "        super().__init__()\n"
        "        self.key = nn.Linear(d_model, head_size, bias=False)\n"
        "        self.query = nn.Linear(d_model, head_size, bias=False)\n"
        "        self.value = nn.Linear(d_model, head_size, bias=False)\n\n"
        "    def forward(self, x):\n"
        "        B, T, C = x.shape\n"
        "        q, k, v = self.query(x), self.key(x), self.value(x)\n"
        "        mask = torch.ones(T, T, dtype=torch.bool).tril()\n"
        + ATTENTION_WRITTEN_IN_TORCH[route].replace("\n    ", "\n        ").replace("    ", "        ", 1)
    )
    r = checks.exercises("07")["7.3"].check(_from_source(source, "Head", {"torch": torch, "nn": torch.nn}), quiet=True)
    assert r.status == FAILED and "may not call `torch." in r.message, r


# torch's own mask builders (issue 33, the eighth class: nn.Transformer.generate_square_subsequent_mask was in no
# list while the exercise said torch's masking helpers are out of reach). Every function of torch.nn's functional,
# transformer and activation modules whose name says "mask" is refused by name in the masking exercises or named
# here with why it builds none; torch.nn.attention (CausalBias, causal_lower_right, flex_attention's create_mask)
# is refused as a folder.
MAKES_NO_MASK = {
    "_detect_is_causal_mask": "reads a mask the caller made and says whether it is causal",
    "_canonical_mask": "converts a mask the caller made (bool to float)",
    "_check_key_padding_mask": "checks a mask's dtype",
    "_mha_shape_check": "checks shapes",
}


def test_every_mask_builder_of_torch_nn_is_refused_in_the_masking_exercises():
    import inspect

    import torch.nn.modules.activation
    import torch.nn.modules.transformer

    from course_lib.checks import borrowed, lesson06

    refused = {id(borrowed.resolve(name)[2]) for name in lesson06.FORBIDDEN_MASKING}
    builders = []
    for module in (torch.nn.functional, torch.nn.modules.transformer, torch.nn.modules.activation):
        for name, value in list(vars(module).items()):
            members = [(name, value)]
            if inspect.isclass(value) and value.__module__ == module.__name__:
                members += [(f"{name}.{m}", getattr(value, m)) for m in vars(value)]
            for dotted, fn in members:
                if "mask" in dotted.split(".")[-1].lower() and callable(fn) and not inspect.isclass(fn):
                    builders.append((f"{module.__name__}.{dotted}", fn))
    assert len(builders) >= 4, builders  # the helpers this test was written against are still there
    for dotted, fn in builders:
        short = dotted.split(".")[-1]
        assert id(fn) in refused or short in MAKES_NO_MASK, f"{dotted}: refuse it in lesson06.FORBIDDEN_MASKING"


@pytest.mark.parametrize(
    "mask",
    [
        "torch.nn.Transformer.generate_square_subsequent_mask(T) == 0",
        "torch.nn.attention.bias.causal_lower_right(T, T)._materialize()",
    ],
)
def test_torchs_causal_mask_helpers_are_refused_in_6_3(mask):
    source = f"""
def masked_attention(scores, values, lengths):
    import torch
    import torch.nn.attention.bias

    B, T, _ = scores.shape
    causal = {mask}
    allowed = causal[None] & (torch.arange(T)[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0), dim=-1)
    weights = weights.masked_fill(empty, 0.0)
    return weights @ values, weights
"""
    ex = checks.exercises("06")["6.3"]
    r = ex.check(_from_source(source, "masked_attention"), quiet=True)
    assert r.status == FAILED and "may not call" in r.message, r
    honest = source.replace(mask, "torch.ones(T, T, dtype=torch.bool).tril()")
    assert ex.check(_from_source(honest, "masked_attention"), quiet=True).status == PASSED


# torch's Python versions of an op outside the decompositions (issue 33): torch.ao's float "quantizable" LSTMCell is
# an LSTM step written with plain Linear layers; an answer to 4.1 that runs it passes the numbers, and is refused
def test_torchs_python_lstm_step_in_torch_ao_is_refused_in_4_1():
    source = """
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        from torch.ao.nn.quantizable import LSTMCell as Q  # torch's float LSTM step, in Python

        cell = Q(self.input_size, self.hidden_size).to(x.dtype)
        cell.igates.weight, cell.igates.bias = self.W_xh, self.b_xh
        cell.hgates.weight, cell.hgates.bias = self.W_hh, self.b_hh
        if state is None:
            state = (x.new_zeros(x.shape[0], self.hidden_size),) * 2
        return cell(x, state)
"""
    r = checks.exercises("04")["4.1"].check(_from_source(source, "LSTMCell"), quiet=True)
    assert r.status == FAILED and "may not call `torch.ao." in r.message, r


# ---------------------------------------------------------------- a forbidden class's functional forms (issue 33)


def _forbidden_library_classes():
    """(exercise, forbidden class) for every class outside course_lib that an exercise of any lesson forbids."""
    import inspect

    from course_lib.checks.borrowed import resolve

    found = []
    for lesson in ("01", "02", "03", "04", "05", "06", "07"):
        for exercise in checks.exercises(lesson).values():
            for name in exercise.forbidden:
                if not name.startswith("course_lib.") and inspect.isclass(resolve(name)[2]):
                    found.append((exercise, resolve(name)[2]))
    return found


def test_every_forbidden_class_has_its_module_s_functions_and_its_own_methods_refused():
    """torch.optim.SGD forbidden: torch/optim/sgd.py's sgd, _single_tensor_sgd... (what SGD calls to do its work,
    callable without it) are refused too, by the observer both the checks and the grader use, as are the methods
    the class itself defines. Oracle: inspect.getmembers of the class's defining module (the functions written in
    its file, a decorated one by the function it wraps) and of the class's own namespace."""
    import inspect
    import sys

    from course_lib.checks.borrowed import Observation, _Watcher

    pairs = _forbidden_library_classes()
    names = {f"{c.__module__}.{c.__qualname__}" for _, c in pairs}
    assert {
        "torch.optim.sgd.SGD",
        "torch.nn.modules.rnn.LSTM",
        "torch.nn.modules.activation.MultiheadAttention",
    } <= names
    for exercise, cls in pairs:
        refused = _Watcher(exercise.rules, Observation(), set()).kernel_codes
        module = sys.modules[cls.__module__]
        written_there = [
            inspect.unwrap(f).__code__
            for _, f in inspect.getmembers(module, inspect.isfunction)
            if inspect.unwrap(f).__code__.co_filename == module.__file__
        ]
        own = [
            inspect.unwrap(f).__code__
            for name, f in inspect.getmembers(cls, inspect.isfunction)
            if name in vars(cls) and inspect.unwrap(f).__code__.co_filename == module.__file__
        ]
        assert written_there or own, cls
        for code in written_there + own:
            assert code in refused, (exercise.id, cls, code.co_qualname)


# 2.3 forbids torch.optim.SGD; ASGD with lambd=0 and alpha=0 takes exactly SGD's step (its eta is lr), so another
# optimizer of torch.optim is the same update borrowed under another name (the tenth hostile class's open end)
BY_ASGD = """
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    params = {k: v.clone() for k, v in params.items()}
    keys = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        stepped = [params[k].clone() for k in keys]
        for p, k in zip(stepped, keys):
            p.grad = grads[k].clone()
        # ASGD with no decay and no averaging in its step size: p <- p - lr * grad, SGD's update
        torch.optim.ASGD(stepped, lr=lr, lambd=0.0, alpha=0.0, foreach=False).step()
        params = {k: p.detach() for k, p in zip(keys, stepped)}
        losses.append(float(loss))
    return losses, params
"""


def test_every_optimizer_of_torch_optim_is_refused_where_one_is_forbidden():
    import torch
    from mutants.mutate import load

    from course_lib.checks import lesson02
    from course_lib.checks.borrowed import Observation, _Watcher

    status = lesson02.check_train_sgd(load([BY_ASGD])["train_sgd"], quiet=True)
    assert status.status == FAILED and "torch.optim.asgd.ASGD" in status.message, status
    # oracle: every optimizer class torch.optim exports, whatever the list in the checks says
    optimizers = [c for c in vars(torch.optim).values() if isinstance(c, type) and issubclass(c, torch.optim.Optimizer)]
    refused = _Watcher(lesson02.check_train_sgd.rules, Observation(), set()).kernel_codes
    for cls in optimizers:
        if cls is not torch.optim.Optimizer:
            assert inspect.unwrap(cls.step).__code__ in refused, cls
    assert torch.optim.Optimizer.zero_grad.__code__ not in refused  # the base class is no optimizer
    # where no optimizer is forbidden, none is refused (lesson 03's 3.4 trains with one the check hands in)
    assert not {c.__module__ for c in optimizers} & {
        m for lesson in ("03", "04", "07") for e in checks.exercises(lesson).values() for m in e.rules.library
    }


def test_what_an_honest_answer_uses_beside_a_forbidden_class_stays_allowed():
    """The class's bases, the module's other classes and torch's functions are not the forbidden class's: nn.Module's
    methods where only nn.LSTM is forbidden, nn.Tanh and nn.Linear beside nn.MultiheadAttention, optimizer.py's
    Optimizer where SGD is, and no builtin (torch.tanh, matmul) is a code object at all."""
    import importlib

    import torch
    from torch import nn

    from course_lib.checks.borrowed import Observation, _Watcher

    def refused(lesson, exercise):
        return _Watcher(checks.exercises(lesson)[exercise].rules, Observation(), set()).kernel_codes

    sgd = refused("02", "2.3")
    assert importlib.import_module("torch.optim.sgd")._single_tensor_sgd.__code__ in sgd
    assert not {torch.optim.Optimizer.zero_grad.__code__, nn.Module.__call__.__code__} & sgd
    pairs = dict(_forbidden_library_classes())
    lesson_of = {e: e.id.split(".")[0].zfill(2) for e in pairs}
    for exercise in pairs:
        codes = refused(lesson_of[exercise], exercise.id)
        allowed = [nn.Tanh.forward, nn.Linear.forward, nn.Parameter.__new__, nn.Embedding.forward]
        if "torch.nn.Module" not in exercise.forbidden:
            allowed += [nn.Module.__call__, nn.Module.__init__, nn.Module.parameters, nn.Module.__setattr__]
        for fn in allowed:
            assert fn.__code__ not in codes, (exercise.id, fn.__qualname__)


def test_the_qualified_names_read_from_a_modules_functions_match_pythons_own():
    # Python 3.10's code objects have no co_qualname: the checks read it from the functions of the code's module
    # (the names in their hints, and which code is a module's lazy __getattr__); 3.11's co_qualname is the oracle
    import importlib
    import sys

    import course_lib.backprop
    import course_lib.seq2seq
    from course_lib.checks import borrowed

    if sys.version_info < (3, 11):
        pytest.skip("the oracle, co_qualname, is Python 3.11's")
    asgd = importlib.import_module("torch.optim.asgd")  # torch.optim deletes the attribute, not the module
    # SGD.step is wrapped by a decorator from another file, and again by the optimizer's profile hook once an SGD is
    # made in the process (as other tests do before this one)
    sgd = importlib.import_module("torch.optim.sgd")
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    for module in (course_lib.seq2seq, course_lib.backprop, asgd, sgd, borrowed):
        borrowed._QUALNAMES.clear()
        found = borrowed._qualnames_in(module.__file__)
        own = [c for c in found if c.co_filename == module.__file__]
        assert len(own) > 5, module.__name__
        for code in own:
            assert found[code] == code.co_qualname, (module.__name__, code.co_name)
    assert "ASGD.__init__" in borrowed._qualnames_in(asgd.__file__).values()
    assert borrowed._qualnames_in(sgd.__file__)[inspect.unwrap(sgd.SGD.step).__code__] == "SGD.step"


def test_every_recurrent_kernel_torch_holds_is_refused_where_its_layer_is():
    # hostile class 33k: torch.quantized_gru_cell was no barred GRU kernel (only its int8 error failed it in 4.2);
    # every name torch holds for a recurrent step or layer is in its layer's list, read from torch, not a list
    import torch

    from course_lib.checks import borrowed

    helpers = {"_cudnn_rnn_flatten_weight", "_use_cudnn_rnn_flatten_weight"}  # a weights' layout, no step
    names = {n for m in (torch, torch._C._VariableFunctions) for n in dir(m)} - helpers
    kinds = {"gru": borrowed._GRU, "lstm": borrowed._LSTM, "rnn": borrowed._RNN}
    for name in names:
        for word, kernels in kinds.items():
            if word in name.lower():
                assert name in kernels, (name, word)
    assert {"quantized_gru", "quantized_lstm_cell", "quantized_rnn_tanh_cell"} <= {n for n in names if "quant" in n}
    rules = checks.exercises("04")["4.2"].rules
    assert "quantized_gru_cell" in rules.kernels, sorted(rules.kernels)
    # hostile class 33m: quantized::quantized_gru_cell_dynamic, an op no Python name of torch shows, passed 4.2;
    # every op the dispatcher holds in any namespace whose name says it is a recurrent step is refused
    ops = {op.split("::", 1)[1].split(".")[0] for op in torch._C._dispatch_get_all_op_names()}
    steps = {op for op in ops if any(w in op.lower() for w in kinds) and not any(p in op for p in borrowed._NO_STEP)}
    assert {"quantized_gru_cell_dynamic", "quantized_lstm_cell_dynamic"} <= steps
    for lesson, exercise in (("04", "4.1"), ("04", "4.2"), ("03", "3.3")):
        missing = steps - checks.exercises(lesson)[exercise].rules.kernels
        assert not missing, (exercise, sorted(missing))


def test_a_returned_subclass_is_refused_before_a_describe_reads_it():
    """Hostile class 33m: 5.2's describe unpacked a returned typing.NamedTuple (isinstance tuple), so the subclass's
    own methods ran in the check's frames; the rule of plain data (exact types, a hint naming the subclass) holds
    for checks that describe what is returned too, inside plain tuples and lists as well."""
    from typing import NamedTuple

    from course_lib.checks import protocol

    described = []

    class Pair(NamedTuple):
        logits: torch.Tensor
        weights: torch.Tensor

    class Odd(torch.Tensor):
        pass

    def describe(returned, live):
        described.append(type(returned))
        return {"n": len(returned)}

    for returned, kind in (
        (Pair(torch.ones(2), torch.ones(2)), "tuple"),
        ((torch.ones(2), torch.ones(2).as_subclass(Odd)), "tensor"),
        ([torch.ones(1), (1, Pair(torch.ones(1), torch.ones(1)))], "tuple"),
    ):
        record = protocol.call(lambda: returned, [], describe=describe)
        assert f"(a subclass of {kind})" in record.get("not_plain", ""), record
    assert described == []
    # plain data, NumPy's scalars and torch's own Size and Parameter still reach the describe
    for returned in ((torch.ones(2), np.float64(1.5)), [torch.Size([2]), torch.nn.Parameter(torch.ones(1)), True]):
        record = protocol.call(lambda: returned, [], describe=describe)
        assert "not_plain" not in record and record["returned"] == {"n": 2 if type(returned) is tuple else 3}
    assert described == [tuple, list]


def test_the_machinery_a_forbidden_class_is_built_on_in_its_module_is_refused_too():
    """4.3 forbids torch's recurrent layers: hostile class 33n counted their parameters by running the machinery
    they are built on (rnn.py's RNNBase, and RNNCellBase under nn.LSTMCell, same kernels) on a class of its own,
    never naming nn.LSTM or calling nn.Module's code. What else the module holds (activation.py's nn.Hardtanh
    beside nn.MultiheadAttention) stays allowed."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "outsider" / "issue33n"))
    try:
        import attacks_src
    finally:
        sys.path.pop(0)
    from course_lib.checks.borrowed import class_code, qualname
    from course_lib.checks.lesson04 import check_param_count

    for key, base in (("ex-4-3 rnnbase", "RNNBase"), ("ex-4-3 cellbase", "RNNCellBase")):
        result = check_param_count.check(_from_source(attacks_src.A[key], "param_count"), quiet=True)
        assert result.status == FAILED and f"torch.nn.modules.rnn.{base}.__init__" in result.message, (key, result)
    assert not [c for c in class_code("torch.nn.MultiheadAttention") if "Hardtanh" in qualname(c)]


def test_torchs_masked_tensors_and_reductions_are_refused_where_a_masked_softmax_is():
    """torch.masked's reductions do the filling a masked softmax is about (hostile class 33n: 6.1 by its masked
    logsumexp, 6.3 by its masked amax and sum, none of them on a list): refused wherever a masked softmax's kernel
    is, as a folder of torch's Python. Where none is (4.1 forbids the LSTM's kernels), they stay allowed."""
    from pathlib import Path

    from course_lib.checks import lesson06
    from course_lib.checks.borrowed import Rules, observing

    sys.path.insert(0, str(Path(__file__).parent / "outsider" / "issue33n"))
    try:
        import attacks_src
    finally:
        sys.path.pop(0)
    for key, exercise, name in (
        ("ex-6-3 masked amax sum", lesson06.check_masked_attention, "masked_attention"),
        ("ex-6-1 masked logsumexp", lesson06.check_alpha, "alpha"),
    ):
        result = exercise.check(_from_source(attacks_src.A[key], name), quiet=True)
        assert result.status == FAILED and "torch.masked." in result.message, (key, result)
    x, mask = torch.randn(3, 4), torch.rand(3, 4) > 0.3
    with observing(Rules.of(("torch.nn.LSTM",)), [x]) as seen:
        torch.masked.sum(x, -1, mask=mask)
    assert not seen.refused


# In a build exercise only Python's standard library, torch and numpy (and what prints, draws or shows progress) may
# be called: every other installed package is refused by where its code lives, whoever calls it (hostile classes
# found answers ready-made in nltk, pandas and sympy, none of them named by an exercise). is_balanced is 3.1's
# answer written by hand; each route adds one call into a package to it.
BALANCED_BY_HAND = """
def is_balanced(seq, n_symbols=10):
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    {extra}
    return not stack
"""
REFUSED_PACKAGE_CALLS = {
    "regex (Python)": ("regex", "regex.escape('(')"),
    "regex (C function)": ("regex", "regex._regex.get_code_size()"),
    "sympy": ("sympy", "sympy.Integer(len(seq))"),
    "networkx, called by torch": ("networkx", "torch.utils._pytree.tree_map(networkx.path_graph, [2])"),
}
ALLOWED_PACKAGE_CALLS = {
    "tqdm": "list(tqdm.tqdm(range(2), disable=True))",
    "matplotlib": "matplotlib.colors.to_hex((1.0, 0.0, 0.0))",
    "numpy": "numpy.asarray(seq).sum()",
}


def _package_namespace() -> dict:
    import matplotlib.colors
    import networkx
    import regex
    import regex._regex
    import sympy
    import tqdm

    return {"regex": regex, "sympy": sympy, "networkx": networkx, "tqdm": tqdm, "matplotlib": matplotlib, "numpy": np}


@pytest.mark.parametrize("route", sorted(REFUSED_PACKAGE_CALLS))
def test_a_package_outside_the_standard_library_torch_and_numpy_is_refused_in_a_build_exercise(route):
    package, call = REFUSED_PACKAGE_CALLS[route]
    fn = _from_source(BALANCED_BY_HAND.replace("{extra}", call), "is_balanced", _package_namespace())
    r = checks.exercises("03")["3.1"].check(fn, quiet=True)
    assert r.status == FAILED and f"called {package} (" in r.message and "torch and numpy" in r.message, r
    assert r.message.count("\n") == 0


@pytest.mark.parametrize("route", sorted(ALLOWED_PACKAGE_CALLS))
def test_printing_drawing_progress_and_numpy_are_allowed_in_a_build_exercise(route):
    fn = _from_source(
        BALANCED_BY_HAND.replace("{extra}", ALLOWED_PACKAGE_CALLS[route]), "is_balanced", _package_namespace()
    )
    r = checks.exercises("03")["3.1"].check(fn, quiet=True)
    assert r.passed, r


def test_a_c_method_of_a_refused_packages_type_is_refused():
    """A C type of a refused extension (regex's compiled pattern), its method called: no Python frame runs."""
    import regex

    pattern = regex.compile(r"\d")
    fn = _from_source(BALANCED_BY_HAND.replace("{extra}", "P.fullmatch('1')"), "is_balanced", {"P": pattern})
    r = checks.exercises("03")["3.1"].check(fn, quiet=True)
    assert r.status == FAILED and "regex" in r.message, r


def test_the_allowed_packages_are_installed_names_and_the_refused_ones_are_found_by_place():
    from course_lib.checks import borrowed

    assert {"torch", "numpy"} <= set(borrowed.ALLOWED_LIBRARIES)
    assert borrowed.is_refused_library("sympy") and borrowed.is_refused_library("nltk")
    assert not borrowed.is_refused_library("torch") and not borrowed.is_refused_library("json")  # the stdlib
    import sympy

    assert borrowed.refused_library(sympy.__file__) == "sympy" and borrowed.refused_library(json.__file__) == ""


def test_every_package_matplotlib_requires_is_allowed_with_it():
    """A plot calls what matplotlib's distribution requires (a contour contourpy, a mathtext title pyparsing, a PDF
    fontTools): an honest plot inside a build exercise's function failed on them (hostile class 33s). The oracle is
    the installed distribution's own metadata, read through the import names its packages give."""
    import importlib.metadata as metadata
    import re

    from course_lib.checks import borrowed

    names = metadata.packages_distributions()  # import name -> distributions
    for requirement in metadata.requires("matplotlib"):
        if "extra ==" in requirement:
            continue
        dist = re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        tops = [top for top, dists in names.items() if dist in {d.lower().replace("_", "-") for d in dists}]
        assert tops and any(top in borrowed.ALLOWED_LIBRARIES for top in tops), (requirement, tops)
        assert all(not borrowed.is_refused_library(top) for top in tops if not top.startswith("_")), tops


def test_a_packages_garbage_collector_callback_is_no_call_of_the_students():
    """A package's callback runs wherever the collector happens to run, inside the student's call too (ipykernel
    registers one in every kernel; here hypothesis's, a package build exercises refuse): not the student's call."""
    import gc

    from hypothesis.internal.conjecture.junkdrawer import gc_cumulative_time

    gc_cumulative_time()  # registers hypothesis's collector callback, once
    codes = [getattr(getattr(c, "__func__", c), "__code__", None) for c in gc.callbacks]
    assert any("hypothesis" in getattr(code, "co_filename", "") for code in codes), gc.callbacks
    fn = _from_source(BALANCED_BY_HAND.replace("{extra}", "gc.collect()"), "is_balanced", {"gc": gc})
    r = checks.exercises("03")["3.1"].check(fn, quiet=True)
    assert r.passed, r


def test_a_packages_code_reached_through_a_link_is_the_packages(tmp_path, monkeypatch):
    """A link to a package's folder, imported under another name: its code carries the link's file name."""
    import importlib
    import os

    import regex

    from course_lib.checks import borrowed

    os.symlink(os.path.dirname(regex.__file__), tmp_path / "relinked")
    monkeypatch.syspath_prepend(str(tmp_path))
    escape = importlib.import_module("relinked._main").escape
    assert escape.__code__.co_filename.startswith(str(tmp_path))
    assert borrowed._classify(escape.__code__) == "library"
    monkeypatch.delitem(sys.modules, "relinked._main")
    monkeypatch.delitem(sys.modules, "relinked")


def test_a_packages_garbage_collected_during_the_call_is_no_call_of_the_students():
    """Garbage a package left (nltk's import leaves regex objects in cycles) is collected wherever the collector
    runs: not inside the check's call, where its finalizers would read as the student's calls."""
    import gc

    import regex._regex_core as core

    with_finalizer = next(c for c in vars(core).values() if isinstance(c, type) and "__del__" in vars(c))
    fn = _from_source(BALANCED_BY_HAND.replace("{extra}", "gc.collect()"), "is_balanced", {"gc": gc})
    gc.disable()  # the garbage waits for the call (the student's gc.collect() there)
    try:
        garbage = with_finalizer.__new__(with_finalizer)
        garbage.cycle = garbage
        del garbage
        r = checks.exercises("03")["3.1"].check(fn, quiet=True)
    finally:
        gc.enable()
        gc.collect()
    assert r.passed, r


@pytest.mark.parametrize("form", ["dotdot", "double slash"])
def test_a_packages_code_under_another_name_of_its_file_is_the_packages(form):
    import importlib.util
    import os

    import regex

    from course_lib.checks import borrowed

    site = os.path.dirname(os.path.dirname(regex.__file__))
    path = {"dotdot": os.path.join(os.path.dirname(torch.__file__), "..", "regex", "_main.py")}.get(
        form, site + "//regex/_main.py"
    )
    spec = importlib.util.spec_from_file_location("elsewhere", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.escape.__code__.co_filename == path
    assert borrowed._classify(module.escape.__code__) == "library"


def outsider_attacks(issue: str):
    """A hostile class's attack cells (tests/outsider/<issue>/attacks_src.py), loaded under a name of their own:
    every class names its file attacks_src.py."""
    import importlib.util
    from pathlib import Path

    name = f"attacks_{issue}"
    if name not in sys.modules:
        path = Path(__file__).parent / "outsider" / issue / "attacks_src.py"
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def _attacks_33t():
    return outsider_attacks("issue33t")


FORGED_READS = {  # a module's parameters made to show the check other values than they hold (hostile class 33t)
    "7.3 a Parameter subclass's __torch_function__": ("07", "Head", "HEAD_FORGED", "FROZEN", "freeze"),
    "7.3 an instance attribute detach": ("07", "Head", "HEAD_FORGED", "SHADOW", "shadow"),
    "7.5 an instance attribute copy_": ("07", "FeedForward", "FFN_FORGED", "COPY_ZERO", "draw_zeros"),
}


@pytest.mark.parametrize("route", sorted(FORGED_READS))
def test_a_module_whose_parameters_show_the_check_other_values_fails(route):
    """Lesson 07's reference is built from the parameters as the check drew them: read back through the student's
    objects (``p.detach()``, ``p.copy_``) they showed zeros, and a forward that computes nothing matched the
    zero-weight module's output. The oracle: the same forward without the forging helper fails too (it computes
    nothing), and the solution's class passes."""
    lesson, name, cls, helper, how = FORGED_READS[route]
    attacks = _attacks_33t()
    exercise = next(e for e in checks.exercises(lesson).values() if e.function == name)
    forged = attacks.forged(getattr(attacks, cls), how, getattr(attacks, helper))
    result = exercise.check(_from_source(forged, name), quiet=True)
    assert result.status == FAILED, (route, result)


SHOWN_IN_RANGE = {  # a wrong initialisation (torch.randn) whose parameters show the check values in range
    "3.3": ("03", "ElmanRNN", lambda a: a.ELMAN_INIT_SRC),
    "4.1": ("04", "LSTMCell", lambda a: a.LSTM_INIT_SRC.replace("SHOW", a.SHOW_IN_RANGE)),
}


@pytest.mark.parametrize("exercise_id", sorted(SHOWN_IN_RANGE))
def test_an_initialisation_shown_in_range_by_the_parameters_themselves_fails(exercise_id):
    lesson, name, source = SHOWN_IN_RANGE[exercise_id]
    result = checks.exercises(lesson)[exercise_id].check(_from_source(source(_attacks_33t()), name), quiet=True)
    assert result.status == FAILED and "uniformly" in result.message, result


def test_a_forget_bias_shown_and_not_set_fails():
    """4.4 read the lstm's state through its state_dict, which asks each bias's ``detach``: an instance attribute
    showed the value set while the lstm was unchanged."""
    source = _attacks_33t().FORGET_SHOWN_44
    result = checks.exercises("04")["4.4"].check(_from_source(source, "set_forget_bias"), quiet=True)
    assert result.status == FAILED, result


def test_vmap_over_the_lectures_formula_passes_where_a_gradient_is_the_exercise_and_grad_under_it_fails():
    """torch.func.vmap maps a function over an axis, no derivative taken: an honest 2.1 (row i is y_i (e_i - y))
    was refused as autograd (hostile class 33t). torch.func.grad under the same vmap still is."""
    exercise = checks.exercises("02")["2.1"]
    honest = _from_source(_attacks_33t().VMAP_21, "softmax_jacobian")
    assert exercise.check(honest, quiet=True).passed
    borrowed = """
def softmax_jacobian(z):
    row = lambda v, i: torch.softmax(v, 0)[i]
    return torch.func.vmap(torch.func.grad(row), in_dims=(None, 0))(z, torch.arange(z.shape[0]))
"""
    result = exercise.check(_from_source(borrowed, "softmax_jacobian"), quiet=True)
    assert result.status == FAILED and "eager_transforms" in result.message, result


FUSED_LAYER = {  # hostile class 33x: torch's fused encoder layer as a masked attention, in the notebook's checks
    "5.2": ("05", "DECODE_TEL", "LAYER_FN"),
    "6.1": ("06", "ALPHA_TEL", "LAYER_FN"),
    "6.3": ("06", "MASKED_TEL", "LAYER_FN"),
    "7.3": ("07", "HEAD_TEL", "LAYER_FN"),
    "7.3 by torch.ops": ("07", "HEAD_TEL", "LAYER_OPS"),
}


@pytest.mark.parametrize("route", sorted(FUSED_LAYER))
def test_torchs_fused_encoder_layer_used_as_attention_fails_where_attention_is_the_exercise(route):
    """``_transformer_encoder_layer_fwd`` (nn.TransformerEncoderLayer's fast path) with identity weights and no
    feed-forward computes a masked attention and its weights; its name says no "attention", so only the grader's
    bar on the op it calls inside held, and the notebook's checks said passed."""
    lesson, attack, layer = FUSED_LAYER[route]
    attacks = outsider_attacks("issue33x")
    exercise = checks.exercises(lesson)[route.split()[0]]
    source = attacks.with_attend(getattr(attacks, attack), getattr(attacks, layer))
    result = exercise.check(_from_source(source, exercise.function, {"nn": torch.nn, "math": math}), quiet=True)
    assert result.status == FAILED and "_transformer_encoder_layer_fwd" in result.message, (route, result)


@pytest.mark.parametrize("attack", ["TRAIN_SGD_ADAGRAD", "TRAIN_SGD_ADAM"])
def test_another_optimizers_fused_kernel_set_up_as_sgd_fails_where_the_update_is_the_exercise(attack):
    """2.3 forbids torch.optim.SGD, and so every optimizer of torch.optim: hostile class 33v took SGD's exact step
    with Adagrad's and Adam's fused kernels (``torch._fused_adagrad_``, ``torch._fused_adam_``), on no list. Every
    optimizer's fused kernel, read from the dispatcher, is refused with them; the honest update still passes."""
    attacks = outsider_attacks("issue33v")
    exercise = checks.exercises("02")["2.3"]
    result = exercise.check(_from_source(getattr(attacks, attack), "train_sgd"), quiet=True)
    assert result.status == FAILED and "_fused_ada" in result.message, result
