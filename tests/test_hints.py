"""Hints in steps (ctx_reference/hints.py) and the record of the kernel's checks (ctx_reference/attempts.py)."""
from __future__ import annotations

import pytest

from ctx_course.editions.translate import has_chinese
from ctx_reference import attempts, hints
from ctx_reference.checks import EXERCISES, RULES, CheckCase, CheckFailed, Outcome, Rule, check_exercise
from ctx_reference.hints import HINTS, Hint, hint, next_hint
from ctx_reference.i18n import using


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch):
    """Each test starts as a fresh kernel outside any grader."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    attempts.forget()
    hints.forget()
    yield
    attempts.forget()
    hints.forget()


def clipped_remaining(window, read, write, input, max_tokens):
    """A ``remaining`` that clips a negative margin to 0: it breaks the rule "超额时可以是负数"."""
    left = window - (read + write + input) - max_tokens
    return max(left, 0), left * 10 < window


def test_every_exercise_has_two_or_three_hints():
    """Every exercise the checks know has two or three hints, and no hint names an exercise that does not exist."""
    assert set(HINTS) == set(EXERCISES)
    assert all(2 <= len(table) <= 3 for table in HINTS.values())


def test_hints_go_from_the_idea_to_rules_the_exercise_states():
    """The first hint is the idea (no rule); every later one is for a rule of the exercise's RULES table."""
    for exercise, table in HINTS.items():
        assert table[0].rule is None, exercise
        names = {rule.name for rule in RULES[exercise]}
        for later in table[1:]:
            assert later.rule in names, (exercise, later.rule)


def test_every_hint_reads_in_english():
    """Every hint has its English in the catalogue, without Chinese but for the one word a rule quotes."""
    for table in HINTS.values():
        for item in table:
            with using("en"):
                english = hints._(item.text)
            # "不要" is data: the word the render exercise's lint looks for, quoted in both editions.
            bare = english.replace('"不要"', "")
            assert english != item.text and not has_chinese(bare), item.text


def test_next_hint_in_order_without_a_broken_rule():
    """With no rule broken, hints come in the table's order, then None."""
    table = (Hint("idea"), Hint("a", "rule-a"), Hint("b", "rule-b"))
    assert next_hint(table, [], ()) == 0
    assert next_hint(table, [0], ()) == 1
    assert next_hint(table, [0, 1], ()) == 2
    assert next_hint(table, [0, 1, 2], ()) is None


def test_next_hint_for_the_broken_rule_first():
    """A broken rule's hint comes before the idea; the first broken rule with a hint left decides."""
    table = (Hint("idea"), Hint("a", "rule-a"), Hint("b", "rule-b"))
    assert next_hint(table, [], ("rule-b",)) == 2
    assert next_hint(table, [], ("no-hint", "rule-a", "rule-b")) == 1
    assert next_hint(table, [2], ("rule-b",)) == 0  # its hint was shown: back to the order


def test_failed_rules_from_visible_labels_and_the_generated_outcome():
    """A failing visible case gives the rules naming its label; the generated outcome gives the rule it names."""
    cases = (CheckCase("c1"), CheckCase("c2"))
    rules = (Rule("r1", "s1", ("c1",)), Rule("r2", "s2", ("c2", "c1")), Rule("r3", "s3", ("c2",)))
    outcomes = [Outcome(True, "✓"), Outcome(False, "×"), Outcome(False, "×", rule="r1")]
    assert attempts.failed_rules(cases, outcomes, rules) == ("r2", "r3", "r1")
    assert attempts.failed_rules(cases, [Outcome(True, "✓"), Outcome(True, "✓")], rules) == ()


def test_a_failed_check_offers_the_hint_of_the_rule_it_broke(capsys):
    """A remaining that clips the margin fails; its first hint is the negative-margin one, not the idea."""
    with pytest.raises(CheckFailed) as failed:
        check_exercise("remaining", clipped_remaining)
    last = str(failed.value).splitlines()[-1]
    assert last == '卡住了？运行 from ctx_reference.hints import hint; hint("remaining") 看一条提示。'
    assert "negative-when-over" in attempts.attempt("remaining").failed
    capsys.readouterr()
    hint("remaining")
    negative = next(item.text for item in HINTS["remaining"] if item.rule == "negative-when-over")
    assert capsys.readouterr().out == f"提示 3/3（remaining）：{negative}\n"
    hint("remaining")
    assert capsys.readouterr().out == f"提示 1/3（remaining）：{HINTS['remaining'][0].text}\n"


def test_hint_shows_each_once_then_says_all_were_seen(capsys):
    """Without a check, three calls show the three hints in order; the fourth says they were all seen."""
    for number in (1, 2, 3):
        hint("remaining")
        assert capsys.readouterr().out.startswith(f"提示 {number}/3（remaining）")
    hint("remaining")
    assert capsys.readouterr().out.startswith("remaining 的 3 条提示都已经看过了")


def test_hint_in_english(capsys):
    """In the English edition the hint and its frame read in English."""
    with using("en"):
        hint("zone")
    assert capsys.readouterr().out.startswith("Hint 1/3 (zone): First check the arguments")


def test_under_a_grader_no_hint_and_no_offer(monkeypatch, capsys):
    """Under nbgrader a failed check ends with its usual line, and hint() shows no hint."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(CheckFailed) as failed:
        check_exercise("remaining", clipped_remaining)
    assert str(failed.value) == "练习 `remaining`：2 个检查没有通过，请看上面的 × 行。"
    capsys.readouterr()
    hint("remaining")
    assert capsys.readouterr().out == "评分时不提供提示。\n"


def test_unknown_exercise_is_one_clear_error():
    """An exercise name hint() does not know raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"exercise must be one of: .* \(got 'remainder'\)"):
        hint("remainder")
