"""Every message a learner reads goes through the catalogues, and the English catalogue is complete.

The message catalogues are ``ctx_reference/locale/en/messages/<module>.po``, one per module (and
one per notebook for its check labels); ``ctx.mo`` is compiled from them. Fails on: a message with
no English (empty or fuzzy), a placeholder that differs between the two languages, a catalogue
that no longer matches its module (``python -m ctx_course i18n update``), a ``ctx.mo`` that is
out of date (``python -m ctx_course i18n compile``), and a Chinese string in code that bypasses
the catalogue (neither marked with ``_``/``N_`` nor a docstring nor data marked ``# data``).
"""
from __future__ import annotations

import ast
import json
import re
import string

import pytest

from ctx_course.editions.catalogues import (
    compiled_messages,
    message_sources,
    messages_path,
    mo_path,
)
from ctx_course.editions.translate import has_chinese, read_catalogue
from ctx_reference import i18n

from conftest import REPO

SOURCES = message_sources(REPO)
MARKERS = {"_", "N_", "gettext"}


def _placeholders(text: str) -> list[str]:
    """Return the sorted {placeholders} of ``text``; a text that is no format string (a formula such as
    ``^{\\text{steep}}``, shown as it is) reads as one marker, so its translation must be no format string either.

    >>> _placeholders("{b} and {a:,}"), _placeholders("x^{\\text{steep}}")
    (['a:,', 'b:'], ['<not a format string>'])
    """
    try:
        return sorted(f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(text) if name is not None)
    except ValueError:
        return ["<not a format string>"]


@pytest.mark.parametrize("name, shown, messages", [s for s in SOURCES if s[2]], ids=[s[0] for s in SOURCES if s[2]])
def test_every_message_has_english_with_the_same_placeholders(name, shown, messages):
    """Each message of the module (or notebook) is in its catalogue, translated, not fuzzy, same {placeholders}."""
    catalogue = {m.id: m for m in read_catalogue(messages_path("en", name)) if m.id}
    ids = [message for _, message in messages]
    assert sorted(catalogue) == sorted(ids), f"run `python -m ctx_course i18n update --only {name}`"
    untranslated = [m for m in ids if not catalogue[m].string or catalogue[m].fuzzy]
    assert untranslated == [], f"{len(untranslated)} messages of {shown} have no English, e.g. {untranslated[:3]}"
    differ = [m for m in ids if _placeholders(m) != _placeholders(catalogue[m].string)]
    assert differ == [], f"placeholders differ between the languages in {differ[:3]}"


def test_no_catalogue_is_left_without_its_source():
    """Every message catalogue belongs to a module or notebook that still shows messages."""
    names = {name for name, _, messages in SOURCES if messages}
    folder = messages_path("en", "x").parent
    stale = sorted(p.stem for p in folder.glob("*.po") if p.stem not in names)
    assert stale == [], f"catalogues without a source: {stale}"


def test_compiled_catalogue_is_up_to_date():
    """ctx.mo is what the catalogues compile to (`python -m ctx_course i18n compile`)."""
    assert mo_path("en").read_bytes() == compiled_messages("en")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of every string that stands as a statement of its own: docstrings, the documentation of a constant."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def bypassing(source: str) -> list[tuple[int, str]]:
    """Return (line, text) of the Chinese strings in ``source`` that are neither messages marked for the catalogue,
    docstrings, nor marked ``# data``.

    >>> bypassing('x = _("好")\\ny = "坏"\\nz = "数据"  # data\\n')
    [(2, '坏')]
    """
    tree = ast.parse(source)
    lines = source.split("\n")
    allowed = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
            allowed |= {id(arg) for arg in node.args}
    found = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
            text = node.value
        if text is None or not has_chinese(text):
            continue
        span = lines[node.lineno - 1: node.end_lineno]
        start = node.lineno - 1
        while start > 0 and lines[start - 1].rstrip().endswith(("(", "[", "{", ",")) and "# data" not in span[0]:
            start -= 1  # a multi-line literal or call: "# data" may stand on the line that opens it
            span = [lines[start], *span]
            if start < node.lineno - 4:
                break
        if not any("# data" in line for line in span):
            found.append((node.lineno, text))
    return found


def test_no_chinese_message_bypasses_the_catalogue():
    """Every Chinese string in ctx_reference and ctx_course is a marked message, a docstring or data (`# data`)."""
    from ctx_course.editions.catalogues import message_modules

    found = []
    for path in message_modules(REPO):
        for line, text in bypassing(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(REPO)}:{line}: {text[:40]!r}")
    assert found == [], f"{len(found)} Chinese strings bypass the catalogue:\n" + "\n".join(found[:30])


def test_the_language_comes_from_using_then_ctx_lang_then_chinese(monkeypatch):
    """using() wins over CTX_LANG, which wins over the default zh_CN; a bad CTX_LANG is one ValueError naming it."""
    message = "全部 {count} 个检查通过。"
    monkeypatch.delenv("CTX_LANG", raising=False)
    assert i18n.language() == "zh_CN" and i18n.gettext(message) == message
    monkeypatch.setenv("CTX_LANG", "en")
    english = i18n.gettext(message)
    assert english != message and not has_chinese(english) and "{count}" in english
    with i18n.using("zh_CN"):
        assert i18n.gettext(message) == message
    monkeypatch.setenv("CTX_LANG", "fr")
    with pytest.raises(ValueError, match=r"CTX_LANG must be one of zh_CN, en \(got 'fr'\)"):
        i18n.language()


def test_a_message_missing_from_the_catalogue_reads_in_chinese():
    """An id the catalogue lacks (a new message before its translation) shows its Chinese text, never nothing."""
    with i18n.using("en"):
        assert i18n.gettext("这句话不在目录里") == "这句话不在目录里"


def test_english_messages_hold_no_chinese_but_data():
    """An English message has no Chinese character but a Chinese token it names, quoted or glossed in parentheses."""
    leftovers = []
    for name, _, messages in SOURCES:
        catalogue = {m.id: m.string for m in read_catalogue(messages_path("en", name)) if m.id}
        for _, message in messages:
            # a quoted token, or one followed by its gloss
            quoted = r"「[^」]*」|“[^”]*”|`[^`]*`|'[^']*'|\"[^\"]*\"|[\u3400-\u9fff…]+(?= \()"
            english = re.sub(quoted, "", catalogue.get(message) or "")
            if has_chinese(english):
                leftovers.append((name, english[:60]))
    assert leftovers == [], leftovers[:10]


def _notebook(folder, name, edition=None):
    metadata = {"ctx_edition": edition} if edition else {}
    path = folder / name
    notebook = {"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_a_notebook_names_its_edition_wherever_it_runs(tmp_path):
    """Jupyter Server's session path, then VS Code's file, then the notebooks of the working directory
    (nbconvert, nbclient): an English notebook is "en"; a Chinese one, or none found, is None."""
    english = _notebook(tmp_path, "remaining.ipynb", "en")
    chinese_folder = tmp_path / "zh"
    chinese_folder.mkdir()
    chinese = _notebook(chinese_folder, "remaining.ipynb")
    assert i18n.notebook_edition({"JPY_SESSION_NAME": str(english)}, {}, chinese_folder) == "en"
    assert i18n.notebook_edition({"JPY_SESSION_NAME": str(chinese)}, {}, tmp_path) is None
    assert i18n.notebook_edition({}, {"__vsc_ipynb_file__": str(english)}, chinese_folder) == "en"
    assert i18n.notebook_edition({}, {}, tmp_path) == "en"
    assert i18n.notebook_edition({}, {}, chinese_folder) is None
    assert i18n.notebook_edition({}, {}, tmp_path / "missing") is None
    _notebook(tmp_path, "odd.ipynb", "fr")  # unreadable as an edition: named by no one
    assert i18n.notebook_edition({}, {}, tmp_path) == "en"


def test_ctx_lang_wins_over_the_notebook_and_only_a_kernel_reads_one(monkeypatch, tmp_path):
    """CTX_LANG (make lab, the grader) decides before any notebook; a process that is no kernel reads none."""
    _notebook(tmp_path, "remaining.ipynb", "en")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CTX_LANG", raising=False)
    i18n._running_notebook_edition.cache_clear()
    try:
        assert i18n.language() == "zh_CN"  # pytest is no Jupyter kernel
        monkeypatch.setenv("CTX_LANG", "zh_CN")
        assert i18n.language() == "zh_CN"
    finally:
        i18n._running_notebook_edition.cache_clear()
