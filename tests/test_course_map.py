"""ctx_course.learner.course_map: the course map read from the release, its time estimate and the start page."""
from __future__ import annotations

import json

import pytest

from ctx_course.learner.course_map import (
    START_PAGE,
    course_map,
    estimated_minutes,
    lesson_facts,
    prose_counts,
    start_page,
)
from ctx_course.learner.workspace import prepare_workspace

from conftest import LESSONS, REPO, notebooks

LESSONS_EN = REPO / "lessons-en"


def _release(folder):
    return [(p.relative_to(folder).as_posix(), json.loads(p.read_text(encoding="utf-8"))) for p in notebooks(folder)]


@pytest.mark.parametrize(("counts", "minutes"), [
    ((900, 0, 1, 2), 35),  # 6 + 15 + 10 = 31, up to 35
    ((0, 1500, 1, 2), 30),  # 5 + 15 + 10 = 30 exactly
    ((150, 0, 0, 0), 5),  # 1 minute of reading, up to 5
    ((0, 0, 0, 0), 0),
    ((7200, 0, 2, 5), 105),  # 48 + 30 + 25 = 103, up to 105
])
def test_the_estimate_is_the_stated_formula(counts, minutes):
    """words / 150 + CJK characters / 300 + 15 per exercise + 5 per question, rounded up to 5 minutes."""
    assert estimated_minutes(*counts) == minutes


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_the_estimate_refuses_a_count_that_is_not_a_natural_number(bad):
    """A count that is not an int >= 0 is refused naming the argument and the value."""
    with pytest.raises(ValueError, match=rf"words must be an int >= 0 \(got {bad!r}\)"):
        estimated_minutes(bad, 0, 0, 0)


def test_prose_counts_leave_out_code_links_and_math():
    """Words and CJK characters are counted in the text a person reads, not in code spans, link targets or math."""
    assert prose_counts("Keep `head + tail` lines, see [the glossary](../glossary.en.md#cache).") == (5, 0)
    assert prose_counts("余量 $x = \\frac{a}{b}$ 要算进去：window") == (1, 6)  # 余量 + 要算进去
    assert prose_counts("") == (0, 0)


def _notebook(first: str, *cells) -> dict:
    return {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": first}, *cells], "metadata": {}}


def test_lesson_facts_read_the_title_prerequisites_and_answers():
    """The title follows "NN ·"; the prerequisites are the numbers on the bold "Prerequisites" line only; an
    answer code cell is an exercise, an answer markdown cell a question, and answers are not prose; a "## N."
    heading holding the optional mark names an optional section."""
    answer = {"nbgrader": {"solution": True, "grade": True, "grade_id": "q"}}
    notebook = _notebook(
        "# 05 · Trimming output\n\nSee 03 · Recall.\n\n**Prerequisites**: 04 · Assembly (budgets); 01 · Window.",
        {"cell_type": "code", "id": "b", "metadata": {"nbgrader": {"solution": True, "grade_id": "f"}},
         "source": "def f(): ...", "outputs": [], "execution_count": None},
        {"cell_type": "markdown", "id": "c", "metadata": answer, "source": "many words here that are not counted"},
        {"cell_type": "markdown", "id": "d", "metadata": {}, "source": "## 3. Details (optional on first reading)\n"},
        {"cell_type": "markdown", "id": "e", "metadata": {}, "source": "## 4. More\n\noptional on first reading"},
    )
    facts = lesson_facts("05-trim-lines/trim_lines.ipynb", notebook, "Prerequisites", "optional on first reading")
    assert facts.optional == ("3",)
    assert (facts.number, facts.title, facts.prerequisites) == ("05", "Trimming output", ("04", "01"))
    assert (facts.exercises, facts.questions) == (1, 1)
    assert facts.words == sum(prose_counts(notebook["cells"][i]["source"])[0] for i in (0, 3, 4))  # a, d, e


def test_lesson_facts_refuse_a_notebook_without_a_title():
    """A notebook that does not start with '# NN · title' is refused naming its path."""
    with pytest.raises(ValueError, match="notebook 'x.ipynb' must start with"):
        lesson_facts("x.ipynb", _notebook("no heading"), "Prerequisites")


@pytest.mark.parametrize(("folder", "language"), [(LESSONS, "zh_CN"), (LESSONS_EN, "en")])
def test_the_course_map_of_each_release(folder, language):
    """Both releases give eleven notebooks in order, the same prerequisites (each an earlier notebook; 01 has
    none, 02 needs 01, 11 needs 06 and 09), the same exercises and questions (32 questions in all), the sections
    marked optional on first reading (06 §8, 09 §14), and the
    English prose is counted in words, the Chinese mostly in characters."""
    lessons = course_map(_release(folder), language)
    assert [lesson.number for lesson in lessons] == [f"{n:02d}" for n in range(1, 12)]
    needs = {lesson.number: lesson.prerequisites for lesson in lessons}
    assert needs["01"] == () and needs["02"] == ("01",) and needs["11"] == ("06", "09")
    assert all(all(number < lesson.number for number in lesson.prerequisites) for lesson in lessons)
    assert sum(lesson.questions for lesson in lessons) == 32
    assert {lesson.number: lesson.optional for lesson in lessons if lesson.optional} == {"06": ("8",), "09": ("14",)}
    assert [lesson.exercises for lesson in lessons] == [2, 1, 2, 1, 1, 2, 1, 1, 3, 2, 1]
    if language == "en":
        assert all(lesson.words > 5 * lesson.cjk for lesson in lessons)
    else:
        assert all(lesson.cjk > lesson.words for lesson in lessons)


def test_both_editions_agree_on_the_prerequisites_and_roughly_on_the_time():
    """The two editions' maps name the same prerequisites, and their estimates differ by at most a third."""
    chinese, english = course_map(_release(LESSONS), "zh_CN"), course_map(_release(LESSONS_EN), "en")
    assert [lesson.prerequisites for lesson in chinese] == [lesson.prerequisites for lesson in english]
    for zh, en in zip(chinese, english):
        assert abs(zh.minutes - en.minutes) <= max(zh.minutes, en.minutes) / 3, (zh.number, zh.minutes, en.minutes)


def test_the_long_notebooks_take_longest():
    """06 and 09, the longest to read, get the two largest English estimates; 02 one of the smallest."""
    minutes = {lesson.number: lesson.minutes for lesson in course_map(_release(LESSONS_EN), "en")}
    assert sorted(minutes, key=minutes.get)[-2:] in (["06", "09"], ["09", "06"])
    assert minutes["02"] <= sorted(minutes.values())[2]


@pytest.mark.parametrize(("language", "glossary", "other"), [("en", "glossary.en.md", "glossary.md"),
                                                             ("zh_CN", "glossary.md", "glossary.en.md")])
def test_the_start_page_links_each_notebook_and_the_editions_glossary_only(language, glossary, other):
    """The page holds one row per notebook with a link that resolves inside the workspace, its edition's
    glossary and not the other's, a progress cell, and carries the edition like the lessons do."""
    folder = LESSONS_EN if language == "en" else LESSONS
    page = start_page(course_map(_release(folder), language), language)
    text = "\n".join(cell["source"] for cell in page["cells"] if cell["cell_type"] == "markdown")
    for path in notebooks(folder):
        assert f"]({path.relative_to(folder).as_posix()})" in text
    assert f"]({glossary})" in text and other not in text
    code = [cell["source"] for cell in page["cells"] if cell["cell_type"] == "code"]
    assert code == ['from ctx_course.learner.progress import progress_report\n\nprint(progress_report("."))']
    assert page["metadata"]["ctx_edition"] == language
    assert "[06](06-strategies/strategies.ipynb), [09](09-context-ledger/context_ledger.ipynb)" in text or \
        "[06](06-strategies/strategies.ipynb)、[09](09-context-ledger/context_ledger.ipynb)" in text  # 11's
    if language == "en":
        assert "Prerequisites" in text and "(§8 optional on first reading)" in text and "先修" not in text
        # a learner's machine may have no CJK font: the English page holds no Chinese but the notebooks' titles
        titles = "".join(lesson.title for lesson in course_map(_release(folder), language))
        assert [ch for ch in text if "\u4e00" <= ch <= "\u9fff" and ch not in titles] == []
    else:
        assert "（其中 §14 初读可跳过）" in text


def test_the_workspace_gets_the_start_page_and_keeps_a_saved_run_of_it(tmp_path):
    """prepare_workspace writes start-here.ipynb; run again on a page whose cells still say the same (a saved
    progress output in it), it leaves the page alone; a page whose text is stale is replaced."""
    prepare_workspace(REPO, tmp_path, language="en")
    page = tmp_path / START_PAGE
    notebook = json.loads(page.read_text(encoding="utf-8"))
    notebook["cells"][-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["saved run\n"]}]
    notebook["cells"][0]["source"] = notebook["cells"][0]["source"].splitlines(keepends=True)  # as Jupyter saves
    page.write_text(json.dumps(notebook), encoding="utf-8")
    prepare_workspace(REPO, tmp_path, language="en")
    assert json.loads(page.read_text(encoding="utf-8"))["cells"][-1]["outputs"][0]["text"] == ["saved run\n"]
    notebook["cells"][0]["source"] = "an old course map"
    page.write_text(json.dumps(notebook), encoding="utf-8")
    prepare_workspace(REPO, tmp_path, language="en")
    fresh = json.loads(page.read_text(encoding="utf-8"))
    assert fresh["cells"][0]["source"].startswith("# Start here") and fresh["cells"][-1]["outputs"] == []
