"""Strategies of notebook 08's exercise ``diff(cases, base, next)``.

The text's domain ("``cases`` is a list of ``Case``; ``base`` and ``next`` are the ``Result``s of two
versions; ``result.passed[case.id]`` says whether the case passed under that version"; "you may
assume that every case's id is in both ``Result``s; ids that a ``Result`` has but that are not in
``cases`` can be ignored"): a list of ``Case`` and two ``Result`` that hold every case's id, in any
order, and maybe ids of no case. The strategies draw none to eight cases with ids of any text
(``_wide.any_text``), with a small alphabet as extra weight (ids that are prefixes of each other,
CJK, an emoji), drawn independently of their place in the list, so that sorting the ids and
keeping the cases' order do not look alike; every combination of passing and failing in the two
versions (the same version twice too, as one object); results whose order differs from the
cases' order and from each other's; and results with extra ids of any text that flip or not.
Narrower than the text: ids are unique and not blank within a list (``Case`` refuses a blank id
and the reference a repeated one; the text's "case ids" are ids), so no case stands twice.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....evaldiff import Case, Result, diff
from . import Call, call
from ._wide import any_text, weighted

_ANY_ID = any_text(min_size=1, max_size=8).filter(str.strip)
_IDS = weighted(["a", "ab", "a1", "b", "boiling", "boil", "距离", "🙂", "x_1"], _ANY_ID)
_EXTRA_IDS = weighted(["extra", "额外", "a2", "b1"], _ANY_ID)


@st.composite
def _cases(draw, min_size=0) -> list[Case]:
    ids = draw(st.lists(_IDS, unique=True, min_size=min_size, max_size=8))
    return [Case(i, f"问题 {i}", draw(st.sampled_from(["7", "北京", "约 1200 公里"]))) for i in ids]  # data


def _result(draw, ids: list[str], shuffle: bool, extra: list[str]) -> Result:
    order = list(draw(st.permutations(ids))) if shuffle else list(ids)
    return Result({i: draw(st.booleans()) for i in order + extra})


@st.composite
def _diff_call(draw, shuffle=False, extra=False, same=False, min_size=0) -> Call:
    cases = draw(_cases(min_size=min_size))
    ids = [c.id for c in cases]
    extras = draw(st.lists(_EXTRA_IDS.filter(lambda i: i not in ids), unique=True, min_size=1, max_size=2)) \
        if extra else []
    base = _result(draw, ids, shuffle, extras)
    nxt = base if same else _result(draw, ids, shuffle, extras)
    return call(cases, base, nxt)


ORACLES = {"diff": diff}

STRATEGIES = {
    "diff": {
        "flips": _diff_call(),
        "same-version": _diff_call(same=True) | _diff_call(shuffle=True, same=True),
        "reordered": _diff_call(shuffle=True, min_size=2),
        "extra-ids": _diff_call(shuffle=True, extra=True),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"diff": 750}
