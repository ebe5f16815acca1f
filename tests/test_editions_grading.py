"""A class that mixes both editions grades as if it were one; each feedback page speaks its release's language.

Eight students hand in notebooks 02 and 07: the model answers, a plausible wrong answer, the
release untouched and a wrong answer with its check cell turned off, each once from ``lessons/``
and once from ``lessons-en/``; a ninth, a Chinese notebook whose metadata names an edition in a
form no release writes. The gradebook's
rows, ``grades.csv`` and the notes of the run are the same for the two copies of each; the
English copies' feedback shows their check cells and check lines in English.
"""
from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from ctx_course.grading.grader import Grader
from ctx_reference.i18n import gettext, using

from conftest import REPO, class_builder

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]

NOTEBOOKS = {"02-remaining": "remaining", "07-render": "render"}
EDITIONS = {"zh": "lessons", "en": "lessons-en"}
WRONG = {  # what a learner might write: the alarm one token late, the rules left unchecked
    "02-remaining": {"remaining": '''
def remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left <= window / 10
'''},
}
ALL_PASSED = "全部 {count} 个检查通过。"


KINDS = ("model", "wrong", "blank", "tamper")


def _work(build, assignment: str, kind: str):
    if kind == "model":
        source = REPO / "solutions" / assignment / f"{NOTEBOOKS[assignment]}.ipynb"
        return build.Work(code={grade_id: build.MODEL for grade_id in build.model_solutions(source)})
    if kind == "wrong" and assignment in WRONG:
        return build.Work(code=WRONG[assignment])
    if kind == "tamper" and assignment in WRONG:  # the wrong answer, and its check cell turned off
        return build.Work(code=WRONG[assignment], edit={"check_remaining": "# too strict, skipped\npass"})
    return build.Work()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("editions")
    build = class_builder()
    for edition, folder in EDITIONS.items():
        for kind in KINDS:
            for assignment, name in NOTEBOOKS.items():
                target = tmp / "incoming" / f"{kind}-{edition}" / assignment
                target.mkdir(parents=True)
                released = REPO / folder / assignment / f"{name}.ipynb"
                source = REPO / "solutions" / assignment / f"{name}.ipynb"
                text = build.submission(released, source, _work(build, assignment, kind))
                (target / f"{name}.ipynb").write_text(text, encoding="utf-8")
    # a Chinese notebook whose metadata claims another edition, in a form no release writes
    odd = tmp / "incoming" / "model-odd" / "02-remaining" / "remaining.ipynb"
    odd.parent.mkdir(parents=True)
    notebook = json.loads((tmp / "incoming" / "model-zh" / "02-remaining" / "remaining.ipynb").read_text("utf-8"))
    notebook["metadata"]["ctx_edition"] = {"en": True}
    odd.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", sandbox=False, jobs=1, deadlines=False)
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return tmp / "work", grader, {(r.student, r.assignment): r for r in report.results}


def _cell_scores(work: Path, student: str, assignments=tuple(NOTEBOOKS)) -> dict:
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}") as gb:
        return {(assignment, g.name): (g.auto_score, g.manual_score, g.needs_manual_grade, g.max_score)
                for assignment in assignments for g in gb.find_submission(assignment, student).notebooks[0].grades}


def _check_cells() -> set[str]:
    from ctx_course.cells import is_check_cell

    cells = set()
    for assignment, name in NOTEBOOKS.items():
        notebook = json.loads((REPO / "solutions" / assignment / f"{name}.ipynb").read_text(encoding="utf-8"))
        cells |= {c["metadata"]["nbgrader"]["grade_id"] for c in notebook["cells"] if is_check_cell(c)}
    return cells


def test_each_answer_scores_the_same_in_both_editions(graded):
    """Model, wrong and blank: every cell's score in the gradebook is the same for the Chinese and the English copy."""
    work, _, results = graded
    for kind in KINDS:
        assert _cell_scores(work, f"{kind}-zh") == _cell_scores(work, f"{kind}-en"), kind
    model = _cell_scores(work, "model-zh")
    checks = {cell: row for cell, row in model.items() if cell[1] in _check_cells()}
    assert checks and all(auto == top for auto, _, _, top in checks.values()), model
    assert _cell_scores(work, "wrong-zh") != model and _cell_scores(work, "blank-zh") != model


def test_grades_csv_and_the_runs_notes_are_the_same_for_both_copies(graded):
    """grades.csv has the same row for both copies of each answer, and no edition earns a tamper note."""
    work, _, results = graded
    with (work / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    for kind in KINDS:
        zh = {k: v for k, v in rows[f"{kind}-zh"].items() if k != "student_id"}
        en = {k: v for k, v in rows[f"{kind}-en"].items() if k != "student_id"}
        assert zh == en, kind
        for assignment in NOTEBOOKS:
            tampered = ("edited read-only cells restored: check_remaining",) if (
                kind == "tamper" and assignment == "02-remaining") else ()
            assert results[f"{kind}-zh", assignment].notes == results[f"{kind}-en", assignment].notes == tampered


def test_a_check_cell_turned_off_is_restored_in_either_edition(graded):
    """The English copy's check cell edited to `pass` is put back (in English) and fails, as the Chinese copy's."""
    work, grader, _ = graded
    assert _cell_scores(work, "tamper-en")["02-remaining", "check_remaining"][0] == 0
    page = _feedback(grader, "tamper-en", "02-remaining")
    assert "too strict, skipped" not in page


def test_odd_edition_metadata_changes_nothing_but_the_language(graded):
    """A Chinese notebook whose metadata names no edition a release writes is graded, and read, as Chinese."""
    work, grader, results = graded
    assert _cell_scores(work, "model-odd", ["02-remaining"]) == _cell_scores(work, "model-zh", ["02-remaining"])
    assert results["model-odd", "02-remaining"].notes == ()
    assert "个检查通过" in _feedback(grader, "model-odd", "02-remaining")


def _feedback(grader: Grader, student: str, assignment: str) -> str:
    [page] = grader.feedback_path(student, assignment)
    return html.unescape(page.read_text(encoding="utf-8"))


def test_the_english_copys_feedback_is_in_english(graded):
    """The English model answer's page shows the check line in English (its read-only cells are the English
    release's: tests/test_editions.py::test_read_only_cells_put_back_in_english_are_the_english_releases)."""
    _, grader, _ = graded
    with using("en"):
        passed = gettext(ALL_PASSED)
    assert passed != ALL_PASSED, "the check line has no English translation"
    english, chinese = _feedback(grader, "model-en", "07-render"), _feedback(grader, "model-zh", "07-render")
    head = ALL_PASSED.split("{")[1].split("}")[1]  # "个检查通过。"
    assert head in chinese and head not in english
    assert passed.split("{")[0].strip() in english


def test_an_untouched_english_answer_is_scored_as_an_untouched_chinese_one(graded):
    """The blank copies: nothing waits for a hand grade in either edition; the English page shows the English stub."""
    _, grader, results = graded
    assert results["blank-en", "02-remaining"].manual_pending == results["blank-zh", "02-remaining"].manual_pending == 0
    page = _feedback(grader, "blank-en", "02-remaining")
    assert "Write your answer here." in page and "在这里写下你的回答" not in page
