"""Run an exercise's generated cases, read from the bank, and report them in one line.

Covers: turning the visible entries of one exercise's bank (``bank.cases``) into cases the runner
calls (smallest first), one feedback line for all of them (✓ with their count, or × with the smallest
failing input, the expected value, what came back and the sentence of the notebook that states the
rule it breaks), and the hidden entries compared by digest (``expect_generated``). A passing case
costs its call and its comparison only: its label (the call as Python source) and its line are built
only for the case that fails, and its calls are handed to the batch hook as they are read (``bank.calls``).

Leaves out: drawing and reading the cases (Hypothesis strategies, run only when the bank is regenerated,
never in a learner's kernel; ``bank``) and the reference implementation: every expected value is
data in the bank, written when it was generated, so nothing of a graded case is computed where the
learner's code runs, and a learner who patches ``ctx_reference`` cannot make a wrong function pass.

Vocabulary: a *bank* is the stored list of generated cases of one exercise; its *strategy* names
say which rules of the exercise's text a case was drawn for (``Rule.generated``); a *spec*
(``Generated``) says how the returned value is compared (projection, tolerance, exact type).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..i18n import N_, _
from ..plain_text import plain_text
from .bank import BankCase, calls, cases, error_class
from .batch import batched
from .failure import PASS_MARK, CheckFailed
from .number_words import Numbers
from .rules import Rule
from .runner import CheckCase, Outcome, changed, copied_call, run_case, snapshots
from .values import digest, python_scalar, show

GENERATED_LABEL = N_("生成的例子 {call}")
HIDDEN_LABEL = N_("生成的隐藏例子")


@dataclass(frozen=True)
class Generated:
    """How an exercise's generated cases compare what the learner's function returns.

    ``project`` turns the returned value into the plain data the bank stores (as a case's
    ``project`` does); ``tol`` compares floats within an absolute tolerance; ``places`` rounds
    floats before the hidden digests; ``returns`` is the exact type the returned value must have.
    ``label``, a message whose fields ``label_fields`` name a case's arguments in order, names a
    case in its feedback line where the call itself would not tell the learner what was run (the
    capstone's cases are a workload shape and a seed, not a call of their policy). ``rule_for``
    names the rule a failing case breaks from what came back (None when the call raised or returned
    a value of the wrong kind), where one strategy draws cases for several rules. ``numbers`` says what the
    text calls the returned number, as a case's ``numbers`` does (``number_words.py``).
    """

    project: Callable[[Any], Any] | None = None
    tol: float | None = None
    places: int | None = None
    returns: type | None = None
    label: str | None = None
    label_fields: tuple[str, ...] = ()
    rule_for: Callable[[Any], str] | None = None
    numbers: Numbers | None = None


def call_text(function: str, case: BankCase) -> str:
    """Return the call of ``case`` as Python source: ``remaining(10, 0, 0, 1, 0)``."""
    parts = [show(value) for value in case.args] + [f"{key}={show(value)}" for key, value in case.kwargs.items()]
    return f"{function}({', '.join(parts)})"


def _check_case(case: BankCase, spec: Generated) -> CheckCase:
    """Return the check's case of a generated ``case``; its label is the template its feedback line fills in
    (``_label``), filled only when a line is shown."""
    if case.raises is not None:
        return CheckCase(GENERATED_LABEL, case.args, kwargs=case.kwargs, raises=error_class(case.raises))
    return CheckCase(GENERATED_LABEL, case.args, case.expect, kwargs=case.kwargs, project=spec.project, tol=spec.tol,
                     returns=spec.returns, numbers=spec.numbers)


def _label(function: str, case: BankCase, spec: Generated) -> Callable[[], str]:
    """Return what gives the label of a generated ``case`` in the reader's language: ``spec.label`` filled with its
    arguments, else the call itself (``call_text``)."""
    def label() -> str:
        if spec.label is not None:
            return _(spec.label).format(**dict(zip(spec.label_fields, case.args)))
        return _(GENERATED_LABEL).format(call=call_text(function, case))
    return label


def rule_sentence(strategy: str, rules: Sequence[Rule], broken: str | None = None) -> str | None:
    """Return the phrase of the notebook stating the rule a failing case of ``strategy`` breaks (reader's language),
    as plain text (its Markdown and LaTeX read as a person reads them: ``plain_text``).

    That is rule ``broken`` when it is one ``strategy`` draws, else the first such rule in the
    table's order: a table lists the rules a case tells apart before the ones every case obeys
    (the type of the returned value).
    """
    chosen = broken_rule(strategy, rules, broken)
    return None if chosen is None else plain_text(_(chosen.states))


def broken_rule(strategy: str, rules: Sequence[Rule], broken: str | None = None) -> Rule | None:
    """Return the rule a failing case of ``strategy`` breaks (None: no rule draws it); see ``rule_sentence``."""
    drawn = [rule for rule in rules if strategy in rule.generated]
    return next((rule for rule in drawn if rule.name == broken), drawn[0] if drawn else None)


def run_generated(func: Callable, function: str, cases: Sequence[BankCase], spec: Generated,
                  rules: Sequence[Rule], codes=frozenset()) -> Outcome:
    """Return one outcome for all ``cases``: ✓ with their count, or the first (smallest) that fails, with its rule."""
    func = batched(func, calls(cases))  # the grader's calls, in batches
    for case in cases:  # a passing case builds no line
        outcome = run_case(func, _check_case(case, spec), codes, label=_label(function, case, spec), shown=False)
        if outcome.pending:
            return outcome
        if not outcome.passed:
            broken = spec.rule_for(outcome.value) if spec.rule_for is not None else None
            sentence = rule_sentence(case.strategy, rules, broken)
            if sentence is None:
                return outcome
            return Outcome(False, _("{line}（这条规则：“{rule}”）").format(line=outcome.line, rule=sentence),
                           rule=getattr(broken_rule(case.strategy, rules, broken), "name", None))
    return Outcome(True, _("{mark} 另外 {count} 个生成的例子也都对").format(mark=PASS_MARK, count=f"{len(cases):,}"))


def expect_generated(label: str, exercise: str, func: Callable, spec: Generated) -> None:
    """Raise CheckFailed naming ``label`` unless ``func`` gives every hidden generated case of ``exercise``.

    A hidden case passes when the digest of what ``func`` returns (projected as ``spec`` says)
    equals the bank's, or when it raises the error the bank names.
    """
    hidden = cases(exercise, "hidden")
    func = batched(func, calls(hidden))
    for case in hidden:
        if not _gives(func, case, spec):
            raise CheckFailed(_("隐藏测试没有通过：{label}").format(label=_(label))) from None


def _gives(func: Callable, case: BankCase, spec: Generated) -> bool:
    """Return True if ``func`` gives what the hidden ``case`` expects (its digest, or its error), leaving its
    list and dict arguments unchanged (as every visible case requires)."""
    args, kwargs = copied_call(case.args, case.kwargs)
    before = snapshots(args, kwargs)
    try:
        got = python_scalar(func(*args, **kwargs))
    except Exception as exc:  # the learner's code may raise anything; an error of the kind named passes, as visibly
        return case.raises is not None and isinstance(exc, error_class(case.raises))
    if changed(before) is not None:
        return False
    if spec.numbers is not None:
        got, why = spec.numbers.read(got)
        if why is not None:
            return False
    if case.raises is not None or (spec.returns is not None and type(got) is not spec.returns):
        return False
    try:
        return digest(spec.project(got) if spec.project is not None else got, spec.places) == case.digest
    except Exception:  # a value of the wrong shape, or not plain data
        return False


__all__ = ["Generated", "call_text", "expect_generated", "rule_sentence", "run_generated"]
