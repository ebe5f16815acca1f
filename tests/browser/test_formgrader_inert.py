"""A hostile learner's submission, opened in the instructor's Formgrader in Chromium, runs none of its script.

A learner hands in the model answer of notebook 02 followed by ``display(HTML(<script>…<img
onerror=…>))`` and free-response answers in raw HTML with the same attack: each reads the token from
the page's address and the XSRF cookie, asks the instructor's Jupyter server for a terminal
(``POST /api/terminals``) and writes a file through its contents API (``PUT /api/contents/…``),
each vector a file of its own name, and sets the page's title; an answer also links to a page
``evil.html`` handed in beside the notebook (the Formgrader serves a submission's files on its
origin). The real grader grades it into the working folder of a copy of the course; the
instructor's JupyterLab with nbgrader's Formgrader (as ``make formgrader`` starts it) serves that
course; Chromium opens the submission's page there. Afterwards no file was written, no terminal
exists and the title is the Formgrader's, while the learner's honest text shows, and the learner's
links lead nowhere. As a control, the same ``onerror`` put into that page by hand does write its
file: the page's origin can reach the API, so the absence above is the sanitizer's doing. The same
script written into the autograded file afterwards (a notebook autograded before the step existed)
does not run either: the Formgrader's own exporter makes it inert (``nbgrader_config.py``).
"""
from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest

from conftest import REPO, class_builder
from labserver import copy_course, start_formgrader

ASSIGNMENT, NOTEBOOK = "02-remaining", "remaining"
WAIT_FOR_ATTACK = 10.0  # seconds the control's file may take to appear


def attack(name: str) -> str:
    """JavaScript that opens a terminal and writes ``pwned-<name>.txt`` on the server that serves its page."""
    return (
        "(function(){var t=new URLSearchParams(location.search).get('token')||'';"
        "var h={'Authorization':'token '+t,'Content-Type':'application/json'};"
        "var x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1];if(x){h['X-XSRFToken']=decodeURIComponent(x);}"
        "fetch('/api/terminals',{method:'POST',headers:h});"
        f"fetch('/api/contents/pwned-{name}.txt',{{method:'PUT',headers:h,"
        "body:JSON.stringify({type:'file',format:'text',content:'pwned'})});"
        "document.title='PWNED';})()"
    )


def vectors(name: str) -> str:
    """A script tag and an image's onerror, each running ``attack`` with a name of its own."""
    return f'<script>{attack(name + "-script")}</script><img src=x onerror="{attack(name + "-onerror")}">'


HOSTILE_CODE = f'''

from IPython.display import HTML, display

display(HTML({vectors("output") + "<b>诚实的输出</b>"!r}))
'''
ANSWERS = {
    "q_cache_fields": f"缓存字段放在前面，<b>前缀才稳定</b>。{vectors('answer')}",
    "q_why_early": f'留出余量。<a href="javascript:{attack("link")}">点我</a> [我的网页](evil.html)',
}
# Handed in beside the notebook: the Formgrader serves the submission's files on its own origin.
EVIL_PAGE = f"<html><body><script>{attack('file')}</script></body></html>"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> tuple[Path, int]:
    """A copy of the course whose grading/ holds the hostile submission, autograded; return it and its id."""
    from ctx_course.grading.grader import Grader

    tmp = tmp_path_factory.mktemp("hostile-formgrader")
    root = copy_course(tmp / "course")
    build = class_builder()
    source = REPO / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    model = build.model_solutions(source)[NOTEBOOK]
    grader = Grader(REPO, work=root / "grading", jobs=1)
    assert grader.prepare([ASSIGNMENT]) == {}
    released = root / "grading" / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    work = build.Work(code={NOTEBOOK: model + HOSTILE_CODE}, answers=ANSWERS)
    folder = tmp / "incoming" / "mallory" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{NOTEBOOK}.ipynb").write_text(build.submission(released, source, work), encoding="utf-8")
    (folder / "evil.html").write_text(EVIL_PAGE, encoding="utf-8")
    grader.collect(tmp / "incoming")
    (result,) = grader.grade().results
    assert result.graded, result.reason
    with grader.gradebook() as gb:
        submission = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "mallory")
        assert submission.score == 3.0
        return root, submission.id


@pytest.fixture(scope="module")
def formgrader_of(course, tmp_path_factory):
    """The instructor's JupyterLab with the Formgrader on the hostile course; stopped after the module."""
    root, _ = course
    server = start_formgrader(root, tmp_path_factory.mktemp("formgrader-log") / "formgrader.log")
    try:
        yield server
    finally:
        server.stop()


def written(root: Path, name: str = "") -> list[str]:
    return sorted(path.name for path in root.glob(f"pwned-{name}*.txt"))


def terminals(server) -> object:
    status, body = server.get("api/terminals")
    return body.decode() if status == 200 else status  # 404: this server offers no terminals at all


PAGE_JS = """() => ({
  title: document.title, text: document.body.innerText,
  links: Object.fromEntries([...document.querySelectorAll('a')].map((a) => [a.innerText, a.getAttribute('href')])),
})"""
INJECT_JS = ("(markup) => { const div = document.createElement('div'); div.innerHTML = markup; "
             "document.body.append(div); }")


def test_the_submission_page_runs_no_script_of_the_learner(browser, course, formgrader_of):
    root, submission = course
    before = terminals(formgrader_of)
    page = browser.new_page()
    try:
        page.goto(formgrader_of.url(f"formgrader/submissions/{submission}/"), wait_until="networkidle")
        page.wait_for_timeout(2000)
        shown = page.evaluate(PAGE_JS)
        assert [written(root, name) for name in ("output", "answer", "link", "file")] == [[], [], [], []]
        assert terminals(formgrader_of) == before
        assert shown["title"] != "PWNED"
        for honest in ("诚实的输出", "前缀才稳定", "点我", "def remaining"):
            assert honest in shown["text"], honest
        # the links the learner wrote lead nowhere (one to a script, one to the page handed in beside the notebook)
        assert shown["links"]["点我"] is None and shown["links"]["我的网页"] is None
        # The control: the same onerror, put into this very page by hand, reaches the server's API.
        page.evaluate(INJECT_JS, f'<img src=x onerror="{attack("control")}">')
        deadline = time.monotonic() + WAIT_FOR_ATTACK
        while not written(root, "control") and time.monotonic() < deadline:
            page.wait_for_timeout(200)
        assert written(root, "control") == ["pwned-control.txt"]
    finally:
        page.close()


def test_a_notebook_autograded_before_the_step_is_made_inert_as_the_formgrader_shows_it(browser, course,
                                                                                        formgrader_of):
    """The second line of defence: script put into the autograded file afterwards (as a notebook autograded
    by an earlier release would hold it) does not run either: the Formgrader's exporter makes it inert."""
    root, submission = course
    path = root / "grading" / "autograded" / "mallory" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    kept = path.read_bytes()
    nb = nbformat.read(path, as_version=4)
    code = next(cell for cell in nb.cells if cell.cell_type == "code")
    code.outputs.append(nbformat.v4.new_output(
        "display_data", data={"text/html": vectors("stale-output") + "<b>旧的输出</b>", "text/plain": "旧"}))
    nb.cells.append(nbformat.v4.new_markdown_cell(vectors("stale-markdown")))
    nbformat.write(nb, path)
    page = browser.new_page()
    try:
        page.goto(formgrader_of.url(f"formgrader/submissions/{submission}/"), wait_until="networkidle")
        page.wait_for_timeout(2000)
        shown = page.evaluate(PAGE_JS)
        assert written(root, "stale") == []
        assert shown["title"] != "PWNED"
        assert "旧的输出" in shown["text"]
    finally:
        page.close()
        path.write_bytes(kept)
