"""Lesson 06 in a real browser: JupyterLab in headless Chromium runs the notebook and a student uses the quiz."""

import pytest

from .lab import CONTROLS, EXPLORER, error_outputs, moved_and_redrawn, open_and_run_all, save_and_read

pytestmark = pytest.mark.browser

NOTEBOOK = "notebooks/06_masked_attention.ipynb"


def test_lesson06_runs_in_jupyterlab_and_the_quiz_answers(jupyter_lab, page, tmp_path):
    base, token, served = jupyter_lab
    notebook = open_and_run_all(page, base, token, NOTEBOOK, timeout_s=170)
    assert notebook.locator(".jp-CodeCell").count() > 10

    errors = error_outputs(save_and_read(page, served, NOTEBOOK))
    assert not errors, "error output in the notebook:\n" + "\n".join(errors)
    assert notebook.locator(".jp-OutputArea-output img").count() >= 2  # the heatmaps rendered

    # The lesson's explorer redraws when a control moves (test_every_lesson.py says why 06 stands for others).
    explorers = [e for e in notebook.locator(EXPLORER).all() if e.locator(CONTROLS).filter(visible=True).count()]
    assert explorers, "no explorer (viz.interactive) with a control rendered"
    moved_and_redrawn(page, explorers[0])

    # The lecture's quiz, as a widget: the one with radio buttons.
    quiz = notebook.locator(".course-quiz").filter(has=page.locator(".course-quiz-options"))
    quiz.wait_for()
    assert "masked attention" in quiz.inner_text()
    feedback = quiz.locator(".course-quiz-feedback")
    assert "Pick an answer" in feedback.inner_text()

    quiz.get_by_role("radio", name="(C) e / (2e + e⁻¹ + 1)", exact=True).check()
    page.wait_for_function("el => el.innerText.includes('Not quite')", arg=feedback.element_handle())
    wrong = feedback.inner_text()
    assert "without the mask" in wrong, wrong

    quiz.get_by_role("radio", name="(B) 0.5", exact=True).check()
    page.wait_for_function("el => el.innerText.includes('Correct')", arg=feedback.element_handle())
    right = feedback.inner_text()
    assert right != wrong and "Not quite" not in right, right
    quiz.screenshot(path=str(tmp_path / "quiz.png"))  # what the student saw, kept for a look
    print(f"wrong answer (C) -> {wrong!r}\nright answer (B) -> {right!r}")

    # The generated quizzes react to typed input and keep score.
    practice = notebook.locator(".course-quiz").filter(has=page.get_by_role("button", name="New question"))
    practice.get_by_role("textbox").fill("7")
    practice.get_by_role("button", name="Check").click()
    practice_feedback = practice.locator(".course-quiz-feedback")
    page.wait_for_function("el => el.innerText.includes('Not quite')", arg=practice_feedback.element_handle())
    assert "Score: 0 / 1" in practice.inner_text()
