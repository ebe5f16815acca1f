"""Strategies of notebook 04's exercise ``assemble(items, budget)``.

The text ("Write ``assemble(items, budget)`` following the five rules of section 3"; "When the
required items' total token count exceeds ``budget``, ``raise BudgetError(required_total, budget)``";
its items and budgets run to 12,500 tokens) gives the domain: a list of ``Item`` (a name, a token
count of 0 or more, an integer priority, required or not, stable or not, a text or ``None``) and a
budget of 0 tokens or more that the required items fit in (over it, ``BudgetError`` is raised: the
hand-written cases check that error and its two numbers, which a generated case, compared by the
error's built-in name, cannot). The strategies draw up to seven items, or hundreds: token counts of every
magnitude up to 25,000 (``_wide.magnitudes``; 0 to 10 weighted, so that sums tie), and lists of 257 to
400 items (the text sets no bound on how many; past 256, an index is no longer one of the
interpreter's shared small integers, so that keeping items by identity shows), any integer
priority up to a million either way (-1 to 3 weighted, so that priorities tie), texts that are
equal, differ by a space, a newline or a capital letter, or are prefixes of each other, and
``None``, the same item twice, and budgets put exactly at the required total, at what all the
items need, one token either side of a sum, and 0. Items of equal value share a name, others
never do, so that the projection by names (``checks/assembly.py`` ``summary``) keeps the result;
the names are any non-empty text (single letters weighted), drawn independently of the items'
order, so that keeping the input order and sorting by name do not look alike. Half the time one
item stands twice in the list as the same object ("a list of ``Item``" allows it). Narrower than
the text: item texts come from the small set above (the rule compares texts for equality, and
near misses of one character decide it; any other text is one more distinct text).
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....assemble import Item, assemble
from . import Call
from ._wide import any_text, magnitudes, weighted, with_one_twice

_NAMES = "abcdefghijklmnop"
_TOKENS = weighted((0, 1, 2, 3, 5, 10), magnitudes(0, 25_000))  # twice the largest the text mentions
_TEXTS = st.sampled_from((None, None, "t", "t ", "T", "tt", "同", "同 "))
_NEAR_TEXTS = st.sampled_from(("t", "t ", "t\n", "T", "tt", "同", None))  # equal but for a space, a newline, a capital
_BOOLS = st.booleans()
_PRIORITIES = weighted(range(-1, 4), st.integers(-1_000_000, 1_000_000))


_NAME = weighted(tuple(_NAMES), any_text(min_size=1, max_size=4))


def _named(specs: list[dict], names: list[str]) -> list[Item]:
    """Return Items built from field dicts, equal ones under one name, the others each under its own: the
    next of ``names`` (distinct names, at least as many as distinct dicts)."""
    given: dict[tuple, str] = {}
    items = []
    for spec in specs:
        key = tuple(sorted(spec.items(), key=lambda kv: kv[0]))
        given.setdefault(key, names[len(given)])
        items.append(Item(given[key], **spec))
    return items


@st.composite
def _items(draw, specs_strategy: st.SearchStrategy[list[dict]]) -> list[Item]:
    """Items of the drawn field dicts under names drawn apart from their order; one sometimes twice, as one object."""
    specs = draw(specs_strategy)
    names = draw(st.lists(_NAME, unique=True, min_size=len(specs), max_size=len(specs)))
    return draw(with_one_twice(st.just(_named(specs, names))))


@st.composite
def _specs(draw, *, size=(0, 6), required=_BOOLS, priority=_PRIORITIES, text=_TEXTS, stable=_BOOLS,
           tokens=_TOKENS) -> list[dict]:
    """Field dicts of a list of items, each drawn from the given strategies; sometimes one repeated."""
    specs = draw(st.lists(st.fixed_dictionaries({
        "tokens": tokens, "priority": priority, "required": required, "stable": stable, "text": text,
    }), min_size=size[0], max_size=size[1]))
    if specs and draw(st.booleans()):
        specs.insert(draw(st.integers(0, len(specs))), dict(draw(st.sampled_from(specs))))
    return specs


@st.composite
def _budget(draw, items: list[Item]) -> int:
    """A budget the required items fit in: at their total, at what every item needs, one token off, or between."""
    need = sum(item.tokens for item in items if item.required)
    everything = sum(item.tokens for item in items)
    picks = [need, need + 1, everything, max(need, everything - 1), everything + 1]
    return draw(st.sampled_from(picks) | st.integers(need, max(need, everything)))


def _assemble_call(specs_strategy: st.SearchStrategy[list[dict]]) -> st.SearchStrategy[Call]:
    @st.composite
    def build(draw) -> Call:
        items = draw(_items(specs_strategy))
        return (items, draw(_budget(items))), {}
    return build()


@st.composite
def _distinct_priorities(draw) -> list[dict]:
    specs = draw(_specs(size=(2, 6), required=st.just(False), text=st.just(None)))
    priorities = draw(st.permutations(range(-1, len(specs) - 1)))
    return [dict(spec, priority=p) for spec, p in zip(specs, priorities)]


@st.composite
def _at_the_required_total(draw) -> Call:
    """The budget exactly the required total (0 included); optional items of 0 tokens still fit."""
    items = draw(_items(_specs(size=(0, 5), tokens=st.sampled_from((0, 0, 1, 3)), text=st.just(None))))
    return (items, sum(item.tokens for item in items if item.required)), {}


@st.composite
def _many_items(draw) -> Call:
    """257 to 400 distinct items, a short drawn pattern of fields repeated, under names shuffled apart from their
    order: past 256 items, an index kept by position is no longer the interpreter's one small integer."""
    pattern = draw(_specs(size=(1, 4), text=st.just(None), tokens=st.integers(0, 10)))
    count = draw(st.integers(257, 400))
    names = [f"d{number}" for number in range(count)]
    draw(st.randoms(use_true_random=False)).shuffle(names)
    items = [Item(name, **pattern[index % len(pattern)]) for index, name in enumerate(names)]
    return (items, draw(_budget(items))), {}


ORACLES = {"assemble": assemble}

STRATEGIES = {
    "assemble": {
        "by-priority": _assemble_call(_distinct_priorities()),
        "equal-priorities": _assemble_call(_specs(size=(2, 6), required=st.just(False), text=st.just(None),
                                                  priority=st.sampled_from((0, 1)))),
        "same-texts": _assemble_call(_specs(size=(2, 6), required=st.just(False), priority=st.sampled_from((0, 1)),
                                            text=_NEAR_TEXTS)),
        "required-texts": _assemble_call(_specs(size=(2, 6), required=st.sampled_from((True, False, False)))),
        "stable-and-dynamic": _assemble_call(_specs(size=(2, 7), text=st.just(None))),
        "at-the-required-total": _at_the_required_total(),
        "many-items": _many_items(),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``); a call of hundreds of items costs a few milliseconds, so a dozen of them.
EXAMPLES = {"assemble": {name: 500 for name in STRATEGIES["assemble"]} | {"many-items": 12}}
