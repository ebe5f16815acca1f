"""Keep the translation catalogues up to date: extract, update and compile (``python -m ctx_course i18n``).

Covers: ``update_all`` (every catalogue brought up to the current sources: the notebooks' in
``i18n/<language>/``, the messages' in ``ctx_reference/locale/<language>/messages/``, one per
module that shows messages), ``compile_messages`` (the messages merged into the ``.mo`` file
gettext reads), ``extract_messages`` (the messages a module marks with ``_`` or ``N_``) and
``report`` (what is left to translate).

Where a message lives: a module's messages in its own catalogue, except a notebook's. The messages
of an exercise module (``ctx_reference/checks/exercises/w<NN>_<idea>.py``: its cases' labels, its
rules' phrases; the module's ``NOTEBOOK`` names the notebook) and the labels the notebook's own code
gives its checks (``NOTEBOOK_CALLS``: its hidden tests' labels) live in the notebook's catalogue
``i18n/<language>/<NN>-<name>.po``, after the cells, so that one file holds everything a translator
of a notebook translates. A cell's entry has its cell id as ``msgctxt``; a message has none, as gettext
looks it up in ``ctx.mo``: the same Chinese can be both a line of a cell and a check's message,
two entries that never meet. ``compile_messages`` takes the entries without ``msgctxt`` of the
notebooks' catalogues with those of ``messages/``; the release takes the cells' entries alone.
A catalogue of its own from the earlier layout (``messages/<exercise module>.po``,
``messages/notebook.<assignment>.po``) is folded into the notebook's by the next update, its
translations kept, and deleted.

A maintainer who changes one Chinese sentence runs ``python -m ctx_course i18n update``: the entry
turns *fuzzy*, its old translation and old Chinese kept beside the new text; they correct the
English, delete the ``fuzzy`` flag and run ``python -m ctx_course i18n compile`` (for a message) or
``python -m ctx_course release`` (for a notebook). ``tests/test_i18n.py`` fails until both are done.
Both kinds of catalogue are updated one way, by Babel's ``Catalog.update`` (``translate.update_from``):
the sources make a template, the template updates the catalogue. A fuzzy entry is compiled into
neither edition: the ``.mo`` file leaves it out, the release leaves the cell in Chinese.

Leaves out: choosing the language at run time (``ctx_reference/i18n.py``) and building an edition
(``translate.py``, ``release.py``).
"""
from __future__ import annotations

import ast
import datetime
import io
import json
import os
from pathlib import Path
from typing import NamedTuple

from ctx_reference.i18n import DOMAIN, LANGUAGES, LOCALE, SOURCE

from ..config import assignments
from .translate import (
    CATALOGUES,
    catalogue_path,
    has_chinese,
    missing,
    read_catalogue,
    update_catalogue,
    update_from,
    write_catalogue,
)

KEYWORDS = {"_": None, "N_": None, "gettext": None}
"""The calls that mark a message (``from ctx_reference.i18n import _, N_``)."""
PACKAGES = ("ctx_reference", "ctx_course")
TRANSLATED = tuple(language for language in LANGUAGES if language != SOURCE)


def source_notebook(root: Path, assignment: str) -> Path:
    """Return the one source notebook of ``assignment`` under ``solutions/``."""
    found = sorted((root / "solutions" / assignment).glob("*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"assignment {assignment!r} must have one notebook in solutions/ (found {len(found)})")
    return found[0]


# Modules that hold no message: the drawing tools draw the inputs of generated cases, data a learner
# reads as the input of a failed case (in any edition), never as a sentence to translate.
NOT_MESSAGES = (Path("ctx_reference") / "checks" / "drawing",)


def message_modules(root: Path) -> list[Path]:
    """Return the modules of both packages that may hold messages, in a stable order."""
    return sorted(p for package in PACKAGES for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts
                  and not any(p.relative_to(root).is_relative_to(folder) for folder in NOT_MESSAGES))


def module_name(root: Path, path: Path) -> str:
    """Return the dotted name of a module file (``ctx_reference/checks/runner.py``: ``ctx_reference.checks.runner``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def extract_messages(path: Path) -> list[tuple[int, str]]:
    """Return (line, message) for every message ``path`` marks with ``_``, ``N_`` or ``gettext``, once each."""
    from babel.messages.extract import extract_from_file

    seen, found = set(), []
    for line, message, _comments, _context in extract_from_file("python", str(path), keywords=KEYWORDS):
        if isinstance(message, str) and message and message not in seen:
            seen.add(message)
            found.append((line, message))
    return found


NOTEBOOK_CALLS = {"expect_digest": 0, "requires_exercise": "needed_by", "format_strategy_table": "title"}
"""Calls in the notebooks whose argument is a message ``ctx_reference`` shows (position or keyword)."""


def notebook_messages(notebook: dict) -> list[str]:
    """Return the messages a notebook's code passes to ``ctx_reference`` to show (``NOTEBOOK_CALLS``), once each.

    >>> notebook_messages({"cells": [{"cell_type": "code", "source": 'expect_digest("空请求", f(), "ab")'}]})
    ['空请求']
    """
    from ..cells import source_text

    found: list[str] = []
    for cell in notebook["cells"]:
        if cell.get("cell_type") != "code":
            continue
        source = source_text(cell.get("source", ""))
        try:
            tree = ast.parse("\n".join(line for line in source.split("\n") if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NOTEBOOK_CALLS):
                continue
            where = NOTEBOOK_CALLS[node.func.id]
            if isinstance(where, int):
                argument = node.args[where] if len(node.args) > where else None
            else:
                argument = next((k.value for k in node.keywords if k.arg == where), None)
            if (isinstance(argument, ast.Constant) and isinstance(argument.value, str)
                    and has_chinese(argument.value) and argument.value not in found):
                found.append(argument.value)
    return found


def locale_folder(root: str | os.PathLike) -> Path:
    """Return the folder of the message catalogues of the course at ``root`` (``ctx_reference/locale``)."""
    return Path(root) / "ctx_reference" / LOCALE.name


def messages_path(language: str, module: str, locale: Path = LOCALE) -> Path:
    """Return the catalogue of one module's messages in ``language`` (in the package's ``locale`` by default)."""
    return locale / language / "messages" / f"{module}.po"


EXERCISES = Path("ctx_reference") / "checks" / "exercises"
"""The exercises as data: the messages of each module here live in the catalogue of the notebook it names."""


def exercise_notebook(root: Path, path: Path) -> str | None:
    """Return the ``NOTEBOOK`` a module of ``ctx_reference/checks/exercises/`` names, read from its source (None for
    any other module, or one that defines none); raise ValueError when it is no string literal.

    The module is read, not imported: ``root`` may be a course other than the installed package's.
    """
    relative = path.relative_to(root)
    if relative.parent != EXERCISES or relative.name.startswith("_"):
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(target, ast.Name) and target.id == "NOTEBOOK" for target in targets):
            value = getattr(node, "value", None)
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                raise ValueError(f"NOTEBOOK of {relative.as_posix()} must be a string literal, the notebook's "
                                 f"assignment (got {ast.unparse(value) if value else None!r})")
            return value.value
    return None


class MessageSource(NamedTuple):
    """A module or notebook that shows messages, and where they are translated.

    ``name`` is the dotted module name (``notebook.<assignment>`` for a notebook's check labels),
    ``shown`` its source file, ``messages`` its (line, message) pairs. ``notebook`` is the
    assignment whose catalogue holds the messages (an exercise module, a notebook), or None: they
    have a catalogue of their own, ``messages_path(language, name)``.
    """

    name: str
    shown: str
    messages: list[tuple[int, str]]
    notebook: str | None = None


def message_sources(root: Path) -> list[MessageSource]:
    """Return every module and notebook of the course at ``root`` that may show messages, with its messages.

    Raise ValueError naming the module when an exercise module that shows messages names no
    notebook of the course (its ``NOTEBOOK``): they would have no catalogue.
    """
    root = Path(root)
    known = assignments(root)
    sources = []
    for path in message_modules(root):
        shown, messages = path.relative_to(root).as_posix(), extract_messages(path)
        notebook = exercise_notebook(root, path)
        if messages and path.relative_to(root).parent == EXERCISES and notebook not in known:
            raise ValueError(f"{shown} shows messages, so its NOTEBOOK must name an assignment of solutions/, "
                             f"whose catalogue holds them (got {notebook!r})")
        sources.append(MessageSource(module_name(root, path), shown, messages, notebook))
    for assignment in known:
        path = source_notebook(root, assignment)
        notebook_json = json.loads(path.read_text(encoding="utf-8"))
        sources.append(MessageSource(f"notebook.{assignment}", path.relative_to(root).as_posix(),
                                     [(0, message) for message in notebook_messages(notebook_json)], assignment))
    return sources


def catalogue_of(root: str | os.PathLike, language: str, source: MessageSource) -> Path:
    """Return the catalogue that holds the messages of ``source`` in ``language``: its notebook's, or its own."""
    if source.notebook is not None:
        return catalogue_path(root, language, source.notebook)
    return messages_path(language, source.name, locale_folder(root))


def translated(catalogue) -> set[str]:
    """Return the messages ``catalogue`` translates: its entries without ``msgctxt`` (not a cell's), not fuzzy, not
    empty."""
    return {m.id for m in catalogue if m.id and m.context is None and m.string and not m.fuzzy}


def messages_template(language: str, shown: str, messages: list[tuple[int, str]]):
    """Return the messages of one source file as a catalogue without translations, each at its line."""
    from babel.messages.catalog import Catalog

    template = Catalog(locale=language)
    for line, message in messages:
        template.add(message, "", locations=[(shown, line)])
    return template


def _update_messages(root: Path, language: str, sources: list[MessageSource]) -> list[Path]:
    """Bring the catalogues of their own of ``sources`` up to date (a source without messages loses its)."""
    written = []
    for source in sources:
        target = messages_path(language, source.name, locale_folder(root))
        if not source.messages:
            if target.exists():
                target.unlink()
            continue
        write_catalogue(update_from(read_catalogue(target), messages_template(language, source.shown,
                                                                              source.messages)), target)
        written.append(target)
    return written


def _fold_own_catalogues(root: Path, language: str, sources: list[MessageSource], catalogue) -> list[Path]:
    """Move into ``catalogue`` (a notebook's) every entry of the catalogues ``sources`` (its exercise modules, the
    notebook's labels) had of their own, before their messages moved into the notebook's; return those files (to
    delete once written).

    A translated entry of such a file wins over the notebook catalogue's (it is the one ``ctx.mo``
    held), so the update that follows keeps every translation: a message still in the sources
    keeps its English, fuzzy or not, as it would have in its own catalogue.
    """
    folded = []
    for source in sources:
        own = messages_path(language, source.name, locale_folder(root))
        if not own.exists():
            continue
        for message in read_catalogue(own):
            if not message.id or message.context is not None:
                continue
            if message.string and catalogue.get(message.id) is not None:
                catalogue.delete(message.id)
            if catalogue.get(message.id) is None:
                catalogue[message.id] = message
        folded.append(own)
    return folded


def _update_notebook(root: Path, language: str, assignment: str, sources: list[MessageSource]) -> Path:
    """Bring the catalogue of ``assignment`` up to its notebook, its labels and its exercise modules' messages."""
    notebook = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
    mine = [source for source in sources if source.notebook == assignment]
    target = catalogue_path(root, language, assignment)
    catalogue = read_catalogue(target)
    folded = _fold_own_catalogues(root, language, mine, catalogue)
    messages = [(source.shown, line, message) for source in mine for line, message in source.messages]
    write_catalogue(update_catalogue(notebook, catalogue, messages), target)
    for own in folded:
        own.unlink()
    return target


def update_all(root: str | os.PathLike = ".", only: str | None = None) -> list[Path]:
    """Bring every catalogue up to the current sources and return the files written.

    ``only`` limits it to one catalogue: an assignment (``06-strategies``: its notebook's, which
    holds its check labels and its exercise modules' messages too), a module
    (``ctx_reference.checks.runner``; an exercise module's: its notebook's catalogue) or a source
    file. The message catalogues written are those of ``root``'s ``ctx_reference/locale``.
    """
    root = Path(root).resolve()
    sources = message_sources(root)
    names = assignments(root)

    def chosen(source: MessageSource) -> bool:
        return only is None or only in (source.name, source.shown) or source.name == f"notebook.{only}"

    notebooks = [name for name in names
                 if only in (None, name) or any(s.notebook == name and chosen(s) for s in sources)]
    own = [source for source in sources if source.notebook is None and chosen(source)]
    written = []
    for language in TRANSLATED:
        written += [_update_notebook(root, language, assignment, sources) for assignment in notebooks]
        written += _update_messages(root, language, own)
    return written


def merged_messages(language: str, locale: Path = LOCALE):
    """Return one catalogue of every message in ``language``; raise ValueError if two translations disagree.

    ``locale`` is a course's ``ctx_reference/locale``: its ``messages/`` catalogues, and the
    messages (the entries without ``msgctxt``) of the notebooks' catalogues of the same course,
    ``i18n/<language>/``. An entry that is empty or fuzzy is left out: gettext then shows the
    Chinese id.
    """
    from babel.messages.catalog import Catalog

    notebooks = locale.parent.parent / CATALOGUES / language
    if not notebooks.is_dir():
        raise ValueError(f"locale must be a course's ctx_reference/locale, beside its {CATALOGUES}/{language}/ "
                         f"(got {str(locale)!r})")
    # fixed dates: the compiled file depends on the messages alone, not on when it was compiled
    fixed = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    merged = Catalog(locale=language, domain=DOMAIN, creation_date=fixed, revision_date=fixed)
    for path in sorted((locale / language / "messages").glob("*.po")) + sorted(notebooks.glob("*.po")):
        catalogue = read_catalogue(path)
        done = translated(catalogue)
        for message in catalogue:
            if message.id not in done or message.context is not None:
                continue
            earlier = merged.get(message.id)
            if earlier is not None and earlier.string != message.string:
                raise ValueError(f"message {message.id!r} has two translations: {earlier.string!r} and "
                                 f"{message.string!r} (in {path.name})")
            merged.add(message.id, message.string)
    return merged


def compiled_messages(language: str, locale: Path = LOCALE) -> bytes:
    """Return the ``.mo`` file of ``language``'s messages as bytes (what ``compile_messages`` writes)."""
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, merged_messages(language, locale), use_fuzzy=False)
    return buffer.getvalue()


def mo_path(language: str, locale: Path = LOCALE) -> Path:
    """Return the compiled catalogue gettext reads for ``language``."""
    return locale / language / "LC_MESSAGES" / f"{DOMAIN}.mo"


def compile_messages(locale: Path = LOCALE) -> list[Path]:
    """Compile every language's message catalogues into the ``.mo`` file gettext reads; return the files."""
    written = []
    for language in TRANSLATED:
        if not (locale / language / "messages").is_dir():
            raise ValueError(f"locale must hold the message catalogues {language}/messages/ (got {str(locale)!r})")
        target = mo_path(language, locale)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(compiled_messages(language, locale))
        written.append(target)
    return written


def report(root: str | os.PathLike = ".") -> dict[str, int]:
    """Return, per catalogue file, how many entries are left to translate (only those with some left)."""
    root = Path(root).resolve()
    sources = message_sources(root)
    left: dict[str, int] = {}
    for language in TRANSLATED:
        for assignment in assignments(root):
            notebook = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
            target = catalogue_path(root, language, assignment)
            if count := len(missing(notebook, read_catalogue(target))):
                left[target.relative_to(root).as_posix()] = count
        for source in sources:
            if not source.messages:
                continue
            target = catalogue_of(root, language, source)
            done = translated(read_catalogue(target))
            if count := sum(message not in done for _line, message in source.messages):
                name = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
                left[name] = left.get(name, 0) + count
    return left
