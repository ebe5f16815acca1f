"""The exercise checker gives friendly, honest feedback and cannot be fooled by patching the package."""
from __future__ import annotations

import pytest

import ctx_reference
import ctx_reference.window
from ctx_reference.checks import ADAPTERS, EXERCISES, CheckCase, check_exercise, format_report, run_cases


def good_remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10


def no_cache_remaining(window, read, write, input, max_tokens):
    left = window - input - max_tokens
    return left, left < window / 10


def stub(*args, **kwargs):
    raise NotImplementedError()


def test_correct_function_passes_with_one_tick_per_case(capsys):
    """A correct `remaining` prints a ✓ line per visible case and the all-passed summary."""
    check_exercise("remaining", good_remaining)
    out = capsys.readouterr().out
    assert out.count("✓") == len(EXERCISES["remaining"]) == 4
    assert "(66000, True)" in out
    assert "全部 4 个检查通过" in out


def test_wrong_function_fails_naming_input_expected_and_returned(capsys):
    """Forgetting the cache fields fails, and the ✗ line shows the expected and the returned value."""
    with pytest.raises(AssertionError, match="remaining"):
        check_exercise("remaining", no_cache_remaining)
    out = capsys.readouterr().out
    assert "✗ 课上的例子" in out
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
    """An exception from the learner's code becomes a ✗ line naming its type."""
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
    assert report.splitlines()[-1] == "通过 1/4 个检查，还差 3 个。"


def test_unknown_exercise_is_rejected():
    """An unknown exercise name raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"name must be one of: .* \(got 'remainder'\)"):
        check_exercise("remainder", good_remaining)


def test_non_callable_is_rejected():
    """Passing something that is not a function raises ValueError naming `func`."""
    with pytest.raises(ValueError, match=r"func must be callable \(got 42\)"):
        run_cases(42, EXERCISES["remaining"])


def _capstone_policy(view):
    """Notebook 11's model answer: over the threshold, clear unneeded results and compact to 2 turns."""
    if view.tokens <= view.threshold:
        return None
    old = [r for r in view.records if r.turn <= view.turn - 2]
    if not old:
        return None
    scratch = [r.turn for r in old if not r.cleared and not r.needed and not r.protected]
    return ([ctx_reference.Clear(scratch)] if scratch else []) + [ctx_reference.Compact(2)]


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
    "fit_position": _fit_position,
    **{name: adapt(_capstone_policy) for name, adapt in ADAPTERS.items()},
}


def test_every_exercise_has_cases_and_a_reference():
    """Every exercise the checker knows has visible cases (at least three) and a reference here."""
    assert sorted(EXERCISES) == sorted(REFERENCE)
    assert all(len(cases) >= 3 for cases in EXERCISES.values())


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_passes_every_visible_case(name):
    """The literal expectations of the checker agree with the reference implementation.

    The literals were written by hand from SPEC; this catches a typo in either place.
    """
    failures = [o.line for o in run_cases(REFERENCE[name], EXERCISES[name]) if not o.passed]
    assert failures == []
