"""Write the answer key a learner's package ships: the model answer of every exercise and question, in each edition.

Covers: the model answer of an exercise as the source notebook holds it (``model_answer``: the
answer cell with nbgrader's solution markers taken out, what the release replaces with a stub),
the key of one edition (``answer_key``: every exercise of every assignment, the English one with
its comments and docstrings from the notebook catalogue), the sample answers of the free-response
questions (``question_key``: every manually graded markdown cell's solution, the points a good
answer covers and a model answer), and writing both editions' keys into ``ctx_reference/answer_key/``
(``write_answer_keys``, run by ``python -m ctx_course release``).

Leaves out: when a learner may read the key (``ctx_reference/model_answers.py``) and keeping it
from graded code (the sandbox hides the folder; the reference build leaves it out).

Vocabulary: an exercise's *answer cell* is the cell of its source notebook whose nbgrader
``grade_id`` is the learner's function (``ctx_reference.checks.FUNCTIONS``: ``my_policy`` for the
capstone's three exercises, the exercise's own name for the others).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ctx_reference.checks import FUNCTIONS, NOTEBOOKS
from ctx_reference.i18n import LANGUAGES, SOURCE
from ctx_reference.model_answers import KEY_FOLDER, key_file

from .catalogues import source_notebook

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
"""The lines nbgrader's ClearSolutions replaces, with what lies between them, by the release's stub."""


def questions(notebook: dict) -> list[str]:
    """Return the grade ids of the free-response questions of ``notebook``: its manually graded markdown answer cells.

    >>> questions({"cells": [{"cell_type": "markdown", "metadata": {"nbgrader": {
    ...     "grade_id": "q_a", "solution": True, "grade": True}}, "source": ""}]})
    ['q_a']
    """
    found = []
    for cell in notebook.get("cells", []):
        marks = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown" and marks.get("solution") and marks.get("grade"):
            found.append(marks["grade_id"])
    return found


def model_answer(notebook: dict, grade_id: str) -> str:
    """Return the source of the cell ``grade_id`` of ``notebook`` without nbgrader's solution markers.

    >>> cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "f"}},
    ...         "source": "def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION"}
    >>> print(model_answer({"cells": [cell]}, "f"))
    def f():
        return 1
    """
    for cell in notebook.get("cells", []):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            kept = [line for line in source.splitlines() if line.strip() not in MARKERS]
            return "\n".join(kept).strip("\n")
    raise ValueError(f"grade_id must name a cell of the notebook (got {grade_id!r})")


def _notebook(root: Path, assignment: str, language: str) -> dict:
    if language == SOURCE:
        return json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
    from .check import english_notebook

    return english_notebook(root, assignment)


def answer_key(root: str | os.PathLike, language: str) -> dict[str, str]:
    """Return exercise → model answer (source code) in ``language``, for every exercise the checks know."""
    root = Path(root)
    notebooks: dict[str, dict] = {}
    key = {}
    for exercise, assignment in sorted(NOTEBOOKS.items()):
        if assignment not in notebooks:
            notebooks[assignment] = _notebook(root, assignment, language)
        key[exercise] = model_answer(notebooks[assignment], FUNCTIONS.get(exercise, exercise))
    return key


def question_key(root: str | os.PathLike, language: str) -> dict[str, str]:
    """Return question → sample answer (Markdown: its points, then a model answer) in ``language``, for every
    free-response question of every assignment."""
    root = Path(root)
    key = {}
    for assignment in sorted(set(NOTEBOOKS.values())):
        notebook = _notebook(root, assignment, language)
        for grade_id in questions(notebook):
            key[grade_id] = model_answer(notebook, grade_id)
    return key


def key_text(key: dict[str, str]) -> str:
    """Return the file text of one edition's key (sorted, one exercise per entry)."""
    return json.dumps(key, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def key_path(root: str | os.PathLike, language: str, part: str = "exercises") -> Path:
    """Return where the key of ``language`` is written in the checkout at ``root`` (exercises or questions)."""
    return key_file(language, Path(root) / "ctx_reference" / KEY_FOLDER, part)


def write_answer_keys(root: str | os.PathLike = ".") -> list[Path]:
    """Write the answer key of every edition into ``ctx_reference/answer_key/``; return the files written."""
    written = []
    for language in LANGUAGES:
        for part, key in (("exercises", answer_key(root, language)), ("questions", question_key(root, language))):
            path = key_path(root, language, part)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(key_text(key), encoding="utf-8")
            written.append(path)
    return written


__all__ = ["MARKERS", "answer_key", "key_path", "key_text", "model_answer", "question_key", "questions",
           "write_answer_keys"]
