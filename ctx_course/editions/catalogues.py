"""Keep the translation catalogues up to date: extract, update and compile (``python -m ctx_course i18n``).

Covers: ``update_all`` (every catalogue brought up to the current sources: the notebooks' in
``i18n/<language>/``, the messages' in ``ctx_reference/locale/<language>/messages/``, one per
module that shows messages), ``compile_messages`` (those merged into the ``.mo`` file gettext
reads), ``extract_messages`` (the messages a module marks with ``_`` or ``N_``) and ``report``
(what is left to translate).

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

import datetime
import io
import json
import os
from pathlib import Path

from ctx_reference.i18n import DOMAIN, LANGUAGES, LOCALE, SOURCE

from ..config import assignments
from .translate import (
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
    import ast

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


def message_sources(root: Path) -> list[tuple[str, str, list[tuple[int, str]]]]:
    """Return (catalogue name, source file, [(line, message)]) for every module and notebook that shows messages."""
    sources = []
    for path in message_modules(root):
        sources.append((module_name(root, path), path.relative_to(root).as_posix(), extract_messages(path)))
    for assignment in assignments(root):
        path = source_notebook(root, assignment)
        notebook = json.loads(path.read_text(encoding="utf-8"))
        sources.append((f"notebook.{assignment}", path.relative_to(root).as_posix(),
                        [(0, message) for message in notebook_messages(notebook)]))
    return sources


def messages_template(language: str, shown: str, messages: list[tuple[int, str]]):
    """Return the messages of one source file as a catalogue without translations, each at its line."""
    from babel.messages.catalog import Catalog

    template = Catalog(locale=language)
    for line, message in messages:
        template.add(message, "", locations=[(shown, line)])  # line 0: a notebook, no line
    return template


def _update_messages(root: Path, language: str, only: str | None) -> list[Path]:
    written = []
    for module, shown, messages in message_sources(root):
        if only is not None and only not in (module, shown):
            continue
        target = messages_path(language, module, locale_folder(root))
        if not messages:
            if target.exists():
                target.unlink()
            continue
        write_catalogue(update_from(read_catalogue(target), messages_template(language, shown, messages)), target)
        written.append(target)
    return written


def update_all(root: str | os.PathLike = ".", only: str | None = None) -> list[Path]:
    """Bring every catalogue up to the current sources and return the files written.

    ``only`` limits it to one catalogue: an assignment (``06-strategies``: its notebook's and
    its notebook's messages), a module (``ctx_reference.checks.runner``) or a source file. The
    message catalogues written are those of ``root``'s ``ctx_reference/locale``.
    """
    root = Path(root).resolve()
    written = []
    for language in TRANSLATED:
        for assignment in assignments(root):
            if only is not None and only != assignment:
                continue
            notebook = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
            target = catalogue_path(root, language, assignment)
            write_catalogue(update_catalogue(notebook, read_catalogue(target)), target)
            written.append(target)
        written += _update_messages(root, language, only)
        if only in assignments(root):
            written += _update_messages(root, language, f"notebook.{only}")
    return written


def merged_messages(language: str, locale: Path = LOCALE):
    """Return one catalogue of every module's messages in ``language``; raise ValueError if two disagree.

    An entry that is empty or fuzzy is left out: gettext then shows the Chinese id.
    """
    from babel.messages.catalog import Catalog

    # fixed dates: the compiled file depends on the messages alone, not on when it was compiled
    fixed = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    merged = Catalog(locale=language, domain=DOMAIN, creation_date=fixed, revision_date=fixed)
    for path in sorted((locale / language / "messages").glob("*.po")):
        for message in read_catalogue(path):
            if not message.id or not message.string or message.fuzzy:
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
    left: dict[str, int] = {}
    for language in TRANSLATED:
        for assignment in assignments(root):
            notebook = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
            target = catalogue_path(root, language, assignment)
            if count := len(missing(notebook, read_catalogue(target))):
                left[target.relative_to(root).as_posix()] = count
        for module, _shown, messages in message_sources(root):
            if not messages:
                continue
            target = messages_path(language, module, locale_folder(root))
            done = {m.id for m in read_catalogue(target) if m.id and m.string and not m.fuzzy}
            if count := sum(message not in done for _line, message in messages):
                left[target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)] = count
    return left
