"""An exercise as one record: everything the checks know of it, in one place.

Covers: ``Exercise``, the frozen record of one exercise — its name (the key the notebook passes to
``check_exercise``), its notebook folder, the reference objects that ARE it, its visible cases, the
rules its text states, how its generated cases compare the returned value, the learner's function
where the notebook names it otherwise, the adapter that turns the learner's object into the
function the cases call, and its hidden tests — with what it derives from them: each rule's visible
cases and hidden tests; and ``registry``, which makes the name → record table of a sequence of
records, refusing a name given twice, each record given its hidden tests from the release's table.

Leaves out: the records themselves (``exercises/``, one module per notebook, data only, never naming a
hidden test), reading the hidden tests (``hidden_tests.py``; the notebook's check cell is their one
source), running the cases (``runner.py``, ``generated.py``) and the notebook's API (``__init__.py``).

Vocabulary: the *learner's function* is the name the notebook's answer cell defines (``my_policy``
for the capstone's three exercises); an *adapter* wraps it into the function a case calls (the
capstone runs a policy on a named workload).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from types import CodeType, MappingProxyType
from typing import Any

from .generated import Generated
from .hidden_tests import HIDDEN_TESTS, HiddenTest
from .rules import Rule
from .runner import CheckCase, reference_codes


@dataclass(frozen=True)
class Exercise:
    """One exercise: ``Exercise("remaining", "02-remaining", (remaining,), cases=(…), rules=(…))``.

    ``references`` are the functions and classes that ARE the exercise (handing them in, or calling
    them, scores 0); ``cases`` are its visible cases, literals; ``rules`` the rules its text states
    (``rules.py``); ``compare`` says how its generated cases compare the returned value;
    ``learner_name`` is the learner's function where the notebook calls it by another name than the
    exercise's; ``adapter`` turns the learner's object into the function the cases call; ``learner_call``,
    where the reference is a method or a class, takes the namespace of the reference's module (the real
    one, or a mutant's copy) and returns the reference called as the learner's function is (the bank's
    oracles and the mutation campaign's mutants are called so).

    Each case names the rules it decides (``CheckCase.decides``); the record fills in each rule's
    ``visible``, the labels of those cases in their order, and refuses a rule no case decides or a case
    naming a rule the exercise does not state. ``hidden_tests`` are the hidden tests of its check cell
    (``hidden_tests.py``), never written in a record: ``registry`` gives each record those of the
    release's table. Each names the rules it decides, except the hidden generated cases, which decide
    every rule that has generated cases (``Rule.generated``); the record fills in each rule's
    ``hidden``, the labels of the tests that decide it in their order, and refuses a test naming a rule
    the exercise does not state.
    """

    name: str
    notebook: str
    references: tuple
    cases: tuple[CheckCase, ...]
    rules: tuple[Rule, ...]
    compare: Generated = Generated()
    learner_name: str | None = None
    adapter: Callable[[Callable], Callable] | None = None
    learner_call: Callable[[Mapping[str, Any]], Callable] | None = None
    hidden_tests: tuple[HiddenTest, ...] = ()

    def __post_init__(self) -> None:
        if type(self.name) is not str or not self.name.isidentifier():
            raise ValueError(f"name must be an identifier (got {self.name!r})")
        for field, kind in (("references", object), ("cases", CheckCase), ("rules", Rule)):
            value = getattr(self, field)
            if type(value) is not tuple or not value or not all(isinstance(item, kind) for item in value):
                raise ValueError(f"{field} must be a non-empty tuple of {kind.__name__} (got {value!r} for exercise "
                                 f"{self.name!r})")
        if type(self.hidden_tests) is not tuple or not all(isinstance(t, HiddenTest) for t in self.hidden_tests):
            raise ValueError(f"hidden_tests must be a tuple of HiddenTest (got {self.hidden_tests!r} for exercise "
                             f"{self.name!r})")
        rules = _decided(self.name, self.cases, self.rules)
        object.__setattr__(self, "rules", _hidden(self.name, self.hidden_tests, rules))

    @property
    def function(self) -> str:
        """The learner's function the notebook defines: ``learner_name``, or the exercise's name."""
        return self.learner_name or self.name

    @cached_property
    def codes(self) -> frozenset[CodeType]:
        """The code objects of the references (``runner.reference_codes``): entering one scores 0."""
        return reference_codes(self.references)


def _decided(name: str, cases: tuple[CheckCase, ...], rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """Return ``rules`` with each one's ``visible`` the labels of the cases that decide it, in the cases' order."""
    stated = {rule.name for rule in rules}
    for case in cases:
        unknown = [rule for rule in case.decides if rule not in stated]
        if unknown or type(case.decides) is not tuple:
            raise ValueError(f"decides must name rules of exercise {name!r} ({', '.join(sorted(stated))}) "
                             f"(got {case.decides!r} for case {case.label!r})")
    derived = []
    for rule in rules:
        visible = tuple(case.label for case in cases if rule.name in case.decides)
        if not visible:
            raise ValueError(f"rule {rule.name!r} of exercise {name!r} must be decided by a visible case "
                             f"(no case's decides names it)")
        derived.append(replace(rule, visible=visible))
    return tuple(derived)


def _hidden(name: str, tests: tuple[HiddenTest, ...], rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """Return ``rules`` with each one's ``hidden`` the labels of the hidden tests that decide it, in the tests' order.

    A test decides the rules its ``decides`` names; the hidden generated cases decide the rules with generated cases.
    """
    stated = {rule.name for rule in rules}
    for test in tests:
        unknown = [rule for rule in test.decides if rule not in stated]
        if unknown:
            raise ValueError(f"decides must name rules of exercise {name!r} ({', '.join(sorted(stated))}) "
                             f"(got {test.decides!r} for hidden test {test.label!r})")
    return tuple(replace(rule, hidden=tuple(test.label for test in tests
                                            if rule.name in test.decides or (test.generated and rule.generated)))
                 for rule in rules)


def registry(exercises: Iterable[Exercise],
             hidden_tests: Mapping[str, tuple[HiddenTest, ...]] = HIDDEN_TESTS) -> Mapping[str, Exercise]:
    """Return name → exercise, read-only, in the given order, each with its tests of ``hidden_tests`` (by default the
    release's table, ``hidden_tests.py``); raise ValueError naming a name given twice.

    A table older than the records (a rule renamed since the last release) is not given to that exercise, which
    keeps its rules without hidden tests: every import of the checks, the release's own included, still works, and
    tests/test_rules.py fails until ``python -m ctx_course release`` writes the table again.
    """
    table: dict[str, Exercise] = {}
    for exercise in exercises:
        if exercise.name in table:
            raise ValueError(f"exercise names must be unique (got {exercise.name!r} twice)")
        tests = hidden_tests.get(exercise.name, ())
        stated = {rule.name for rule in exercise.rules}
        if tests != exercise.hidden_tests and all(set(test.decides) <= stated for test in tests):
            exercise = replace(exercise, hidden_tests=tests)
        table[exercise.name] = exercise
    return MappingProxyType(table)
