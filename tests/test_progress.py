"""ctx_course.learner.progress: the learner's progress, read from saved notebooks without running them."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from ctx_course.learner.notebook_merge import cell_digest
from ctx_course.learner.progress import (
    NotebookProgress,
    check_state,
    format_progress,
    is_answered,
    next_notebook,
    notebook_progress,
    progress_report,
    workspace_progress,
)
from ctx_course.learner.workspace import prepare_workspace
from ctx_reference.i18n import using

from conftest import KERNEL_MANAGER, REPO

NOTEBOOK = "02-remaining/remaining.ipynb"
WRONG = ("def remaining(window, read, write, input, max_tokens):\n"
         "    left = window - (read + write + input) - max_tokens\n"
         "    return left, left <= window / 10  # the tenth itself counted as too little\n")
RIGHT = ("def remaining(window, read, write, input, max_tokens):\n"
         "    left = window - (read + write + input) - max_tokens\n"
         "    return left, left < window / 10\n")
ANSWER = "The cache changes the price, not the room: every cached token still sits in the window."
STUB = "Write your answer here."


@pytest.mark.parametrize(("cell", "state"), [
    ({"execution_count": 4, "outputs": [{"output_type": "stream", "text": "✓ All 9 checks passed."}]}, "passed"),
    ({"execution_count": 4, "outputs": [{"output_type": "stream", "text": "×"},
                                        {"output_type": "error", "ename": "CheckFailed"}]}, "failed"),
    ({"execution_count": 4, "outputs": [{"output_type": "error", "ename": "NameError"}]}, "failed"),
    ({"execution_count": None, "outputs": []}, "not run"),
    ({"execution_count": 2, "outputs": []}, "passed"),
    ({"execution_count": "7", "outputs": "error"}, "not run"),  # a hand-edited file: wrong types count as nothing
    ({"outputs": [None, 3, {"output_type": "error"}]}, "failed"),
])
def test_a_check_cells_state_comes_from_its_saved_outputs(cell, state):
    """An error output means failed (a failing check and an unfinished stub both leave one); outputs or an
    execution count without one mean passed; neither means not run; values of the wrong type are ignored."""
    assert check_state(cell) == state


def test_a_question_is_answered_when_it_differs_from_the_release_copied():
    """With the manifest's digest of the released cell, any change counts; without one, a text other than the
    stub does; an empty or blank cell never counts."""
    released = {"cell_type": "markdown", "source": STUB}
    assert not is_answered(released, cell_digest(released), STUB)
    assert is_answered({"cell_type": "markdown", "source": ANSWER}, cell_digest(released), STUB)
    assert is_answered({"cell_type": "markdown", "source": ANSWER}, None, STUB)
    assert not is_answered({"cell_type": "markdown", "source": f"  {STUB}\n"}, None, STUB)
    assert not is_answered({"cell_type": "markdown", "source": "  \n"}, None, STUB)
    assert not is_answered({"cell_type": "markdown", "source": ""}, "0" * 64, STUB)


def _progress(path, passed=0, failed=0, answered=0, checks=1, questions=2, problem=None):
    return NotebookProgress(path, path, checks, passed, failed, questions, answered, problem)


def test_next_is_the_first_notebook_not_done_in_reading_order():
    """A notebook is done when every check passed and every question is answered; an unreadable notebook is not
    offered as next; when all are done there is no next."""
    first, second, third = _progress("01", 1, 0, 2), _progress("02", 0, 1, 2), _progress("03")
    assert next_notebook([first, second, third]) is second
    assert next_notebook([first, _progress("02", 1, 0, 1), third]).path == "02"
    assert next_notebook([_progress("02", problem="broken"), third]) is third
    assert next_notebook([first]) is None and next_notebook([]) is None


def test_the_view_names_each_notebook_and_what_to_open_next():
    """One line per notebook with its checks and questions, failing checks counted, then the next notebook and
    what is left in it; all done gives the closing line instead."""
    with using("en"):
        lines = format_progress([_progress("01", 1, 0, 2), _progress("02", 0, 1, 1), _progress("03")], "workspace-en/")
        assert lines[0].startswith("The saved notebooks in workspace-en/")
        assert lines[1].startswith("✓ 01") and lines[1].endswith("checks passed 1/1, questions answered 2/2")
        assert lines[2].startswith("× 02") and "checks passed 0/1 (1 failing), questions answered 1/2" in lines[2]
        assert lines[3].startswith("· 03")
        assert lines[4] == "(✓ done; × a check is failing; … partly done; · not started)"
        assert lines[5] == "Next: open 02 (1 check(s) not passed yet, 1 question(s) not answered)"
        done = format_progress([_progress("01", 1, 0, 2)], "workspace-en/")
        assert done[-1] == "All 1 notebooks are done: every check passes and every question is answered."
    with using("zh_CN"):
        assert format_progress([_progress("02", 0, 1, 1)], "workspace/")[-1] == (
            "下一步：打开 02（还有 1 个检查没通过、1 道问答题没答）")


@pytest.fixture
def workspace(tmp_path):
    """A fresh English workspace, as `make lab LANG=en` makes it."""
    folder = tmp_path / "workspace-en"
    prepare_workspace(REPO, folder, language="en")
    return folder


def _run(path, answer: str, monkeypatch) -> None:
    """Put ``answer`` in the notebook's answer cell, execute the notebook in a real kernel as the lab would
    (CTX_LANG=en, in its folder), and save it."""
    notebook = nbformat.read(path, as_version=4)
    next(cell for cell in notebook.cells if cell.get("id") == "remaining").source = answer
    monkeypatch.setenv("CTX_LANG", "en")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    NotebookClient(notebook, timeout=120, allow_errors=True, kernel_manager_class=KERNEL_MANAGER,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(notebook, path)


def _line(folder, number: str) -> str:
    with using("en"):
        return next(line for line in progress_report(folder, "en").splitlines() if f" {number} · " in line)


def test_progress_of_a_lesson_run_with_a_wrong_then_a_right_answer(workspace, monkeypatch):
    """Notebook 02 executed in a kernel with a wrong answer and saved shows its check failing; a question
    written in the saved file counts as answered; executed again with a right answer, its check passes. The
    other notebooks, never opened, show nothing done, and nothing of the workspace was run or changed by the
    view itself."""
    path = workspace / NOTEBOOK
    assert _line(workspace, "02").endswith("checks passed 0/1, questions answered 0/2")
    _run(path, WRONG, monkeypatch)
    saved = path.read_bytes()
    assert "checks passed 0/1 (1 failing), questions answered 0/2" in _line(workspace, "02")
    assert path.read_bytes() == saved
    notebook = json.loads(saved)
    next(cell for cell in notebook["cells"] if cell["id"] == "q_cache_fields")["source"] = ANSWER
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert "checks passed 0/1 (1 failing), questions answered 1/2" in _line(workspace, "02")
    _run(path, RIGHT, monkeypatch)
    assert _line(workspace, "02").startswith("… 02") and _line(workspace, "02").endswith(
        "checks passed 1/1, questions answered 1/2")
    assert _line(workspace, "01").startswith("· 01") and _line(workspace, "01").endswith(
        "checks passed 0/2, questions answered 0/3")
    assert progress_report(workspace, "en").splitlines()[-1].startswith("Next: open 01-window-math/window_math.ipynb")


def test_a_broken_notebook_or_manifest_is_named_and_the_rest_still_shown(workspace):
    """A notebook that is not JSON is one line naming it; a manifest that cannot be read makes questions be
    judged against the stub; the other notebooks are still reported."""
    (workspace / "03-recall" / "recall.ipynb").write_text("{not json", encoding="utf-8")
    (workspace / ".lessons-manifest.json").write_text("[]", encoding="utf-8")
    found = {item.path: item for item in workspace_progress(workspace, "en")}
    broken = found["03-recall/recall.ipynb"]
    assert broken.problem is not None and "03-recall/recall.ipynb" in broken.problem
    assert found["02-remaining/remaining.ipynb"] == notebook_progress(
        "02-remaining/remaining.ipynb", json.loads((workspace / NOTEBOOK).read_text(encoding="utf-8")), {}, STUB,
        "Prerequisites")
    assert found["02-remaining/remaining.ipynb"].answered == 0
    with using("en"):
        report = progress_report(workspace, "en")
    assert re.search(r"^! 03-recall/recall\.ipynb +cannot be read: 03-recall/recall\.ipynb is not a notebook", report,
                     flags=re.M)


def test_the_start_pages_cell_and_the_command_print_the_same_view(workspace):
    """The start page's progress cell, run in the workspace as the lab runs it, prints what
    `python -m ctx_course progress --lang en` prints from the course folder."""
    page = json.loads((workspace / "start-here.ipynb").read_text(encoding="utf-8"))
    code = next(cell["source"] for cell in page["cells"] if cell["cell_type"] == "code")
    env = {**os.environ, "CTX_LANG": "en"}
    cell = subprocess.run([sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    command = subprocess.run([sys.executable, "-m", "ctx_course", "progress", "--lang", "en", "--root",
                              str(workspace.parent)], capture_output=True, text=True, timeout=120)
    assert command.returncode == 0, command.stderr
    assert cell.stdout == command.stdout and cell.stdout.startswith("The saved notebooks in workspace-en/")


def test_the_command_without_a_workspace_says_what_to_run(tmp_path):
    """`progress` before any `make lab` prints one line naming the missing folder and the command that makes it."""
    result = subprocess.run([sys.executable, "-m", "ctx_course", "progress", "--lang", "en", "--root", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == ("error: there is no workspace-en/ yet: run make lab LANG=en first, which copies "
                                     "the notebooks and opens JupyterLab")
