"""The language a learner reads: every message of the workbook goes through a gettext catalogue.

Covers: ``gettext`` (imported as ``_``), which returns a message in the reader's language;
``N_``, which only marks a message for extraction (a label defined at import time, translated
where it is shown); ``language``, the reader's language; ``using``, a block in another language;
``notebook_edition``, the edition of the notebook a kernel runs.

The workbook is written in Simplified Chinese: a message's id *is* its Chinese text, so the
``zh_CN`` edition needs no catalogue and a message missing from the English one reads in Chinese
rather than not at all (``tests/test_i18n.py`` fails on any). The English messages live in
``locale/en/messages/<module>.po``, one catalogue per module that shows messages, compiled into
``locale/en/LC_MESSAGES/ctx.mo`` by ``python -m ctx_course i18n compile``.

The language comes, in this order, from ``using`` (the grader renders a page for one
submission), from the environment variable ``CTX_LANG`` (``make lab LANG=en`` sets it for the
learner's kernels, the grader for every submission's), from the notebook the kernel runs
(``notebook_edition``: an English release notebook says ``"ctx_edition": "en"`` in its metadata,
so it reads in English in any Jupyter), or is ``zh_CN``.

Vocabulary: the *edition* of a notebook is the language its metadata names (``ctx_edition``;
none is the Chinese source edition).

Only messages are translated, never data: a value a function returns or a check compares is the
same in both editions, so a submission of either grades the same.
"""
from __future__ import annotations

import contextlib
import contextvars
import gettext as _gettext
import json
import os
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

SOURCE = "zh_CN"
"""The language the workbook is written in; message ids are its text."""
LANGUAGES = (SOURCE, "en")
"""The editions: Simplified Chinese and English."""
ENVIRONMENT = "CTX_LANG"
"""The environment variable naming the reader's language."""
METADATA_KEY = "ctx_edition"
"""The notebook metadata naming a notebook's edition (``"en"`` in ``lessons-en/``)."""
SESSION = "JPY_SESSION_NAME"
"""Set by Jupyter Server (JupyterLab, Notebook, a hub) in a kernel's environment: the path of its notebook."""
DOMAIN = "ctx"
LOCALE = Path(__file__).with_name("locale")
"""Where the catalogues are: ``<language>/messages/*.po`` and the compiled ``<language>/LC_MESSAGES/ctx.mo``."""

_ALIASES = {"zh": SOURCE, "zh_cn": SOURCE, "zh-cn": SOURCE, "zh_hans": SOURCE, "en": "en", "en_us": "en",
            "en-us": "en", "en_gb": "en", "en-gb": "en"}
_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("ctx_language", default=None)


def normalize(name: str, *, argument: str = "language") -> str:
    """Return the edition ``name`` stands for (``"en"``, ``"en_US.UTF-8"`` → ``"en"``); raise ValueError on others.

    >>> normalize("zh")
    'zh_CN'
    >>> normalize("en_US.UTF-8")
    'en'
    """
    key = str(name).split(".")[0].strip().lower()
    if key not in _ALIASES:
        raise ValueError(f"{argument} must be one of {', '.join(LANGUAGES)} (got {name!r})")
    return _ALIASES[key]


def language() -> str:
    """Return the reader's language: the one ``using`` chose, else ``CTX_LANG``, else the edition of the
    notebook this kernel runs (``notebook_edition``), else ``zh_CN``."""
    chosen = _chosen.get()
    if chosen is not None:
        return chosen
    named = os.environ.get(ENVIRONMENT, "").strip()
    if named:
        return normalize(named, argument=ENVIRONMENT)
    return _running_notebook_edition() or SOURCE


def _edition_in(path: Path) -> str | None:
    """Return the edition a notebook file names in its metadata (``None``: the source edition, or unreadable)."""
    try:
        with path.open(encoding="utf-8") as handle:
            named = json.load(handle).get("metadata", {}).get(METADATA_KEY)
        return normalize(named) if isinstance(named, str) else None
    except (OSError, ValueError, AttributeError):
        return None


def notebook_edition(environ: Mapping[str, str], user_ns: Mapping[str, object], cwd: str | os.PathLike) -> str | None:
    """Return the edition of the notebook a kernel runs, or ``None`` if it names none or cannot be found.

    The notebook is, in this order: the one Jupyter Server names (``JPY_SESSION_NAME``: JupyterLab,
    Notebook, a hub); the one VS Code names (``__vsc_ipynb_file__`` in the kernel's namespace);
    else the notebooks of the kernel's working directory, where ``jupyter nbconvert --execute``,
    nbclient and papermill start it, when every one of them that names an edition names the same.
    A Chinese notebook names none, so in its folder the answer is ``None``: the source edition.
    """
    for named in (environ.get(SESSION), user_ns.get("__vsc_ipynb_file__")):
        if isinstance(named, str) and named.endswith(".ipynb") and Path(named).is_file():
            return _edition_in(Path(named))
    try:
        found = {_edition_in(path) for path in sorted(Path(cwd).glob("*.ipynb"))}
    except OSError:
        return None
    found.discard(None)
    return found.pop() if len(found) == 1 else None


@cache
def _running_notebook_edition() -> str | None:
    """Return ``notebook_edition`` if this process is a Jupyter kernel, found once (a kernel runs one notebook).

    Any other process (a script, the grader, the tests) reads no notebook: its language is never a guess.
    """
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if getattr(shell, "kernel", None) is None:
        return None
    return notebook_edition(os.environ, getattr(shell, "user_ns", None) or {}, os.getcwd())


@contextlib.contextmanager
def using(name: str) -> Iterator[str]:
    """Read every message in the block in ``name`` (``with using("en"): ...``), whatever ``CTX_LANG`` says."""
    token = _chosen.set(normalize(name))
    try:
        yield _chosen.get() or SOURCE
    finally:
        _chosen.reset(token)


@cache
def _catalogue(name: str) -> _gettext.NullTranslations:
    if name == SOURCE:
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, localedir=str(LOCALE), languages=[name], fallback=True)


def gettext(message: str) -> str:
    """Return ``message`` (its Chinese text) in the reader's language; a message with no translation stays as it is.

    An empty message stays empty (gettext's own answer to ``""`` is the catalogue's header).

    >>> with using("zh_CN"):
    ...     gettext("全部 {count} 个检查通过。")
    '全部 {count} 个检查通过。'
    >>> with using("en"):
    ...     gettext("")
    ''
    """
    return _catalogue(language()).gettext(message) if message else message


_ = gettext


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it (translate it where it is shown)."""
    return message
