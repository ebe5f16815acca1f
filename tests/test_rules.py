"""The RULES tables hold to the notebooks: every stated rule has a visible case, every hidden test a stated rule.

For every exercise of the eleven notebooks, ``ctx_reference.checks.RULES`` lists the rules its text
states. Each rule's phrase must appear word for word in the notebook's markdown up to the
exercise's check cell (the exercise text often refers back to the rules of an earlier section);
each visible label must name a case in ``CASES``; each hidden label must be a label the check
cell's hidden part passes to ``expect_digest``, and every such label must be claimed by a rule.
tests/test_mutations.py ties the rules to wrong implementations. docs/rules.md is the rendering
of the tables.
"""
from __future__ import annotations

import ast

import pytest

from ctx_reference.checks import EXERCISES, NOTEBOOKS, RULES, CheckCase, Exercise, Rule
from ctx_reference.checks.rules import all_tables, rules_markdown

from notebook_cells import ROOT, cells, check_parts, grade_id, source
from test_mutations import _cell

RULES_DOC = ROOT / "docs" / "rules.md"


def _check_index(name: str) -> int:
    gid, _ = _cell(name)
    (index,) = [k for k, cell in enumerate(cells(NOTEBOOKS[name])) if grade_id(cell) == gid]
    return index


def _markdown_before_check(name: str) -> str:
    """Return the notebook's markdown cells up to the exercise's check cell, joined."""
    notebook = cells(NOTEBOOKS[name])
    return "\n".join(source(c) for c in notebook[:_check_index(name)] if c["cell_type"] == "markdown")


def hidden_labels(text: str) -> list[str]:
    """Return the literal labels passed to ``expect_digest`` or ``expect_generated`` in a block of code, in order."""
    return [
        node.args[0].value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("expect_digest", "expect_generated")
        and node.args and isinstance(node.args[0], ast.Constant)
    ]


def _hidden(name: str) -> list[str]:
    check = source(cells(NOTEBOOKS[name])[_check_index(name)])
    return hidden_labels(check_parts(check)[1])


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
def test_every_hidden_case_named_exists(name):
    """Every hidden label of a rule is a label the check cell's hidden tests use."""
    labels = set(_hidden(name))
    assert [label for rule in RULES[name] for label in rule.hidden if label not in labels] == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_hidden_case_decides_a_stated_rule(name):
    """Every hidden test label of the check cell is claimed by a rule of the exercise."""
    claimed = {label for rule in RULES[name] for label in rule.hidden}
    assert [label for label in _hidden(name) if label not in claimed] == []


def test_hidden_labels_reads_the_literal_labels():
    """hidden_labels finds expect_digest's first argument when it is a literal, and nothing else."""
    text = 'x = 1\nexpect_digest("甲", f(1), "ab")\nexpect_digest(name, f(2), "cd")\nassert f(3)\n'
    assert hidden_labels(text) == ["甲"]


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
