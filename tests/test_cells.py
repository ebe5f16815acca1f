"""Hidden-test regions are found in a cell's source the same way whatever its line ends.

A check cell of a notebook saved with CRLF line ends (Windows) or with CR alone holds the same
lines as one saved with LF: the same hidden lines, the same hidden checks, the same source as
released, and nbgrader's cells-as-lists read as one string.
"""
from __future__ import annotations

import json

import nbformat
import pytest

from ctx_course.cells import hidden_checks, hidden_lines, hidden_spans, released_source, source_lines, source_text

CHECK_LINES = [
    'assert remaining(1_000_000, 800_000, 50_000, 20_000, 64_000) == (66_000, True)',
    "### BEGIN HIDDEN TESTS",
    "from ctx_reference.checks import expect_digest",
    'expect_digest("空窗口", remaining(100_000, 0, 0, 0, 0), "04038c2d81848f3b")',
    "### END HIDDEN TESTS",
    "print('ok')",
]


def _notebook(ending: str) -> str:
    """Return the JSON text of a notebook whose one check cell has ``ending`` after each line, as a list of lines."""
    lines = [line + ending for line in CHECK_LINES[:-1]] + [CHECK_LINES[-1]]
    cell = nbformat.v4.new_code_cell("")
    cell["source"] = lines
    cell["metadata"]["nbgrader"] = {"grade": True, "grade_id": "check", "solution": False, "locked": True}
    nb = nbformat.v4.new_notebook(cells=[cell])
    return json.dumps(nb, ensure_ascii=False)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_crlf_and_cr_notebooks_have_the_hidden_regions_of_the_lf_one(ending):
    """Read back from its JSON, the cell's lines 2 to 5 are hidden (the markers included), one hidden
    check "空窗口" on line 4, and the source as released keeps lines 1 and 6: as with LF line ends."""
    [cell] = nbformat.reads(_notebook(ending), as_version=4).cells
    source = source_text(cell.source)
    assert source_lines(source) == CHECK_LINES
    assert hidden_spans(source) == [(2, 5)]
    assert hidden_lines(source) == {2, 3, 4, 5}
    assert hidden_checks(source) == [("空窗口", 4, 4)]
    assert source_lines(released_source(source)) == [CHECK_LINES[0], CHECK_LINES[5]]
    assert released_source(source) == CHECK_LINES[0] + ending + CHECK_LINES[5]


def test_a_source_without_hidden_regions_is_released_as_it_is():
    """No marker, no hidden line: the source comes back unchanged, line ends and all."""
    source = "a = 1\r\nb = 2\r\n"
    assert hidden_lines(source) == set()
    assert released_source(source) == source


def test_an_unterminated_hidden_region_runs_to_the_last_line():
    """A BEGIN marker without its END hides every line from it to the end (as nbgrader strips them)."""
    source = "a = 1\r### BEGIN HIDDEN TESTS\rb = 2\rc = 3"
    assert hidden_lines(source) == {2, 3, 4}
    assert released_source(source) == "a = 1\r"
