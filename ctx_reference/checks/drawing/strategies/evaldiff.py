"""Strategies of notebook 08's exercise ``diff(cases, base, next)``.

The text's domain: a list of ``Case`` (ids unique, as ``Case`` lists are), two ``Result`` that hold
every case's id, in any order, and maybe ids of no case. The strategies draw none to six cases
with ids of a small alphabet (ids that are prefixes of each other, CJK, an emoji), every
combination of passing and failing in the two versions (the same version twice too), results
whose order differs from the cases' order and from each other's, and results with extra ids that
flip or not.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....evaldiff import Case, Result, diff
from . import Call, call

_IDS = ["a", "ab", "a1", "b", "boiling", "boil", "距离", "🙂", "x_1"]


@st.composite
def _cases(draw, min_size=0) -> list[Case]:
    ids = draw(st.lists(st.sampled_from(_IDS), unique=True, min_size=min_size, max_size=6))
    return [Case(i, f"问题 {i}", draw(st.sampled_from(["7", "北京", "约 1200 公里"]))) for i in ids]  # data


def _result(draw, ids: list[str], shuffle: bool, extra: list[str]) -> Result:
    order = list(draw(st.permutations(ids))) if shuffle else list(ids)
    return Result({i: draw(st.booleans()) for i in order + extra})


@st.composite
def _diff_call(draw, shuffle=False, extra=False, same=False, min_size=0) -> Call:
    cases = draw(_cases(min_size=min_size))
    ids = [c.id for c in cases]
    extras = draw(st.lists(st.sampled_from(["extra", "额外", "a2", "b1"]), unique=True, min_size=1, max_size=2)) \
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

EXAMPLES = {"diff": 20}
