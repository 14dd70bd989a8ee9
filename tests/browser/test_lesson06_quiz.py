"""Lesson 06 in a real browser: JupyterLab in headless Chromium runs the notebook and a student uses the quiz."""

import re

import pytest

pytestmark = pytest.mark.browser

NOTEBOOK = "notebooks/06_masked_attention.ipynb"


def test_lesson06_runs_in_jupyterlab_and_the_quiz_answers(jupyter_lab, page, tmp_path):
    base, token, served = jupyter_lab
    page.set_default_timeout(60_000)
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
    notebook = page.locator(".jp-NotebookPanel-notebook")
    notebook.wait_for()
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)  # the kernel has started

    # Run > Run All Cells, from the menu bar as a student would.
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()

    prompts = notebook.locator(".jp-CodeCell .jp-InputArea-prompt")
    n_code = prompts.count()
    assert n_code > 10
    # Done when every code cell shows an execution count ("[12]:", not "[*]:" or "[ ]:").
    page.wait_for_function(
        """n => {
            const p = [...document.querySelectorAll('.jp-NotebookPanel-notebook .jp-CodeCell .jp-InputArea-prompt')];
            return p.length === n && p.every(e => /\\[\\d+\\]/.test(e.textContent));
        }""", arg=n_code, timeout=170_000)
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()

    errors = notebook.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert errors.count() == 0, "error output in the notebook:\n" + "\n---\n".join(errors.all_inner_texts())
    assert notebook.locator(".jp-OutputArea-output img").count() >= 2  # the heatmaps rendered

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
