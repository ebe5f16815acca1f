"""Generate the student release of each edition from the source notebooks (``solutions/``).

nbgrader removes the solutions and the hidden tests, clears the outputs and locks the check
cells. The Chinese edition goes to ``lessons/``; the English one to ``lessons-en/``, generated the
same way from the English source notebooks, which ``solutions/`` and the catalogues
``i18n/en/*.po`` make in a temporary folder (``editions.check.english_notebook``). Each release
also holds its edition's glossary at its top (``lessons/glossary.md``, ``lessons-en/glossary.en.md``),
where the notebooks' links (``../glossary.md#cache``) find it inside a learner's workspace. A
released notebook carries no ``language_info.version``: that is the Python of the machine that last
ran the source, not the learner's (``steady_metadata``). Both releases are committed;
``tests/test_release.py`` regenerates them and fails if a committed copy differs.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbgrader.apps import NbGraderAPI

from ctx_reference.i18n import SOURCE, normalize

from .config import assignments, load_course_config
from .editions.catalogues import source_notebook
from .editions.translate import EDITIONS, GLOSSARY, stubs


class ReleaseError(RuntimeError):
    """nbgrader could not generate an assignment; the message carries its log."""


def generate_release(
    root: str | os.PathLike = ".",
    *,
    release: str | os.PathLike | None = None,
    work: str | os.PathLike | None = None,
    language: str = SOURCE,
) -> list[str]:
    """Regenerate every assignment of the course in ``language`` into ``release`` and return their ids.

    ``release`` defaults to the edition's folder (``lessons/``, ``lessons-en/``). The gradebook
    nbgrader needs for this lives in ``work``, a temporary folder by default, so releasing never
    changes the gradebook of a grading run.

    Example: ``generate_release(".")`` rewrites ``lessons/01-window-math/window_math.ipynb`` and
    the ten others, and copies the glossary to ``lessons/glossary.md``; ``generate_release(".",
    language="en")`` the same under ``lessons-en/``, with ``lessons-en/glossary.en.md``.
    """
    root = Path(root).resolve()
    language = normalize(language)
    if work is None:
        # Releasing must not touch the instructor's gradebook: use a throw-away one.
        with tempfile.TemporaryDirectory(prefix="ctx-release-") as scratch:
            return generate_release(root, release=release, work=scratch, language=language)
    if release is None and language != SOURCE:
        release = root / EDITIONS[language]
    config = load_course_config(root, work=work, release=release)
    if language != SOURCE:
        config.CourseDirectory.source_directory = str(_edition_sources(root, Path(work), language))
        shown = stubs(language)
        config.ClearSolutions.code_stub = {"python": shown["code"]}
        config.ClearSolutions.text_stub = shown["markdown"]
    api = NbGraderAPI(config=config)
    done = []
    for assignment_id in assignments(root):
        target = Path(api.coursedir.format_path(api.coursedir.release_directory, ".", assignment_id))
        if target.exists():
            shutil.rmtree(target)
        result = api.generate_assignment(assignment_id, force=True)
        if not result["success"]:
            details = f"{result.get('log', '')}{result.get('error', '')}"
            raise ReleaseError(f"assignment {assignment_id!r} failed:\n{details}")
        for path in target.glob("*.ipynb"):
            notebook = nbformat.read(path, as_version=4)
            nbformat.write(nbformat.from_dict(steady_metadata(notebook)), path)
        done.append(assignment_id)
    folder = Path(api.coursedir.format_path(api.coursedir.release_directory, ".", "."))
    for edition, name in GLOSSARY.items():
        if edition == language:
            shutil.copyfile(root / name, folder / name)
        else:
            (folder / name).unlink(missing_ok=True)
    return done


def steady_metadata(notebook: dict) -> dict:
    """Return ``notebook`` without what depends on the machine that ran it last (``language_info.version``).

    The kernel that opens a notebook writes its own ``language_info``; a stored version from another
    Python would make the notebook differ from what the learner's kernel reports. The input is not changed.

    >>> steady_metadata({"metadata": {"language_info": {"name": "python", "version": "3.11.7"}}, "cells": []})
    {'metadata': {'language_info': {'name': 'python'}}, 'cells': []}
    """
    metadata = dict(notebook.get("metadata", {}))
    if isinstance(metadata.get("language_info"), dict):
        metadata["language_info"] = {k: v for k, v in metadata["language_info"].items() if k != "version"}
    return {**notebook, "metadata": metadata}


def _edition_sources(root: Path, work: Path, language: str) -> Path:
    """Write the source notebooks of ``language`` (with every other file of each assignment) under ``work``."""
    from .editions.check import english_notebook

    if language != "en":
        raise ValueError(f"language must be one of zh_CN, en (got {language!r})")
    sources = work / f"source-{language}"
    for assignment_id in assignments(root):
        original = source_notebook(root, assignment_id)
        target = sources / assignment_id
        shutil.copytree(original.parent, target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        text = json.dumps(english_notebook(root, assignment_id), ensure_ascii=False, indent=1) + "\n"
        (target / original.name).write_text(text, encoding="utf-8")
    return sources


def generate_editions(root: str | os.PathLike = ".") -> dict[str, list[str]]:
    """Regenerate the release of every edition (``lessons/``, ``lessons-en/``); return the ids per language."""
    return {language: generate_release(root, language=language) for language in EDITIONS}
