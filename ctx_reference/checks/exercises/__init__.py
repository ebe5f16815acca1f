"""The exercises as data: one module per notebook, ``wNN_<idea>.py``, each defining ``EXERCISES``.

Covers: finding the modules (every module of this package whose name does not start with ``_``, in
the order of their names: the notebook's number first), and ``REGISTRY``, exercise name → its
``Exercise`` record, in that order. Adding a notebook's checks adds a module here and edits nothing
else of the package.

Leaves out: what a record holds (``exercise.py``) and running its cases (``runner.py``).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from ..exercise import Exercise, registry


def _modules() -> list:
    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
            if not info.name.startswith("_")]


#: Exercise name → its record, in the order of the notebooks.
REGISTRY: Mapping[str, Exercise] = registry(exercise for module in _modules() for exercise in module.EXERCISES)
