"""Quiz questions with feedback for every answer (lesson 06).

- :class:`MultipleChoice`: options with a feedback text for each (why a wrong one is tempting).
- :class:`NumericQuestion`: a number checked with a tolerance; known mistakes get their own hint.
- :class:`Practice`: a stream of generated numeric questions with a running :class:`Score`.

Each one shows itself as an ipywidgets widget in Jupyter (``.show()``) and as plain text
elsewhere; ``.check(answer)`` works everywhere and returns a :class:`Feedback`. ipywidgets
is imported only when a widget is built.

Answers can be recorded for grading: every answer is appended to :data:`ANSWERS` and, when
the environment variable ``COURSE_LIB_QUIZ_ANSWERS`` names a file, written to it as one JSON
line ``{"quiz", "answer", "correct", "first_try", "time"}``.
"""

from __future__ import annotations

import html
import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from course_lib.notebook.setup import widgets_available  # one rule for "can a widget render here?"

ANSWERS_ENV = "COURSE_LIB_QUIZ_ANSWERS"
ANSWERS: list[dict] = []

CORRECT, WRONG = "✅ Correct.", "❌ Not quite."
STATIC_NOTE = "A quiz: run the notebook to answer it and get feedback."


@dataclass(frozen=True)
class Feedback:
    """What a student sees after answering; truthy when the answer is right."""

    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        return f"{CORRECT if self.correct else WRONG} {self.message}".rstrip()


class Score:
    """A running score: the first answer to each question counts, later tries only get feedback."""

    def __init__(self):
        self.correct = 0
        self.answered = 0
        self._seen: set[str] = set()

    def record(self, key: str, correct: bool) -> bool:
        """Count this answer if it is the first one to question ``key``; returns whether it counted."""
        if key in self._seen:
            return False
        self._seen.add(key)
        self.answered += 1
        self.correct += bool(correct)
        return True

    def __str__(self) -> str:
        return f"Score: {self.correct} / {self.answered} right at the first try"


def _record(key: str, answer, correct: bool, first_try: bool) -> None:
    entry = {
        "quiz": key,
        "answer": answer if isinstance(answer, (int, float, str)) else repr(answer),
        "correct": bool(correct),
        "first_try": first_try,
        "time": time.time(),
    }
    ANSWERS.append(entry)
    path = os.environ.get(ANSWERS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def _question_html(text: str) -> str:
    """Escaped HTML that keeps the line breaks; lines indented by 4 spaces (a matrix) in a fixed-width font.
    $...$ is still typeset by HTMLMath."""
    lines = []
    for line in html.escape(text).split("\n"):
        if line.startswith("    "):
            line = f'<span style="font-family: var(--jp-code-font-family, monospace)">{line}</span>'
        lines.append(line)
    return '<div style="white-space: pre-wrap; line-height: 1.5">' + "\n".join(lines) + "</div>"


class _Question:
    key: str
    question: str

    def __init__(self, question: str, key: str | None, score: Score | None):
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        self.question = question
        self.key = key or question.strip().splitlines()[0][:60]
        self.score = score
        self.tries = 0

    def _finish(self, answer, feedback: Feedback) -> Feedback:
        self.tries += 1
        first = self.tries == 1
        if self.score is not None:
            self.score.record(self.key, feedback.correct)
        _record(self.key, answer, feedback.correct, first)
        return feedback

    def show(self) -> None:
        """Display the widget in Jupyter, or print the question and how to answer it elsewhere.

        In Jupyter the widget goes out with the question as HTML and text in the same display bundle,
        so a viewer without a kernel (GitHub, nbviewer, the course site) still shows the question.
        """
        if widgets_available():
            from course_lib.notebook import fallback

            fallback.display_with_fallback(self.widget(), self.static_html(), self.static_text())
        else:
            print(self.text())

    def _body(self) -> list[str]:
        return [self.question]

    def _body_html(self) -> str:
        return _question_html(self.question)

    def static_text(self) -> str:
        """The question as plain text for a reader without a kernel (the answer is not given away)."""
        return "\n".join([*self._body(), "", f"({STATIC_NOTE})"])

    def static_html(self) -> str:
        """The question as HTML for a reader without a kernel (the answer is not given away)."""
        return f'<div class="course-quiz-static">{self._body_html()}<p><em>{STATIC_NOTE}</em></p></div>'


class MultipleChoice(_Question):
    """A multiple-choice question with feedback for every option.

    ``options`` maps labels to texts (``{"A": "0", "B": "0.5"}``), ``answer`` is the right
    label, ``feedback`` maps every label to its explanation: for a wrong option, why it is
    tempting and what it misses.
    """

    def __init__(
        self,
        question: str,
        options: Mapping[str, str],
        answer: str,
        feedback: Mapping[str, str],
        *,
        key: str | None = None,
        score: Score | None = None,
    ):
        super().__init__(question, key, score)
        if not isinstance(options, Mapping) or len(options) < 2:
            raise ValueError(f"options must map at least two labels to texts, got {options!r}")
        if answer not in options:
            raise ValueError(f"answer must be one of the option labels {list(options)}, got {answer!r}")
        missing = [label for label in options if not str(feedback.get(label, "")).strip()]
        if missing or set(feedback) - set(options):
            raise ValueError(
                f"feedback must give a text for every option and nothing else; missing {missing}, "
                f"unknown {sorted(set(feedback) - set(options))}"
            )
        self.options = dict(options)
        self.answer = answer
        self.feedback = dict(feedback)

    def label(self, label: str) -> str:
        """How an option is shown: ``(B) 0.5``."""
        return f"({label}) {self.options[label]}"

    def check(self, choice: str) -> Feedback:
        """Feedback for a label ("B", "b", "(B)") or the displayed option ("(B) 0.5")."""
        label = self._parse(choice)
        return self._finish(label, Feedback(label == self.answer, self.feedback[label]))

    def _parse(self, choice) -> str:
        if isinstance(choice, str):
            text = choice.strip()
            for label in self.options:
                if text in (label, f"({label})", self.label(label)) or text.upper() in (
                    label.upper(),
                    f"({label.upper()})",
                ):
                    return label
        raise ValueError(f"choice must be one of the labels {list(self.options)}, got {choice!r}")

    def _body(self) -> list[str]:
        return [self.question, ""] + [f"  {self.label(label)}" for label in self.options]

    def _body_html(self) -> str:
        items = "".join(f"<li>{html.escape(self.label(label))}</li>" for label in self.options)
        return _question_html(self.question) + f'<ul class="course-quiz-static-options">{items}</ul>'

    def text(self) -> str:
        lines = self._body()
        lines += [
            "",
            f"(Widgets are not available here: answer with .check('{next(iter(self.options))}'), "
            "which prints the feedback.)",
        ]
        return "\n".join(lines)

    def widget(self):
        import ipywidgets as w

        labels = {self.label(label): label for label in self.options}
        choices = w.RadioButtons(options=list(labels), index=None, layout=w.Layout(width="max-content"))
        choices.add_class("course-quiz-options")
        feedback = w.HTML("<i>Pick an answer.</i>")
        feedback.add_class("course-quiz-feedback")

        def on_pick(change):
            if change["new"] is None:
                return
            result = self.check(labels[change["new"]])
            color = "#1a7f37" if result.correct else "#b42318"
            feedback.value = f'<span style="color: {color}">{html.escape(str(result))}</span>'

        choices.observe(on_pick, names="value")
        box = w.VBox([w.HTMLMath(_question_html(self.question)), choices, feedback])
        box.add_class("course-quiz")
        return box


def parse_number(answer) -> float:
    """A number from what a student typed: ``0.5``, ``"0.5"``, ``"1/2"``."""
    if isinstance(answer, bool):
        raise ValueError(f"answer must be a number, got {answer!r}")
    if isinstance(answer, (int, float)):
        return float(answer)
    if hasattr(answer, "item") and getattr(answer, "ndim", 1) == 0:  # numpy or torch scalars
        return float(answer.item())
    if isinstance(answer, str):
        text = answer.strip().replace(" ", "")
        try:
            return float(text)
        except ValueError:
            pass
        try:
            return float(Fraction(text))
        except (ValueError, ZeroDivisionError):
            pass
    raise ValueError(f"answer must be a number such as 0.25 or 1/4, got {answer!r}")


class NumericQuestion(_Question):
    """A question whose answer is a number, right within ``tol`` (absolute).

    ``mistakes`` maps a hint to the value a known mistake gives; an answer that matches one
    (and not the right answer) gets that hint. After two wrong tries the answer is shown with
    ``explanation``.
    """

    def __init__(
        self,
        question: str,
        answer: float,
        *,
        tol: float = 1e-3,
        mistakes: Mapping[str, float] | None = None,
        explanation: str = "",
        key: str | None = None,
        score: Score | None = None,
    ):
        super().__init__(question, key, score)
        if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer):
            raise ValueError(f"answer must be a finite number, got {answer!r}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol!r}")
        self.answer, self.tol = float(answer), tol
        self.mistakes = dict(mistakes or {})
        self.explanation = explanation

    def check(self, answer) -> Feedback:
        try:
            value = parse_number(answer)
        except ValueError as exc:  # a typo is not a wrong answer: nothing is recorded
            return Feedback(False, str(exc))
        if abs(value - self.answer) <= self.tol:
            return self._finish(value, Feedback(True, f"{self.answer:.4f}. {self.explanation}".strip()))
        hint = next((h for h, v in self.mistakes.items() if abs(value - v) <= self.tol), "")
        message = hint or f"{value:g} is not it."
        if self.tries >= 1:  # this is at least the second wrong try
            message += f" The answer is {self.answer:.4f}. {self.explanation}".rstrip()
        return self._finish(value, Feedback(False, message))

    def text(self) -> str:
        return (
            f"{self.question}\n\n(Widgets are not available here: answer with .check(0.25), which prints the feedback.)"
        )

    def widget(self):
        return _NumericWidget(lambda: self).box


class Practice:
    """Generated numeric questions, one after another, with a running score.

    ``make_question(rng)`` returns a :class:`NumericQuestion` built from the random generator
    ``rng`` (a ``random.Random``); the score is shared by all of them.
    """

    def __init__(self, make_question: Callable[[random.Random], NumericQuestion], seed: int | None = None):
        if not callable(make_question):
            raise TypeError(
                f"make_question must be a function rng -> NumericQuestion, got {type(make_question).__name__}"
            )
        self.make_question = make_question
        self.rng = random.Random(seed)
        self.score = Score()
        self.count = 0
        self.question = None
        self.next()

    def next(self) -> NumericQuestion:
        """Move on to a new question."""
        question = self.make_question(self.rng)
        if not isinstance(question, NumericQuestion):
            raise TypeError(f"make_question must return a NumericQuestion, got {type(question).__name__}")
        self.count += 1
        question.key = f"{question.key} #{self.count}"
        question.score = self.score
        self.question = question
        return question

    def check(self, answer) -> Feedback:
        return self.question.check(answer)

    def show(self) -> None:
        if widgets_available():
            from course_lib.notebook import fallback

            q = self.question
            fallback.display_with_fallback(self.widget(), q.static_html(), q.static_text())
        else:
            print(
                self.question.text().replace(".check(", "practice.check(") + "\nThen practice.next() for another one."
            )

    def widget(self):
        return _NumericWidget(lambda: self.question, practice=self).box


class _NumericWidget:
    """Question text, an answer box, Check (and New question), feedback, score."""

    def __init__(self, current: Callable[[], NumericQuestion], practice: Practice | None = None):
        import ipywidgets as w

        self.current, self.practice = current, practice
        self.text = w.HTMLMath(_question_html(current().question))
        self.answer = w.Text(placeholder="e.g. 0.25 or 1/4", description="answer", layout=w.Layout(width="16em"))
        check = w.Button(description="Check", button_style="primary")
        self.feedback = w.HTML("")
        self.feedback.add_class("course-quiz-feedback")
        self.score = w.HTML(str(practice.score) if practice else "")
        buttons = [self.answer, check]
        check.on_click(lambda _: self.on_check())
        if practice is not None:
            new = w.Button(description="New question")
            new.on_click(lambda _: self.on_next())
            buttons.append(new)
        self.box = w.VBox([self.text, w.HBox(buttons), self.feedback, self.score])
        self.box.add_class("course-quiz")

    def on_check(self):
        result = self.current().check(self.answer.value)
        color = "#1a7f37" if result.correct else "#b42318"
        self.feedback.value = f'<span style="color: {color}">{html.escape(str(result))}</span>'
        if self.practice is not None:
            self.score.value = str(self.practice.score)

    def on_next(self):
        self.practice.next()
        self.text.value = _question_html(self.current().question)
        self.answer.value, self.feedback.value = "", ""
