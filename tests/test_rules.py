"""The RULES tables hold to the notebooks: every stated rule is decided, each case and hidden test decides stated rules.

For every exercise of the eleven notebooks, ``ctx_reference.checks.RULES`` lists the rules its text
states. Each rule's phrase must appear word for word in the notebook's markdown up to the
exercise's check cell (the exercise text often refers back to the rules of an earlier section);
each visible label must name a case in ``CASES``. Each hidden test of the check cell's hidden part
says which rules it decides (``expect_digest(..., decides=(...))``; the hidden generated cases,
``expect_generated``, decide every rule with generated cases), and each rule's hidden tests, read here
from the notebooks, are exactly what the record derived from the release's table
(``ctx_reference/checks/hidden_tests.json``). tests/test_mutations.py ties the rules to wrong
implementations. docs/rules.md is the rendering of the tables.
"""
from __future__ import annotations

import ast
import re

import pytest

from ctx_course.editions.hidden_table import hidden_table, table_path
from ctx_reference.checks import (
    EXERCISES,
    NOTEBOOKS,
    RULES,
    CheckCase,
    CheckFailed,
    Exercise,
    Rule,
    digest,
    expect_digest,
    expect_generated,
)
from ctx_reference.checks.exercise import registry
from ctx_reference.checks.hidden_tests import HiddenTest, read_table, table_text
from ctx_reference.checks.rules import all_tables, rules_markdown

from notebook_cells import ROOT, cells, check_parts, grade_id, notebook_path, source
from test_mutations import _cell

REPO = ROOT
RULES_DOC = ROOT / "docs" / "rules.md"


def _check_index(name: str) -> int:
    gid, _ = _cell(name)
    (index,) = [k for k, cell in enumerate(cells(NOTEBOOKS[name])) if grade_id(cell) == gid]
    return index


def _markdown_before_check(name: str) -> str:
    """Return the notebook's markdown cells up to the exercise's check cell, joined."""
    notebook = cells(NOTEBOOKS[name])
    return "\n".join(source(c) for c in notebook[:_check_index(name)] if c["cell_type"] == "markdown")


def hidden_calls(text: str) -> list[tuple[str, str, object]]:
    """Return (function, label, decides) for each ``expect_digest`` or ``expect_generated`` call of a block of code
    whose label is a literal, in source order; ``decides`` is the literal value of its keyword, or None without one."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("expect_digest", "expect_generated")
                and node.args and isinstance(node.args[0], ast.Constant)):
            decides = next((ast.literal_eval(k.value) for k in node.keywords if k.arg == "decides"), None)
            found.append(((node.lineno, node.col_offset), node.func.id, node.args[0].value, decides))
    return [(function, label, decides) for _, function, label, decides in sorted(found)]


def hidden_labels(text: str) -> list[str]:
    """Return the literal labels passed to ``expect_digest`` or ``expect_generated`` in a block of code, in order."""
    return [label for _, label, _ in hidden_calls(text)]


def _hidden_part(name: str) -> str:
    return check_parts(source(cells(NOTEBOOKS[name])[_check_index(name)]))[1]


def _hidden(name: str) -> list[str]:
    return hidden_labels(_hidden_part(name))


def test_every_exercise_has_rules():
    """RULES and NOTEBOOKS cover exactly the exercises the checker knows, each with at least one rule."""
    assert set(RULES) == set(EXERCISES) == set(NOTEBOOKS)
    assert all(RULES[name] for name in RULES)
    assert {NOTEBOOKS[name][:2] for name in NOTEBOOKS} == {f"{k:02d}" for k in range(1, 12)}


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_names_are_unique(name):
    """Within one exercise no two rules share a name (mutants are tagged by name)."""
    names = [rule.name for rule in RULES[name]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_is_stated_in_the_text(name):
    """Every rule's phrase appears word for word in the notebook's markdown before the check cell."""
    text = _markdown_before_check(name)
    assert [rule.states for rule in RULES[name] if rule.states not in text] == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_visible_case_named_exists(name):
    """Every visible label of a rule is the label of a case in CASES."""
    labels = {case.label for case in EXERCISES[name]}
    assert [label for rule in RULES[name] for label in rule.visible if label not in labels] == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_hidden_test_decides_rules_its_exercise_states(name):
    """Every expect_digest of the check cell's hidden part names, as a tuple, rules its exercise states; no
    expect_generated names any (the rules with generated cases are its rules)."""
    stated = {rule.name for rule in RULES[name]}
    calls = hidden_calls(_hidden_part(name))
    assert calls, f"the check cell of {name!r} has no hidden test"
    wrong = [(label, decides) for function, label, decides in calls if function == "expect_digest"
             and not (type(decides) is tuple and decides and set(decides) <= stated)]
    assert wrong == []
    assert [label for function, label, decides in calls if function == "expect_generated" and decides is not None] == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_rules_hidden_tests_are_what_the_notebook_says(name):
    """A rule's hidden tests are, in the check cell's order, the expect_digest calls whose decides names it and,
    if the rule has generated cases, the expect_generated call: read from the notebook, not from the table."""
    calls = hidden_calls(_hidden_part(name))
    expected = [(rule.name, tuple(label for function, label, decides in calls
                                  if (function == "expect_digest" and rule.name in decides)
                                  or (function == "expect_generated" and rule.generated)))
                for rule in RULES[name]]
    assert [(rule.name, rule.hidden) for rule in RULES[name]] == expected


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_hidden_test_decides_a_rule(name):
    """Every hidden test of the check cell decides at least one rule of the exercise."""
    claimed = {label for rule in RULES[name] for label in rule.hidden}
    assert [label for label in _hidden(name) if label not in claimed] == []


def test_every_stated_rule_is_decided_somewhere():
    """A stated rule has a visible case, a hidden test or generated cases that decide it (every rule has a visible
    case: the record refuses one without)."""
    assert [(name, rule.name) for name, rules in RULES.items() for rule in rules
            if not (rule.visible or rule.hidden or rule.generated)] == []


def test_the_packaged_table_is_the_notebooks_hidden_tests():
    """ctx_reference/checks/hidden_tests.json is what the notebooks' hidden parts say (python -m ctx_course release
    writes it), test by test and in order."""
    table = read_table(table_path(REPO).read_text(encoding="utf-8"))
    from_notebooks = {name: [(label, decides if function == "expect_digest" else "generated")
                             for function, label, decides in hidden_calls(_hidden_part(name))] for name in RULES}
    assert {name: [(test.label, "generated" if test.generated else test.decides) for test in tests]
            for name, tests in table.items()} == {name: calls for name, calls in from_notebooks.items() if calls}
    assert table_path(REPO).read_text(encoding="utf-8") == table_text(hidden_table(REPO)), (
        "run python -m ctx_course release")


def _course_with(tmp_path, old: str, new: str):
    """Return a course root holding solutions/02-remaining with ``old`` replaced by ``new`` in its notebook."""
    notebook = notebook_path("02-remaining")
    target = tmp_path / "solutions" / "02-remaining" / notebook.name
    target.parent.mkdir(parents=True)
    text = notebook.read_text(encoding="utf-8")
    assert text.count(old) == 1
    target.write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path


def test_the_release_refuses_a_hidden_test_naming_a_rule_its_exercise_does_not_state(tmp_path):
    """A hidden test whose decides names a rule the exercise does not state stops the table, naming the rule, the
    test and the notebook."""
    root = _course_with(tmp_path, 'decides=(\\"negative-when-over\\",)', 'decides=(\\"negative-when-ovr\\",)')
    with pytest.raises(ValueError, match="negative-when-ovr.*超额时余量为负数.*remaining.ipynb"):
        hidden_table(root)


def test_the_release_refuses_a_hidden_test_without_decides(tmp_path):
    """An expect_digest of the hidden part that names no rules stops the table, naming its label."""
    root = _course_with(tmp_path, ', decides=(\\"negative-when-over\\",)', "")
    with pytest.raises(ValueError, match="decides must name the rules hidden test '超额时余量为负数'"):
        hidden_table(root)


def test_the_release_refuses_decides_on_the_hidden_generated_cases(tmp_path):
    """The rules of the hidden generated cases are derived: an expect_generated written with decides stops the table."""
    call = '例子\\", \\"remaining\\", remaining'
    root = _course_with(tmp_path, f"{call})", f'{call}, decides=(\\"x\\",))')
    with pytest.raises(ValueError, match="decides must be left out of expect_generated"):
        hidden_table(root)


def test_the_release_refuses_decides_that_is_not_a_tuple(tmp_path):
    """One form only: a decides that is a bare string stops the table, echoing the value."""
    root = _course_with(tmp_path, 'decides=(\\"negative-when-over\\",)', 'decides=\\"negative-when-over\\"')
    with pytest.raises(ValueError, match="decides must be a non-empty tuple of rule names.*'negative-when-over'"):
        hidden_table(root)


@pytest.mark.parametrize("decides", ["negative-when-over", (), ("negative-when-over", 3), ["negative-when-over"],
                                     ("",)])
def test_expect_digest_and_expect_generated_refuse_a_malformed_decides(decides):
    """At run time decides changes nothing, except that a value other than a non-empty tuple of rule names is
    refused in one line naming the argument and the value."""
    with pytest.raises(ValueError, match=re.escape(f"decides must be a non-empty tuple of rule names, e.g. "
                                                   f'("negative-when-over",) (got {decides!r})')):
        expect_digest("超额", -8_000, digest(-8_000), decides=decides)
    with pytest.raises(ValueError, match="decides must be a non-empty tuple"):
        expect_generated("生成的隐藏例子", "remaining", lambda *args: (0, True), decides=decides)


def test_expect_digest_with_decides_compares_as_without():
    """decides changes nothing when the test runs: the right digest passes, a wrong one fails naming the label."""
    expect_digest("超额", -8_000, digest(-8_000), decides=("negative-when-over",))
    with pytest.raises(CheckFailed, match="超额"):
        expect_digest("超额", -7_999, digest(-8_000), decides=("negative-when-over",))


def test_a_hidden_test_decides_only_rules_its_exercise_states():
    """A record given a hidden test naming a rule its exercise does not state is refused, naming what it named."""
    with pytest.raises(ValueError, match="negativ.*'隐藏'"):
        Exercise("remaining", "02-remaining", (len,), cases=(CheckCase("超额", decides=("negative",)),),
                 rules=(Rule("negative", "可以是负数"),), hidden_tests=(HiddenTest("隐藏", ("negativ",)),))


def test_a_rules_hidden_tests_are_derived_from_the_tests_the_generated_ones_from_its_strategies():
    """A rule's hidden labels are the tests naming it and the generated cases if the rule has generated cases, in
    the tests' order; the registry gives each record the tests of its table."""
    exercise = Exercise("remaining", "02-remaining", (len,), cases=(CheckCase("超额", decides=("r1", "r2")),),
                        rules=(Rule("r1", "一", generated=("s",)), Rule("r2", "二", not_generated="why")))
    tests = (HiddenTest("乙", ("r2",)), HiddenTest("生成", generated=True), HiddenTest("甲", ("r1", "r2")))
    (derived,) = registry([exercise], {"remaining": tests}).values()
    assert [rule.hidden for rule in derived.rules] == [("生成", "甲"), ("乙", "甲")]
    assert [rule.hidden for rule in exercise.rules] == [(), ()]


def test_no_record_writes_what_is_derived():
    """No Rule of the exercises' data modules is given its visible cases or hidden tests: both are derived."""
    written = [(path.name, node.lineno)
               for path in sorted((ROOT / "ctx_reference" / "checks" / "exercises").glob("w*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Rule"
               and (len(node.args) > 2 or any(k.arg in ("visible", "hidden") for k in node.keywords))]
    assert written == []


def test_a_table_older_than_the_records_is_left_out_not_raised():
    """A table naming a rule the record no longer states (renamed since the last release) leaves that exercise
    without hidden tests instead of stopping the import (the release itself imports the checks to write a new one)."""
    exercise = Exercise("remaining", "02-remaining", (len,), cases=(CheckCase("超额", decides=("r1",)),),
                        rules=(Rule("r1", "一", generated=("s",)),))
    stale = {"remaining": (HiddenTest("甲", ("r0",)), HiddenTest("生成", generated=True))}
    (kept,) = registry([exercise], stale).values()
    assert [rule.hidden for rule in kept.rules] == [()]


def test_a_hidden_generated_test_names_no_rules():
    """A HiddenTest of the generated cases given rules is refused: its rules are derived from Rule.generated."""
    with pytest.raises(ValueError, match="decides must be left out"):
        HiddenTest("生成", ("r1",), generated=True)


def test_the_table_reads_back_what_it_wrote():
    """read_table gives back the table table_text wrote, tests in order, a test deciding two rules kept whole."""
    table = {"remaining": (HiddenTest("超额", ("negative",)), HiddenTest("生成", generated=True)),
             "check": (HiddenTest("窗口 1", ("a", "b")),)}
    assert dict(read_table(table_text(table))) == table


def test_hidden_calls_reads_the_literal_labels_and_decides():
    """hidden_calls finds expect_digest's first argument when it is a literal, with its decides, and nothing else."""
    text = ('x = 1\nexpect_digest("甲", f(1), "ab", decides=("r",))\nexpect_digest(name, f(2), "cd")\nassert f(3)\n'
            'expect_generated("乙", "f", f)\n')
    assert hidden_calls(text) == [("expect_digest", "甲", ("r",)), ("expect_generated", "乙", None)]
    assert hidden_labels(text) == ["甲", "乙"]


def _exercise(cases: tuple[CheckCase, ...], rules: tuple[Rule, ...]) -> Exercise:
    return Exercise("remaining", "02-remaining", (len,), cases=cases, rules=rules)


def test_a_rule_needs_a_case_that_decides_it():
    """A rule that no case's ``decides`` names is refused, naming the rule."""
    with pytest.raises(ValueError, match="'negative'"):
        _exercise((CheckCase("超额", decides=("other",)),), (Rule("negative", "可以是负数"), Rule("other", "别的")))


def test_a_case_decides_only_rules_its_exercise_states():
    """A case naming a rule its exercise does not state is refused, naming what it named."""
    with pytest.raises(ValueError, match="negativ"):
        _exercise((CheckCase("超额", decides=("negativ",)),), (Rule("negative", "可以是负数"),))


def test_a_rules_visible_cases_are_the_cases_that_decide_it_in_their_order():
    """The record fills each rule's visible labels in from the cases, in the cases' order, a case deciding
    several rules counted for each."""
    exercise = _exercise((CheckCase("乙", decides=("r2",)), CheckCase("甲", decides=("r1", "r2"))),
                         (Rule("r1", "一"), Rule("r2", "二")))
    assert [rule.visible for rule in exercise.rules] == [("甲",), ("乙", "甲")]


def test_rules_markdown_renders_one_table_per_exercise():
    """One heading and one row per rule; a rule without hidden tests shows a dash; | is escaped; a rule's
    generated cases show as its strategies, or the reason it has none."""
    text = rules_markdown([("02-remaining", "remaining", (
        Rule("negative", "a|b", ("超额", "少 1"), generated=("over", "tenth")),
        Rule("a-list", "列表", ("超额",), hidden=("隐藏",), not_generated="every case checks it"),
    ))])
    assert "## 02-remaining · `remaining`" in text
    assert "| `negative` | a\\|b | 超额<br>少 1 | `over`<br>`tenth` | — |" in text.split("\n")
    assert "| `a-list` | 列表 | 超额 | — (every case checks it) | 隐藏 |" in text.split("\n")


def test_every_rule_is_generated_or_says_why_not():
    """Every rule names the strategies that draw its generated cases, each a strategy of its exercise,
    or says why no strategy can draw it (issue: the rules table names the generators)."""
    from ctx_reference.checks.drawing.strategies import STRATEGIES
    missing = [(name, rule.name) for name, rules in RULES.items() for rule in rules
               if not rule.generated and not rule.not_generated]
    unknown = [(name, rule.name, strategy) for name, rules in RULES.items() for rule in rules
               for strategy in rule.generated if strategy not in STRATEGIES.get(name, {})]
    unused = [(name, strategy) for name, strategies in STRATEGIES.items() for strategy in strategies
              if not any(strategy in rule.generated for rule in RULES[name])]
    assert (missing, unknown, unused) == ([], [], [])


def test_a_rule_is_not_both_generated_and_not():
    with pytest.raises(ValueError, match="generated and not_generated"):
        Rule("both", "两者", ("甲",), generated=("s",), not_generated="why")


def test_rules_doc_is_up_to_date():
    """docs/rules.md is exactly what the RULES tables render.

    Regenerate it with: python -m ctx_reference.checks > docs/rules.md
    """
    assert RULES_DOC.read_text(encoding="utf-8") == rules_markdown(all_tables(RULES, NOTEBOOKS))
