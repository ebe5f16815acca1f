"""The exercises of notebook 02, Remaining (literals from docs/models.md §3)."""
from ...i18n import N_
from ...window import remaining as reference_remaining
from ..exercise import Exercise
from ..generated import Generated
from ..number_words import INTEGER, Numbers, stating
from ..rules import Rule
from ..runner import CheckCase

LEFT_AN_INTEGER = Numbers(INTEGER, item=0, name=N_("`left`"))  # "`left` 是整数余量"


#: The visible cases of ``remaining``.
CASES: tuple[CheckCase, ...] = stating(LEFT_AN_INTEGER, (
    CheckCase(
        N_("原课的例子：窗口 1,000,000，读缓存 800,000，写缓存 50,000，普通输入 20,000，max_tokens 64,000"),
        args=(1_000_000, 800_000, 50_000, 20_000, 64_000),
        expect=(66_000, True),
        decides=('every-field-counts',),
    ),
    CheckCase(
        N_("空窗口起步：窗口 200,000，没有缓存，输入 10,000，max_tokens 8,000"),
        args=(200_000, 0, 0, 10_000, 8_000),
        expect=(182_000, False),
        decides=('int-and-bool-pair',),
    ),
    CheckCase(
        N_("正好剩 10%：窗口 100,000，读 50,000，写 20,000，输入 10,000，max_tokens 10,000"),
        args=(100_000, 50_000, 20_000, 10_000, 10_000),
        expect=(10_000, False),
        decides=('below-a-tenth',),
    ),
    CheckCase(
        N_("只差 1 个 token：窗口 100,000，读 50,000，写 20,000，输入 10,001，max_tokens 10,000"),
        args=(100_000, 50_000, 20_000, 10_001, 10_000),
        expect=(9_999, True),
        decides=('below-a-tenth',),
    ),
    CheckCase(
        N_("超额时余量是负数：窗口 100,000，读 90,000，输入 10,000，max_tokens 8,000"),
        args=(100_000, 90_000, 0, 10_000, 8_000),
        expect=(-8_000, True),
        decides=('negative-when-over',),
    ),
    CheckCase(
        N_("窗口不是 10 的倍数：窗口 1,005，输入 905，余量 100 < 100.5（十分之一不要用整除）"),
        args=(1_005, 0, 0, 905, 0),
        expect=(100, True),
        decides=('below-a-tenth',),
    ),
))



#: The notebook these exercises belong to.
NOTEBOOK = '02-remaining'

#: The rules ``remaining``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'every-field-counts',
        N_('window − (read + write + input) − max_tokens'),
        generated=('every-field',),
    ),
    Rule(
        'negative-when-over',
        N_('超额时可以是负数'),
        generated=('over-the-window',),
    ),
    Rule(
        'below-a-tenth',
        N_('小于窗口的十分之一'),
        generated=('at-a-tenth',),
    ),
    Rule(
        'int-and-bool-pair',
        N_('`left` 是整数余量'),
        generated=('every-field', 'over-the-window', 'at-a-tenth'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'remaining', NOTEBOOK,
        references=(reference_remaining,),
        cases=CASES,
        rules=RULES,
        compare=Generated(numbers=LEFT_AN_INTEGER),
    ),
)
