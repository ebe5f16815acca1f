"""Read the exercise cells of the solution notebooks and run them in-process, without a kernel.

``prefix_namespace(notebook, grade_id)`` executes every code cell before the check cell
``grade_id`` (IPython magics dropped, plots on the Agg backend) and returns the namespace: the
model answers and everything the notebook defined before the check. ``check_parts(cell)`` splits
a check cell into its visible part and its hidden tests (between the nbgrader markers).
Used by the mutation and honesty tests.
"""
from __future__ import annotations

import contextlib
import io
import json
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def notebook_path(folder: str) -> Path:
    """Return the one notebook in ``solutions/<folder>/``."""
    (path,) = sorted((SOLUTIONS / folder).glob("*.ipynb"))
    return path


@cache
def cells(folder: str, edition: str = "zh_CN") -> tuple[dict, ...]:
    """Return the cells of the solution notebook in ``solutions/<folder>/`` (``edition="en"``: its English edition)."""
    if edition != "zh_CN":
        from ctx_course.editions.check import english_notebook

        return tuple(english_notebook(ROOT, folder)["cells"])
    return tuple(json.loads(notebook_path(folder).read_text(encoding="utf-8"))["cells"])


def source(cell: dict) -> str:
    """Return a cell's source as one string."""
    return "".join(cell["source"])


def grade_id(cell: dict) -> str | None:
    """Return a cell's nbgrader grade_id, or None."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def check_cell(folder: str, gid: str) -> str:
    """Return the source of the check cell ``gid`` of a notebook."""
    for cell in cells(folder):
        if grade_id(cell) == gid:
            return source(cell)
    raise KeyError(gid)


def check_parts(text: str) -> tuple[str, str]:
    """Split a check cell's source into (visible part, hidden tests), each block joined in order.

    A cell may hold several hidden blocks (the capstone defines its hidden workloads before the
    visible check and tests them after it).
    """
    visible, hidden = [], []
    rest = text
    while BEGIN in rest:
        before, _, rest = rest.partition(BEGIN)
        block, _, rest = rest.partition(END)
        visible.append(before)
        hidden.append(block)
    visible.append(rest)
    return "".join(visible), "\n".join(hidden)


def _runnable(text: str) -> str:
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))


@cache
def _prefix(folder: str, gid: str, edition: str = "zh_CN") -> dict:
    import matplotlib

    from ctx_reference.i18n import using

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), using(edition):
        for cell in cells(folder, edition):
            if grade_id(cell) == gid:
                return namespace
            if cell["cell_type"] == "code":
                exec(compile(_runnable(source(cell)), f"{folder}:{grade_id(cell)}", "exec"), namespace)
    raise KeyError(gid)


@cache
def _before(folder: str, index: int) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells(folder)[:index]:
            if cell["cell_type"] == "code":
                exec(compile(_runnable(source(cell)), f"{folder}:{grade_id(cell)}", "exec"), namespace)
    return namespace


def namespace_before(folder: str, index: int) -> dict:
    """Return a fresh copy of the namespace after running the code cells before cell ``index``."""
    return dict(_before(folder, index))


def prefix_namespace(folder: str, gid: str, edition: str = "zh_CN") -> dict:
    """Return a fresh copy of the namespace the check cell ``gid`` runs in (model answers bound), in ``edition``."""
    return dict(_prefix(folder, gid, edition))
