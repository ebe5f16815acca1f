"""Run an exercise's visible cases against a learner's function and report each one in Chinese.

Covers: calling the learner's function on each case, comparing with a literal expectation, one
feedback line per case (✓ or ✗ with input, expected value and what came back), a gentle line for
stubs that still raise ``NotImplementedError``, and an ``AssertionError`` at the end when anything
failed, so that nbgrader scores the cell as failed.

Leaves out: the hidden tests (they live in the notebooks) and any use of the reference
implementation to compute expectations — every expectation is a literal written in a case module,
so a learner who patches ``ctx_reference`` cannot make a wrong function pass.

Vocabulary: a *case* is one call with its expected result; an *exercise* is the name the notebook
passes to ``check_exercise`` ("remaining", "trim_lines", …).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

PASS_MARK = "✓"
FAIL_MARK = "✗"

# Longest rendering of a value inside a feedback line, in characters.
MAX_SHOWN = 300


@dataclass(frozen=True)
class CheckCase:
    """One call of the learner's function and the literal result it must give.

    ``label`` describes the input in the learner's words; ``project`` turns the returned value
    into the plain data that ``expect`` is written in (e.g. an Assembly into its kept names);
    ``tol`` compares floats within an absolute tolerance; ``raises`` names the exception type the
    call must raise instead of returning.
    """

    label: str
    args: tuple = ()
    expect: Any = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    project: Callable[[Any], Any] | None = None
    tol: float | None = None
    raises: type[BaseException] | None = None


@dataclass(frozen=True)
class Outcome:
    """What happened to one case: passed or not, and the feedback line shown for it."""

    passed: bool
    line: str
    pending: bool = False


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) > MAX_SHOWN:
        text = text[: MAX_SHOWN - 1] + "…"
    return text


def _close(got: Any, expect: Any, tol: float) -> bool:
    if isinstance(expect, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(expect)
            and all(_close(g, e, tol) for g, e in zip(got, expect))
        )
    if isinstance(expect, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isfinite(got) and abs(got - expect) <= tol
    return got == expect


def run_case(func: Callable, case: CheckCase) -> Outcome:
    """Return the outcome of calling ``func`` on one case; never raises for the learner's errors."""
    try:
        got = func(*case.args, **dict(case.kwargs))
    except NotImplementedError:
        return Outcome(False, f"… {case.label}：还没有实现", pending=True)
    except Exception as exc:  # the learner's code may raise anything; report it, don't crash
        if case.raises is not None and isinstance(exc, case.raises):
            return Outcome(True, f"{PASS_MARK} {case.label}：按要求报错 {type(exc).__name__}")
        return Outcome(
            False,
            f"{FAIL_MARK} {case.label}：期望 {_expected_text(case)}，"
            f"你的函数报错 {type(exc).__name__}: {_shown(str(exc))}",
        )
    if case.raises is not None:
        return Outcome(
            False, f"{FAIL_MARK} {case.label}：期望报错 {case.raises.__name__}，你的函数返回 {_shown(got)}"
        )
    if case.project is not None:
        try:
            got = case.project(got)
        except Exception as exc:  # a return value of the wrong shape
            return Outcome(
                False,
                f"{FAIL_MARK} {case.label}：期望 {_shown(case.expect)}，你的函数返回的 {_shown(got)} "
                f"格式不对（{type(exc).__name__}: {_shown(str(exc))}）",
            )
    ok = _close(got, case.expect, case.tol) if case.tol is not None else got == case.expect
    if ok:
        return Outcome(True, f"{PASS_MARK} {case.label} → {_shown(got)}")
    return Outcome(
        False, f"{FAIL_MARK} {case.label}：期望 {_shown(case.expect)}，你的函数返回 {_shown(got)}"
    )


def _expected_text(case: CheckCase) -> str:
    if case.raises is not None:
        return f"报错 {case.raises.__name__}"
    return _shown(case.expect)


def run_cases(func: Callable, cases: Sequence[CheckCase]) -> list[Outcome]:
    """Return one outcome per case, in order, stopping after the first case of an unfinished stub."""
    if not callable(func):
        raise ValueError(f"func must be callable (got {func!r})")
    outcomes = []
    for case in cases:
        outcomes.append(run_case(func, case))
        if outcomes[-1].pending:
            break
    return outcomes


def format_report(outcomes: Sequence[Outcome]) -> str:
    """Return the feedback lines followed by a one-line summary in Chinese."""
    if outcomes and outcomes[-1].pending:
        return (
            f"{outcomes[-1].line}。\n"
            "这个练习还没有完成：把 raise NotImplementedError() 换成你的代码，再运行这一格。"
        )
    passed = sum(o.passed for o in outcomes)
    lines = [o.line for o in outcomes]
    if passed == len(outcomes):
        lines.append(f"全部 {len(outcomes)} 个检查通过 🎉")
    else:
        lines.append(f"通过 {passed}/{len(outcomes)} 个检查，还差 {len(outcomes) - passed} 个。")
    return "\n".join(lines)
