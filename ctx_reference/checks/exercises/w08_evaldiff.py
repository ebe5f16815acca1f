"""The exercises of notebook 08, Eval Diff (literals from docs/models.md §8 and worked by hand).

The pass/fail tables below are written out by hand from the fake model's answers under prompt
v1, v2 and v3 (never obtained by running it): v1 fails `unknown` and `everest`; v2 answers the
unanswerable question with 我不知道 but drops the units of `distance` and `boiling`; v3 puts the
unit back, which repairs `boiling` but not `distance` (its expected answer starts with 约).
"""
from ...evaldiff import Case, Result
from ...evaldiff import diff as reference_diff
from ...i18n import N_
from ..evaldiff import as_lists
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

CASES_SEVEN = [
    Case("distance", "从北京开车到上海大约多远？", "约 1200 公里"),  # data
    Case("boiling", "标准大气压下，水的沸点是多少？", "100 摄氏度"),  # data
    Case("unknown", "我昨天午饭吃了什么？", "我不知道"),  # data
    Case("week", "一周有几天？", "7"),  # data
    Case("capital", "中国的首都是哪座城市？", "北京"),  # data
    Case("everest", "珠穆朗玛峰有多高？", "8848.86 米"),  # data
    Case("sum", "3 加 4 等于几？", "7"),  # data
]

V1 = Result({"distance": True, "boiling": True, "unknown": False, "week": True,
             "capital": True, "everest": False, "sum": True})
V2 = Result({"distance": False, "boiling": False, "unknown": True, "week": True,
             "capital": True, "everest": False, "sum": True})
V3 = Result({"distance": False, "boiling": True, "unknown": True, "week": True,
             "capital": True, "everest": False, "sum": True})

# Three cases listed c, a, b while both results list them a, b, c: the answer follows the cases.
ORDER_CASES = [Case("c", "问题 c", "C"), Case("a", "问题 a", "A"), Case("b", "问题 b", "B")]  # data
ORDER_BASE = Result({"a": False, "b": True, "c": False})
ORDER_NEXT = Result({"a": True, "b": False, "c": True})


#: The visible cases of ``diff``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("原课的例子：v1 → v2（v2 加了“只回答数字”和“不确定就说我不知道”）"),
        args=(CASES_SEVEN, V1, V2),
        expect=(["unknown"], ["distance", "boiling"]),
        project=as_lists,
        decides=('fixed-and-broke', 'two-lists'),
    ),
    CheckCase(
        N_("通过率相同的两版：v1 → v3（都是 5/7）"),
        args=(CASES_SEVEN, V1, V3),
        expect=(["unknown"], ["distance"]),
        project=as_lists,
    ),
    CheckCase(
        N_("反过来比：v2 → v1，fixed 和 broke 对调"),
        args=(CASES_SEVEN, V2, V1),
        expect=(["distance", "boiling"], ["unknown"]),
        project=as_lists,
        decides=('fixed-and-broke',),
    ),
    CheckCase(
        N_("只修好、没弄坏：v2 → v3"),
        args=(CASES_SEVEN, V2, V3),
        expect=(["boiling"], []),
        project=as_lists,
    ),
    CheckCase(
        N_("用例顺序是 c、a、b，而 Result 里的顺序是 a、b、c：按用例的顺序列出"),
        args=(ORDER_CASES, ORDER_BASE, ORDER_NEXT),
        expect=(["c", "a"], ["b"]),
        project=as_lists,
        decides=('in-the-order-of-cases',),
    ),
    CheckCase(
        N_("Result 里多出一个不在用例里的 id（extra，由失败变通过）：不用管它"),
        args=(ORDER_CASES, Result({**ORDER_BASE.passed, "extra": False}),
              Result({**ORDER_NEXT.passed, "extra": True})),
        expect=(["c", "a"], ["b"]),
        project=as_lists,
        decides=('ids-outside-cases-ignored',),
    ),
    CheckCase(
        N_("两版一样：v1 → v1，fixed 和 broke 都是空列表"),
        args=(CASES_SEVEN, V1, V1),
        expect=([], []),
        project=as_lists,
        decides=('unchanged-in-neither',),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '08-eval-diff'

#: The rules ``diff``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'fixed-and-broke',
        N_('在 `base` 下失败、在 `next` 下通过的，是**修好**的'),
        generated=('flips',),
    ),
    Rule(
        'unchanged-in-neither',
        N_('前后一样的两边都不放'),
        generated=('same-version', 'flips'),
    ),
    Rule(
        'in-the-order-of-cases',
        N_('顺序和 `cases` 一致（不是 `Result` 里的顺序）'),
        generated=('reordered',),
    ),
    Rule(
        'ids-outside-cases-ignored',
        N_('不在 `cases` 中的 id 不用管'),
        generated=('extra-ids',),
    ),
    Rule(
        'two-lists',
        N_('返回 `(fixed, broke)` 两个**列表**'),
        generated=('flips', 'same-version', 'reordered', 'extra-ids'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'diff', NOTEBOOK,
        references=(reference_diff,),
        cases=CASES,
        rules=RULES,
        compare=Generated(project=as_lists),
    ),
)
