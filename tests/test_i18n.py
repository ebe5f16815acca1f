"""Every message a learner reads goes through the catalogues, and the English catalogue is complete.

The message catalogues are ``ctx_reference/locale/en/messages/<module>.po``, one per module, except
a notebook's: the labels its code gives its checks and the messages of its exercise modules live in
its catalogue ``i18n/en/<assignment>.po``, as entries without ``msgctxt``. ``ctx.mo`` is compiled
from both. Fails on: a message with no English (empty or fuzzy), a placeholder that
differs between the two languages, a catalogue that no longer matches its module (``python -m
ctx_course i18n update``), an exercise's message anywhere but in its notebook's catalogue, a
``ctx.mo`` that is out of date (``python -m ctx_course i18n compile``), and a Chinese string in
code that bypasses the catalogue (neither marked with ``_``/``N_`` nor a docstring nor data marked
``# data``).
"""
from __future__ import annotations

import ast
import gettext
import io
import json
import re
import string

import pytest

from ctx_course.editions.catalogues import (
    catalogue_of,
    compiled_messages,
    locale_folder,
    message_sources,
    messages_path,
    mo_path,
    report,
    update_all,
)
from ctx_course.editions.translate import (
    catalogue_path,
    has_chinese,
    read_catalogue,
    translate_notebook,
    translations_of,
    write_catalogue,
)
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


def _messages_of(catalogue) -> dict:
    """The messages of a catalogue by id: its entries without msgctxt (in a notebook's catalogue, not its cells)."""
    return {m.id: m for m in catalogue if m.id and m.context is None}


def message_problems(source, catalogue) -> list[str]:
    """Return what is wrong with the English of ``source``'s messages in ``catalogue`` (nothing when all is well)."""
    found = _messages_of(catalogue)
    ids = [message for _, message in source.messages]
    absent = [m for m in ids if m not in found]
    if absent:
        return [f"{len(absent)} messages of {source.shown} are not in its catalogue, e.g. {absent[:3]}: "
                f"run `python -m ctx_course i18n update --only {source.name}`"]
    problems = []
    untranslated = [m for m in ids if not found[m].string or found[m].fuzzy]
    if untranslated:
        problems.append(f"{len(untranslated)} messages of {source.shown} have no English, e.g. {untranslated[:3]}")
    differ = [m for m in ids if found[m].string and _placeholders(m) != _placeholders(found[m].string)]
    if differ:
        problems.append(f"placeholders differ between the languages in {differ[:3]}")
    return problems


@pytest.mark.parametrize("source", [s for s in SOURCES if s.messages], ids=[s.name for s in SOURCES if s.messages])
def test_every_message_has_english_with_the_same_placeholders(source):
    """Each message of the module (or notebook) is in its catalogue, translated, not fuzzy, same {placeholders}."""
    assert message_problems(source, read_catalogue(catalogue_of(REPO, "en", source))) == []


def test_the_messages_of_a_catalogue_are_those_of_its_sources():
    """A catalogue of its own holds its module's messages and no other; a notebook's catalogue holds, beside its
    cells, exactly the messages of the exercise modules that name it."""
    for source in SOURCES:
        if source.messages and source.notebook is None:
            catalogue = read_catalogue(messages_path("en", source.name))
            assert sorted(_messages_of(catalogue)) == sorted({m for _, m in source.messages}), source.name
    for assignment in sorted({s.notebook for s in SOURCES if s.notebook}):
        wanted = {m for s in SOURCES if s.notebook == assignment for _, m in s.messages}
        assert set(_messages_of(read_catalogue(catalogue_path(REPO, "en", assignment)))) == wanted, assignment


def test_an_exercises_messages_are_in_its_notebooks_catalogue_and_nowhere_else():
    """Every exercise module's messages, and the check labels of every notebook, are in i18n/en/<the notebook>.po;
    no other catalogue places a message at their lines, and none of them has a catalogue of its own."""
    exercises = [s for s in SOURCES if s.notebook is not None and s.messages]
    assert len([s for s in exercises if s.shown.startswith("ctx_reference/checks/exercises/w")]) >= 11
    assert len([s for s in exercises if s.shown.startswith("solutions/")]) == 11
    for source in exercises:
        assert catalogue_of(REPO, "en", source) == catalogue_path(REPO, "en", source.notebook), source.name
        assert set(_messages_of(read_catalogue(catalogue_of(REPO, "en", source)))) >= {m for _, m in source.messages}
        assert not messages_path("en", source.name).exists(), f"{source.name} has a catalogue of its own"
    every = sorted(messages_path("en", "x").parent.glob("*.po")) + sorted((REPO / "i18n" / "en").glob("*.po"))
    for path in every:
        for message in read_catalogue(path):
            for shown, _line in message.locations:
                owner = next((s for s in exercises if s.shown == shown), None)
                assert owner is None or path == catalogue_path(REPO, "en", owner.notebook), (path.name, shown)


def test_an_untranslated_exercise_message_fails():
    """An exercise's message left empty, or fuzzy, in its notebook's catalogue is reported, as any message is."""
    source = next(s for s in SOURCES if s.name.endswith("w02_remaining"))
    _line, message = source.messages[0]
    for change in ("empty", "fuzzy"):
        catalogue = read_catalogue(catalogue_of(REPO, "en", source))
        assert message_problems(source, catalogue) == []
        entry = catalogue.get(message)
        if change == "empty":
            entry.string = ""
        else:
            entry.flags.add("fuzzy")
        assert message_problems(source, catalogue) == [f"1 messages of {source.shown} have no English, e.g. "
                                                       f"{[message]}"]
        catalogue.delete(message)
        assert "are not in its catalogue" in message_problems(source, catalogue)[0]


SHARED, RULE = "共享的一句话", "另一条规则"


@pytest.fixture
def course(tmp_path):
    """A course of one notebook and its exercise module; the notebook's markdown cell is the Chinese of one of the
    module's messages, and the module's other message still has a catalogue of its own (the layout before)."""
    notebook = {"cells": [{"id": "cell-00", "cell_type": "markdown", "metadata": {}, "source": SHARED}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "solutions" / "01-demo").mkdir(parents=True)
    (tmp_path / "solutions" / "01-demo" / "demo.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    exercises = tmp_path / "ctx_reference" / "checks" / "exercises"
    exercises.mkdir(parents=True)
    (exercises / "w01_demo.py").write_text(f'from ctx_reference.i18n import N_\n\nNOTEBOOK = "01-demo"\n'
                                           f'LABEL = N_("{SHARED}")\nPHRASE = N_("{RULE}")\n', encoding="utf-8")
    own = messages_path("en", "ctx_reference.checks.exercises.w01_demo", locale_folder(tmp_path))
    own.parent.mkdir(parents=True)
    own.write_text(f'msgid "{RULE}"\nmsgstr "another rule"\n', encoding="utf-8")
    return tmp_path


def _translate(path, english):
    """Give the entries of the catalogue at ``path`` their English: (msgctxt, Chinese) → English."""
    catalogue = read_catalogue(path)
    for (context, chinese), text in english.items():
        catalogue.get(chinese, context=context).string = text
    write_catalogue(catalogue, path)


def test_update_puts_an_exercises_messages_in_its_notebooks_catalogue(course):
    """update writes the module's messages into i18n/en/01-demo.po, its catalogue of its own folded in (the English
    kept) and gone; the text both a cell and a message is two entries: the edition takes the cell's English,
    ctx.mo the message's; an untranslated message is counted and shows in Chinese; a second update changes nothing."""
    target = catalogue_path(course, "en", "01-demo")
    assert target in update_all(course)
    assert not messages_path("en", "ctx_reference.checks.exercises.w01_demo", locale_folder(course)).exists()
    entries = {(m.context, m.id): m.string for m in read_catalogue(target) if m.id}
    assert entries == {("cell-00", SHARED): "", (None, SHARED): "", (None, RULE): "another rule"}

    _translate(target, {("cell-00", SHARED): "A shared sentence, in the text", (None, SHARED): "a shared label"})
    compiled = gettext.GNUTranslations(io.BytesIO(compiled_messages("en", locale_folder(course))))
    assert (compiled.gettext(SHARED), compiled.gettext(RULE)) == ("a shared label", "another rule")
    notebook = json.loads((course / "solutions" / "01-demo" / "demo.ipynb").read_text(encoding="utf-8"))
    english = translate_notebook(notebook, translations_of(read_catalogue(target)), "en")
    assert english["cells"][0]["source"] == "A shared sentence, in the text"
    assert report(course) == {}

    _translate(target, {(None, RULE): ""})
    assert report(course) == {"i18n/en/01-demo.po": 1}
    compiled = gettext.GNUTranslations(io.BytesIO(compiled_messages("en", locale_folder(course))))
    assert compiled.gettext(RULE) == RULE
    before = target.read_bytes()
    update_all(course)
    assert target.read_bytes() == before


def test_an_exercise_module_naming_no_notebook_is_one_clear_error(course):
    """An exercise module that shows messages and whose NOTEBOOK names no assignment: ValueError naming both."""
    module = course / "ctx_reference" / "checks" / "exercises" / "w01_demo.py"
    module.write_text(module.read_text(encoding="utf-8").replace('"01-demo"', '"99-none"'), encoding="utf-8")
    with pytest.raises(ValueError, match=r"ctx_reference/checks/exercises/w01_demo.py shows messages, so its "
                                         r"NOTEBOOK must name an assignment .*\(got '99-none'\)"):
        update_all(course)


def test_no_catalogue_is_left_without_its_source():
    """Every message catalogue belongs to a module or notebook that still shows messages in a catalogue of its own
    (an exercise module's catalogue of its own is left over from before its messages moved to its notebook's)."""
    names = {source.name for source in SOURCES if source.messages and source.notebook is None}
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
    for source in SOURCES:
        catalogue = {m.id: m.string for m in read_catalogue(catalogue_of(REPO, "en", source)) if m.id and not m.context}
        for _, message in source.messages:
            # a quoted token, or one followed by its gloss
            quoted = r"「[^」]*」|“[^”]*”|`[^`]*`|'[^']*'|\"[^\"]*\"|[\u3400-\u9fff…]+(?= \()"
            english = re.sub(quoted, "", catalogue.get(message) or "")
            if has_chinese(english):
                leftovers.append((source.name, english[:60]))
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
