"""Run an exercise's visible cases against a learner's function and report each one in the reader's language.

Covers: calling the learner's function on each case, turning the returned value into plain data
of exact types (``int``, ``str``, ``list``, an ``Enum`` member of the package …: ``values.plain``)
and comparing it with a literal expectation, checking the rules an exercise states besides the value (returns a
new object, leaves its arguments unchanged, raises a given error naming the argument), one
feedback line per case (✓ or × with input, expected value and what came back), a gentle line for
stubs that still raise ``NotImplementedError``, and watching each call for calls into the
reference implementation of the same exercise.

Leaves out: the value model (``values.py``), how a failure ends the cell (``failure.py``), the
hidden tests (they live in the notebooks; ``expect_digest`` compares digests) and any use of the
reference implementation to compute expectations — every expectation is a literal written in an
exercise's record, so a learner who patches ``ctx_reference`` cannot make a wrong function pass.

What a case costs: a feedback line (and the label in it) is built only where it is shown; a caller
that shows no line for a passing case (the generated cases, ``shown=False``) gets none built. A call's
arguments are deep-copied, and its list and dict arguments kept as they were to tell a change, except
the values no call can change (``immutable``), which are passed as they are and never copied.

Vocabulary: a *case* is one call with its expected result; an *exercise* is the name the notebook
passes to ``check_exercise`` ("remaining", "trim_lines", …); *plain data* is as ``values.py`` defines it;
an *immutable* value is ``None``, a ``bool``, ``int``, ``float`` or ``str``, an enum member, or a tuple,
frozenset, range, read-only mapping or frozen dataclass holding only immutable values.
"""
from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import CodeType, MappingProxyType
from typing import TYPE_CHECKING, Any

from ctx_reference._validate import require_callable

from ..i18n import _
from .failure import FAIL_MARK, PASS_MARK, UsedReference
from .values import SCALAR_TYPES, NotPlain, plain, python_scalar, same, show

if TYPE_CHECKING:  # number_words shows values with this module's ``show``
    from .number_words import Numbers


@dataclass(frozen=True)
class CheckCase:
    """One call of the learner's function, the literal result it must give and the rules it obeys.

    ``label`` describes the input in the learner's words; ``returns`` is the exact type the
    returned value must have; ``project`` turns the returned value into the plain data that
    ``expect`` is written in (e.g. an Assembly into its kept names); ``tol`` compares floats
    within an absolute tolerance; ``raises`` names the exception type the call must raise
    instead of returning, ``message_has`` strings its message must contain and ``error_has``
    attributes it must carry, with their values (a message is in the reader's language, so a
    number the error reports is compared as an attribute, never as text); ``fresh``
    requires a returned object that is none of the arguments. Every case also requires that the
    call leaves its list and dict arguments unchanged.

    ``label`` is also the case's identity (the rules' tables and the tests name a case by it),
    so it stays in Chinese; the feedback line shows its translation (``shown_label``). A label
    built from values has ``label_template``, the message it was formatted from with
    ``label_values``, so that the translated template is formatted with the same values.
    ``message`` marks an ``expect`` that is a sentence of the catalogue, one the projection returns
    in the reader's language when the value is right (render's ``SAME_TEXT``): it is compared and
    shown translated, so both editions grade alike. ``hint``, a message, is added to the × line
    when the case fails: what to do about the likeliest cause. ``numbers`` says what the text calls
    the returned number ("a number": any real number, by its value; "an integer"; ``number_words.py``).
    ``decides`` names the rules of its exercise (``Rule.name``) that this case tells apart from a plausible
    wrong variant: a rule's visible cases are the cases that name it (``exercise.py``).
    """

    label: str
    args: tuple = ()
    expect: Any = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    project: Callable[[Any], Any] | None = None
    tol: float | None = None
    raises: type[BaseException] | None = None
    message_has: tuple[str, ...] = ()
    error_has: Mapping[str, Any] = field(default_factory=dict)
    returns: type | None = None
    fresh: bool = False
    label_template: str | None = None
    label_values: Mapping[str, Any] = field(default_factory=dict)
    message: bool = False
    hint: str | None = None
    numbers: Numbers | None = None
    decides: tuple[str, ...] = ()


def expected(case: CheckCase) -> Any:
    """Return the value ``case`` expects, a ``message`` in the reader's language."""
    return _(case.expect) if case.message else case.expect


def shown_label(case: CheckCase) -> str:
    """Return the label of ``case`` as its feedback line shows it, in the reader's language."""
    if case.label_template is not None:
        return _(case.label_template).format(**case.label_values)
    return _(case.label)


@dataclass(frozen=True)
class Outcome:
    """What happened to one case: passed or not, the feedback line shown for it, and what came back.

    ``value`` is the plain data the function's result was compared as, when the call returned a
    value of the right kind and shape (None otherwise). ``rule`` names the rule of ``RULES`` a
    failed generated case breaks, where the check knows it (a visible case is known by its label).
    A passing case whose caller shows no line for it has an empty ``line`` (``PASSED``).
    """

    passed: bool
    line: str
    pending: bool = False
    value: Any = None
    rule: str | None = None


#: The outcome of a passing case whose line is not shown (``run_case`` with ``shown=False``): no line is built.
PASSED = Outcome(True, "")


def reference_codes(objects: Iterable[Any]) -> frozenset[CodeType]:
    """Return the code objects of functions and classes (their methods), nested code included.

    Methods a class did not write in a source file (a dataclass's generated ``__init__``,
    ``__eq__`` …, whose file is ``<string>``) are left out: code objects compare equal by their
    bytecode, and those of any two dataclasses with the same fields are the same.
    """
    codes: set[CodeType] = set()

    def add(code: CodeType) -> None:
        codes.add(code)
        for const in code.co_consts:
            if isinstance(const, CodeType):
                add(const)

    for obj in objects:
        members = vars(obj).values() if isinstance(obj, type) else [obj]
        for member in members:
            member = getattr(member, "__func__", member)  # staticmethod, classmethod
            member = getattr(member, "fget", member)  # property
            code = getattr(member, "__code__", None)
            if isinstance(code, CodeType) and not code.co_filename.startswith("<"):
                add(code)
    return frozenset(codes)


def _watched_call(func: Callable, args: tuple, kwargs: Mapping[str, Any], codes: frozenset[CodeType]):
    """Call ``func`` and return (result, names of reference code objects entered during the call)."""
    entered: list[str] = []
    if not codes:
        return func(*args, **kwargs), entered
    previous = sys.getprofile()

    def profiler(frame, event, arg):  # noqa: ARG001 - the profile protocol
        if event == "call" and frame.f_code in codes:
            entered.append(frame.f_code.co_qualname)

    sys.setprofile(profiler)
    try:
        return func(*args, **kwargs), entered
    finally:
        sys.setprofile(previous)


_FROZEN_CONTAINERS = frozenset({tuple, frozenset})
_MUTABLE = frozenset({list, dict})  # the arguments a call must leave as they were
Snapshot = tuple[int | str, Any, Any]


def immutable(value: Any) -> bool:
    """Return True for a value no call can change: ``None``, a ``bool``, ``int``, ``float`` or ``str``, an enum
    member, or a tuple, frozenset, range, read-only mapping or frozen dataclass holding only such values.

    >>> immutable((1, "a", None)), immutable((1, [2]))
    (True, False)
    """
    kind = type(value)
    if kind in SCALAR_TYPES:
        return True
    if kind in _FROZEN_CONTAINERS:
        return SCALAR_TYPES.issuperset(map(type, value)) or all(map(immutable, value))
    params = getattr(kind, "__dataclass_params__", None)
    if params is not None and params.frozen and hasattr(value, "__dict__"):  # a record, not a class (kind is type)
        fields = vars(value).values()
        return SCALAR_TYPES.issuperset(map(type, fields)) or all(map(immutable, fields))
    if kind is MappingProxyType:
        return all(map(immutable, value.keys())) and all(map(immutable, value.values()))
    return kind is range or isinstance(value, Enum)


def _deep_copy(value: Any, memo: dict[int, Any]) -> Any:
    """Return ``copy.deepcopy(value, memo)``, except that immutable values (``immutable``) are kept as they are.

    Lists and dicts are copied here, item by item, as ``copy.deepcopy`` copies them (one object met twice is
    one copy met twice: ``memo``); any other value that is not immutable is copied by ``copy.deepcopy``.
    """
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    key = id(value)
    if key in memo:
        return memo[key]
    if kind is list:
        if SCALAR_TYPES.issuperset(map(type, value)):  # scalars only: a copy at once
            memo[key] = items = value.copy()
            return items
        items = []
        memo[key] = items
        for item in value:
            items.append(_deep_copy(item, memo))
        return items
    if kind is dict:
        mapping: dict[Any, Any] = {}
        memo[key] = mapping
        for name, item in value.items():
            mapping[_deep_copy(name, memo)] = _deep_copy(item, memo)
        return mapping
    if immutable(value):
        return value
    return copy.deepcopy(value, memo)


def snapshots(args: tuple, kwargs: Mapping[str, Any]) -> list[Snapshot]:
    """Return (which argument: its number from 1 or its keyword, the argument, a deep copy) for each list or dict
    argument of a call, taken before the call to tell whether it changed them (``changed``)."""
    if _MUTABLE.isdisjoint(map(type, args)) and (not kwargs or _MUTABLE.isdisjoint(map(type, kwargs.values()))):
        return []
    found: list[Snapshot] = [(number, value, _deep_copy(value, {}))
                             for number, value in enumerate(args, start=1) if type(value) in _MUTABLE]
    found += [(key, value, _deep_copy(value, {})) for key, value in kwargs.items() if type(value) in _MUTABLE]
    return found


def changed(before: Sequence[Snapshot]) -> int | str | None:
    """Return which argument of ``snapshots`` the call changed (the first), or None if it left them all as they were."""
    for which, value, snapshot in before:
        if value != snapshot:
            return which
    return None


def _argument_name(which: int | str) -> str:
    """Return an argument as a feedback line names it: "第 2 个参数" (by its number), "参数 budget" (by keyword)."""
    if type(which) is int:
        return _("第 {number} 个参数").format(number=which)
    return _("参数 {name}").format(name=which)


def _copied(value: Any) -> Any:
    """Return a deep copy of a case argument, so that one case cannot change the next one's input.

    Frozen objects holding a read-only mapping (a PromptSpec, a Result) cannot be deep-copied;
    they cannot be changed either, so they are passed as they are.
    """
    try:
        return _deep_copy(value, {})
    except TypeError:
        return value


def copied_call(args: tuple, kwargs: Mapping[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """Return deep copies of a case's arguments, copied together: an object passed in two places (one record
    twice in a list, or in two arguments) is one object in the copy too. Immutable values (``immutable``) are
    passed as they are: a call of immutable arguments only copies nothing. Where the call cannot be copied
    whole, each argument is copied as ``_copied`` does."""
    if SCALAR_TYPES.issuperset(map(type, args)) and (not kwargs or SCALAR_TYPES.issuperset(map(type, kwargs.values()))):
        return tuple(args), dict(kwargs)
    memo: dict[int, Any] = {}
    try:
        return (tuple(_deep_copy(value, memo) for value in args),
                {key: _deep_copy(value, memo) for key, value in kwargs.items()})
    except TypeError:
        return tuple(_copied(value) for value in args), {key: _copied(value) for key, value in kwargs.items()}


def run_case(func: Callable, case: CheckCase, codes: frozenset[CodeType] = frozenset(), *,
             label: Callable[[], str] | None = None, shown: bool = True) -> Outcome:
    """Return the outcome of calling ``func`` on one case; never raises for the learner's errors.

    ``label`` gives the case's label as its feedback line shows it (``shown_label(case)`` by default), called
    only when a line is built; with ``shown=False`` the caller shows no line for a passing case, and a passing
    case's outcome has none (its line is empty). Raises UsedReference if ``func`` entered one of ``codes``
    (the exercise's reference code).
    """
    named = (lambda: shown_label(case)) if label is None else label
    args, kwargs = copied_call(case.args, case.kwargs)
    before = snapshots(args, kwargs)
    try:
        got, entered = _watched_call(func, args, kwargs, codes)
    except NotImplementedError:
        return Outcome(False, _("… {label}：还没有实现").format(label=named()), pending=True)
    except Exception as exc:  # the learner's code may raise anything; report it, don't crash
        return _raised(case, exc, named, shown)
    if entered:
        raise UsedReference(entered[0])
    which = changed(before)
    if which is not None:
        return _fail(case, named, _("你的函数改动了传进去的{where}（应该保持原样）").format(
            where=_argument_name(which)))
    return _judge_returned(case, got, args, named, shown)


def _judge_returned(case: CheckCase, got: Any, args: tuple, named: Callable[[], str], shown: bool) -> Outcome:
    """Return the outcome of a call of ``case`` that returned ``got`` (and left its arguments unchanged)."""
    if case.raises is not None:
        return _fail(case, named, _("期望报错 {error}，你的函数返回 {got}").format(
            error=case.raises.__name__, got=show(got)))
    if case.fresh and any(got is arg for arg in args):
        return _fail(case, named, _("你的函数把传进去的对象原样返回了，应该返回一个新的列表"))
    got = python_scalar(got)
    if case.numbers is not None:
        got, why = case.numbers.read(got)
        if why is not None:
            return _fail(case, named, why)
    if case.returns is not None and type(got) is not case.returns:
        return _fail(case, named, _("返回值应该是 {kind}，你的函数返回了 {got_kind}：{got}").format(
            kind=case.returns.__name__, got_kind=type(got).__name__, got=show(got)))
    returned = got
    if case.project is not None:
        try:
            got = case.project(got)
        except Exception as exc:  # a return value of the wrong shape
            return _fail(case, named, _("期望 {expect}，你的函数返回的 {got} 格式不对（{error}: {detail}）").format(
                expect=show(expected(case)), got=show(returned), error=type(exc).__name__, detail=show(str(exc))))
    try:
        got = plain(got)
    except NotPlain as exc:
        return _fail(case, named, _("期望 {expect}，{reason}").format(expect=show(expected(case)), reason=exc))
    expect = expected(case)
    if same(got, expect, case.tol):
        return Outcome(True, f"{PASS_MARK} {named()} → {show(got)}") if shown else PASSED
    if _plain_equal_but_type(got, expect):
        return _fail(case, named, _("期望 {expect}（{expect_types}），你的函数返回 {got}（{got_types}）").format(
            expect=show(expect), expect_types=_type_names(expect), got=show(got), got_types=_type_names(got)))
    line = _fail(case, named, _("期望 {expect}，你的函数返回 {got}").format(expect=show(expect), got=show(got))).line
    return Outcome(False, line, value=got)


def _plain_equal_but_type(got: Any, expect: Any) -> bool:
    """True when two plain values are == but differ in type somewhere (1 vs 1.0, list vs tuple)."""
    try:
        return bool(got == expect) or (type(got) in (list, tuple) and list(got) == list(expect))
    except Exception:
        return False


def _type_names(value: Any) -> str:
    kind = type(value)
    if kind in (list, tuple):
        if not value:
            return kind.__name__
        return _("{kind}，元素是 {items}").format(kind=kind.__name__,
                                                 items="/".join(sorted({type(v).__name__ for v in value})))
    return kind.__name__


def _raised(case: CheckCase, exc: Exception, named: Callable[[], str], shown: bool) -> Outcome:
    if case.raises is not None and isinstance(exc, case.raises):
        message = str(exc)
        missing = [text for text in case.message_has if text not in message]
        if missing:
            return _fail(case, named, _("报错信息里应该写出 {missing}，你的信息是 {message}").format(
                missing=_("、").join(missing), message=show(message)))
        for attribute, value in case.error_has.items():
            got = getattr(exc, attribute, None)
            if not same(python_scalar(got), value):
                return _fail(case, named, _("报错 {error} 的 {attribute} 应该是 {expect}，你的是 {got}").format(
                    error=case.raises.__name__, attribute=attribute, expect=show(value), got=show(got)))
        if not shown:
            return PASSED
        return Outcome(True, _("{mark} {label}：按要求报错 {error}").format(
            mark=PASS_MARK, label=named(), error=case.raises.__name__))
    wanted = _("报错 {error}").format(error=case.raises.__name__) if case.raises is not None else show(expected(case))
    return _fail(case, named, _("期望 {expected}，你的函数报错 {error}: {detail}").format(
        expected=wanted, error=type(exc).__name__, detail=show(str(exc))))


def _fail(case: CheckCase, named: Callable[[], str], why: str) -> Outcome:
    line = _("{mark} {label}：{why}").format(mark=FAIL_MARK, label=named(), why=why)
    if case.hint:
        line = _("{line}；{hint}").format(line=line, hint=_(case.hint))
    return Outcome(False, line)


def run_cases(func: Callable, cases: Sequence[CheckCase], codes: frozenset[CodeType] = frozenset()) -> list[Outcome]:
    """Return one outcome per case, in order, stopping after the first case of an unfinished stub."""
    require_callable(func, "func")
    outcomes = []
    for case in cases:
        outcomes.append(run_case(func, case, codes))
        if outcomes[-1].pending:
            break
    return outcomes


def format_report(outcomes: Sequence[Outcome]) -> str:
    """Return the feedback lines followed by a one-line summary in the reader's language."""
    if outcomes and outcomes[-1].pending:
        return _("{line}。\n这个练习还没有完成：把 raise NotImplementedError() 换成你的代码，再运行这一格。").format(
            line=outcomes[-1].line)
    passed = sum(o.passed for o in outcomes)
    lines = [o.line for o in outcomes]
    if passed == len(outcomes):
        lines.append(f"{PASS_MARK} " + _("全部 {count} 个检查通过。").format(count=len(outcomes)))
    else:
        lines.append(_("通过 {passed}/{total} 个检查，还差 {left} 个。").format(
            passed=passed, total=len(outcomes), left=len(outcomes) - passed))
    return "\n".join(lines)
