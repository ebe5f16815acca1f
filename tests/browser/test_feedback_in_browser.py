"""A learner's feedback page, opened in Chromium, shows the score, the notebook and every figure.

The model answers of an assignment with figures are graded by the real grader (sandboxed
kernels, one job) and the feedback page it writes is opened as a learner opens the file: the
heading gives the score the gradebook holds, the notebook's Chinese text is on the page, every
figure is a loaded image with an alternative text, and no cell shows a traceback.
"""
from __future__ import annotations

import shutil

import pytest

from conftest import SOLUTIONS

ASSIGNMENT, NOTEBOOK = "03-recall", "recall"

PAGE_JS = """
() => ({
  heading: document.querySelector('h4')?.innerText ?? '',
  text: document.body.innerText,
  images: [...document.querySelectorAll('img')].map((img) => ({
    alt: img.getAttribute('alt'), loaded: img.complete && img.naturalWidth > 0,
  })),
})
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The model answers of ASSIGNMENT graded as student ada; return (feedback page, score, max score)."""
    from ctx_course.grading.grader import Grader

    tmp = tmp_path_factory.mktemp("feedback")
    shutil.copytree(SOLUTIONS / ASSIGNMENT, tmp / "incoming" / "ada" / ASSIGNMENT)
    grader = Grader(SOLUTIONS.parent, work=tmp / "work", jobs=1)
    grader.collect(tmp / "incoming")
    (result,) = grader.grade().results
    assert result.graded, result.reason
    with grader.gradebook() as gb:
        notebook = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "ada")
        score, max_score = notebook.score, notebook.max_score
    (page,) = grader.feedback_path("ada", ASSIGNMENT)
    return page, score, max_score


def test_the_feedback_page_shows_the_score_the_notebook_and_every_figure(browser, graded):
    page_path, score, max_score = graded
    stored_figures = (SOLUTIONS / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8").count('"image/png"')
    page = browser.new_page()
    try:
        page.goto(page_path.as_uri())
        shown = page.evaluate(PAGE_JS)
    finally:
        page.close()
    assert f"(Score: {round(score, 2)} / {round(max_score, 2)})" in shown["heading"]
    assert "召回" in shown["text"]
    assert "Traceback (most recent call last)" not in shown["text"]
    assert len(shown["images"]) >= stored_figures > 0
    assert all(image["loaded"] and image["alt"] for image in shown["images"]), shown["images"]
