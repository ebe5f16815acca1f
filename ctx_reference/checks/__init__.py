"""Friendly checks for the workbook's exercises.

``check_exercise("remaining", remaining)`` runs the visible cases of one exercise against the
learner's function, prints one line per case in the reader's language and raises ``CheckFailed`` (an
``AssertionError`` that IPython shows as one line) if any case failed, so that nbgrader scores the
cell. Every expectation is a literal from docs/models.md, written in its exercise's record; none
is computed with the reference implementation. A function that is, wraps or calls the reference
implementation of its own exercise fails.

Each exercise is one record (``Exercise``, ``exercise.py``): its notebook, the reference objects
that ARE it, its visible cases, the rules its text states (``rules.py``, docs/rules.md) and how its
generated cases compare. The records live in ``exercises/``, one module per notebook, and
``REGISTRY`` maps each name to its record; ``EXERCISES``, ``RULES``, ``REFERENCES`` … are read-only
views of it by field. The hidden tests in the notebooks call ``expect_digest`` (a digest of plain
data, ``values.digest``: the expected values are not in the cell), each naming the rules it decides
(``decides=``; the release reads them into ``hidden_tests.json``); ``requires_exercise`` names
another exercise when a check also runs it.
``uses_exercise("trim_lines")`` wraps a demo cell that calls the learner's function, so that a
misbehaving function is reported in one line naming the exercise to revisit.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from ..attempts import failed_rules, record
from ..hints import ask_line
from ..i18n import _
from . import bank
from . import generated as _generated
from .exercise import Exercise
from .exercises import REGISTRY
from .failure import CheckFailed, UsedReference
from .generated import Generated, run_generated
from .hidden_tests import rule_names
from .rules import Rule
from .runner import CheckCase, Outcome, format_report, run_cases
from .values import NotPlain, digest, show


def _view(field: str) -> Mapping[str, Any]:
    return MappingProxyType({name: getattr(exercise, field) for name, exercise in REGISTRY.items()})


# Read-only views of REGISTRY by field, under the names outside code reads them by.
#: Exercise → its visible cases.
EXERCISES: Mapping[str, tuple[CheckCase, ...]] = _view("cases")
#: Exercise → the rules its text states, with the cases that decide them (``rules.py``).
RULES: Mapping[str, tuple[Rule, ...]] = _view("rules")
#: Exercise → how its generated cases (the bank, ``generated.py``) compare the returned value.
GENERATED: Mapping[str, Generated] = _view("compare")
#: Exercise → its notebook folder.
NOTEBOOKS: Mapping[str, str] = _view("notebook")
#: Exercise → the reference functions (and classes) that ARE it: calling them scores 0.
REFERENCES: Mapping[str, tuple] = _view("references")
#: Exercise → the learner's function it checks, where the notebook calls it by another name than the exercise's.
FUNCTIONS: Mapping[str, str] = MappingProxyType({name: exercise.learner_name for name, exercise in REGISTRY.items()
                                                 if exercise.learner_name is not None})
#: Exercise → the adapter that turns the learner's object into the function the cases call (the capstone's).
ADAPTERS: Mapping[str, Callable[[Callable], Callable]] = MappingProxyType(
    {name: exercise.adapter for name, exercise in REGISTRY.items() if exercise.adapter is not None})


def _reference_names(exercise: Exercise) -> str:
    return _("、").join(f"{obj.__module__}.{obj.__qualname__}" for obj in exercise.references)


def _is_reference_object(exercise: Exercise, func: Callable) -> bool:
    if any(func is obj or (isinstance(obj, type) and type(func) is obj) for obj in exercise.references):
        return True  # the reference itself, or an instance of a reference class (a built-in policy)
    inner = getattr(func, "__func__", func)  # a bound method of a reference class
    inner = getattr(inner, "func", inner)  # functools.partial
    return getattr(inner, "__code__", None) in exercise.codes


def shown_name(name: str) -> str:
    """Return exercise ``name`` as the notebook calls it, quoted: the learner's function (```my_policy``` for
    ``context_policy``), not the check's key.

    >>> shown_name("context_policy"), shown_name("trim_lines")
    ('`my_policy`', '`trim_lines`')
    """
    return f"`{REGISTRY[name].function if name in REGISTRY else name}`"


def _functions(names: tuple[str, ...]) -> list[str]:
    """Return the learner's functions exercises ``names`` check, each once, in order."""
    return list(dict.fromkeys(REGISTRY[n].function if n in REGISTRY else n for n in names))


def _shown_names(functions: list[str]) -> str:
    """Return the learner's functions quoted and joined in the reader's language (```a`` and ``b```)."""
    shown = [f"`{function}`" for function in functions]
    if len(shown) == 1:
        return shown[0]
    return _("{first} 和 {last}").format(first=_("、").join(shown[:-1]), last=shown[-1])


def _used_reference(exercise: Exercise) -> str:
    return _("这个练习要自己实现：检查发现你直接用了参考实现 {reference}，"
             "用参考实现作答，练习 {name} 得 0 分。").format(reference=_reference_names(exercise),
                                                          name=shown_name(exercise.name))


def _called_reference(name: str, which: str) -> str:
    return _("这个练习要自己实现：检查发现你调用了参考实现 {reference}，"
             "用参考实现作答，练习 {name} 得 0 分。").format(reference=which, name=shown_name(name))


def _exercise(name: str) -> Exercise:
    """Return the record of exercise ``name``; raise ValueError naming the known ones if there is none."""
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"name must be one of: {', '.join(sorted(REGISTRY))} (got {name!r})")
    return REGISTRY[name]


def check_exercise(name: str, func, *, quiet: bool = False) -> None:
    """Print one feedback line per visible case of exercise ``name``; raise CheckFailed if any failed.

    Example (notebook 02): ``check_exercise("remaining", remaining)`` prints
    ``✓ 窗口 1,000,000 …  → (66000, True)`` for a correct function. ``quiet`` prints nothing.
    """
    exercise = _exercise(name)
    if callable(func) and _is_reference_object(exercise, func):
        raise CheckFailed(_used_reference(exercise))
    if exercise.adapter is not None and callable(func):
        func = exercise.adapter(func)
    try:
        outcomes = run_cases(func, exercise.cases, exercise.codes)
        generated = bank.cases(name)
        if generated and not (outcomes and outcomes[-1].pending):
            outcomes.append(run_generated(func, exercise.function, generated, exercise.compare,
                                          exercise.rules, exercise.codes))
    except UsedReference as exc:
        record(name, ())
        raise CheckFailed(_called_reference(name, str(exc))) from None
    if not (outcomes and outcomes[-1].pending):  # a stub that still raises NotImplementedError is no attempt
        record(name, failed_rules(exercise.cases, outcomes, exercise.rules))
    if not quiet:
        print(format_report(outcomes))
    if outcomes and outcomes[-1].pending:
        raise CheckFailed(_("练习 {name} 还没有完成。").format(name=shown_name(name)))
    failed = sum(not o.passed for o in outcomes)
    if failed:
        message = _("练习 {name}：{failed} 个检查没有通过，请看上面的 × 行。").format(
            name=shown_name(name), failed=failed)
        ask = "" if quiet else ask_line(name)
        raise CheckFailed(f"{message}\n{ask}" if ask else message)


def expect_generated(label: str, name: str, func, *, decides: tuple[str, ...] | None = None) -> None:
    """Raise CheckFailed naming ``label`` unless ``func`` gives every hidden generated case of exercise ``name``.

    A hidden test cell reads ``expect_generated("生成的隐藏例子", "remaining", remaining)``; the cases
    are the bank's hidden part, compared by digest (``generated.py``). They decide every rule of the
    exercise that has generated cases (``Rule.generated``): the record derives that, so the notebook
    leaves ``decides`` out (``python -m ctx_course release`` refuses it there); a ``decides`` given
    anyway must be a tuple of rule names, as ``expect_digest``'s, and changes nothing here.
    """
    if decides is not None:
        rule_names(decides)
    exercise = _exercise(name)
    if exercise.adapter is not None and callable(func):
        func = exercise.adapter(func)
    _generated.expect_generated(label, name, func, exercise.compare)


def expect_digest(label: str, value: Any, expected: str, places: int | None = None, *,
                  decides: tuple[str, ...] | None = None) -> None:
    """Raise CheckFailed naming ``label`` (in the reader's language) unless ``value``'s digest equals ``expected``.

    ``decides`` names the rules of the exercise's text this hidden test decides, always as a tuple of rule
    names (``decides=("negative-when-over",)``, ``decides=("never-overflows", "no-asked-fact-lost")``), as a
    visible case's ``CheckCase.decides`` does. It changes nothing when the test runs, where only a value that
    is no such tuple is refused (ValueError); ``python -m ctx_course release`` reads it from the notebook into
    the table of what each hidden test decides (``hidden_tests.py``, docs/rules.md) and requires it there.
    """
    if decides is not None:
        rule_names(decides)
    try:
        got = digest(value, places)
    except NotPlain as exc:
        raise CheckFailed(
            _("隐藏测试没有通过：{label}（{reason}）").format(label=_(label), reason=exc)
        ) from None
    if got != expected:
        raise CheckFailed(_("隐藏测试没有通过：{label}").format(label=_(label))) from None


def requires_exercise(name: str, func, *, needed_by: str) -> None:
    """Raise CheckFailed saying that ``needed_by`` also relies on exercise ``name`` if that one fails.

    Used by a check that runs two of the learner's functions together (notebook 06): the failure
    then names the exercise that is its cause instead of a bare assertion.
    """
    try:
        check_exercise(name, func, quiet=True)
    except CheckFailed as exc:
        reason = str(exc).rstrip("。.")  # data: full stops; the reason stands inside the sentence, in parentheses
        raise CheckFailed(
            _("{needed_by} 下面这一步还要用到你的 {name}，而它还没通过自己的检查（{reason}）："
              "请先回到练习 {name}。").format(needed_by=_(needed_by), name=shown_name(name), reason=reason)
        ) from None


@contextmanager
def uses_exercise(*names: str) -> Iterator[None]:
    """Turn any error inside the block into one line naming the exercise(s) to revisit.

    A demo cell that calls the learner's function wraps its code in ``with uses_exercise("trim_lines"):``;
    when the function is unfinished, raises, or returns something the cell's asserts reject, the
    cell ends with one line instead of a traceback.
    """
    functions = _functions(names)
    which = _shown_names(functions)
    several = len(functions) > 1
    try:
        yield
    except NotImplementedError:
        message = (_("这一格要用到你写的 {which}，它们还没有完成：请先完成这几个练习。") if several
                   else _("这一格要用到你写的 {which}，它还没有完成：请先完成练习 {which}。"))
        raise CheckFailed(message.format(which=which)) from None
    except Exception as exc:
        if isinstance(exc, AssertionError) and not str(exc):
            message = _("这一格用到了你写的 {which}，但结果和演示期望的不一致：请回到练习 {which} 再检查一遍。")
            raise CheckFailed(message.format(which=which)) from None
        detail = f"{type(exc).__name__}: {show(str(exc))[1:-1][:120]}" if str(exc) else type(exc).__name__
        raise CheckFailed(
            _("这一格用到了你写的 {which}，运行出了问题（{detail}）：请回到练习 {which} 再检查一遍。").format(
                which=which, detail=detail)
        ) from None


__all__ = [
    "ADAPTERS",
    "CheckCase",
    "CheckFailed",
    "EXERCISES",
    "Exercise",
    "FUNCTIONS",
    "GENERATED",
    "Generated",
    "NOTEBOOKS",
    "Outcome",
    "REFERENCES",
    "REGISTRY",
    "RULES",
    "Rule",
    "check_exercise",
    "digest",
    "expect_digest",
    "expect_generated",
    "format_report",
    "requires_exercise",
    "run_cases",
    "shown_name",
    "uses_exercise",
]
