"""Tests for ctx_reference.cli: the subcommands print the lesson's tables; bad input exits 2 with one line."""

import os
import subprocess
import sys

import pytest

from ctx_reference.cli import main


def _row(text: str, first_cell: str) -> list[str]:
    """Return the cells (split on spaces) of the one line of ``text`` whose first cell is ``first_cell``."""
    rows = [line.split() for line in text.splitlines() if line.split()[:1] == [first_cell]]
    assert len(rows) == 1, text
    return rows[0]


def _run(capsys, *argv):
    """Run main(argv); return (exit status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# ---------------------------------------------------------------- sim


def test_sim_prints_the_clear_row_of_the_lesson(capsys):
    """Seed: clear peaks at 59,550, loses 11/12, rewrites 15 times, costs 1,359,425 input equivalent."""
    status, out, err = _run(capsys, "sim")
    assert status == 0 and err == ""
    assert _row(out, "clear")[2:6] == ["59,550", "11/12", "15", "1,359,425"]


def test_sim_prints_all_four_strategies_and_the_overflow(capsys):
    """By default all four strategies are shown; none overflows at turn 26 (seed); compact rewrites 6 times."""
    _, out, _ = _run(capsys, "sim")
    for strategy in ("none", "clear", "clear_notes", "compact"):
        _row(out, strategy)
    assert "第 26 轮" in " ".join(_row(out, "none"))
    assert _row(out, "compact")[4] == "6"


def test_sim_keep_15(capsys):
    """Seed: --keep 15 -> clear peaks at 89,450, loses 0/12, rewrites 45 times, costs 4,403,188 (4,403,187.5)."""
    status, out, _ = _run(capsys, "sim", "--keep", "15")
    assert status == 0
    assert _row(out, "clear")[2:6] == ["89,450", "0/12", "45", "4,403,188"]


def test_sim_clear_at_least(capsys):
    """Seed: --clear-at-least 20000 -> clear rewrites 7 times and costs 894,814 (894,813.5)."""
    status, out, _ = _run(capsys, "sim", "--clear-at-least", "20000", "--strategy", "clear")
    assert status == 0
    row = _row(out, "clear")
    assert row[4:6] == ["7", "894,814"]


def test_sim_summary_capacity(capsys):
    """Seed: --summary-capacity 2 -> compact loses 7 of 12 facts; --strategy shows only that row."""
    status, out, _ = _run(capsys, "sim", "--summary-capacity", "2", "--strategy", "compact")
    assert status == 0
    assert _row(out, "compact")[3] == "7/12"
    assert not any(line.startswith(("none", "clear")) for line in out.splitlines())


def test_sim_summary_capacity_none_is_the_default(capsys):
    """--summary-capacity none means 'holds every fact': compact loses 0/12 as with the defaults."""
    status, out, _ = _run(capsys, "sim", "--summary-capacity", "none", "--strategy", "compact")
    assert status == 0
    assert _row(out, "compact")[3] == "0/12*"  # derived: the lesson does not quote it


@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["sim", "--keep", "-1"], "--keep", "-1"),
        (["sim", "--threshold", "200000"], "--threshold", "200000"),
        (["sim", "--keep", "x"], "--keep", "'x'"),
        (["sim", "--turns", "2.5"], "--turns", "'2.5'"),
        (["sim", "--cache-read", "-0.1"], "--cache-read", "-0.1"),
        (["sim", "--strategy", "magic"], "--strategy", "'magic'"),
        (["recall", "--middle", "2"], "--middle", "2"),
        (["assemble", "--budget", "5000"], "--budget", "5000"),
        (["window", "--size", "0"], "--size", "0"),
        (["ledger", "--limit", "0"], "--limit", "0"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_option(capsys, argv, option, value):
    """Bad input: exit status 2, nothing on stdout, one stderr line naming the option and the value."""
    status, out, err = _run(capsys, *argv)
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert option in lines[0] and value in lines[0]
    assert "Traceback" not in err


def test_missing_or_unknown_command_exits_2(capsys):
    """No command, or an unknown one, is a usage error: status 2, one line on stderr."""
    for argv in ([], ["simulate"]):
        status, out, err = _run(capsys, *argv)
        assert status == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_help_exits_0(capsys):
    """--help prints the usage with every SimParams option and returns 0."""
    status, out, _ = _run(capsys, "sim", "--help")
    assert status == 0
    for option in ("--keep", "--clear-at-least", "--summary-capacity", "--threshold", "--window",
                   "--turns", "--note-tokens", "--cache-write", "--strategy"):
        assert option in out


# ---------------------------------------------------------------- the other commands


def test_recall_prints_the_comparison(capsys):
    """200 docs stuffed, answer in doc 100: 0.183 (derived); retrieve 8 with recall 0.9: 0.818 (seed)."""
    status, out, _ = _run(capsys, "recall")
    assert status == 0
    assert _row(out, "0.183")[2] == "推导"
    assert _row(out, "0.818")[2] == "原课"


def test_recall_options_change_the_model(capsys):
    """--middle 0 removes the middle effect: doc 100 of 800,000 tokens then scores 0.261 like the ends."""
    status, out, _ = _run(capsys, "recall", "--middle", "0")
    assert status == 0
    assert "0.183" not in out
    assert [line.split()[0] for line in out.splitlines()].count("0.261") == 4


def test_assemble_prints_the_lesson_example(capsys):
    """Seed: budget 11,000 -> 10,920 used; doc A's copy dropped as duplicate, doc C for lack of room."""
    status, out, _ = _run(capsys, "assemble")
    assert status == 0
    assert "10,920 / 11,000" in out
    assert "重复" in out and "放不下" in out


def test_window_prints_the_seed_check(capsys):
    """Seed: 950,000 + 128,000 in a 1,000,000 window -> MAY_TRUNCATE, 50,000 tokens left to generate."""
    status, out, _ = _run(capsys, "window")
    assert status == 0
    assert "MAY_TRUNCATE" in out and "50,000" in out


def test_window_options(capsys):
    """--size 200000 makes the same request REJECTED (950,000 > 200,000)."""
    status, out, _ = _run(capsys, "window", "--size", "200000")
    assert status == 0 and "REJECTED" in out


def test_ledger_prints_the_six_calls(capsys):
    """Seed: 6 calls, peak 552 of 8,000 (safe), tool_results 1,080 tokens = 74.7 %."""
    status, out, _ = _run(capsys, "ledger")
    assert status == 0
    assert "6 次调用" in out and "552 / 8,000" in out and "safe" in out
    assert _row(out, "tool_results") == ["tool_results", "1,080", "74.7", "%"]


def test_python_dash_m_runs_the_cli():
    """`python -m ctx_reference sim` exits 0 and prints the clear row's 1,359,425."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    done = subprocess.run([sys.executable, "-m", "ctx_reference", "sim"], capture_output=True,
                          text=True, encoding="utf-8", env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "1,359,425" in done.stdout


def test_python_dash_m_reports_bad_input_with_status_2():
    """`python -m ctx_reference sim --keep -1` exits 2 with one stderr line and no traceback."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    done = subprocess.run([sys.executable, "-m", "ctx_reference", "sim", "--keep", "-1"],
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=120,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--keep" in done.stderr
