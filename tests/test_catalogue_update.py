"""`python -m ctx_course i18n update` keeps every translation: a changed message or cell turns fuzzy.

The round trip a maintainer makes, on copies of the real sources and catalogues in a temporary
course: change one Chinese message in ``ctx_reference/cli.py`` and one markdown cell of notebook
02, update, and both entries keep their old English marked fuzzy, the old Chinese beside it
(``#| msgid``); the compiled ``.mo`` and the English edition leave the fuzzy English out (the
Chinese shows); a second update changes nothing.
"""
from __future__ import annotations

import gettext
import io
import json
import shutil
from pathlib import Path

import pytest

from ctx_course.editions.catalogues import compiled_messages, locale_folder, messages_path, update_all
from ctx_course.editions.translate import catalogue_path, read_catalogue, translate_notebook, translations_of

from conftest import REPO

ASSIGNMENT = "02-remaining"
NOTEBOOK = Path("solutions") / ASSIGNMENT / "remaining.ipynb"
MODULE = Path("ctx_reference") / "cli.py"
EXERCISE = Path("ctx_reference") / "checks" / "exercises" / "w02_remaining.py"
OLD_MESSAGE, NEW_MESSAGE = "参数：原课的默认值", "参数：全部用原课的默认值"
NEIGHBOUR = "参数：原课的默认值，但 {changes}"  # close to both, and unchanged: it must stay as it is
OLD_LINE, NEW_LINE = "**先修**：01 · 窗口算术（什么算进窗口）。", "**先修**：01 · 窗口算术（哪些东西算进窗口）。"
CELL = "cell-00"


def _copy(relative: Path, root: Path) -> Path:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / relative, target)
    return target


@pytest.fixture
def course(tmp_path):
    """A course of one notebook, its exercise module (whose messages its catalogue holds, with its check labels)
    and one module that shows messages, with copies of their English catalogues."""
    for relative in (NOTEBOOK, EXERCISE, MODULE, catalogue_path(Path(), "en", ASSIGNMENT)):
        _copy(relative, tmp_path)
    _copy(messages_path("en", "ctx_reference.cli", Path("ctx_reference") / "locale"), tmp_path)
    return tmp_path


def _entries(path: Path) -> dict:
    return {(m.context, m.id): (m.string, m.fuzzy, list(m.previous_id)) for m in read_catalogue(path) if m.id}


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name} no longer holds {old!r} once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_update_of_unchanged_sources_keeps_every_entry(course):
    """Updating catalogues whose sources have not changed keeps every id, translation and flag as committed."""
    messages, cells = messages_path("en", "ctx_reference.cli", locale_folder(course)), catalogue_path(course, "en",
                                                                                                       ASSIGNMENT)
    before = {path: _entries(path) for path in (messages, cells)}
    update_all(course)
    assert {path: _entries(path) for path in (messages, cells)} == before


def test_a_changed_message_and_cell_keep_their_english_as_fuzzy(course):
    """After changing one message in the code and one markdown cell, update keeps both English texts, fuzzy,
    with the previous Chinese beside them; nothing else changes."""
    messages, cells = messages_path("en", "ctx_reference.cli", locale_folder(course)), catalogue_path(course, "en",
                                                                                                       ASSIGNMENT)
    old_messages, old_cells = _entries(messages), _entries(cells)
    (old_cell,) = [key for key in old_cells if key[0] == CELL]
    _replace(course / MODULE, f'_("{OLD_MESSAGE}")', f'_("{NEW_MESSAGE}")')
    _replace(course / NOTEBOOK, OLD_LINE, NEW_LINE)

    update_all(course)

    new_messages, new_cells = _entries(messages), _entries(cells)
    english = old_messages[(None, OLD_MESSAGE)][0]
    assert english == "Parameters: the lesson's defaults"
    assert new_messages[(None, NEW_MESSAGE)] == (english, True, [OLD_MESSAGE])
    assert new_messages[(None, NEIGHBOUR)] == old_messages[(None, NEIGHBOUR)]
    assert set(new_messages) == set(old_messages) - {(None, OLD_MESSAGE)} | {(None, NEW_MESSAGE)}

    new_cell = (CELL, old_cell[1].replace(OLD_LINE, NEW_LINE))
    assert new_cells[new_cell] == (old_cells[old_cell][0], True, [old_cell[1]])
    assert "**Prerequisites**: 01 · Window arithmetic" in new_cells[new_cell][0]
    assert {k: v for k, v in new_cells.items() if k != new_cell} == {k: v for k, v in old_cells.items()
                                                                    if k != old_cell}
    for path, previous in ((messages, OLD_MESSAGE), (cells, OLD_LINE)):
        text = path.read_text(encoding="utf-8")
        assert "#| msgid" in text and previous in text  # where gettext's tools and editors show it


def test_a_second_update_changes_nothing(course):
    """Update twice after a change: the second writes every catalogue byte for byte as the first did."""
    _replace(course / MODULE, f'_("{OLD_MESSAGE}")', f'_("{NEW_MESSAGE}")')
    _replace(course / NOTEBOOK, OLD_LINE, NEW_LINE)
    written = update_all(course)
    first = {path: path.read_bytes() for path in written}
    assert update_all(course) == written
    assert {path: path.read_bytes() for path in written} == first


def test_fuzzy_english_is_shown_in_neither_edition(course):
    """Until the translator clears the fuzzy flag, ctx.mo lacks the message (gettext shows the Chinese) and the
    English notebook shows the cell's new Chinese; an unchanged message still compiles to its English."""
    _replace(course / MODULE, f'_("{OLD_MESSAGE}")', f'_("{NEW_MESSAGE}")')
    _replace(course / NOTEBOOK, OLD_LINE, NEW_LINE)
    update_all(course)

    compiled = gettext.GNUTranslations(io.BytesIO(compiled_messages("en", locale_folder(course))))
    assert compiled.gettext(NEW_MESSAGE) == NEW_MESSAGE
    assert compiled.gettext(NEIGHBOUR) == "Parameters: the lesson's defaults, except {changes}"

    notebook = json.loads((course / NOTEBOOK).read_text(encoding="utf-8"))
    english = translate_notebook(notebook, translations_of(read_catalogue(catalogue_path(course, "en", ASSIGNMENT))),
                                 "en")
    shown = {cell["id"]: cell["source"] for cell in english["cells"]}
    assert NEW_LINE in shown[CELL]
    assert shown["cell-01"].startswith("## 1. The idea")


def test_compiling_where_there_are_no_catalogues_is_one_clear_error(tmp_path):
    """compile_messages on a folder without message catalogues raises ValueError naming `locale`, writing nothing."""
    from ctx_course.editions.catalogues import compile_messages

    with pytest.raises(ValueError, match="locale must hold the message catalogues en/messages/"):
        compile_messages(locale_folder(tmp_path))
    assert list(tmp_path.iterdir()) == []
