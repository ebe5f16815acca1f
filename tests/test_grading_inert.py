"""A learner's script reaches neither the autograded notebook nor the feedback page, and costs no point.

A class of notebook 02 (check_remaining: 3 points; two free-response answers, graded by hand) is
graded by the real grader (sandboxed kernels, one job): ``honest`` hands in the model function and
two plain answers; ``hostile`` hands in the same function followed by
``display(HTML(<script> + <img onerror>))`` and answers in raw HTML (a script, an ``onerror``, a
``javascript:`` link, an iframe, a form). Both score the same; neither the hostile autograded
notebook (every output and markdown cell, as nbconvert renders them) nor its feedback page holds a
script vector beyond the honest learner's page (``page_scripts.py``), and the honest parts of what
the hostile learner wrote are still there.
"""
from __future__ import annotations

from collections import Counter

import nbformat
import pytest

from ctx_course.grading.grader import Grader
from ctx_course.grading.steps.inert import render_markdown

from conftest import REPO, class_builder
from page_scripts import script_vectors

pytestmark = pytest.mark.heavy

ASSIGNMENT, NOTEBOOK = "02-remaining", "remaining"
SCRIPT = "<script>document.title='PWNED'; fetch('/api/terminals', {method: 'POST'})</script>"
ONERROR = "<img src=x onerror=\"fetch('/api/terminals', {method: 'POST'})\">"
HOSTILE_CODE = f'''

from IPython.display import HTML, display

display(HTML({SCRIPT + ONERROR + "<b>还在</b>"!r}))
'''
HONEST_ANSWERS = {"q_cache_fields": "缓存字段放在前面，前缀才稳定。", "q_why_early": "留出余量，提前压缩。"}
HOSTILE_ANSWERS = {
    "q_cache_fields": f"缓存字段放在前面，<b>前缀才稳定</b>。{SCRIPT}{ONERROR}",
    "q_why_early": ('留出余量。<a href="javascript:steal()">点我</a><iframe src="/api/terminals"></iframe>'
                    '<form action="/api/terminals" method="post"><button>go</button></form>'),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, released_remaining):
    """The two submissions graded once; return the grader and each one's gradebook score."""
    tmp = tmp_path_factory.mktemp("inert")
    build = class_builder()
    model = build.model_solutions(REPO / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")[NOTEBOOK]
    works = {
        "honest": build.Work(code={NOTEBOOK: build.MODEL}, answers=HONEST_ANSWERS),
        "hostile": build.Work(code={NOTEBOOK: model + HOSTILE_CODE}, answers=HOSTILE_ANSWERS),
    }
    for student, work in works.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        source = REPO / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        (folder / f"{NOTEBOOK}.ipynb").write_text(build.submission(released_remaining, source, work), encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", jobs=1)
    grader.collect(tmp / "incoming")
    report = grader.grade()
    assert all(result.graded for result in report.results), [r.reason for r in report.results]
    with grader.gradebook() as gb:
        scores = {s: gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, s).score for s in works}
    return grader, scores


def autograded(grader, student) -> nbformat.NotebookNode:
    return nbformat.read(grader.folder("autograded", student, ASSIGNMENT) / f"{NOTEBOOK}.ipynb", as_version=4)


def notebook_vectors(nb) -> Counter:
    """Script vectors of every HTML output and every rendered markdown cell of ``nb``."""
    found: Counter = Counter()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += script_vectors(render_markdown(cell.source, cell.get("attachments")))
        for output in cell.get("outputs", []):
            for mime, value in output.get("data", {}).items():
                if mime == "text/html":
                    found += script_vectors(value)
                elif mime != "text/plain" and not mime.startswith("image/"):
                    found[mime] += 1
    return found


def test_the_hostile_learner_scores_what_the_honest_one_scores(graded):
    """The model function scores 3 points for both: the displayed script changes nothing."""
    _, scores = graded
    assert scores == {"honest": 3.0, "hostile": 3.0}


def test_the_autograded_notebook_holds_no_script(graded):
    """No output and no markdown cell of the hostile autograded notebook renders a script vector."""
    grader, _ = graded
    assert notebook_vectors(autograded(grader, "hostile")) == Counter()


def test_what_the_hostile_learner_wrote_honestly_is_still_shown(graded):
    """The bold text of the display and of the answer, and the answer's words, stay in the autograded notebook."""
    grader, _ = graded
    nb = autograded(grader, "hostile")
    shown = [value for cell in nb.cells for output in cell.get("outputs", [])
             for mime, value in output.get("data", {}).items() if mime == "text/html"]
    assert any("<b>还在</b>" in value for value in shown), shown
    answers = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert "缓存字段放在前面，<b>前缀才稳定</b>。" in answers and "点我" in answers


def test_the_feedback_page_holds_no_script_of_the_learner(graded):
    """The hostile learner's feedback page has no script vector the honest learner's page lacks."""
    grader, _ = graded
    (hostile,) = grader.feedback_path("hostile", ASSIGNMENT)
    (honest,) = grader.feedback_path("honest", ASSIGNMENT)
    extra = script_vectors(hostile.read_text(encoding="utf-8")) - script_vectors(honest.read_text(encoding="utf-8"))
    assert extra == Counter()
