"""Merging a new release into a learner's notebook updates every untouched cell and loses nothing the learner wrote."""
from __future__ import annotations

import copy

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from ctx_course.learner.notebook_merge import cell_digest, cell_key, merge_notebook, release_record


def _answer(key: str, source: str):
    cell = new_code_cell(source, id=key)
    cell.metadata["nbgrader"] = {"grade_id": key, "solution": True, "grade": False, "locked": False,
                                 "schema_version": 3, "task": False}
    return cell


def _check(key: str, source: str):
    cell = new_code_cell(source, id=key)
    cell.metadata["nbgrader"] = {"grade_id": key, "solution": False, "grade": True, "locked": True,
                                 "points": 2, "schema_version": 3, "task": False}
    return cell


def _release_v1():
    return new_notebook(cells=[
        new_markdown_cell("# 标题", id="intro"),
        new_code_cell("demo()", id="demo"),
        _answer("f", "def f():\n    raise NotImplementedError()"),
        _check("check_f", "check_exercise('f', f)"),
        new_markdown_cell("结尾", id="outro"),
    ])


def _sources(notebook) -> dict[str, str]:
    return {cell_key(cell): cell.source for cell in notebook.cells}


def _keys(notebook) -> list[str]:
    return [cell_key(cell) for cell in notebook.cells]


def _cell(notebook, key):
    return next(cell for cell in notebook.cells if cell_key(cell) == key)


def test_untouched_cells_take_the_new_release_and_the_answer_stays():
    """Narrative, demo and check cells the learner did not edit become the new version; the learner's answer is kept."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    _cell(learner, "f").source = "def f():\n    return 42"
    v2 = copy.deepcopy(v1)
    corrections = [("intro", "# 新标题"), ("demo", "demo(2)"), ("check_f", "check_exercise('f', f, strict=True)")]
    for key, text in corrections:
        _cell(v2, key).source = text
    merged, report = merge_notebook(learner, v2, release_record(v1))
    assert _sources(merged) == {"intro": "# 新标题", "demo": "demo(2)", "f": "def f():\n    return 42",
                                "check_f": "check_exercise('f', f, strict=True)", "outro": "结尾"}
    assert set(report.updated) == {"intro", "demo", "check_f"} and report.kept_answers == ("f",)
    nbformat.validate(merged)


def test_an_untouched_answer_stub_is_kept_and_reported_behind():
    """An answer cell stays as it is even when untouched and changed in the release; it is listed as behind."""
    v1 = _release_v1()
    v2 = copy.deepcopy(v1)
    _cell(v2, "f").source = "def f(x):\n    raise NotImplementedError()"
    merged, report = merge_notebook(copy.deepcopy(v1), v2, release_record(v1))
    assert _cell(merged, "f").source == _cell(v1, "f").source
    assert report.kept_behind == ("f",) and report.updated == ()


def test_an_edited_cell_is_kept_even_when_the_release_changed_it():
    """A narrative cell the learner edited keeps their text; the release's change to it is reported, not applied."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    _cell(learner, "outro").source = "结尾 + 我的笔记"
    v2 = copy.deepcopy(v1)
    _cell(v2, "outro").source = "新的结尾"
    merged, report = merge_notebook(learner, v2, release_record(v1))
    assert _cell(merged, "outro").source == "结尾 + 我的笔记"
    assert report.kept_edited == ("outro",) and report.kept_behind == ("outro",) and not report.changed


def test_updated_code_cells_lose_their_outputs_and_unchanged_ones_keep_them():
    """A demo cell replaced by its new version has no outputs or run count; an unchanged run cell keeps its output."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    for key in ("demo", "check_f"):
        cell = _cell(learner, key)
        cell.outputs = [new_output("stream", name="stdout", text="ran\n")]
        cell.execution_count = 3
    v2 = copy.deepcopy(v1)
    _cell(v2, "demo").source = "demo(2)"
    merged, _ = merge_notebook(learner, v2, release_record(v1))
    assert _cell(merged, "demo").outputs == [] and _cell(merged, "demo").execution_count is None
    assert _cell(merged, "check_f").outputs[0]["text"] == "ran\n" and _cell(merged, "check_f").execution_count == 3


def test_cells_added_and_removed_by_the_release():
    """A new release cell appears in its place; an untouched cell the release dropped goes; an edited one stays."""
    v1 = _release_v1()
    v1.cells.insert(4, new_markdown_cell("旧提示", id="hint"))
    learner = copy.deepcopy(v1)
    _cell(learner, "demo").source = "demo()  # 我试过"
    v2 = copy.deepcopy(v1)
    v2.cells = [c for c in v2.cells if cell_key(c) not in ("hint", "demo")]
    v2.cells.insert(1, new_markdown_cell("新的说明", id="explain"))
    merged, report = merge_notebook(learner, v2, release_record(v1))
    assert _keys(merged) == ["intro", "demo", "explain", "f", "check_f", "outro"]  # demo follows intro, as before
    assert report.added == ("explain",) and report.removed == ("hint",) and report.kept_edited == ("demo",)


def test_cells_the_learner_added_follow_the_cell_they_followed():
    """Cells the learner inserted (at the top and after the answer) keep their place relative to their neighbours."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    learner.cells.insert(0, new_markdown_cell("我的目录", id="mine-top"))
    learner.cells.insert(4, new_code_cell("f()", id="mine-try"))  # after the answer f
    v2 = copy.deepcopy(v1)
    v2.cells.insert(3, new_markdown_cell("提示", id="tip"))  # between f and check_f
    merged, report = merge_notebook(learner, v2, release_record(v1))
    assert _keys(merged) == ["mine-top", "intro", "demo", "f", "mine-try", "tip", "check_f", "outro"]
    assert report.own == 2


def test_a_cell_the_learner_deleted_stays_deleted():
    """A release cell the learner deleted is not brought back, even if the release changed it; it is reported."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    learner.cells = [c for c in learner.cells if cell_key(c) != "demo"]
    v2 = copy.deepcopy(v1)
    _cell(v2, "demo").source = "demo(2)"
    merged, report = merge_notebook(learner, v2, release_record(v1))
    assert "demo" not in _keys(merged) and report.left_deleted == ("demo",)


def test_without_a_record_differing_cells_are_kept_and_missing_cells_are_added():
    """With no record, a cell that differs from the new release is kept, and missing release cells are added."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    learner.cells = [c for c in learner.cells if cell_key(c) != "outro"]
    v2 = copy.deepcopy(v1)
    _cell(v2, "intro").source = "# 新标题"
    merged, report = merge_notebook(learner, v2, None)
    assert _cell(merged, "intro").source == "# 标题" and _cell(merged, "outro").source == "结尾"
    assert report.kept_edited == ("intro",) and report.added == ("outro",) and report.updated == ()


def test_a_pasted_copy_of_an_answer_cell_is_kept_as_the_learners_own():
    """A pasted answer cell (same grade_id, no id) survives beside the original; the first one is matched."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    pasted = copy.deepcopy(_cell(learner, "f"))
    del pasted["id"]
    pasted.source = "def f():\n    return 41  # 第二个版本"
    learner.cells.insert(3, pasted)
    merged, report = merge_notebook(learner, copy.deepcopy(v1), release_record(v1))
    sources = [cell.source for cell in merged.cells]
    assert "def f():\n    return 41  # 第二个版本" in sources and report.own == 1
    assert len({cell.id for cell in merged.cells}) == len(merged.cells)
    nbformat.validate(merged)


def test_merge_changes_neither_input():
    """The learner's notebook and the release are left as they were."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    _cell(learner, "f").source = "def f():\n    return 1"
    v2 = copy.deepcopy(v1)
    _cell(v2, "demo").source = "demo(2)"
    before = copy.deepcopy((learner, v2))
    merge_notebook(learner, v2, release_record(v1))
    assert (learner, v2) == before


EDIT = st.sampled_from(["keep", "edit", "delete"])
CHANGE = st.sampled_from(["same", "change", "remove"])


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(EDIT, min_size=5, max_size=5), changes=st.lists(CHANGE, min_size=5, max_size=5),
       inserted=st.lists(st.integers(0, 5), max_size=3))
def test_nothing_the_learner_wrote_is_lost(edits, changes, inserted):
    """For any edits, deletions and insertions by the learner and any release change, every cell they wrote survives."""
    v1 = _release_v1()
    learner = copy.deepcopy(v1)
    for cell, edit in zip(list(learner.cells), edits, strict=True):
        if edit == "edit":
            cell.source += "\n# 我改的"
        elif edit == "delete":
            learner.cells.remove(cell)
    for number, position in enumerate(inserted):
        mine = new_markdown_cell(f"我的第 {number} 格", id=f"mine-{number}")
        learner.cells.insert(min(position, len(learner.cells)), mine)
    v2 = copy.deepcopy(v1)
    for cell, change in zip(list(v2.cells), changes, strict=True):
        if change == "change":
            cell.source += "\n# 新版"
        elif change == "remove":
            v2.cells.remove(cell)
    record = release_record(v1)
    merged, _ = merge_notebook(learner, v2, record)
    written = [c for c in learner.cells
               if c.metadata.get("nbgrader", {}).get("solution") or cell_digest(c) != record.get(c.id)]
    merged_digests = [cell_digest(c) for c in merged.cells]
    assert [c.id for c in written if cell_digest(c) not in merged_digests] == []
    new_digests = {c.id: cell_digest(c) for c in v2.cells}
    for key in set(_keys(merged)) & set(_keys(learner)) & set(record):  # each is the learner's or the new version
        assert cell_digest(_cell(merged, key)) in (cell_digest(_cell(learner, key)), new_digests.get(key))
    nbformat.validate(merged)
