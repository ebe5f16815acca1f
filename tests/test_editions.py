"""The English edition is the Chinese one in English: the same cells, code, grades and numbers.

One source: ``solutions/`` and the catalogues ``i18n/en/*.po`` (``ctx_course/editions/translate.py``). Per
assignment, ``editions.check.check_assignment`` finds nothing wrong (every entry translated; in check
and answer cells only comments, docstrings and assert messages differ, elsewhere also the strings a
cell shows; every number and number label of a markdown cell kept); the two committed releases
have the same cells in the same order with the same ids, types, grade ids, points and code; and
``tests/test_english_run.py`` executes the English edition.
"""
from __future__ import annotations

import json

import pytest

from ctx_course.config import assignments
from ctx_course.editions.check import _without_messages, check_assignment, numbers
from ctx_course.editions.translate import catalogue_entries, locked_code, translate_notebook

from conftest import REPO, notebooks

ASSIGNMENTS = assignments(REPO)
ZH, EN = REPO / "lessons", REPO / "lessons-en"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_english_of_each_assignment_agrees_with_its_chinese(assignment):
    """Nothing left to translate, no code changed where it must not, no number or label lost."""
    assert check_assignment(REPO, assignment) == []


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_both_releases_hold_the_same_notebooks():
    assert [p.relative_to(ZH) for p in notebooks(ZH)] == [p.relative_to(EN) for p in notebooks(EN)]
    assert len(notebooks(EN)) == len(ASSIGNMENTS) == 11


@pytest.mark.parametrize("name", [p.relative_to(ZH).as_posix() for p in notebooks(ZH)])
def test_both_releases_have_the_same_cells_code_grade_ids_and_points(name):
    """Cell by cell: id, type, nbgrader metadata (grade id, points, locks) and code up to what may differ.

    nbgrader's checksum of a read-only cell is of its text, so each release has its own.
    """
    zh, en = _load(ZH / name), _load(EN / name)
    assert en["metadata"]["ctx_edition"] == "en" and "ctx_edition" not in zh["metadata"]
    assert [(c["id"], c["cell_type"]) for c in zh["cells"]] == [(c["id"], c["cell_type"]) for c in en["cells"]]
    def fields(cell):  # nbgrader's checksum is of the cell's text, which is in its language
        meta = json.loads(json.dumps(cell["metadata"]))
        meta.get("nbgrader", {}).pop("checksum", None)
        return meta

    for a, b in zip(zh["cells"], en["cells"]):
        assert fields(a) == fields(b), a["id"]
        if a["cell_type"] == "code":
            zh_code, en_code = "".join(a["source"]), "".join(b["source"])
            assert _without_messages(zh_code, locked_code(a)) == _without_messages(en_code, locked_code(a)), a["id"]


def test_a_changed_sentence_loses_its_translation_until_it_is_translated_again():
    """Change one Chinese cell: the English edition shows the new Chinese there (not the stale English) and
    check_assignment names the entry; the other cells keep their English."""
    source = _load(REPO / "solutions" / "02-remaining" / "remaining.ipynb")
    from ctx_course.editions.translate import catalogue_path, read_catalogue, translations_of

    done = translations_of(read_catalogue(catalogue_path(REPO, "en", "02-remaining")))
    first = source["cells"][0]
    first["source"] = "".join(first["source"]) + "\n\n新加的一句话。"
    english = translate_notebook(source, done, "en")
    assert english["cells"][0]["source"] == first["source"]
    assert english["cells"][1]["source"] != "".join(source["cells"][1]["source"])
    left = [e for e in catalogue_entries(source) if (e.cell_id, e.text) not in done]
    assert [e.cell_id for e in left] == [first["id"]]


def test_update_keeps_the_old_english_of_a_changed_cell_as_fuzzy(tmp_path):
    """`i18n update` after a change: the entry keeps its old English, marked fuzzy, the old Chinese beside it,
    and the file written reads back the same."""
    from ctx_course.editions.translate import catalogue_path, read_catalogue, update_catalogue, write_catalogue

    source = _load(REPO / "solutions" / "02-remaining" / "remaining.ipynb")
    old_text = "".join(source["cells"][0]["source"])
    source["cells"][0]["source"] = old_text + "\n\n新加的一句话。"
    fresh = update_catalogue(source, read_catalogue(catalogue_path(REPO, "en", "02-remaining")))
    written = tmp_path / "02-remaining.po"
    write_catalogue(fresh, written)
    assert "#| msgid" in written.read_text(encoding="utf-8")  # where gettext's tools show it
    entry = read_catalogue(written).get(source["cells"][0]["source"], context=source["cells"][0]["id"])
    assert entry.fuzzy and entry.previous_id == [old_text] and entry.string


def test_numbers_are_compared_by_value():
    """第 3 篇 / 5 万 / 0.25 in Chinese are 3, 50,000 and 0.25 in English."""
    from ctx_course.editions.check import _EN_NUMBER

    assert numbers("第 3 篇，约 5 万 token，0.25") == numbers("document 3, about 50,000 tokens, 0.25", _EN_NUMBER)
    assert numbers("66,000（原课）") != numbers("66.000 (lesson)", _EN_NUMBER)


def test_a_wrong_translation_of_code_is_caught():
    """Changing a name, a number or a data string where it must not is reported; a comment is not."""
    from ctx_course.editions.check import _code_problems

    check = 'assert f("中") == 1  # 注释'
    assert _code_problems("c", check, 'assert f("中") == 1  # a comment', locked=True) == []
    assert _code_problems("c", check, 'assert f("zh") == 1  # a comment', locked=True) != []
    assert _code_problems("c", check, 'assert f("中") == 2  # a comment', locked=True) != []
    assert _code_problems("c", 'print("你好", n)', 'print("hello", n)', locked=False) == []
    assert _code_problems("c", 'print("你好", n)', 'print("hello", m)', locked=False) != []


@pytest.mark.parametrize("name", [p.relative_to(ZH).as_posix() for p in notebooks(ZH)])
def test_read_only_cells_put_back_in_english_are_the_english_releases(name):
    """What grading does to an English submission's read-only cells (nbgrader puts back the Chinese ones, then
    ShowEdition shows them in English) gives exactly the English release's cells; every other non-answer cell too."""
    from ctx_course.cells import is_answer
    from ctx_course.editions.translate import in_edition

    zh, en = _load(ZH / name), _load(EN / name)
    shown = in_edition(zh, REPO, name.split("/")[0], "en", cells=lambda cell: not is_answer(cell))
    for cell, released in zip(shown["cells"], en["cells"]):
        if not is_answer(released):
            assert "".join(cell["source"]) == "".join(released["source"]), cell["id"]


def test_a_check_label_left_untranslated_in_the_notebooks_catalogue_is_reported(tmp_path):
    """The labels a notebook gives its checks are messages of its own catalogue: one left empty is named by
    check_assignment, and the release of its cells is not changed by it."""
    import shutil

    from ctx_course.editions.catalogues import notebook_messages
    from ctx_course.editions.translate import catalogue_path, read_catalogue, translations_of, write_catalogue

    assignment = "02-remaining"
    notebook = REPO / "solutions" / assignment / "remaining.ipynb"
    (tmp_path / notebook.relative_to(REPO)).parent.mkdir(parents=True)
    shutil.copyfile(notebook, tmp_path / notebook.relative_to(REPO))
    catalogue = read_catalogue(catalogue_path(REPO, "en", assignment))
    label = notebook_messages(_load(notebook))[0]
    assert catalogue.get(label) is not None and catalogue.get(label).string
    cells = translations_of(catalogue)
    catalogue.get(label).string = ""
    write_catalogue(catalogue, catalogue_path(tmp_path, "en", assignment))
    assert check_assignment(tmp_path, assignment) == [
        f"1 check labels of i18n/en/{assignment}.po left to translate (first: {label!r})"]
    assert translations_of(read_catalogue(catalogue_path(tmp_path, "en", assignment))) == cells
