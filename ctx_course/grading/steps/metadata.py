"""Put back every nbgrader field of every cell from the release, before nbgrader's own steps read them.

Covers: ``ReleaseCells``, what the gradebook says each graded or read-only cell is (its type,
whether it is an answer, a check, read-only, its points); ``restore_metadata``, which makes a
submitted notebook's cells say exactly that: one cell per id (the last copy of a duplicated one,
of the right type; the other copies lose their nbgrader fields, and a duplicated answer says so
in a comment line: its copies still run in notebook order, see ``plan.py``), no id the
release does not have, every field as released; and
``RestoreMetadata``, the sanitising step that applies it. The notes it returns name what was
ignored, for the grading summary.

Why: nbgrader trusts the submitted metadata (``grade``, ``points``, ``solution``, ``locked``)
and stops on what it cannot reconcile (a duplicated id, a check cell whose ``grade`` flag was
cleared: "Inconsistent checksums"), so a notebook edited by accident was "not graded". A learner
can change a cell's metadata; nothing of it is taken from the submission here.

Leaves out: putting back a deleted cell or a read-only cell's source (nbgrader's OverwriteCells
and ``RestoreCells`` do it, after this step).
"""
from __future__ import annotations

from dataclasses import dataclass

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from ctx_reference.i18n import N_, _, using

from ...cells import released_source, source_text
from ...editions.translate import submitted_edition

SCHEMA_VERSION = 3
# The first line of the other copies of a duplicated answer cell (the feedback shows it). They
# still run where the notebook has them (``plan.py``): a check cell sees the copy above it.
# In the reader's language (``RestoreMetadata`` reads the submission's edition).
DUPLICATE_NOTE = N_(
    "# （评分说明：这一格和另一个答案格的编号都是 {grade_id}。"
    "评分时和笔记本里一样从上到下运行，每个检查格用的是它上面最后运行的那一份。）\n"
)


@dataclass(frozen=True)
class ReleaseCell:
    """What the release says one cell is."""

    cell_type: str
    solution: bool = False
    grade: bool = False
    locked: bool = False
    task: bool = False
    points: float = 0.0
    source: str = ""  # a read-only cell's source as released (hidden tests left out)

    def metadata(self, grade_id: str) -> dict:
        """Return the nbgrader metadata of this cell as released."""
        meta = {
            "grade": self.grade, "grade_id": grade_id, "locked": self.locked, "schema_version": SCHEMA_VERSION,
            "solution": self.solution, "task": self.task,
        }
        if self.grade or self.task:
            meta["points"] = self.points
        return meta


def release_cells(gradebook: Gradebook, notebook: str, assignment: str) -> dict[str, ReleaseCell]:
    """Return ``{grade_id: ReleaseCell}`` of one notebook, read from the gradebook (empty if it is unknown)."""
    try:
        nb = gradebook.find_notebook(notebook, assignment)
    except MissingEntry:
        return {}
    grades = {c.name: float(c.max_score) for c in nb.grade_cells}
    tasks = {c.name: float(c.max_score) for c in nb.task_cells}
    answers = {c.name for c in nb.solution_cells}
    return {
        c.name: ReleaseCell(
            c.cell_type, solution=c.name in answers, grade=c.name in grades, locked=bool(c.locked),
            task=c.name in tasks, points=grades.get(c.name, tasks.get(c.name, 0.0)),
            source=released_source(c.source or "") if c.locked else "",
        )
        for c in nb.source_cells
    }


def restore_metadata(cells: list, released: dict[str, ReleaseCell]) -> list[str]:
    """Make every cell's nbgrader metadata the release's; return notes naming what was ignored.

    ``cells`` are notebook cells (dicts or notebook nodes, changed in place). For each id of the
    release the last cell carrying it counts (of a read-only cell, the last copy as released if
    there is one; else the last of the right cell type, if any is); the
    other cells carrying it, and cells carrying an id the release does not have, lose their
    nbgrader metadata. Example: an answer cell copied in JupyterLab gives the note
    ``"duplicated answer cells: each check sees the copy above it: remaining"``.
    """
    carriers: dict[str, list[int]] = {}
    unknown = []
    for index, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader")
        if not isinstance(meta, dict) or not meta:
            if "nbgrader" in cell.get("metadata", {}):
                del cell["metadata"]["nbgrader"]
            continue
        grade_id = meta.get("grade_id")
        if not isinstance(grade_id, str) or grade_id not in released:
            unknown.append(str(grade_id))
            del cell["metadata"]["nbgrader"]
            continue
        carriers.setdefault(grade_id, []).append(index)
    duplicated: list[str] = []
    claimed: list[str] = []
    for grade_id, indices in carriers.items():
        spec = released[grade_id]
        typed = [i for i in indices if cells[i].get("cell_type") == spec.cell_type]
        genuine = [
            i for i in typed if spec.locked and source_text(cells[i].get("source", "")).rstrip() == spec.source.rstrip()
        ]
        kept = (genuine or typed or indices)[-1]
        cells[kept]["metadata"]["nbgrader"] = nbformat.from_dict(spec.metadata(grade_id))
        for index in indices:
            if index == kept:
                continue
            del cells[index]["metadata"]["nbgrader"]
            if spec.solution and cells[index].get("cell_type") == "code":
                note = _(DUPLICATE_NOTE).format(grade_id=grade_id)
                cells[index]["source"] = note + source_text(cells[index].get("source", ""))
        if len(indices) > 1:
            (duplicated if spec.solution else claimed).append(grade_id)
    notes = []
    if duplicated:
        notes.append("duplicated answer cells: each check sees the copy above it: " + ", ".join(sorted(duplicated)))
    if claimed:
        notes.append("extra cells claiming a read-only or check cell ignored: " + ", ".join(sorted(claimed)))
    if unknown:
        notes.append("cells with an id the release does not have ignored: " + ", ".join(sorted(set(unknown))))
    return notes


class RestoreMetadata(NbGraderPreprocessor):
    """nbgrader's sanitising step that puts back every cell's nbgrader metadata from the gradebook.

    Runs first (after ClearOutput), before DeduplicateIds and OverwriteCells read the metadata;
    the notes are left in ``resources["ctx_metadata_notes"]``.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            released = release_cells(gb, info["notebook"], info["assignment"])
        if released:
            with using(submitted_edition(nb)):  # the note on a duplicated answer speaks the submission's language
                resources["ctx_metadata_notes"] = restore_metadata(nb.cells, released)
        return nb, resources
