"""The bank: the stored generated cases of every exercise, and their reader.

Covers: ``cases(exercise, part)``, the visible cases (with their expected values, smallest first)
or the hidden ones (with the digest of theirs) of one exercise, and their calls as the batch hook takes them
(``calls``), read from ``<exercise>.json.gz`` or
``<exercise>.hidden.json.gz`` in this package (package data: JSON of one case a line, compressed by
gzip, so that banks of thousands of cases stay small; a check cell reads the visible part only) with
their exact types (``values.decode``), and the errors a case
may name (``ERRORS``, ``error_class``, ``error_name``). ``python -m ctx_reference.checks.bank`` regenerates the files
(``--check`` only compares), with the maintainer's drawing tools.

Leaves out: drawing the cases and computing their expected values (the drawing tools, never
imported in a learner's kernel) and running them (``generated.py``).

Vocabulary: a *bank* is the stored list of generated cases of one exercise; a case's *strategy*
names the rules of the exercise's text it was drawn for (``Rule.generated``).
"""
from __future__ import annotations

import gzip
import importlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from ..values import decode, decode_call


@dataclass(frozen=True)
class BankCase:
    """One generated case: the call, the strategy it was drawn from, and what it must give.

    Exactly one of ``expect`` (visible cases), ``digest`` (hidden cases) and ``raises`` (the name
    of the built-in exception the call must raise) says what the call must give.
    """

    strategy: str
    args: tuple
    kwargs: Mapping[str, Any]
    expect: Any = None
    digest: str | None = None
    raises: str | None = None


def _case(entry: Mapping[str, Any]) -> BankCase:
    args, kwargs = decode_call(entry["args"], entry.get("kwargs"))  # read as they were written
    return BankCase(strategy=entry["strategy"], args=args, kwargs=kwargs,
                    expect=decode(entry["expect"]) if "expect" in entry else None, digest=entry.get("digest"),
                    raises=entry.get("raises"))


#: The file of each part of an exercise's bank, in this package.
FILES = {"visible": "{exercise}.json.gz", "hidden": "{exercise}.hidden.json.gz"}


@cache
def _bank_text(exercise: str, part: str) -> str | None:
    path = resources.files(__package__).joinpath(FILES[part].format(exercise=exercise))
    return gzip.decompress(path.read_bytes()).decode("utf-8") if path.is_file() else None


def cases(exercise: str, part: str = "visible") -> tuple[BankCase, ...]:
    """Return the generated cases of ``exercise`` (``part`` "visible" or "hidden"), smallest first; () if none."""
    if part not in ("visible", "hidden"):
        raise ValueError(f"part must be 'visible' or 'hidden' (got {part!r})")
    text = _bank_text(exercise, part)
    if text is None:
        return ()
    return tuple(_case(entry) for entry in json.loads(text)[part])


def calls(bank: Iterable[BankCase]) -> Iterator[tuple[tuple, Mapping[str, Any]]]:
    """Return the calls of ``bank``'s cases, in order, as ``(args, kwargs)`` (what ``batch.batched`` takes)."""
    return ((case.args, case.kwargs) for case in bank)


#: The built-in errors a bank may name, by their names.
ERRORS: Mapping[str, type[BaseException]] = MappingProxyType({
    kind.__name__: kind for kind in (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError)})


def error_class(name: str) -> type[BaseException]:
    """Return the exception class a bank names: a built-in one by its name, one of the package by its path."""
    if name in ERRORS:
        return ERRORS[name]
    module, _, qualname = name.rpartition(".")
    if not module.startswith("ctx_reference."):
        raise ValueError(f"name must be a built-in error ({sorted(ERRORS)}) or a class of ctx_reference "
                         f"(got {name!r})")
    kind = getattr(importlib.import_module(module), qualname)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        raise ValueError(f"name must name an exception class (got {name!r})")
    return kind


def error_name(exc: BaseException) -> str:
    """Return how a bank names the error ``exc``: a built-in one by its name, one of the package by its path."""
    kind = type(exc)
    if kind.__module__.startswith("ctx_reference."):
        return f"{kind.__module__}.{kind.__qualname__}"
    return kind.__name__
