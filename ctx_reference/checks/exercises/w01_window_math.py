"""The exercises of notebook 01, Window math (literals from docs/models.md §2, edge cases worked by hand)."""
from collections.abc import Callable, Mapping
from typing import Any

from ...i18n import N_
from ...tokens import estimate_tokens as reference_estimate_tokens
from ...window import Outcome, Window
from ..exercise import Exercise
from ..generated import Generated
from ..number_words import INTEGER, Numbers, stating
from ..rules import Rule
from ..runner import CheckCase

AN_INTEGER = Numbers(INTEGER)  # "按上面的规则返回一个**整数**"


#: The visible cases of ``check``.
CHECK_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("原课的例子：窗口 1,000,000，输入 950,000，max_tokens 128,000"),
        args=(1_000_000, 950_000, 128_000),
        expect=Outcome.MAY_TRUNCATE,
        decides=('total-over-window',),
    ),
    CheckCase(
        N_("宽裕：窗口 200,000，输入 150,000，max_tokens 32,000（合计 182,000）"),
        args=(200_000, 150_000, 32_000),
        expect=Outcome.FITS,
        decides=('returns-an-outcome',),
    ),
    CheckCase(
        N_("输入本身就超了：窗口 200,000，输入 210,000，max_tokens 1,000"),
        args=(200_000, 210_000, 1_000),
        expect=Outcome.REJECTED,
        decides=('input-over-window',),
    ),
    CheckCase(
        N_("正好填满：窗口 200,000，输入 168,000，max_tokens 32,000（合计正好 200,000）"),
        args=(200_000, 168_000, 32_000),
        expect=Outcome.FITS,
        decides=('equal-is-not-over',),
    ),
    CheckCase(
        N_("多 1 个 token：窗口 200,000，输入 168,001，max_tokens 32,000"),
        args=(200_000, 168_001, 32_000),
        expect=Outcome.MAY_TRUNCATE,
        decides=('total-over-window',),
    ),
    CheckCase(
        N_("输入正好等于窗口：窗口 200,000，输入 200,000，max_tokens 1"),
        args=(200_000, 200_000, 1),
        expect=Outcome.MAY_TRUNCATE,
        decides=('equal-is-not-over',),
    ),
    CheckCase(
        N_("输入比窗口多 1 个 token：窗口 200,000，输入 200,001，max_tokens 1"),
        args=(200_000, 200_001, 1),
        expect=Outcome.REJECTED,
        decides=('input-over-window',),
    ),
)

#: The visible cases of ``estimate_tokens``.
ESTIMATE_TOKENS_CASES: tuple[CheckCase, ...] = stating(AN_INTEGER, (
    CheckCase(N_("空字符串 \"\""), args=("",), expect=0, decides=('returns-an-int',)),
    CheckCase(N_("4 个 ASCII 字符 \"abcd\""), args=("abcd",), expect=1, decides=('ascii-four-to-a-token',)),
    CheckCase(N_("1 个 ASCII 字符 \"a\"（不满 4 个也要向上取整成 1，不是四舍五入成 0）"), args=("a",), expect=1,
              decides=('rounded-up',)),
    CheckCase(N_("5 个 ASCII 字符 \"abcde\"（向上取整）"), args=("abcde",), expect=2, decides=('rounded-up',)),
    CheckCase(N_("英文 \"hello world\"（11 个 ASCII 字符）"), args=("hello world",), expect=3,
              decides=('ascii-four-to-a-token',)),
    CheckCase(N_("中文 \"上下文工程\"（5 个汉字）"), args=("上下文工程",), expect=5,  # data
              decides=('other-one-each',)),
    CheckCase(N_("中文标点 \"你好，世界！\"（全角标点也是非 ASCII）"), args=("你好，世界！",), expect=6,  # data
              decides=('other-one-each',)),
    CheckCase(N_("混合 \"token 预算\"（6 个 ASCII + 2 个汉字）"), args=("token 预算",), expect=4,  # data
              decides=('ascii-counted-together',)),
    CheckCase(
        N_("混合 \"ab中cd\"（ASCII 合起来 4 个再取整，不是每段各自取整）"),
        args=("ab中cd",),  # data
        expect=2,
        decides=('ascii-counted-together',),
    ),
    CheckCase(
        N_("混合 \"用 Python 写 3 个测试\"（11 个 ASCII + 5 个汉字）"),
        args=("用 Python 写 3 个测试",),  # data
        expect=8,
        decides=('ascii-counted-together',),
    ),
))



#: The notebook these exercises belong to.
NOTEBOOK = '01-window-math'

#: The rules ``check``'s text states (rules.py; the cases and hidden tests that decide one name it).
CHECK_RULES: tuple[Rule, ...] = (
    Rule(
        'input-over-window',
        N_('先判断输入本身是否超窗口'),
        generated=('input-over',),
    ),
    Rule(
        'total-over-window',
        N_('再判断输入加输出上限'),
        generated=('total-over',),
    ),
    Rule(
        'equal-is-not-over',
        N_('等号不算超'),
        generated=('exactly-full',),
    ),
    Rule(
        'returns-an-outcome',
        N_('返回 `Outcome.FITS`、`Outcome.MAY_TRUNCATE` 或 `Outcome.REJECTED` 中的一个'),
        generated=('input-over', 'total-over', 'exactly-full'),
    ),
)

#: The rules ``estimate_tokens``'s text states (rules.py; the cases and hidden tests that decide one name it).
ESTIMATE_TOKENS_RULES: tuple[Rule, ...] = (
    Rule(
        'ascii-four-to-a-token',
        N_('大约 4 个算 1 个 token'),
        generated=('ascii-fours', 'whitespace-only'),
    ),
    Rule(
        'rounded-up',
        N_('最后向上取整一次'),
        generated=('ascii-any-length',),
    ),
    Rule(
        'other-one-each',
        N_('每个大约算 1 个 token'),
        generated=('other-only', 'code-point-128'),
    ),
    Rule(
        'ascii-counted-together',
        N_('ASCII 字符是**整段合起来**数'),
        generated=('interleaved',),
    ),
    Rule(
        'returns-an-int',
        N_('返回一个**整数**'),
        generated=('ascii-fours', 'whitespace-only', 'ascii-any-length', 'other-only', 'code-point-128',
                   'interleaved'),
    ),
)


def _check_as_learners(namespace: Mapping[str, Any]) -> Callable:
    """Return ``check(size, input_tokens, max_tokens)`` through ``Window(size).check`` of ``namespace``'s ``Window``."""
    window = namespace["Window"]
    return lambda size, input_tokens, max_tokens: window(size).check(input_tokens, max_tokens)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'check', NOTEBOOK,
        references=(Window.check,),
        learner_call=_check_as_learners,
        cases=CHECK_CASES,
        rules=CHECK_RULES,
    ),
    Exercise(
        'estimate_tokens', NOTEBOOK,
        references=(reference_estimate_tokens,),
        cases=ESTIMATE_TOKENS_CASES,
        rules=ESTIMATE_TOKENS_RULES,
        compare=Generated(numbers=AN_INTEGER),
    ),
)
