"""Friendly checks for the workbook's exercises.

``check_exercise("remaining", remaining)`` runs the visible cases of one exercise against the
learner's function, prints one line per case in Chinese and raises ``AssertionError`` if any case
failed, so that nbgrader scores the cell. Every expectation is a literal from SPEC, written in the
case module of its notebook; none is computed with the reference implementation.
"""
from . import assembly, capstone, evaldiff, ledger, recall, recall_fit, remaining, render, simulation, trim, window_math
from .runner import CheckCase, Outcome, format_report, run_cases

EXERCISES = {
    **window_math.CASES,
    **remaining.CASES,
    **recall.CASES,
    **recall_fit.CASES,
    **assembly.CASES,
    **trim.CASES,
    **simulation.CASES,
    **render.CASES,
    **evaldiff.CASES,
    **ledger.CASES,
    **capstone.CASES,
}

# Exercises whose learner's object is not called directly: the adapter turns it into the
# function the cases call (the capstone runs a policy on a named workload).
ADAPTERS = {**capstone.ADAPTERS}


def check_exercise(name: str, func) -> None:
    """Print one feedback line per visible case of exercise ``name``; raise if any failed.

    Example (notebook 02): ``check_exercise("remaining", remaining)`` prints
    ``✓ 窗口 1,000,000 …  → (66000, True)`` for a correct function.
    """
    if name not in EXERCISES:
        known = ", ".join(sorted(EXERCISES))
        raise ValueError(f"name must be one of: {known} (got {name!r})")
    if name in ADAPTERS and callable(func):
        func = ADAPTERS[name](func)
    outcomes = run_cases(func, EXERCISES[name])
    print(format_report(outcomes))
    if outcomes and outcomes[-1].pending:
        raise AssertionError(f"练习 {name} 还没有完成。")
    failed = sum(not o.passed for o in outcomes)
    if failed:
        raise AssertionError(f"练习 {name}：{failed} 个检查没有通过，请看上面的 ✗ 行。")


__all__ = ["ADAPTERS", "CheckCase", "EXERCISES", "Outcome", "check_exercise", "format_report", "run_cases"]
