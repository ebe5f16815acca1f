"""The release a pre-manifest copy came from is the past version sharing the most unedited cells with it."""
from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ctx_course.learner.release_history import likeliest_release, past_releases


def _answer(source: str):
    cell = new_code_cell(source, id="f")
    cell.metadata["nbgrader"] = {"grade_id": "f", "solution": True}
    return cell


def test_the_version_sharing_most_unedited_cells_wins_and_answers_do_not_count():
    """Of three versions, the one equal to the learner's two unedited cells wins over one equal only in the answer."""
    learner = new_notebook(cells=[new_markdown_cell("甲", id="a"), new_markdown_cell("乙", id="b"), _answer("mine")])
    newest = new_notebook(cells=[new_markdown_cell("甲'", id="a"), new_markdown_cell("乙'", id="b"), _answer("mine")])
    middle = new_notebook(cells=[new_markdown_cell("甲", id="a"), new_markdown_cell("乙", id="b"), _answer("stub")])
    oldest = new_notebook(cells=[new_markdown_cell("甲", id="a"), new_markdown_cell("旧", id="b"), _answer("stub")])
    assert likeliest_release(learner, [newest, middle, oldest]) is middle


def test_no_shared_cell_means_no_release():
    """When no version shares a cell with the learner's notebook, there is no likeliest release."""
    learner = new_notebook(cells=[new_markdown_cell("我写的", id="a")])
    assert likeliest_release(learner, [new_notebook(cells=[new_markdown_cell("原文", id="a")])]) is None


def test_outside_a_git_checkout_there_is_no_history(tmp_path):
    """A course folder that is not in a git checkout has no past releases."""
    (tmp_path / "lessons" / "01-x").mkdir(parents=True)
    (tmp_path / "lessons" / "01-x" / "x.ipynb").write_text("{}", encoding="utf-8")
    assert past_releases(tmp_path, "01-x/x.ipynb") == []
