"""Tests for ctx_reference.trim: head-and-tail trimming and the saved-output reference."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.trim import (
    TrimmedOutput,
    omission_marker,
    save_full_output,
    trim_and_save,
    trim_lines,
    trim_with_reference,
)

HUNDRED = [f"line {i}" for i in range(1, 101)]
MARKER_95 = "……省略 95 行（完整输出已保存，可按需读取）……"

LINE_LISTS = st.lists(st.text(max_size=5), max_size=40)
KEEP = st.integers(min_value=0, max_value=50)


def test_trim_lines():
    """Seed: 100 lines, head 3, tail 2 -> lines 1-3, the marker with N = 100 - 3 - 2 = 95, lines 99-100."""
    assert trim_lines(HUNDRED, 3, 2) == [
        "line 1", "line 2", "line 3",
        "……省略 95 行（完整输出已保存，可按需读取）……",
        "line 99", "line 100",
    ]


def test_omission_marker_text():
    """The marker is exactly ……省略 N 行（完整输出已保存，可按需读取）…… and names a path when given."""
    assert omission_marker(95) == MARKER_95
    assert omission_marker(1) == "……省略 1 行（完整输出已保存，可按需读取）……"
    assert omission_marker(95, "logs/out.txt") == "……省略 95 行（完整输出已保存在 logs/out.txt，可按需读取）……"


def test_trim_lines_short_enough_is_unchanged_copy():
    """head + tail >= len: the same lines come back, as a new list (5 lines, head 3 tail 2; and head 10)."""
    lines = ["a", "b", "c", "d", "e"]
    out = trim_lines(lines, 3, 2)
    assert out == ["a", "b", "c", "d", "e"]
    assert out is not lines
    assert trim_lines(lines, 10, 0) == ["a", "b", "c", "d", "e"]


def test_trim_lines_one_over_omits_one():
    """6 lines, head 3, tail 2 -> one line (the 4th) becomes the marker with N = 1."""
    assert trim_lines(["a", "b", "c", "d", "e", "f"], 3, 2) == [
        "a", "b", "c", "……省略 1 行（完整输出已保存，可按需读取）……", "e", "f",
    ]


def test_trim_lines_head_and_tail_zero():
    """head 0, tail 0: the whole output becomes one marker (100 lines -> N = 100); empty stays empty."""
    assert trim_lines(HUNDRED, 0, 0) == ["……省略 100 行（完整输出已保存，可按需读取）……"]
    assert trim_lines([], 0, 0) == []


def test_trim_lines_tail_zero_keeps_no_tail():
    """tail 0 keeps no line from the end (head 2 of 100 -> 2 lines + marker with N = 98)."""
    assert trim_lines(HUNDRED, 2, 0) == ["line 1", "line 2", "……省略 98 行（完整输出已保存，可按需读取）……"]


def test_trim_lines_head_zero_keeps_tail_only():
    """head 0, tail 2 of 100 -> marker with N = 98, then lines 99 and 100 (where errors usually are)."""
    assert trim_lines(HUNDRED, 0, 2) == ["……省略 98 行（完整输出已保存，可按需读取）……", "line 99", "line 100"]


def test_trim_lines_accepts_tuple_and_does_not_mutate():
    """A tuple works and yields a list; the caller's list is not changed."""
    assert trim_lines(("a", "b", "c"), 1, 1) == ["a", "……省略 1 行（完整输出已保存，可按需读取）……", "c"]
    lines = list(HUNDRED)
    trim_lines(lines, 3, 2)
    assert lines == HUNDRED


@given(LINE_LISTS, KEEP, KEEP)
def test_trim_lines_length_bound(lines, head, tail):
    """The output has at most head + tail + 1 lines, and never more than the input."""
    out = trim_lines(lines, head, tail)
    assert len(out) <= head + tail + 1
    assert len(out) <= len(lines)


@given(LINE_LISTS, KEEP, KEEP)
def test_trim_lines_keeps_head_and_tail(lines, head, tail):
    """When trimmed, the first head and last tail lines survive and the marker counts the rest."""
    out = trim_lines(lines, head, tail)
    if len(lines) <= head + tail:
        assert out == lines
    else:
        omitted = len(lines) - head - tail
        assert out[:head] == lines[:head]
        assert out[head] == f"……省略 {omitted} 行（完整输出已保存，可按需读取）……"
        assert out[head + 1:] == lines[len(lines) - tail:]


def test_trim_with_reference_names_path():
    """The pure variant puts the path into the marker and writes nothing."""
    out = trim_with_reference(HUNDRED, 3, 2, "logs/test-output.txt")
    assert out == [
        "line 1", "line 2", "line 3",
        "……省略 95 行（完整输出已保存在 logs/test-output.txt，可按需读取）……",
        "line 99", "line 100",
    ]


def test_save_full_output_writes_every_line(tmp_path):
    """save_full_output writes all lines, one per line, and returns directory / name."""
    saved = save_full_output(["line 1", "行 2", ""], tmp_path, "out.txt")
    assert saved == tmp_path / "out.txt"
    assert saved.read_text(encoding="utf-8") == "line 1\n行 2\n\n"


def test_trim_and_save_seed(tmp_path):
    """Seed lines, head 3 tail 2: 95 omitted, the file holds all 100 lines, the marker names the file."""
    result = trim_and_save(HUNDRED, 3, 2, tmp_path, "run.log")
    assert result.omitted == 95
    assert result.path == tmp_path / "run.log"
    assert result.lines[3] == f"……省略 95 行（完整输出已保存在 {tmp_path / 'run.log'}，可按需读取）……"
    assert result.lines[:3] == ["line 1", "line 2", "line 3"]
    assert result.lines[4:] == ["line 99", "line 100"]
    assert result.path.read_text(encoding="utf-8").splitlines() == HUNDRED


def test_trim_and_save_short_output_writes_nothing(tmp_path):
    """Output short enough to keep whole comes back unchanged, with no file written."""
    result = trim_and_save(["a", "b"], 3, 2, tmp_path, "run.log")
    assert result == TrimmedOutput(lines=["a", "b"], path=None, omitted=0)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("lines, head, tail, pattern", [
    ("line 1\nline 2", 3, 2, r"lines must be a sequence of str, not str \(got 'line 1\\nline 2'\)"),
    (None, 3, 2, r"lines must be a sequence of str, not NoneType \(got None\)"),
    (["a", 2, "c"], 3, 2, r"lines\[1\] must be a str \(got 2\)"),
    (HUNDRED, -1, 2, r"head must be >= 0 \(got -1\)"),
    (HUNDRED, 3, -2, r"tail must be >= 0 \(got -2\)"),
    (HUNDRED, 1.5, 2, r"head must be an int \(got 1.5\)"),
    (HUNDRED, 3, True, r"tail must be an int \(got True\)"),
])
def test_trim_lines_rejects_bad_input(lines, head, tail, pattern):
    """trim_lines raises ValueError naming the bad argument and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        trim_lines(lines, head, tail)


@pytest.mark.parametrize("n, pattern", [
    (0, r"n must be >= 1 \(got 0\)"),
    (-4, r"n must be >= 0 \(got -4\)"),
    ("95", r"n must be an int \(got '95'\)"),
])
def test_omission_marker_rejects_bad_count(n, pattern):
    """omission_marker raises ValueError naming `n` for a count that cannot describe omitted lines."""
    with pytest.raises(ValueError, match=pattern):
        omission_marker(n)


def test_trim_with_reference_rejects_bad_path():
    """An empty or non-path `path` raises ValueError naming `path`."""
    with pytest.raises(ValueError, match=r"path must be a non-empty str path \(got ''\)"):
        trim_with_reference(HUNDRED, 3, 2, "")
    with pytest.raises(ValueError, match=r"path must be a str or path \(got 7\)"):
        trim_with_reference(HUNDRED, 3, 2, 7)


def test_save_full_output_rejects_bad_name_and_directory(tmp_path):
    """A name with a separator or a missing directory raises ValueError naming the argument; nothing is written."""
    with pytest.raises(ValueError, match=r"name must be a plain file name \(got 'sub/out.txt'\)"):
        save_full_output(["a"], tmp_path, "sub/out.txt")
    with pytest.raises(ValueError, match=r"name must be a plain file name \(got '\.\.'\)"):
        save_full_output(["a"], tmp_path, "..")
    missing = tmp_path / "missing"
    with pytest.raises(ValueError, match=r"directory must be an existing directory"):
        save_full_output(["a"], missing, "out.txt")
    assert list(tmp_path.iterdir()) == []
