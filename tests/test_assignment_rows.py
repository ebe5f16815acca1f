"""An assignment's rows copied from one gradebook into another are the rows generating it there would write."""
from __future__ import annotations

import pytest
from nbgrader.api import MissingEntry

from ctx_course.grading.assignment_rows import read_definition, write_definition
from ctx_course.grading.grader import Grader

from conftest import REPO

pytestmark = pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")

ASSIGNMENTS = ["02-remaining", "04-assembly"]


def prepared(tmp_path, name: str, assignments=ASSIGNMENTS) -> Grader:
    grader = Grader(REPO, work=tmp_path / name, sandbox=False, deadlines=False)
    assert grader.prepare(assignments) == {}
    return grader


def without_ids(definition: dict) -> dict:
    """The definition with the random ids left out (each gradebook draws its own)."""
    return {table: sorted(sorted((k, repr(v)) for k, v in row.items() if not k.endswith("id"))
                          for row in rows) for table, rows in definition.items()}


def test_a_copied_definition_reads_back_as_generating_the_assignment_writes_it(tmp_path):
    source, generated = prepared(tmp_path, "source"), prepared(tmp_path, "generated")
    empty = Grader(REPO, work=tmp_path / "copy", sandbox=False, deadlines=False)
    for aid in ASSIGNMENTS:
        with source.gradebook() as gb:
            definition = read_definition(gb, aid)
        with empty.gradebook() as gb:
            write_definition(gb, definition)
        with empty.gradebook() as gb:
            assert read_definition(gb, aid) == definition
        with generated.gradebook() as gb:
            assert without_ids(read_definition(gb, aid)) == without_ids(definition)
    with empty.gradebook() as copied, source.gradebook() as original:  # nbgrader's own objects over the rows
        for aid in ASSIGNMENTS:
            assert copied.find_assignment(aid).max_score == original.find_assignment(aid).max_score > 0
            assert copied.find_assignment(aid).num_submissions == 0


def test_a_definition_replaces_the_assignment_of_that_name(tmp_path):
    source = prepared(tmp_path, "source", ["02-remaining"])
    with source.gradebook() as gb:
        definition = read_definition(gb, "02-remaining")
    target = prepared(tmp_path, "target", ["02-remaining"])
    with target.gradebook() as gb:
        write_definition(gb, definition)
    with target.gradebook() as gb:
        assert read_definition(gb, "02-remaining") == definition
        assert len(gb.assignments) == 1


def test_the_due_date_stays_behind(tmp_path):
    source = prepared(tmp_path, "source", ["02-remaining"])
    with source.gradebook() as gb:
        gb.update_or_create_assignment("02-remaining", duedate="2026-12-01 12:00:00")
        definition = read_definition(gb, "02-remaining")
    assert [row["duedate"] for row in definition["assignment"]] == [None]


def test_an_unknown_assignment_and_another_course_are_refused(tmp_path):
    source = prepared(tmp_path, "source", ["02-remaining"])
    with source.gradebook() as gb, pytest.raises(MissingEntry, match="'99-none'"):
        read_definition(gb, "99-none")
    with source.gradebook() as gb:
        definition = read_definition(gb, "02-remaining")
    other = {**definition, "assignment": tuple({**row, "course_id": "another"} for row in definition["assignment"])}
    with source.gradebook() as gb, pytest.raises(ValueError, match="course 'another'"):
        write_definition(gb, other)
    with source.gradebook() as gb:  # nothing was lost
        assert read_definition(gb, "02-remaining") == definition


def test_a_copied_notebook_lists_its_cells_in_the_order_nbgrader_wrote_them(tmp_path):
    """nbgrader puts a deleted cell back after the cells it lists before it: the copy lists a notebook's
    source, grade and solution cells in the order of the original (the release's cell order), not in the
    order of their random ids."""
    source = prepared(tmp_path, "source", ["05-trim-lines"])
    empty = Grader(REPO, work=tmp_path / "copy", sandbox=False, deadlines=False)
    with source.gradebook() as gb:
        definition = read_definition(gb, "05-trim-lines")
    with empty.gradebook() as gb:
        write_definition(gb, definition)

    def names(grader: Grader) -> dict[str, list[str]]:
        with grader.gradebook() as gb:
            notebook = gb.find_notebook("trim_lines", "05-trim-lines")
            return {kind: [c.name for c in getattr(notebook, kind)]
                    for kind in ("source_cells", "grade_cells", "solution_cells")}

    original = names(source)
    assert original["source_cells"] != sorted(original["source_cells"])  # not alphabetical: a real order
    assert names(empty) == original
