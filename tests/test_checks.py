"""The check protocol itself: three outcomes, hints, recording for graders."""

import json

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

    def stub(x):
        raise NotImplementedError

    assert ex.check(stub, quiet=True).status == NOT_IMPLEMENTED


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
    for lesson, count in [("01", 5), ("02", 5), ("03", 4), ("04", 4), ("05", 4), ("06", 3), ("07", 5)]:
        found = checks.exercises(lesson)
        assert len(found) == count and all(e.id.startswith(str(int(lesson)) + ".") for e in found.values())
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
    result = ex["1.4"].check(lambda log_probs: 2.0, quiet=True)
    assert checks.RESULTS == [result]
    text = checks.summary(lesson="01")
    lines = text.splitlines()
    assert len(lines) == 6 and lines[-1] == "0 of 5 exercises passed.", (text, checks.RESULTS)
    assert "Exercise 1.4 (perplexity from log-probabilities): failed. Hint:" in lines[3], text
    assert all("not checked yet" in lines[i] for i in (0, 1, 2, 4))


def test_a_crafted_nan_where_a_weight_should_be_zero_is_rejected():
    torch = pytest.importorskip("torch")
    from course_lib.checks import lesson05

    def crafted(scores, mask=None):
        weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)
        return weights.masked_fill(weights == 0, float("nan"))  # NaN where the weight is 0

    for _ in range(3):
        r = lesson05.check_attention_weights(crafted, quiet=True)
        assert r.status == FAILED and "nan" in r.message.lower(), r


def test_a_float32_solution_passes_where_the_inputs_are_float64():
    torch = pytest.importorskip("torch")
    from course_lib.checks import lesson02

    def softmax_jacobian(z):
        y = torch.softmax(z.float(), dim=0)  # float32, as students write it
        return torch.diag(y) - torch.outer(y, y)

    assert all(lesson02.check_softmax_jacobian(softmax_jacobian, quiet=True).passed for _ in range(20))
