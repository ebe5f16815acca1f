"""The exercise checker gives friendly, honest feedback and cannot be fooled by patching the package."""
from __future__ import annotations

import contextlib
import io
import re

import pytest

import ctx_reference
import ctx_reference.calibrate
import ctx_reference.sessions
import ctx_reference.window
from ctx_reference.checks import ADAPTERS, EXERCISES, CheckCase, CheckFailed, check_exercise, format_report, run_cases
from ctx_reference.checks.bank import cases as bank
from ctx_reference.checks.values import show
from ctx_reference.window import Outcome

from notebook_cells import SOLUTIONS, cells, check_cell, namespace_before, prefix_namespace, source


def good_remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10


def no_cache_remaining(window, read, write, input, max_tokens):
    left = window - input - max_tokens
    return left, left < window / 10


def stub(*args, **kwargs):
    raise NotImplementedError()


def test_correct_function_passes_with_one_tick_per_case(capsys):
    """A correct `remaining` prints a ✓ line per visible case, one for the generated cases and a ✓ summary line."""
    check_exercise("remaining", good_remaining)
    out = capsys.readouterr().out
    assert out.count("✓") == len(EXERCISES["remaining"]) + 2 == 8
    assert "(66000, True)" in out
    assert f"✓ 另外 {len(bank('remaining')):,} 个生成的例子也都对" in out
    assert "✓ 全部 7 个检查通过。" in out


def test_wrong_function_fails_naming_input_expected_and_returned(capsys):
    """Forgetting the cache fields fails, and the × line shows the expected and the returned value."""
    with pytest.raises(AssertionError, match="remaining"):
        check_exercise("remaining", no_cache_remaining)
    out = capsys.readouterr().out
    assert "× 原课的例子" in out
    assert "期望 (66000, True)，你的函数返回 (916000, False)" in out


def test_untouched_stub_gets_one_gentle_line(capsys):
    """A stub that still raises NotImplementedError gets one 'not implemented yet' line, not one per case."""
    with pytest.raises(AssertionError, match="还没有完成"):
        check_exercise("remaining", stub)
    out = capsys.readouterr().out
    assert out.count("还没有实现") == 1
    assert "Traceback" not in out


def test_patching_the_reference_cannot_make_a_wrong_function_pass(monkeypatch):
    """Expectations are literals: replacing the reference `remaining` changes nothing."""
    monkeypatch.setattr(ctx_reference.window, "remaining", no_cache_remaining)
    monkeypatch.setattr(ctx_reference, "remaining", no_cache_remaining)
    with pytest.raises(AssertionError):
        check_exercise("remaining", no_cache_remaining)


def test_learner_exception_is_reported_not_raised():
    """An exception from the learner's code becomes a × line naming its type."""
    def broken(*args):
        raise KeyError("read")

    outcomes = run_cases(broken, EXERCISES["remaining"])
    assert not any(o.passed for o in outcomes)
    assert "KeyError" in outcomes[0].line


def test_expected_exception_counts_as_a_pass():
    """A case that expects an exception passes when the function raises that type, fails otherwise."""
    case = CheckCase("负数", args=(-1,), raises=ValueError)

    def rejects(x):
        raise ValueError(f"x must be >= 0 (got {x!r})")

    assert run_cases(rejects, [case])[0].passed
    assert not run_cases(lambda x: x, [case])[0].passed


def test_float_tolerance_and_projection():
    """`tol` compares floats within an absolute tolerance; `project` reshapes the value first."""
    case = CheckCase("召回", args=(), expect=(0.183,), project=lambda r: (r["recall"],), tol=5e-4)
    assert run_cases(lambda: {"recall": 0.18312}, [case])[0].passed
    assert not run_cases(lambda: {"recall": 0.1841}, [case])[0].passed
    wrong_shape = run_cases(lambda: 0.183, [case])[0]
    assert not wrong_shape.passed and "格式不对" in wrong_shape.line


def test_report_counts_failures():
    """The summary line says how many checks passed out of how many."""
    report = format_report(run_cases(no_cache_remaining, EXERCISES["remaining"]))
    assert report.splitlines()[-1] == "通过 2/6 个检查，还差 4 个。"


def test_unknown_exercise_is_rejected():
    """An unknown exercise name raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"name must be one of: .* \(got 'remainder'\)"):
        check_exercise("remainder", good_remaining)


def test_non_callable_is_rejected():
    """Passing something that is not a function raises ValueError naming `func`."""
    with pytest.raises(ValueError, match=r"func must be callable \(got 42\)"):
        run_cases(42, EXERCISES["remaining"])


# Notebook 11's model answer, as the notebook defines it (its cells before the check, run once).
_capstone_policy = prefix_namespace("11-capstone", "check_my_policy")["my_policy"]


def _fit_position(positions, accuracy, n_docs):
    """Notebook 03's fit through the reference: the LOST_IN_THE_MIDDLE shape with these points."""
    curve = ctx_reference.recall.MeasuredCurve("fit", n_docs, tuple(positions),
                                               tuple(100 * a for a in accuracy), 0.0, "")
    fit = ctx_reference.recall.fit_position_curve(curve)
    return fit.base, fit.middle, fit.end_drop


# Each exercise's reference counterpart, called with the learner's signature (for the capstone,
# the signature its adapter gives: a workload name).
REFERENCE = {
    "check": lambda size, input_tokens, max_tokens: ctx_reference.Window(size).check(input_tokens, max_tokens),
    "estimate_tokens": ctx_reference.estimate_tokens,
    "remaining": ctx_reference.remaining,
    "recall": lambda pos, n, half_at=400_000, steep=1.5, middle=0.3: ctx_reference.RecallModel(
        half_at=half_at, steep=steep, middle=middle
    ).recall(pos, n),
    "assemble": ctx_reference.assemble,
    "trim_lines": ctx_reference.trim_lines,
    "select_to_clear": ctx_reference.select_to_clear,
    "request_cost": ctx_reference.request_cost,
    "render": ctx_reference.render,
    "diff": ctx_reference.diff,
    "zone": ctx_reference.zone,
    "measure": ctx_reference.measure,
    "write_progress": ctx_reference.sessions.write_progress,
    "restore": ctx_reference.sessions.restore,
    "fit_position": _fit_position,
    "fit_rates": ctx_reference.calibrate.fit_rates,
    **{name: adapt(_capstone_policy) for name, adapt in ADAPTERS.items()},
}


def test_every_exercise_has_cases_and_a_reference():
    """The checker knows every notebook's exercises (those of 10-sessions included), each with visible cases."""
    assert sorted(EXERCISES) == sorted(REFERENCE)
    assert all(len(cases) >= 3 for cases in EXERCISES.values())


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_passes_every_visible_case(name):
    """The literal expectations of the checker agree with the reference implementation.

    The literals were written by hand from docs/models.md; this catches a typo in either place.
    """
    failures = [o.line for o in run_cases(REFERENCE[name], EXERCISES[name]) if not o.passed]
    assert failures == []


# ---- rules beyond the value ------------------------------------------------------------------


def test_returning_the_argument_fails_a_fresh_case():
    """A case with fresh=True fails when the function hands back the very list it was given."""
    case = CheckCase("原样", args=(["a"],), expect=["a"], fresh=True)
    outcome = run_cases(lambda lines: lines, [case])[0]
    assert not outcome.passed and "原样返回" in outcome.line
    assert run_cases(lambda lines: list(lines), [case])[0].passed


def test_changing_a_list_argument_fails():
    """Every case fails when the call changes a list or dict it was given, even if the value is right."""
    def pops(lines):
        lines.pop()
        return ["a"]

    outcome = run_cases(pops, [CheckCase("改动", args=(["a", "b"],), expect=["a"])])[0]
    assert not outcome.passed and "改动了传进去的第 1 个参数" in outcome.line


def test_error_message_must_name_the_argument():
    """message_has requires the given strings in the raised error's message."""
    case = CheckCase("limit 0", args=(0,), raises=ValueError, message_has=("limit", "0"))

    def vague(limit):
        raise ValueError("bad")

    def named(limit):
        raise ValueError(f"limit must be > 0 (got {limit})")

    assert not run_cases(vague, [case])[0].passed
    assert run_cases(named, [case])[0].passed


def test_exact_type_is_required():
    """A float where an int is expected fails, and the line names both types."""
    outcome = run_cases(lambda: 2.0, [CheckCase("整数", expect=2)])[0]
    assert not outcome.passed and "float" in outcome.line and "int" in outcome.line


def test_enum_members_are_shown_by_name():
    """Feedback shows Outcome.MAY_TRUNCATE, not <Outcome.MAY_TRUNCATE: 'may_truncate'>."""
    assert show(Outcome.MAY_TRUNCATE) == "Outcome.MAY_TRUNCATE"
    assert show([Outcome.FITS]) == "[Outcome.FITS]"


def test_request_cost_check_names_select_to_clear_when_that_is_the_cause():
    """With a right request_cost and a wrong select_to_clear, 06's check cell fails naming select_to_clear."""
    namespace = prefix_namespace("06-strategies", "check_request_cost")
    namespace["select_to_clear"] = lambda context_tokens, uncleared_turns, turn, params: []
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(CheckFailed, match="select_to_clear"):
        exec(check_cell("06-strategies", "check_request_cost"), namespace)


def _demo_cells():
    """Yield (folder, index, exercise names) of every demo cell guarded by uses_exercise."""
    for folder in sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir()):
        for index, cell in enumerate(cells(folder)):
            match = re.match(r"with uses_exercise\(([^)]*)\):", source(cell))
            if cell["cell_type"] == "code" and match:
                yield folder, index, re.findall(r'"(\w+)"', match.group(1))


DEMOS = list(_demo_cells())


@pytest.mark.parametrize("folder, index, names", DEMOS, ids=[f"{f[:2]}-cell{i}" for f, i, _ in DEMOS])
def test_demo_cell_names_the_exercise_when_the_function_misbehaves(folder, index, names):
    """A demo cell whose learner function raises ends with one CheckFailed line naming the exercise."""
    def broken(*args, **kwargs):
        raise TypeError("unsupported operand")

    namespace = namespace_before(folder, index)
    for name in names:
        namespace[name] = broken
    shown = " 和 ".join(f"`{name}`" for name in names)
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(CheckFailed, match=f"请回到练习 {shown}"):
        exec(source(cells(folder)[index]), namespace)


@pytest.mark.parametrize("folder, index, names", DEMOS, ids=[f"{f[:2]}-cell{i}" for f, i, _ in DEMOS])
def test_demo_cell_says_the_exercise_is_unfinished(folder, index, names):
    """A demo cell run with the untouched stub says which exercise to finish first."""
    def stub(*args, **kwargs):
        raise NotImplementedError()

    namespace = namespace_before(folder, index)
    for name in names:
        namespace[name] = stub
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(CheckFailed, match="还没有完成"):
        exec(source(cells(folder)[index]), namespace)
