"""The preprocessors of a grading run, without a kernel: output caps, hidden tests cut from the feedback, scores."""
from __future__ import annotations

import copy

import nbformat
import pytest

from ctx_course.cells import hidden_spans
from ctx_course.grading.steps.preprocessors import (
    HIDDEN_START,
    CapOutput,
    HideHiddenTests,
    ScoreFromErrorsOnly,
)

# ---- output caps


def _code_cell(outputs, source="print(1)"):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def test_cap_output_cuts_one_endless_line():
    """A 5,000,000-character line keeps its first 20,000 characters plus one marker line."""
    cell = _code_cell([{"output_type": "stream", "name": "stdout", "text": "x" * 5_000_000}])
    cell, _ = CapOutput().preprocess_cell(cell, {}, 0)
    text = cell.outputs[0]["text"]
    assert text.startswith("x" * 20_000) and text[20_000] == "\n"
    assert "5,000,000" in text and len(text) < 20_100


def test_cap_output_keeps_short_output_unchanged():
    """An output of 11 characters is left as it is."""
    cell = _code_cell([{"output_type": "stream", "name": "stdout", "text": "hello world"}])
    cell, _ = CapOutput().preprocess_cell(cell, {}, 0)
    assert cell.outputs[0]["text"] == "hello world"


def test_cap_output_keeps_fifty_outputs_per_cell():
    """120 display outputs become the first 50 and one line saying 70 were left out."""
    outputs = [{"output_type": "display_data", "data": {"text/plain": str(i)}, "metadata": {}} for i in range(120)]
    cell, _ = CapOutput().preprocess_cell(_code_cell(outputs), {}, 0)
    assert len(cell.outputs) == 51
    assert cell.outputs[49]["data"]["text/plain"] == "49"
    assert "70" in cell.outputs[50]["text"]


def test_cap_output_drops_an_oversized_image():
    """A 3,000,000-character PNG is replaced by a text note; a 10-character one is kept."""
    big = {"output_type": "display_data", "data": {"image/png": "A" * 3_000_000}, "metadata": {}}
    small = {"output_type": "display_data", "data": {"image/png": "A" * 10}, "metadata": {}}
    cell, _ = CapOutput().preprocess_cell(_code_cell([big, small]), {}, 0)
    assert "image/png" not in cell.outputs[0]["data"] and "image/png" in cell.outputs[0]["data"]["text/plain"]
    assert cell.outputs[1]["data"]["image/png"] == "A" * 10


# ---- hidden tests in the feedback

CHECK_SOURCE = "\n".join(
    [
        'check_exercise("remaining", remaining)',  # line 1
        "assert remaining(1, 0, 0, 0, 0) == (1, False)",  # line 2
        "### BEGIN HIDDEN TESTS",  # line 3
        "assert remaining(7, 0, 0, 0, 0) == (7, False)",  # line 4
        "### END HIDDEN TESTS",  # line 5
    ]
)


def _error(line):
    return {
        "output_type": "error",
        "ename": "AssertionError",
        "evalue": "secret 7",
        "traceback": [f"\x1b[0;31mCell In[4], line {line}\x1b[0m", f"----> {line} assert remaining(7, 0, 0, 0, 0)"],
    }


def test_feedback_loses_the_hidden_region():
    """Lines 3–5 (markers and hidden assert) are removed; lines 1–2 stay."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], CHECK_SOURCE), {}, 0)
    assert cell.source == 'check_exercise("remaining", remaining)\nassert remaining(1, 0, 0, 0, 0) == (1, False)'


def test_a_failing_hidden_test_shows_only_its_error_type():
    """An error raised on line 4 (hidden) keeps `AssertionError`, loses its message and its traceback."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([_error(4)], CHECK_SOURCE), {}, 0)
    error = cell.outputs[0]
    assert error["evalue"] == ""
    assert error["traceback"] == ["AssertionError（隐藏测试没有通过）"]


def test_a_failing_visible_test_keeps_its_line():
    """An error raised on line 2 (visible) shows its type, message and the visible line, nothing else."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([_error(2)], CHECK_SOURCE), {}, 0)
    assert cell.outputs[0]["traceback"] == [
        "AssertionError: secret 7",
        "（这一格第 2 行没有通过：assert remaining(1, 0, 0, 0, 0) == (1, False)）",
    ]


def test_an_unterminated_hidden_region_hides_the_rest_of_the_cell():
    """BEGIN without END (a student's copy) hides everything from the marker on."""
    source = "a = 1\n### BEGIN HIDDEN TESTS\nb = 2"
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], source), {}, 0)
    assert cell.source == "a = 1"


@pytest.mark.parametrize("line_end", ["\r\n", "\r"])
def test_feedback_finds_the_hidden_region_whatever_the_line_ends(line_end):
    """With \r\n or \r line ends, lines 3–5 are removed and lines 1–2 stay, as the digest rewriter counts them."""
    source = CHECK_SOURCE.replace("\n", line_end)
    assert hidden_spans(source) == [(3, 5)]
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], source), {}, 0)
    assert cell.source == 'check_exercise("remaining", remaining)\nassert remaining(1, 0, 0, 0, 0) == (1, False)'


def test_cells_without_hidden_tests_are_untouched():
    """A cell without markers keeps its source and its traceback."""
    error = _error(1)
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([error], "assert False"), {}, 0)
    assert cell.source == "assert False" and len(cell.outputs[0]["traceback"]) == 2


# ---- output printed while hidden tests run


def test_feedback_drops_what_was_printed_during_hidden_tests():
    """Text after HIDDEN_START in the same output, and every later output, are dropped."""
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": f"✓ visible\n{HIDDEN_START}(7, 0, 0, 0, 0)\n"},
        {"output_type": "stream", "name": "stdout", "text": "(8, 0, 0, 0, 0)\n"},
        {"output_type": "display_data", "data": {"text/plain": "(9, 0)"}, "metadata": {}},
    ]
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell(outputs, CHECK_SOURCE), {}, 0)
    assert [o["text"] for o in cell.outputs] == ["✓ visible\n"]


# ---- scores and feedback


def test_a_displayed_value_in_a_check_cell_is_not_a_score():
    """An execute_result "3" before an error in a 3-point check cell becomes a display: nbgrader scores 0."""
    from nbgrader.utils import determine_grade

    outputs = [
        {"output_type": "execute_result", "data": {"text/plain": "3"}, "metadata": {}, "execution_count": 1},
        {"output_type": "error", "ename": "AssertionError", "evalue": "", "traceback": []},
    ]
    cell = _code_cell(outputs, "check()")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "check_x", "points": 3}
    assert determine_grade(copy.deepcopy(cell))[0] == 3  # nbgrader's own reading: the control
    cell, _ = ScoreFromErrorsOnly().preprocess_cell(cell, {}, 0)
    assert [o["output_type"] for o in cell.outputs] == ["display_data", "error"]
    assert determine_grade(cell)[0] == 0


def test_a_later_cell_quoting_a_hidden_test_is_cut_from_the_feedback():
    """A later cell printing the check cell's hidden line with [ ] ( ) changed to < > loses that
    line; its other line stays."""
    check = _code_cell([], CHECK_SOURCE)
    check.metadata["nbgrader"] = {"grade": True, "locked": True, "grade_id": "check_remaining", "points": 3}
    quoted = "assert remaining<7, 0, 0, 0, 0> == <7, False>"
    later = _code_cell([{"output_type": "stream", "name": "stdout", "text": f"hello\n{quoted}\n"}], "print(...)")
    nb = nbformat.v4.new_notebook(cells=[check, later])
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert nb.cells[1].outputs[0]["text"] == "hello\n（这一行引用了隐藏测试，已删去）\n"


def test_a_hidden_test_spread_over_lines_is_cut_whole():
    """The hidden line printed one character per line is caught across lines: the output is replaced whole."""
    check = _code_cell([], CHECK_SOURCE)
    check.metadata["nbgrader"] = {"grade": True, "locked": True, "grade_id": "check_remaining", "points": 3}
    spread = "\n".join("assert remaining(7, 0, 0, 0, 0) == (7, False)") + "\n"
    later = _code_cell([{"output_type": "stream", "name": "stdout", "text": spread}], "print(...)")
    nb = nbformat.v4.new_notebook(cells=[check, later])
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert nb.cells[1].outputs[0]["text"] == "（这一行引用了隐藏测试，已删去）\n"
