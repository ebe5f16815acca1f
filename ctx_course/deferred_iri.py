"""Keep jsonschema's IRI grammar out of start-up: it is built the first time an IRI is checked.

jsonschema loads ``rfc3987_syntax`` with its format checkers, and that module compiles an Earley
grammar as it is imported: about a second of CPU in every process that reads a notebook (nbformat
validates notebooks with jsonschema). Every grading process, grading worker and test worker pays
it, and none of them checks an IRI; no notebook or Jupyter schema uses the ``iri`` formats.

Covers: ``defer()``, which puts a stand-in module under that name. jsonschema takes
``is_valid_syntax`` from it as before; the real module is imported, and its grammar built, on
the first call or the first other attribute asked for. Importing ``ctx_course`` calls ``defer()``.

Leaves out: anything when the real module is already imported or not installed.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

NAME = "rfc3987_syntax"


def defer() -> None:
    """Put the stand-in under ``rfc3987_syntax`` unless that module is already imported or missing."""
    if NAME in sys.modules:
        return
    try:
        if importlib.util.find_spec(NAME) is None:
            return
    except (ImportError, ValueError):
        return
    stand_in = types.ModuleType(NAME, "Stand-in: the real module is imported on first use.")
    # A module's namespace is its __dict__: the stand-in's names are put there, as `def` would.
    vars(stand_in).update(is_valid_syntax=is_valid_syntax, __getattr__=_attribute, deferred=True)
    sys.modules[NAME] = stand_in


def real_module() -> types.ModuleType:
    """Return the real ``rfc3987_syntax``, importing it (and building its grammar) if not done yet."""
    module = sys.modules.get(NAME)
    if module is None or getattr(module, "deferred", False):
        sys.modules.pop(NAME, None)
        module = importlib.import_module(NAME)
    return module


def _attribute(name: str) -> object:
    # The import system asks a module for __path__, __spec__ and the like: those never load it.
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(real_module(), name)


def is_valid_syntax(term: str, value: str) -> bool:
    """Return ``rfc3987_syntax.is_valid_syntax(term, value)`` (what jsonschema's ``iri`` formats call)."""
    return real_module().is_valid_syntax(term, value)
