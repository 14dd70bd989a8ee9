"""The check protocol itself: three outcomes, hints, recording for graders."""

import json

import numpy as np
import pytest

from course_lib import checks
from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED, Mistake, exercise, expect_value, expect_values


@exercise("9.1", "double")
def check_double(fn):
    for x in (1, 2.5, -3):
        expect_value(fn(x), 2 * x, {"you added 2 instead of doubling": x + 2}, what=f"double({x})")


def test_three_outcomes_and_printing(capsys):
    assert check_double(lambda x: 2 * x).status == PASSED
    assert "✅ Exercise 9.1 (double): passed." in capsys.readouterr().out

    def stub(x):
        raise NotImplementedError("Exercise 9.1: double (about 1 line)")

    r = check_double(stub)
    assert r.status == NOT_IMPLEMENTED and not r
    r = check_double(lambda x: x + 2)
    assert r.status == FAILED and "added 2" in r.message
    r = check_double(lambda x: x * 4)
    assert r.status == FAILED and "double(1) should be 2, got 4" in r.message


def test_crash_is_reported_with_the_students_line():
    def student(x):
        return {}["missing"]

    r = check_double(student, quiet=True)
    assert r.status == FAILED and "KeyError" in r.message and '{}["missing"]' in r.message.replace("'", '"')


def test_not_a_function():
    r = check_double(42, quiet=True)
    assert r.status == FAILED and "pass your function itself" in r.message


def test_results_are_recorded_to_the_file_a_grader_names(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv(checks.RESULTS_ENV, str(path))
    check_double(lambda x: 2 * x, quiet=True)
    check_double(lambda x: x, quiet=True)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["status"] for line in lines] == [PASSED, FAILED]
    assert lines[0]["exercise"] == "9.1" and lines[1]["message"].startswith("Hint:")
    assert "9.1" in checks.summary() and checks.summary().count("9.1") == 1  # latest result only


def test_expect_values_names_only_a_mistake_that_explains_every_answer():
    expected = [1, 2, 3]
    wrong = {"off by one": [2, 3, 4], "reversed": [3, 2, 1]}
    expect_values([1, 2, 3], expected, wrong)
    with pytest.raises(Mistake, match="off by one"):
        expect_values([2, 3, 4], expected, wrong)
    with pytest.raises(Mistake, match="answer 1 should be 1, got 2"):
        expect_values([2, 2, 1], expected, wrong)  # partly like both: no hint claims it
    with pytest.raises(ValueError, match="got has 2 answers"):
        expect_values([1, 2], expected)


def test_close_handles_shapes_tensors_and_junk():
    torch = pytest.importorskip("torch")
    assert checks.close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0]))
    assert not checks.close([1.0, 2.0], [[1.0, 2.0]])  # shapes must agree: nothing is broadcast
    assert not checks.close("abc", 1.0) and not checks.close(None, 1.0)
    assert checks.is_number(3) and checks.is_number(np.float32(2)) and not checks.is_number(True)
    assert not checks.is_number([1.0]) and not checks.is_number("1")
