"""The exercises of notebook 09, the context ledger (literals from docs/models.md §9, worked by hand).

Two exercises:

* ``zone(used, limit)`` -- returns a ``Zone`` member. The cases sit on the exact boundaries of a
  10,000-token window (60 % = 6,000 and 85 % = 8,500 are caution, 100 % = 10,000 is danger), the
  lesson's peak (552 of 8,000 = 6.9 %: safe), one pair of numbers too large for a float to tell
  apart from 100 % ((10**17 + 1) / 10**17 == 1.0 in floating point, yet it is over), and a window
  of 0 tokens (ValueError).
* ``measure(buckets, tokenizer, limit)`` -- returns a ``LedgerEntry``; each case projects it to
  plain data, (tokens per bucket as a dict, total, zone), so the feedback line shows numbers. The
  cases: the lesson's peak call ``research_1`` (48 characters of task, 2,162 of search results:
  48 // 4 = 12 and 2,162 // 4 = 540, total 552), buckets counted one by one (5, 7 and 3
  characters: 1 + 1 + 0 = 2, where counting the joined text would give 15 // 4 = 3), an injected
  tokenizer that counts characters (6 + 6 = 12 of 20 = 60 %: caution), and a call over the window.
"""
from ...i18n import N_
from ...ledger import LedgerEntry, Zone, lesson_calls, measure, zone
from ...tokens import FakeTokenizer
from ..exercise import Exercise
from ..generated import Generated
from ..ledger import CharTokenizer, as_zone, entry_counts, entry_in_order
from ..rules import Rule
from ..runner import CheckCase

_RESEARCH_1 = dict(lesson_calls())["research_1"]

#: The visible cases of ``zone``.
ZONE_CASES: tuple[CheckCase, ...] = (
    CheckCase(N_("原课的峰值：552 / 8,000（6.9 %）"), args=(552, 8_000), expect=Zone.SAFE, project=as_zone,
              decides=('safe-below-60', 'a-zone-member')),
    CheckCase(N_("还没用任何 token：0 / 8,000（0 %）"), args=(0, 8_000), expect=Zone.SAFE, project=as_zone,
              decides=('safe-below-60',)),
    CheckCase(N_("窗口 10,000，用了 5,999（59.99 %）"), args=(5_999, 10_000), expect=Zone.SAFE, project=as_zone,
              decides=('safe-below-60', 'integers-only')),
    CheckCase(N_("窗口 10,000，用了 6,000（正好 60 %）"), args=(6_000, 10_000), expect=Zone.CAUTION,
              project=as_zone, decides=('caution-60-to-85',)),
    CheckCase(N_("窗口 10,000，用了 8,500（正好 85 %）"), args=(8_500, 10_000), expect=Zone.CAUTION,
              project=as_zone, decides=('caution-60-to-85',)),
    CheckCase(N_("窗口 10,000，用了 8,501（85.01 %）"), args=(8_501, 10_000), expect=Zone.DANGER, project=as_zone,
              decides=('danger-up-to-100',)),
    CheckCase(N_("窗口 10,000，用了 10,000（正好 100 %）"), args=(10_000, 10_000), expect=Zone.DANGER,
              project=as_zone, decides=('danger-up-to-100',)),
    CheckCase(N_("窗口 10,000，用了 10,001（100.01 %）"), args=(10_001, 10_000), expect=Zone.OVER, project=as_zone,
              decides=('over-above-100',)),
    CheckCase(N_("窗口只有 1 个 token，用了 1（正好 100 %）"), args=(1, 1), expect=Zone.DANGER, project=as_zone,
              decides=('danger-up-to-100',)),
    CheckCase(
        N_("很大的整数：窗口 10**17，用了 10**17 + 1（浮点除法会算成正好 1.0）"),
        args=(10**17 + 1, 10**17),
        expect=Zone.OVER,
        project=as_zone,
        decides=('over-above-100', 'integers-only'),
    ),
    CheckCase(
        N_("窗口是 0 个 token（limit 必须是正数）：报 ValueError，消息里写出 limit 和 0"),
        args=(100, 0),
        raises=ValueError,
        message_has=("limit", "0"),
        decides=('bad-arguments-raise',),
    ),
    CheckCase(
        N_("窗口是负数 -100：报 ValueError，消息里写出 limit 和 -100"),
        args=(10, -100),
        raises=ValueError,
        message_has=("limit", "-100"),
        decides=('bad-arguments-raise',),
    ),
    CheckCase(
        N_("用量是负数 -1：报 ValueError，消息里写出 used 和 -1"),
        args=(-1, 100),
        raises=ValueError,
        message_has=("used", "-1"),
        decides=('bad-arguments-raise',),
    ),
)

#: The visible cases of ``measure``.
MEASURE_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("原课的峰值调用 research_1：任务 48 个字符、检索结果 2,162 个字符，FakeTokenizer，窗口 8,000"),
        args=(_RESEARCH_1, FakeTokenizer(), 8_000),
        expect=({"system": 0, "task_state": 12, "tool_results": 540, "history": 0}, 552, Zone.SAFE, 8_000),
        project=entry_counts,
        returns=LedgerEntry,
    ),
    CheckCase(
        N_("每个桶分别数再相加：5、7、3 个字符 → 1 + 1 + 0 = 2（拼起来数会得到 15 // 4 = 3）"),
        args=({"system": "abcde", "task_state": "1234567", "history": "xyz"}, FakeTokenizer(), 100),
        expect=({"system": 1, "task_state": 1, "tool_results": 0, "history": 0}, 2, Zone.SAFE, 100),
        project=entry_counts,
        returns=LedgerEntry,
        decides=('missing-bucket-is-zero', 'each-bucket-counted'),
    ),
    CheckCase(
        N_("换一把尺子：每个字算 1 个 token；system 6 字 + task_state 6 字 = 12，窗口 20（60 %）"),
        args=({"system": "你是研究助理", "task_state": "合并两份发现"}, CharTokenizer(), 20),  # data
        expect=({"system": 6, "task_state": 6, "tool_results": 0, "history": 0}, 12, Zone.CAUTION, 20),
        project=entry_counts,
        returns=LedgerEntry,
        decides=('the-given-tokenizer',),
    ),
    CheckCase(
        N_("超出窗口：检索结果 40,004 个字符 → 10,001 token，窗口 10,000"),
        args=({"tool_results": "r" * 40_004}, FakeTokenizer(), 10_000),
        expect=({"system": 0, "task_state": 0, "tool_results": 10_001, "history": 0}, 10_001, Zone.OVER, 10_000),
        project=entry_counts,
        returns=LedgerEntry,
        decides=('zone-of-the-total',),
    ),
    CheckCase(
        N_("不认识的桶名 memory：报 ValueError，消息里写出 memory"),
        args=({"memory": "上周的笔记", "system": "你是研究助理"}, FakeTokenizer(), 8_000),  # data
        raises=ValueError,
        message_has=("memory",),
        decides=('unknown-bucket-raises',),
    ),
    CheckCase(
        N_("桶给的顺序是 history 在前、task_state 在后：tokens 仍按 BUCKETS 的顺序，传进来的字典不补空桶、不改动"),
        args=({"history": "abcd" * 10, "task_state": "abcd"}, FakeTokenizer(), 8_000),
        expect=({"system": 0, "task_state": 1, "tool_results": 0, "history": 10}, 11, Zone.SAFE, 8_000),
        project=entry_counts,
        returns=LedgerEntry,
        decides=('missing-bucket-is-zero', 'four-buckets-in-order', 'buckets-unchanged'),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '09-context-ledger'

#: The rules ``zone``'s text states (rules.py; the cases and hidden tests that decide one name it).
ZONE_RULES: tuple[Rule, ...] = (
    Rule(
        'safe-below-60',
        N_('低于 60 %'),
        generated=('at-60', 'anywhere'),
    ),
    Rule(
        'caution-60-to-85',
        N_('60 % 到 85 %，两端都算'),
        generated=('at-60', 'at-85'),
    ),
    Rule(
        'danger-up-to-100',
        N_('到 100 % 为止（含 100 %）'),
        generated=('at-85', 'at-100'),
    ),
    Rule(
        'over-above-100',
        N_('over：高于 100 %'),
        generated=('at-100', 'anywhere'),
    ),
    Rule(
        'integers-only',
        N_('**只用整数运算**'),
        generated=('huge-windows',),
    ),
    Rule(
        'bad-arguments-raise',
        N_('`limit` 不是正数、或 `used` 是负数时，报 `ValueError`，消息里写出参数名和它的值'),
        generated=('bad-arguments',),
    ),
    Rule(
        'a-zone-member',
        N_('要返回它的成员，不要返回字符串'),
        generated=('at-60', 'at-85', 'at-100', 'anywhere', 'huge-windows'),
    ),
)

#: The rules ``measure``'s text states (rules.py; the cases and hidden tests that decide one name it).
MEASURE_RULES: tuple[Rule, ...] = (
    Rule(
        'missing-bucket-is-zero',
        N_('**没出现的桶算 0 个 token**'),
        generated=('missing-buckets',),
    ),
    Rule(
        'each-bucket-counted',
        N_('**每个桶分别数**'),
        generated=('counted-separately',),
    ),
    Rule(
        'the-given-tokenizer',
        N_('用传进来的 `tokenizer.count(text)`'),
        generated=('any-buckets',),
    ),
    Rule(
        'four-buckets-in-order',
        N_('**四个桶都在**的字典（按 `BUCKETS` 的顺序）'),
        generated=('any-buckets', 'missing-buckets'),
    ),
    Rule(
        'zone-of-the-total',
        N_('`zone` 是 `total` 的水位区'),
        generated=('zone-boundary',),
    ),
    Rule(
        'unknown-bucket-raises',
        N_('出现不认识的桶名'),
        generated=('unknown-bucket',),
    ),
    Rule(
        'buckets-unchanged',
        N_('传进来的 `buckets`'),
        generated=('any-buckets', 'missing-buckets', 'by-keyword'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'zone', NOTEBOOK,
        references=(zone,),
        cases=ZONE_CASES,
        rules=ZONE_RULES,
        compare=Generated(project=as_zone),
    ),
    Exercise(
        'measure', NOTEBOOK,
        references=(measure,),
        cases=MEASURE_CASES,
        rules=MEASURE_RULES,
        compare=Generated(project=entry_in_order, returns=LedgerEntry),
    ),
)
