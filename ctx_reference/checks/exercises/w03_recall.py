"""The exercises of notebook 03, the recall toy model (literals from docs/models.md §4).

Three-decimal literals are compared with ``tol=5e-4``: the value rounds to the literal. The cases
with ``middle=0`` at ``n == half_at`` are exact: ``1 / (1 + 1.0 ** 1.5) == 0.5`` in floating point.
"""
from collections.abc import Callable, Mapping
from typing import Any

from ...i18n import N_
from ...recall import RecallModel, retrieved_recall, stuffed_recall
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

LITERAL_TOL = 5e-4  # a 3-decimal literal matches any value that rounds to it
EXACT_TOL = 1e-12  # for values that are exact up to floating-point noise

#: The visible cases of ``recall``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("n = 40 万（正好 half_at），middle=0，答案在开头（pos=0）"),
        args=(0, 400_000),
        kwargs={"middle": 0},
        expect=0.5,
        decides=('length-decay',),
    ),
    CheckCase(
        N_("n = 40 万，middle=0，答案在最后一个 token（pos=399,999）"),
        args=(399_999, 400_000),
        kwargs={"middle": 0},
        expect=0.5,
        decides=('length-decay',),
    ),
    CheckCase(
        N_("n = 40 万，默认参数，答案在开头（两端几乎不受位置影响：约 0.500）"),
        args=(0, 400_000),
        expect=0.5,
        tol=LITERAL_TOL,
    ),
    CheckCase(
        N_("全塞 200 篇（n = 800,000），答案在第 101 篇中间（pos = 402,000）：约 0.183"),
        args=(402_000, 800_000),
        expect=0.183,
        tol=LITERAL_TOL,
        decides=('middle-dip',),
    ),
    CheckCase(
        N_("全塞 200 篇，答案在最后一篇中间（pos = 798,000）：约 0.260"),
        args=(798_000, 800_000),
        expect=0.260,
        tol=LITERAL_TOL,
        decides=('middle-dip',),
    ),
    CheckCase(
        N_("全塞 200 篇，答案在第 101 篇，但 middle=0：约 0.261"),
        args=(402_000, 800_000),
        kwargs={"middle": 0},
        expect=0.261,
        tol=LITERAL_TOL,
    ),
    CheckCase(
        N_("检索 8 篇（n = 32,000），答案在第一篇中间（pos = 2,000）：约 0.909（乘 0.9 得 0.818）"),
        args=(2_000, 32_000),
        expect=0.909,
        tol=LITERAL_TOL,
        decides=('middle-dip',),
    ),
    CheckCase(
        N_("小语料全塞 25 篇 × 2,000（n = 50,000），答案在第 13 篇中间（pos = 25,000）：约 0.670"),
        args=(25_000, 50_000),
        expect=0.670,
        tol=LITERAL_TOL,
        decides=('middle-dip',),
    ),
    CheckCase(
        N_("全塞 200 篇、middle=0，精确到 9 位：1 / (1 + 2^1.5) = 0.261203875（不要先四舍五入）"),
        args=(402_000, 800_000),
        kwargs={"middle": 0},
        expect=0.261203875,
        tol=1e-9,
        decides=('an-unrounded-float',),
    ),
    CheckCase(
        N_("换参数：half_at=100,000，steep=2，middle=0，n = 200,000：1 / (1 + 2²) = 0.2"),
        args=(0, 200_000),
        kwargs={"half_at": 100_000, "steep": 2, "middle": 0},
        expect=0.2,
        tol=EXACT_TOL,
        decides=('length-decay',),
    ),
    CheckCase(
        N_("只有 1 个 token 的上下文：pos = 0，n = 1，half_at = 1，middle = 1"
        "（x = (0 + 0.5) / 1 = 0.5 正在中间，位置系数为 0）"),
        args=(0, 1),
        kwargs={"half_at": 1, "middle": 1},
        expect=0.0,
        tol=EXACT_TOL,
        decides=('x-at-the-token-middle',),
    ),
)



#: The notebook these exercises belong to.
NOTEBOOK = '03-recall'

#: The rules ``recall``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'length-decay',
        N_('(n / \\text{half\\_at})^{\\text{steep}}'),
        generated=('lengths',),
    ),
    Rule(
        'middle-dip',
        N_('1 - \\text{middle} \\cdot 4x(1-x)'),
        generated=('lesson-positions',),
    ),
    Rule(
        'x-at-the-token-middle',
        N_('x = \\frac{pos + 0.5}{n}'),
        generated=('tiny-contexts',),
    ),
    Rule(
        'an-unrounded-float',
        N_('返回一个浮点数'),
        generated=('lengths', 'tiny-contexts', 'lesson-positions'),
    ),
)


def _recall_as_learners(namespace: Mapping[str, Any]) -> Callable:
    """Return ``recall(pos, n, **params)`` through ``namespace``'s ``RecallModel``."""
    model = namespace["RecallModel"]
    # the model's own defaults stand for the parameters a case leaves out
    return lambda pos, n, **params: model(**params).recall(pos, n)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'recall', NOTEBOOK,
        references=(RecallModel, stuffed_recall, retrieved_recall),
        learner_call=_recall_as_learners,
        cases=CASES,
        rules=RULES,
        compare=Generated(tol=1e-9, places=6, returns=float),
    ),
)
