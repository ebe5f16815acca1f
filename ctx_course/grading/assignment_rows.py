"""An assignment's definition in a gradebook, as plain rows: read from one gradebook, written into another.

Covers: ``read_definition`` (the rows nbgrader's ``generate_assignment`` wrote for one
assignment: the assignment, its notebooks and every cell with its points, checksum and locked
source) and ``write_definition`` (the same rows into another gradebook, replacing the
assignment there). The coordinator generates each assignment once into the real gradebook; a
SubmissionGrader (``autograde.py``, in this process or on a Dask worker) then needs the same rows
in its scratch gradebook before nbgrader autogrades a submission there, and copying them costs a
few milliseconds where generating the assignment again costs a fifth of a second of CPU on every
grader.

The due date stays behind (None in the copy, as ``generate_assignment`` leaves it in a fresh
gradebook): deadlines are applied by the coordinator, to the real gradebook, after grading.

Leaves out: the students' rows (submissions, grades, comments), which graders send the other
way (``gradebook_writer.py``).
"""
from __future__ import annotations

from nbgrader.api import Base, Gradebook, MissingEntry
from sqlalchemy import select

# The tables that define an assignment, parents before children (nbgrader's schema).
DEFINITION_TABLES = (
    "assignment", "notebook", "base_cell", "grade_cells", "solution_cells", "task_cells", "source_cell",
)

Definition = dict[str, tuple[dict, ...]]


def read_definition(gb: Gradebook, assignment: str) -> Definition:
    """Return {table: rows} of ``assignment`` in ``gb``; raise MissingEntry when it is not there.

    Rows are plain dicts of column values in the order the database keeps them, which is the
    order nbgrader wrote them in (the ids are random strings, so ordering by id would shuffle
    them): written in that order into another gradebook, a notebook's cells come back in the
    order nbgrader reads them here, which is where it puts back a deleted cell. Two reads of the
    same definition compare equal.
    """
    tables = Base.metadata.tables
    session = gb.db

    def rows(table: str, clause) -> tuple[dict, ...]:
        t = tables[table]
        return tuple(dict(row) for row in session.execute(select(t).where(clause(t))).mappings())

    definition: Definition = {"assignment": rows("assignment", lambda t: t.c.name == assignment)}
    if not definition["assignment"]:
        raise MissingEntry(f"no assignment {assignment!r} in the gradebook")
    definition["assignment"] = tuple({**row, "duedate": None} for row in definition["assignment"])
    assignment_ids = [row["id"] for row in definition["assignment"]]
    definition["notebook"] = rows("notebook", lambda t: t.c.assignment_id.in_(assignment_ids))
    notebook_ids = [row["id"] for row in definition["notebook"]]
    definition["base_cell"] = rows("base_cell", lambda t: t.c.notebook_id.in_(notebook_ids))
    cell_ids = [row["id"] for row in definition["base_cell"]]
    position = {cell_id: index for index, cell_id in enumerate(cell_ids)}
    for table in ("grade_cells", "solution_cells", "task_cells"):  # each in the order of its base cells
        found = rows(table, lambda t: t.c.id.in_(cell_ids))
        definition[table] = tuple(sorted(found, key=lambda row: position[row["id"]]))
    definition["source_cell"] = rows("source_cell", lambda t: t.c.notebook_id.in_(notebook_ids))
    return definition


def write_definition(gb: Gradebook, definition: Definition) -> None:
    """Write a definition read by ``read_definition`` into ``gb``, in place of the assignment there.

    An assignment of that name already in ``gb`` is removed first, with everything of it
    (its submissions included, as ``Gradebook.remove_assignment`` does). The course of the
    assignment must be ``gb``'s course.
    """
    for row in definition["assignment"]:
        if row["course_id"] != gb.course_id:
            raise ValueError(f"definition is of course {row['course_id']!r}, the gradebook's is {gb.course_id!r}")
        try:
            gb.remove_assignment(row["name"])
        except MissingEntry:
            pass
    tables = Base.metadata.tables
    session = gb.db
    for table in DEFINITION_TABLES:
        if definition[table]:
            session.execute(tables[table].insert(), list(definition[table]))
    session.commit()
