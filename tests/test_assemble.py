"""Tests for ctx_reference.assemble: choosing and ordering context items under a budget."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_course.editions.translate import has_chinese
from ctx_reference import i18n
from ctx_reference.assemble import (
    LESSON_BUDGET,
    Assembly,
    BudgetError,
    Item,
    assemble,
    lesson_items,
)


def names(items):
    """Return the names of ``items`` in order."""
    return [item.name for item in items]


def test_assemble():
    """Seed, budget 11,000: 3,000 + 2,000 + 800 + 2,500 + 2,500 + 20 + 100 = 10,920 used; A's copy and C dropped."""
    result = assemble(lesson_items(), 11_000)
    assert LESSON_BUDGET == 11_000
    assert result.used == 10_920
    assert names(result.items) == ["rules", "tools", "memory", "doc A", "doc B", "time", "question"]
    assert [(item.name, reason) for item, reason in result.dropped] == [
        ("doc A (copy)", "duplicate"),
        ("doc C", "no room"),  # 10,920 + 1,500 = 12,420 > 11,000
    ]


def test_lesson_items():
    """The seed example has nine items totalling 14,920 tokens, and A's copy has A's text."""
    items = lesson_items()
    assert len(items) == 9
    assert sum(item.tokens for item in items) == 14_920
    by_name = {item.name: item for item in items}
    assert by_name["doc A (copy)"].text == by_name["doc A"].text
    assert [item.name for item in items if item.required] == ["rules", "tools", "time", "question"]


def test_assemble_required_over_budget():
    """Required items cost 3,000 + 2,000 + 20 + 100 = 5,120; a budget of 5,119 raises BudgetError naming both."""
    with pytest.raises(BudgetError) as caught:
        assemble(lesson_items(), 5_119)
    assert isinstance(caught.value, ValueError)
    assert caught.value.required_tokens == 5_120
    assert caught.value.budget == 5_119


def test_budget_error_says_its_numbers_once_in_the_readers_language():
    """The message names the required tokens and budget=…, in Chinese or in English, never both."""
    for language, words in (("zh_CN", "必需项共 5120 tokens"), ("en", "5120 tokens, more than budget=5119")):
        with i18n.using(language):
            message = str(BudgetError(5_120, 5_119))
        assert words in message and "budget=5119" in message, message
        assert has_chinese(message) == (language == "zh_CN"), message


def test_assemble_required_exactly_fills_budget():
    """A budget of exactly 5,120 keeps the four required items and drops every other item for lack of room."""
    result = assemble(lesson_items(), 5_120)
    assert result.used == 5_120
    assert names(result.items) == ["rules", "tools", "time", "question"]
    assert [(item.name, reason) for item, reason in result.dropped] == [
        ("memory", "no room"),
        ("doc A", "no room"),
        ("doc B", "no room"),
        ("doc A (copy)", "no room"),  # A was not kept, so its copy is not a duplicate
        ("doc C", "no room"),
    ]


def test_assemble_empty():
    """No items: nothing kept, 0 used, nothing dropped."""
    assert assemble([], 11_000) == Assembly(items=[], used=0, dropped=[])


def test_assemble_budget_zero_without_required():
    """Budget 0 and nothing required: every sized item is dropped for room, a 0-token item still fits."""
    items = [Item("a", 10), Item("b", 0), Item("c", 1)]
    result = assemble(items, 0)
    assert result.used == 0
    assert names(result.items) == ["b"]
    assert [(item.name, reason) for item, reason in result.dropped] == [("a", "no room"), ("c", "no room")]


def test_assemble_one_oversized_item():
    """One optional item of 12,000 in an 11,000 budget is dropped for room; a required one raises."""
    result = assemble([Item("log", 12_000)], 11_000)
    assert result.items == [] and result.used == 0
    assert [(item.name, reason) for item, reason in result.dropped] == [("log", "no room")]
    with pytest.raises(BudgetError, match=r"budget=11000") as caught:
        assemble([Item("log", 12_000, required=True)], 11_000)
    assert (caught.value.required_tokens, caught.value.budget) == (12_000, 11_000)


def test_assemble_priority_beats_input_order():
    """A later item of higher priority goes in first: room for 600 keeps "high" (500), not "low" (400)."""
    items = [Item("low", 400, priority=1), Item("high", 500, priority=5)]
    result = assemble(items, 600)
    assert names(result.items) == ["high"]
    assert [(item.name, reason) for item, reason in result.dropped] == [("low", "no room")]


def test_assemble_reports_drops_in_input_order():
    """Dropped items are listed in input order, not in the priority order they were tried in."""
    items = [Item("low", 400, priority=1), Item("high", 500, priority=5), Item("mid", 600, priority=3)]
    result = assemble(items, 500)
    assert names(result.items) == ["high"]
    assert [(item.name, reason) for item, reason in result.dropped] == [("low", "no room"), ("mid", "no room")]


def test_assemble_ties_keep_input_order():
    """Equal priority: the earlier item is tried first and takes the room."""
    items = [Item("first", 500, priority=2), Item("second", 500, priority=2)]
    result = assemble(items, 700)
    assert names(result.items) == ["first"]


def test_assemble_smaller_item_fills_leftover_room():
    """Greedy, not stop-at-first-miss: after a 700 misses, a later 200 still fits in the 300 left."""
    items = [Item("big", 700, priority=3), Item("x", 700, priority=2), Item("small", 200, priority=1)]
    result = assemble(items, 1_000)
    assert names(result.items) == ["big", "small"]
    assert result.used == 900


def test_assemble_stable_items_first():
    """Output puts stable items first, then dynamic ones, each in input order, whatever the priority."""
    items = [
        Item("time", 20, required=True),
        Item("doc", 100, priority=9),
        Item("rules", 300, required=True, stable=True),
        Item("memory", 50, priority=1, stable=True),
    ]
    assert names(assemble(items, 1_000).items) == ["rules", "memory", "time", "doc"]


def test_assemble_duplicate_of_required_is_dropped():
    """An optional item with the same text as a required one is a duplicate."""
    items = [Item("rules", 300, required=True, text="规则"), Item("rules again", 300, priority=9, text="规则")]
    result = assemble(items, 10_000)
    assert names(result.items) == ["rules"]
    assert [(item.name, reason) for item, reason in result.dropped] == [("rules again", "duplicate")]


def test_assemble_required_duplicate_is_kept():
    """A required item is always kept, even when its text repeats another kept item (300 + 300 = 600)."""
    items = [Item("q1", 300, required=True, text="同一问题"), Item("q2", 300, required=True, text="同一问题")]
    result = assemble(items, 1_000)
    assert names(result.items) == ["q1", "q2"]
    assert result.used == 600
    assert result.dropped == []


def test_assemble_none_text_is_never_duplicate():
    """Items without text are never duplicates of each other."""
    result = assemble([Item("a", 10), Item("b", 10)], 100)
    assert names(result.items) == ["a", "b"]


def test_assemble_does_not_mutate_input():
    """The caller's list is left as it was, and a generator works as input too."""
    items = list(lesson_items())
    before = list(items)
    assemble(items, 11_000)
    assert items == before
    assert assemble((item for item in lesson_items()), 11_000).used == 10_920


@pytest.mark.parametrize("kwargs, pattern", [
    ({"name": 3, "tokens": 10}, r"name must be a str \(got 3\)"),
    ({"name": "a", "tokens": -1}, r"tokens must be >= 0 \(got -1\)"),
    ({"name": "a", "tokens": 2.5}, r"tokens must be an int \(got 2.5\)"),
    ({"name": "a", "tokens": True}, r"tokens must be an int \(got True\)"),
    ({"name": "a", "tokens": 1, "priority": "high"}, r"priority must be an int \(got 'high'\)"),
    ({"name": "a", "tokens": 1, "required": "yes"}, r"required must be a bool \(got 'yes'\)"),
    ({"name": "a", "tokens": 1, "stable": 1}, r"stable must be a bool \(got 1\)"),
    ({"name": "a", "tokens": 1, "text": 42}, r"text must be a str or None \(got 42\)"),
])
def test_item_rejects_bad_fields(kwargs, pattern):
    """Item raises ValueError naming the bad field and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        Item(**kwargs)


@pytest.mark.parametrize("items, budget, pattern", [
    ([Item("a", 1)], -1, r"budget must be >= 0 \(got -1\)"),
    ([Item("a", 1)], 100.0, r"budget must be an int \(got 100.0\)"),
    ([Item("a", 1)], None, r"budget must be an int \(got None\)"),
    ([Item("a", 1), ("b", 2)], 100, r"items\[1\] must be an Item \(got \('b', 2\)\)"),
    ("rules", 100, r"items must be an iterable of Item \(got 'rules'\)"),
    (5, 100, r"items must be an iterable of Item \(got 5\)"),
])
def test_assemble_rejects_bad_input(items, budget, pattern):
    """assemble() raises ValueError naming the bad argument and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        assemble(items, budget)


@st.composite
def items_and_budget(draw):
    """Draw uniquely named items (some sharing text) and a budget."""
    count = draw(st.integers(min_value=0, max_value=12))
    items = []
    for index in range(count):
        items.append(Item(
            name=f"item{index}",
            tokens=draw(st.integers(min_value=0, max_value=3_000)),
            priority=draw(st.integers(min_value=-2, max_value=3)),
            required=draw(st.booleans()),
            stable=draw(st.booleans()),
            text=draw(st.sampled_from([None, "甲", "乙", "丙"])),
        ))
    budget = draw(st.integers(min_value=0, max_value=15_000))
    return items, budget


@given(items_and_budget())
def test_assemble_properties(case):
    """Whenever the required items fit: used <= budget, used sums the kept items, all required are kept,
    kept + dropped is exactly the input, and the output is stable-then-dynamic in input order."""
    items, budget = case
    required_total = sum(item.tokens for item in items if item.required)
    if required_total > budget:
        with pytest.raises(BudgetError):
            assemble(items, budget)
        return
    result = assemble(items, budget)
    assert result.used <= budget
    assert result.used == sum(item.tokens for item in result.items)
    assert all(item in result.items for item in items if item.required)
    assert Counter(result.items) + Counter(item for item, _ in result.dropped) == Counter(items)
    position = {item.name: index for index, item in enumerate(items)}
    stable = [item for item in result.items if item.stable]
    dynamic = [item for item in result.items if not item.stable]
    assert result.items == stable + dynamic
    assert [position[item.name] for item in stable] == sorted(position[item.name] for item in stable)
    assert [position[item.name] for item in dynamic] == sorted(position[item.name] for item in dynamic)


@given(items_and_budget())
def test_assemble_drop_reasons_are_true(case):
    """A "no room" item would still not fit in what is left; a "duplicate" shares text with a kept item;
    no kept optional item repeats the text of another kept item."""
    items, budget = case
    if sum(item.tokens for item in items if item.required) > budget:
        return
    result = assemble(items, budget)
    optional_texts = [item.text for item in result.items if not item.required and item.text is not None]
    required_texts = {item.text for item in result.items if item.required}
    assert len(optional_texts) == len(set(optional_texts))
    assert not set(optional_texts) & required_texts
    kept_texts = {item.text for item in result.items}
    for item, reason in result.dropped:
        assert reason in ("no room", "duplicate")
        assert not item.required
        if reason == "no room":
            assert item.tokens > budget - result.used
        else:
            assert item.text is not None and item.text in kept_texts
