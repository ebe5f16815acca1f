"""The language a learner reads: every message of the workbook goes through a gettext catalogue.

Covers: ``gettext`` (imported as ``_``), which returns a message in the reader's language;
``N_``, which only marks a message for extraction (a label defined at import time, translated
where it is shown); ``language``, the reader's language; ``using``, a block in another language.

The workbook is written in Simplified Chinese: a message's id *is* its Chinese text, so the
``zh_CN`` edition needs no catalogue and a message missing from the English one reads in Chinese
rather than not at all (``tests/test_i18n.py`` fails on any). The English messages live in
``locale/en/messages/<module>.po``, one catalogue per module that shows messages, compiled into
``locale/en/LC_MESSAGES/ctx.mo`` by ``python -m ctx_course i18n compile``.

The language comes, in this order, from ``using`` (the grader renders a page for one
submission), from the environment variable ``CTX_LANG`` (``make lab LANG=en`` sets it for the
learner's kernels, the grader for an English submission's), or is ``zh_CN``.

Only messages are translated, never data: a value a function returns or a check compares is the
same in both editions, so a submission of either grades the same.
"""
from __future__ import annotations

import contextlib
import contextvars
import gettext as _gettext
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path

SOURCE = "zh_CN"
"""The language the workbook is written in; message ids are its text."""
LANGUAGES = (SOURCE, "en")
"""The editions: Simplified Chinese and English."""
ENVIRONMENT = "CTX_LANG"
"""The environment variable naming the reader's language."""
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
    """Return the reader's language: the one ``using`` chose, else ``CTX_LANG``, else ``zh_CN``."""
    chosen = _chosen.get()
    if chosen is not None:
        return chosen
    named = os.environ.get(ENVIRONMENT, "").strip()
    return normalize(named, argument=ENVIRONMENT) if named else SOURCE


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
