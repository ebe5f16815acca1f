"""The exercises of notebook 09's reconciling exercise: the estimate's two rates fitted from receipts.

``fit_rates(receipts)`` returns ``(per_ascii, per_non_ascii)``, two Python floats: the rates of
``tokens ~ per_ascii * ASCII characters + per_non_ascii * non-ASCII characters`` that fit the
receipts (``Receipt(text, prompt_tokens)``) best in the least-squares sense, without intercept.

Cases, worked by hand: three receipts made from 0.25 and 1.5 (40 ASCII characters -> 10 tokens,
10 Chinese -> 15, both together -> 25) that the fit must give back exactly; receipts of one
script each, where least squares per rate is sum(chars * tokens) / sum(chars ** 2): ASCII
8 -> 2 and 8 -> 4 give 48 / 128 = 0.375, Chinese 10 -> 7 gives 0.7 (a non-ASCII letter, é, counts
as non-ASCII); a mixed receipt that no pair of rates fits exactly (40 ASCII -> 10, 10 Chinese -> 10,
both -> 30: the normal equations 3200a + 400b = 1600 and 400a + 200b = 400 give 1/3 and 4/3);
receipts that cannot tell the two rates apart (only ASCII; two texts in the same proportion) and
no receipts at all raise ValueError naming ``receipts``. Results are compared
rounded to 4 decimals (the order of the arithmetic may differ); both must be ``float`` exactly.
"""
from ...calibrate import Receipt, fit_rates
from ...i18n import N_
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

EXACT_TOL = 1e-4


def rounded(value):
    """Return the two fitted rates rounded to 4 decimals; anything else as it is, so the check names it."""
    if not isinstance(value, tuple) or len(value) != 2:
        return value
    return tuple(round(v, 4) + 0.0 if type(v) is float else v for v in value)




# Two case labels the rule table below names again.
ONE_SCRIPT_EACH = N_(
    "每张回执只有一种文字：ASCII 8 个字符 → 2 和 → 4，最小二乘是 (8×2 + 8×4) / (8² + 8²) = 0.375；"
    "10 个非 ASCII 字符（含 é）→ 7，是 0.7"
)
MIXED_RECEIPTS = N_(
    "混合的回执也要算进去：40 个 ASCII → 10、10 个汉字 → 10、两段合起来 → 30，三张回执没法同时对上；"
    "正规方程 3200a + 400b = 1600、400a + 200b = 400，解出 (1/3, 4/3)"
)

#: The visible cases of ``fit_rates``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("由 0.25 和 1.5 算出的三张回执：40 个 ASCII 字符 → 10、10 个汉字 → 15、两段合起来 → 25，"
        "拟合应还原 (0.25, 1.5)，返回两个 float 组成的 tuple"),
        args=([Receipt("a" * 40, 10), Receipt("账" * 10, 15), Receipt("a" * 40 + "账" * 10, 25)],),  # data
        expect=(0.25, 1.5),
        project=rounded,
        tol=EXACT_TOL,
        returns=tuple,
        decides=('a-pair-of-floats', 'receipts-unchanged'),
    ),
    CheckCase(
        ONE_SCRIPT_EACH,
        args=([Receipt("abcdefgh", 2), Receipt('{"k": 1}', 4), Receipt("上下文的账本é要对齐", 7)],),  # data
        expect=(0.375, 0.7),
        project=rounded,
        tol=EXACT_TOL,
        returns=tuple,
        decides=('least-squares', 'no-intercept', 'ascii-below-128'),
    ),
    CheckCase(
        MIXED_RECEIPTS,
        args=([Receipt("a" * 40, 10), Receipt("账" * 10, 10), Receipt("a" * 40 + "账" * 10, 30)],),  # data
        expect=(0.3333, 1.3333),
        project=rounded,
        tol=EXACT_TOL,
        returns=tuple,
        decides=('least-squares', 'no-intercept'),
    ),
    CheckCase(
        N_("只有英文回执，分不出汉字的比率：报 ValueError，消息里写出 receipts"),
        args=([Receipt("hello world", 2), Receipt("token budget", 3)],),
        raises=ValueError,
        message_has=("receipts",),
        decides=('underdetermined-raises',),
    ),
    CheckCase(
        N_("两张回执的文字比例一样（ab账 和 abab账账），两个比率分不开：报 ValueError，消息里写出 receipts"),
        args=([Receipt("ab账", 2), Receipt("abab账账", 4)],),  # data
        raises=ValueError,
        message_has=("receipts",),
        decides=('underdetermined-raises',),
    ),
    CheckCase(
        N_("没有回执：报 ValueError，消息里写出 receipts"),
        args=([],),
        raises=ValueError,
        message_has=("receipts",),
        decides=('underdetermined-raises',),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '09-context-ledger'

#: The rules ``fit_rates``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'least-squares',
        N_('之和最小的 a 和 b'),
        generated=('mixed', 'made-from-rates'),
    ),
    Rule(
        'no-intercept',
        N_('不要常数项'),
        generated=('made-from-rates', 'mixed'),
    ),
    Rule(
        'ascii-below-128',
        N_('ASCII 指码位小于 `128` 的字符，空格和换行也算'),
        generated=('one-script-each',),
    ),
    Rule(
        'a-pair-of-floats',
        N_('ASCII 在前、非 ASCII 在后'),
        generated=('made-from-rates', 'one-script-each', 'mixed'),
    ),
    Rule(
        'underdetermined-raises',
        N_('回执定不出两个系数时'),
        generated=('undetermined',),
    ),
    Rule(
        'receipts-unchanged',
        N_('不要改动传进来的列表'),
        generated=('made-from-rates', 'one-script-each', 'mixed', 'undetermined'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'fit_rates', NOTEBOOK,
        references=(fit_rates,),
        cases=CASES,
        rules=RULES,
        compare=Generated(project=rounded, tol=EXACT_TOL, places=4, returns=tuple),
    ),
)
