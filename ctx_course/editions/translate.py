"""The English edition of a notebook, from its one source in ``solutions/`` and a catalogue keyed by cell id.

Covers: ``catalogue_entries`` (what of a source notebook a translator translates),
``translate_notebook`` (the notebook of another edition), ``read_catalogue`` / ``write_catalogue``
(the gettext catalogue ``i18n/<language>/<assignment>.po``), ``update_catalogue`` (bring a
catalogue up to date after the source changed; ``update_from`` does it for every catalogue) and
``missing`` (what is left to translate).

What is translated, by cell id (each entry's ``msgctxt``):

- a markdown cell, whole: its Chinese source is the ``msgid``;
- in a code cell, each line that holds Chinese, without its indentation. In a check cell or an
  answer cell only comments, docstrings and the messages of ``assert`` and ``AssertionError`` may
  change (``check.check_assignment`` compares the code's syntax trees): a check's labels and
  messages are translated where they are shown (``ctx_reference.i18n``), so the code a learner
  runs and the grader grades is one. In other code cells a line's strings may change too (what a
  demonstration prints), never its code.

A changed Chinese cell or line no longer finds its translation: ``update_catalogue`` (Babel's
``Catalog.update``, through ``update_from``, the one update of every catalogue) keeps the old one
as *fuzzy* with the previous ``msgid`` beside it, and the edition shows an entry that is fuzzy or
empty in Chinese until it is translated again (the tests fail on any).

Also: the edition of a submitted notebook (``submitted_edition``), a release
or graded notebook shown in an edition (``in_edition``), and the answer stubs of each edition
(``stubs``, ``as_source_stub``).

A notebook's catalogue also holds the messages of its exercise modules, as entries without
``msgctxt`` after the cells (``catalogues.py``): ``translations_of`` and the edition leave them out.

Leaves out: messages shown by ``ctx_reference`` and the grader (``ctx_reference/i18n.py``).
"""
from __future__ import annotations

import ast
import copy
import io
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctx_reference.i18n import N_, gettext, using
from ctx_reference.sample_answers import ANSWER_STUB

from ..cells import is_answer, is_graded, source_text

CATALOGUES = "i18n"
"""Folder of the notebook catalogues under the course root: ``i18n/<language>/<assignment>.po``."""
EDITIONS = {"zh_CN": "lessons", "en": "lessons-en"}
"""The release folder of each edition."""
GLOSSARY = {"zh_CN": "glossary.md", "en": "glossary.en.md"}
"""The glossary of each edition, at the course root; shipped at the top of its release and workspace only (the
notebooks link it)."""
GLOSSARIES = tuple(GLOSSARY.values())
"""The glossaries of the course root."""
METADATA_KEY = "ctx_edition"
"""Notebook metadata naming a notebook's edition (the grader reads it)."""

# What an answer cell of the release holds until the learner writes it (nbgrader's stubs, nbgrader_config.py).
CODE_STUB = N_("# 在这里写你的代码\nraise NotImplementedError()")
TEXT_STUB = ANSWER_STUB  # the learner's kernel reads it too (sample_answer: an answer still the stub is not written)

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


@dataclass(frozen=True)
class Entry:
    """One thing to translate: the cell's id, its kind (``markdown``, ``code`` or ``locked``) and the Chinese text.

    ``locked`` is a line of a check or answer cell, where only a comment, a docstring or the
    message of an ``assert`` or ``AssertionError`` may change.
    """

    cell_id: str
    kind: str
    text: str


def has_chinese(text: str) -> bool:
    """Return whether ``text`` holds a Chinese character or Chinese punctuation.

    >>> has_chinese("print('ok')"), has_chinese("# 注释")
    (False, True)
    """
    return bool(_HAN.search(text))


def _cell_id(cell: dict, index: int) -> str:
    cell_id = cell.get("id")
    if not cell_id:
        raise ValueError(f"cell {index} has no id: a catalogue entry names its cell by id")
    return str(cell_id)


def catalogue_entries(notebook: dict) -> list[Entry]:
    """Return the entries a translator translates in ``notebook`` (a source notebook read as JSON), in order.

    >>> nb = {"cells": [{"id": "a", "cell_type": "markdown", "source": "# 标题"},
    ...                 {"id": "b", "cell_type": "code", "source": "x = 1\\n    # 注释"}]}
    >>> [(e.cell_id, e.kind, e.text) for e in catalogue_entries(nb)]
    [('a', 'markdown', '# 标题'), ('b', 'code', '# 注释')]
    """
    entries: list[Entry] = []
    seen: set[tuple[str, str]] = set()
    for index, cell in enumerate(notebook["cells"]):
        source = source_text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            if source.strip():
                entries.append(Entry(_cell_id(cell, index), "markdown", source))
        elif cell.get("cell_type") == "code":
            for line in source.split("\n"):
                text = line.strip()
                key = (_cell_id(cell, index), text)
                if has_chinese(text) and key not in seen:
                    seen.add(key)
                    entries.append(Entry(key[0], "locked" if locked_code(cell) else "code", text))
    return entries


def locked_code(cell: dict) -> bool:
    """Return whether only the comments of a code cell may change between editions (check and answer cells)."""
    return is_graded(cell) or is_answer(cell)


def translate_notebook(notebook: dict, translations: dict[tuple[str, str], str], language: str, *,
                       cells: Callable[[dict], bool] = lambda cell: True) -> dict:
    """Return ``notebook`` in another edition: every entry with a translation replaced, the rest as it is.

    ``translations`` maps (cell id, Chinese text) to the text in ``language``; only the cells that
    ``cells`` selects are translated. The result's metadata names its edition (``ctx_edition``).
    The argument is not changed.

    >>> nb = {"metadata": {}, "cells": [{"id": "b", "cell_type": "code", "source": "if x:\\n    # 注释"}]}
    >>> translate_notebook(nb, {("b", "# 注释"): "# a comment"}, "en")["cells"][0]["source"]
    'if x:\\n    # a comment'
    """
    result = copy.deepcopy(notebook)
    result.setdefault("metadata", {})[METADATA_KEY] = language
    for cell in result["cells"]:
        cell_id = cell.get("id")
        if cell.get("cell_type") not in ("markdown", "code") or not isinstance(cell_id, str) or not cells(cell):
            continue  # a cell without an id (a learner's, in an old format) has no entry
        source = source_text(cell.get("source", ""))
        if cell["cell_type"] == "markdown":
            new = translations.get((cell_id, source), source)
        else:
            lines = []
            for line in source.split("\n"):
                text = line.strip()
                done = translations.get((cell_id, text)) if text else None
                lines.append(line[: len(line) - len(line.lstrip())] + done if done is not None else line)
            new = "\n".join(lines)
        cell["source"] = new
    return result


def catalogue_path(root: str | os.PathLike, language: str, assignment: str) -> Path:
    """Return where the catalogue of ``assignment`` in ``language`` lives: ``i18n/<language>/<assignment>.po``."""
    return Path(root) / CATALOGUES / language / f"{assignment}.po"


def read_catalogue(path: str | os.PathLike):
    """Return the Babel catalogue at ``path`` (an empty one if there is none)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    path = Path(path)
    if not path.exists():
        return Catalog(locale="en")
    with path.open("rb") as handle:
        catalogue = read_po(handle)
    for message in catalogue:
        # Babel reads a previous msgid of several lines ("#| ..." lines) as comments: take it back.
        pieces = [c[1:].strip() for c in message.user_comments if c.startswith("|")]
        if pieces and pieces[0].startswith("msgid "):
            pieces[0] = pieces[0][len("msgid "):]
            message.previous_id = ["".join(ast.literal_eval(piece) for piece in pieces)]
            message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    return catalogue


def write_catalogue(catalogue, path: str | os.PathLike) -> None:
    """Write ``catalogue`` to ``path`` as a .po file (no line wrapping, no dates, no header: it diffs well).

    A fuzzy entry's previous id is written as gettext's tools write it, one ``#| msgid`` line per
    line of the old text, just above its ``msgctxt`` or ``msgid``: Babel would wrap it into a
    comment that nothing reads back (``read_catalogue`` does).
    """
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import normalize, write_po

    blocks = []
    for message in catalogue:
        if not message.id:
            continue  # the header
        one = Catalog(locale=catalogue.locale)
        one[message.id] = message
        buffer = io.BytesIO()
        write_po(buffer, one, width=0, omit_header=True, include_previous=False, sort_output=False)
        lines = buffer.getvalue().decode("utf-8").splitlines(keepends=True)
        if message.previous_id:
            at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
            previous = f"msgid {normalize(message.previous_id[0], width=0)}".split("\n")
            lines[at:at] = [f"#| {line}\n" for line in previous]
        blocks.append("".join(lines))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes("".join(blocks).encode("utf-8"))


FORMAT_FLAGS = frozenset({"python-format", "python-brace-format"})
"""The flags Babel works out from a message's id (what placeholders it holds)."""


def update_from(catalogue, template):
    """Return ``catalogue`` brought up to ``template`` (the current sources) by Babel's ``Catalog.update``.

    The one update of every catalogue, notebooks' and messages': an entry whose id is still in the
    sources keeps its translation; a new id takes the translation of the closest old one (difflib,
    ratio ≥ 0.6, over every entry of the catalogue, as gettext's ``msgmerge`` does), marked
    *fuzzy*, the old id kept as its previous id; an id no closer than that starts empty; entries
    no longer in the sources go. The order, locations and extracted comments are the template's.
    An entry still fuzzy from an earlier update keeps its previous id, so running the update
    again changes nothing. ``catalogue`` is not changed.
    """
    updated = copy.deepcopy(catalogue)
    earlier = {(m.id, m.context): list(m.previous_id) for m in catalogue if m.id and m.fuzzy and m.previous_id}
    updated.update(template, update_creation_date=False)
    updated.obsolete.clear()
    for message in updated:
        if not message.id:
            continue
        shown = template.get(message.id, context=message.context)
        # Babel carries the old entry's placeholder flags over to a fuzzy match: take the new id's
        message.flags = (message.flags - FORMAT_FLAGS) | (shown.flags & FORMAT_FLAGS)
        if message.fuzzy and not message.previous_id:
            message.previous_id = earlier.get((message.id, message.context), [])
    return updated


def translations_of(catalogue) -> dict[tuple[str, str], str]:
    """Return the finished entries of ``catalogue``'s cells: (cell id, Chinese text) → translation (not fuzzy, not
    empty). An entry without ``msgctxt`` is a check's message the notebook's catalogue also holds, not a cell's."""
    return {(m.context, m.id): m.string for m in catalogue if m.id and m.context is not None and m.string
            and not m.fuzzy}


def missing(notebook: dict, catalogue) -> list[Entry]:
    """Return the entries of ``notebook`` that ``catalogue`` does not translate yet (absent, empty or fuzzy)."""
    done = translations_of(catalogue)
    return [e for e in catalogue_entries(notebook) if (e.cell_id, e.text) not in done]


CHECK_MESSAGE = "a check's message, compiled into ctx.mo; not a cell"
"""The comment of a message's entry in a notebook's catalogue."""


def notebook_template(notebook: dict, messages: Iterable[tuple[str, int, str]] = ()):
    """Return the entries of ``notebook`` as a catalogue without translations: ``update_from``'s template.

    ``messages`` are (source file, line, message) of the checks' messages the catalogue holds too
    (``catalogues.update_all``): each once, after the cells, without ``msgctxt`` (gettext looks
    it up by its text alone), at every line that shows it.
    """
    from babel.messages.catalog import Catalog

    template = Catalog()
    for entry in catalogue_entries(notebook):
        comment = {"markdown": f"markdown cell {entry.cell_id}",
                   "code": f"code cell {entry.cell_id}: a line (comments, strings it only shows)",
                   "locked": f"check or answer cell {entry.cell_id}: a line "
                             "(comments, docstrings, assert messages only)",
                   }[entry.kind]
        template.add(entry.text, "", context=entry.cell_id, auto_comments=[comment])
    for shown, line, message in messages:
        template.add(message, "", locations=[(shown, line)], auto_comments=[CHECK_MESSAGE])
    return template


def update_catalogue(notebook: dict, catalogue, messages: Iterable[tuple[str, int, str]] = ()):
    """Return ``catalogue`` brought up to ``notebook``: new entries empty, a changed one fuzzy with its old text.

    ``update_from`` with the notebook's entries (and ``messages``, as ``notebook_template`` takes
    them): a changed cell or line keeps the old translation of the closest old entry, marked
    fuzzy, the old Chinese as its previous id, so the translator sees what changed; entries no
    longer in the notebook (or in ``messages``) go.
    """
    return update_from(catalogue, notebook_template(notebook, messages))


@lru_cache(maxsize=64)
def _cached_translations(path: str, stamp: float) -> dict[tuple[str, str], str]:
    return translations_of(read_catalogue(path))


def edition_translations(root: str | os.PathLike, language: str, assignment: str) -> dict[tuple[str, str], str]:
    """Return the finished entries of an assignment's catalogue in ``language`` (none for the Chinese edition)."""
    if language == "zh_CN":
        return {}
    path = catalogue_path(root, language, assignment)
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}
    return _cached_translations(str(path), stamp)


def in_edition(notebook: dict, root: str | os.PathLike, assignment: str, language: str, *,
               cells: Callable[[dict], bool] = lambda cell: True) -> dict:
    """Return ``notebook`` (a release, a graded notebook) with the cells ``cells`` selects in ``language``.

    A cell is translated entry by entry, as ``translate_notebook`` does: a cell that is already in
    that edition, or that a learner wrote, has no entry and stays as it is.
    """
    if language == "zh_CN":
        return notebook
    return translate_notebook(notebook, edition_translations(root, language, assignment), language, cells=cells)


def submitted_edition(notebook: Any) -> str:
    """Return the edition of a submitted notebook: ``en`` if its metadata says so, else ``zh_CN``; never raises.

    A learner can edit the metadata: that only changes the language of what they read (the
    grade is the same in both editions), so anything unclear reads as the Chinese edition.

    >>> submitted_edition({"metadata": {"ctx_edition": "en"}}), submitted_edition({"metadata": {"ctx_edition": 7}})
    ('en', 'zh_CN')
    """
    try:
        named = notebook.get("metadata", {}).get(METADATA_KEY)
        return "en" if isinstance(named, str) and named.strip().lower() in ("en", "en_us", "en-us") else "zh_CN"
    except AttributeError:
        return "zh_CN"


def stubs(language: str) -> dict[str, str]:
    """Return the stubs of ``language``'s release by cell type: ``code`` and ``markdown`` (nbgrader's text stub)."""
    with using(language):
        return {"code": gettext(CODE_STUB), "markdown": gettext(TEXT_STUB)}


def as_source_stub(cell: Any, language: str) -> bool:
    """Give an answer cell holding the stub of ``language``'s release the source edition's stub; return if it did.

    nbgrader scores an answer left as released 0 without asking for a hand grade, by comparing it
    with the gradebook's, which holds the Chinese stub: an English stub left untouched is the same
    answer. Anything else the learner wrote is left as it is.
    """
    if language == "zh_CN" or not is_answer(cell):
        return False
    kind = "code" if cell.get("cell_type") == "code" else "markdown"
    shown, source = stubs(language)[kind], stubs("zh_CN")[kind]
    if source_text(cell.get("source", "")).strip() != shown.strip() or shown == source:
        return False
    cell["source"] = source
    return True
