"""course_lib.quiz: feedback for every option, numeric tolerance, running score, recording, fallbacks."""

import json

import pytest

from course_lib.notebook import quiz
from course_lib.notebook.quiz import MultipleChoice, NumericQuestion, Practice, Score, parse_number


def make_mc(score=None):
    return MultipleChoice(
        "What is 1 + 1?",
        {"A": "1", "B": "2", "C": "11"},
        answer="B",
        feedback={"A": "that is 1 + 0", "B": "one plus one", "C": "that is string concatenation"},
        key="sum",
        score=score,
    )


def test_multiple_choice_gives_each_options_feedback():
    q = make_mc()
    for choice, correct, words in [
        ("A", False, "1 + 0"),
        ("c", False, "concatenation"),
        ("(B)", True, "one plus one"),
        ("(B) 2", True, "one plus one"),
    ]:
        fb = q.check(choice)
        assert fb.correct is correct and bool(fb) is correct
        assert words in fb.message
        assert str(fb).startswith(quiz.CORRECT if correct else quiz.WRONG)


def test_multiple_choice_rejects_unknown_choices_and_incomplete_feedback():
    q = make_mc()
    with pytest.raises(ValueError, match="choice must be one of the labels"):
        q.check("D")
    with pytest.raises(ValueError, match="choice must be one of the labels"):
        q.check(2)
    with pytest.raises(ValueError, match="feedback must give a text for every option"):
        MultipleChoice("q?", {"A": "x", "B": "y"}, "A", {"A": "because"})
    with pytest.raises(ValueError, match="answer must be one of the option labels"):
        MultipleChoice("q?", {"A": "x", "B": "y"}, "Z", {"A": "a", "B": "b"})
    with pytest.raises(ValueError, match="question must be a non-empty string"):
        MultipleChoice(" ", {"A": "x", "B": "y"}, "A", {"A": "a", "B": "b"})


def test_score_counts_only_the_first_try():
    score = Score()
    q = make_mc(score)
    q.check("A")
    q.check("B")
    assert (score.correct, score.answered) == (0, 1)
    q2 = NumericQuestion("1/4?", 0.25, key="quarter", score=score)
    q2.check("1/4")
    assert (score.correct, score.answered) == (1, 2)
    assert str(score) == "Score: 1 / 2 right at the first try"


def test_answers_are_recorded_for_grading(tmp_path, monkeypatch):
    path = tmp_path / "answers.jsonl"
    monkeypatch.setenv(quiz.ANSWERS_ENV, str(path))
    before = len(quiz.ANSWERS)
    q = make_mc()
    q.check("C")
    q.check("B")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["quiz"], e["answer"], e["correct"], e["first_try"]) for e in lines] == [
        ("sum", "C", False, True),
        ("sum", "B", True, False),
    ]
    assert quiz.ANSWERS[before:] == lines


@pytest.mark.parametrize("text, value", [("0.5", 0.5), (" 1/4 ", 0.25), ("-3", -3.0), (2, 2.0), ("1e-3", 0.001)])
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("bad", ["half", "1/0", True, None, [0.5]])
def test_parse_number_rejects_non_numbers(bad):
    with pytest.raises(ValueError, match="answer must be a number"):
        parse_number(bad)


def test_numeric_question_tolerance_mistakes_and_reveal():
    q = NumericQuestion(
        "alpha?", 0.5, tol=1e-3, mistakes={"you forgot the mask": 0.4223}, explanation="two equal scores"
    )
    assert q.check("0.5004").correct
    assert not q.check(0.502).correct
    q = NumericQuestion(
        "alpha?", 0.5, tol=1e-3, mistakes={"you forgot the mask": 0.4223}, explanation="two equal scores"
    )
    first = q.check(0.4223)
    assert not first.correct and "you forgot the mask" in first.message and "0.5000" not in first.message
    second = q.check(0.9)
    assert "The answer is 0.5000" in second.message and "two equal scores" in second.message
    typo = q.check("zero point five")
    assert not typo.correct and "must be a number" in typo.message
    with pytest.raises(ValueError, match="answer must be a finite number"):
        NumericQuestion("q", float("nan"))
    with pytest.raises(ValueError, match="tol must be positive"):
        NumericQuestion("q", 1.0, tol=0)


def test_practice_generates_new_questions_and_keeps_score():
    def make(rng):
        a = rng.randint(1, 9)
        return NumericQuestion(f"What is {a} squared?", a * a, key="square")

    p = Practice(make, seed=3)
    a = int(p.question.question.split()[2])
    assert p.check(a * a).correct
    p.next()
    assert p.question.key == "square #2"
    p.check(-1)
    assert (p.score.correct, p.score.answered) == (1, 2)
    assert Practice(make, seed=3).question.question == Practice(make, seed=3).question.question
    with pytest.raises(TypeError, match="make_question must return a NumericQuestion"):
        Practice(lambda rng: 4)


def test_plain_text_fallback_outside_jupyter(capsys):
    assert not quiz.widgets_available()  # pytest runs no kernel
    make_mc().show()
    out = capsys.readouterr().out
    assert "What is 1 + 1?" in out and "(B) 2" in out and ".check(" in out
    Practice(lambda rng: NumericQuestion("Pick 1", 1.0), seed=0).show()
    out = capsys.readouterr().out
    assert "Pick 1" in out and "practice.check(" in out and "practice.next()" in out


def test_widgets_update_their_feedback():
    pytest.importorskip("ipywidgets")
    score = Score()
    box = make_mc(score).widget()
    _, choices, feedback = box.children
    assert "course-quiz" in box._dom_classes and "course-quiz-feedback" in feedback._dom_classes
    assert choices.value is None and "Pick an answer" in feedback.value
    choices.value = "(A) 1"
    assert "Not quite" in feedback.value and "1 + 0" in feedback.value
    choices.value = "(B) 2"
    assert "Correct" in feedback.value
    assert (score.correct, score.answered) == (0, 1)

    p = Practice(lambda rng: NumericQuestion(f"{rng.random()}", 0.25), seed=1)
    w = p.widget()
    text, row, fb, score_line = w.children
    answer, check_button, new_button = row.children
    answer.value = "1/4"
    check_button.click()
    assert "Correct" in fb.value and "1 / 1" in score_line.value
    first = text.value
    new_button.click()
    assert text.value != first and fb.value == "" and answer.value == ""
