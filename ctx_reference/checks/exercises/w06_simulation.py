"""The exercises of notebook 06, the four-strategy simulation (literals from docs/models.md §6).

Two exercises, the two hooks of ``ctx_reference.sim.simulate``:

* ``select_to_clear`` -- the clearing policy. The cases are real moments of the lesson's runs,
  worked by hand from the setup (base 8,000; 3,600 tokens a turn; threshold 60,000; keep 5;
  a cleared result frees 3,000 − 10 = 2,990 tokens): before the threshold, the first clearing at
  turn 15, the keep boundary at turns 23 and 56, keep 15 at turns 15 and 16, keep 0 at turn 15
  (every turn up to this one is a candidate), and the
  ``clear_at_least = 20,000`` run at turns 36 (6 × 2,990 = 17,940: wait) and 37
  (7 × 2,990 = 20,930: clear), plus the edges the prompt states: a context exactly at the
  threshold is not over it, freeing exactly ``clear_at_least`` is enough, and a list of turns
  passed in is left unchanged. The prompt asks for a ``list``, oldest first, so each case
  compares the returned list as it is (type and order).
* ``request_cost`` -- the cost of one request in input equivalent, with the lesson's prices
  (write 1.25×, read 0.1×) on turns 1, 2, 15 and 16 of the ``clear`` run, a compaction, and one
  case with other prices so that hard-coded 1.25 and 0.1 are caught.
"""
from ...i18n import N_
from ...sim import SimParams, request_cost, select_to_clear
from ..exercise import Exercise
from ..generated import Generated
from ..number_words import NUMBER, Numbers, stating
from ..rules import Rule
from ..runner import CheckCase

FLOAT_TOL = 1e-6  # input equivalent is a float; the hand-worked values are exact to this
A_NUMBER = Numbers(NUMBER)  # "返回这次请求的花费（输入当量，一个数）": a Fraction or a Decimal counts by its value

LESSON = SimParams()
KEEP_15 = SimParams(keep=15)
CLEAR_AT_LEAST_20K = SimParams(clear_at_least=20_000)
OTHER_PRICES = SimParams(cache_write=2.0, cache_read=0.5)



#: The visible cases of ``select_to_clear``.
SELECT_TO_CLEAR_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("第 14 轮：上下文 8,000 + 14 × 3,600 = 58,400，没有超过阈值 60,000，什么都不清"),
        args=(58_400, range(1, 15), 14, LESSON),
        expect=[],
        returns=list,
        decides=('not-over-the-threshold',),
    ),
    CheckCase(
        N_("第 15 轮：上下文 62,000 超过阈值；最新 5 轮是 11–15，清掉第 1–10 轮"),
        args=(62_000, range(1, 16), 15, LESSON),
        expect=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        returns=list,
        decides=('older-than-the-newest-keep', 'oldest-first-as-a-list'),
    ),
    CheckCase(
        N_("第 23 轮：上下文 60,900，还没清的是 11–23；最新 5 轮是 19–23，清掉 11–18"),
        args=(60_900, range(11, 24), 23, LESSON),
        expect=[11, 12, 13, 14, 15, 16, 17, 18],
        returns=list,
        decides=('older-than-the-newest-keep',),
    ),
    CheckCase(
        N_("第 56 轮：上下文 60,100，还没清的是 51–56；只有第 51 轮在最新 5 轮之外"),
        args=(60_100, range(51, 57), 56, LESSON),
        expect=[51],
        returns=list,
        decides=('older-than-the-newest-keep',),
    ),
    CheckCase(
        N_("保留 15 轮、第 15 轮：上下文 62,000 超过阈值，但 15 轮全在保留范围里，没有可清的"),
        args=(62_000, range(1, 16), 15, KEEP_15),
        expect=[],
        returns=list,
        decides=('older-than-the-newest-keep',),
    ),
    CheckCase(
        N_("保留 15 轮、第 16 轮：上下文 65,600，只有第 1 轮在最新 15 轮之外"),
        args=(65_600, range(1, 17), 16, KEEP_15),
        expect=[1],
        returns=list,
        decides=('older-than-the-newest-keep',),
    ),
    CheckCase(
        N_("保留 0 轮、第 15 轮：上下文 62,000，轮次 ≤ 15 − 0 的全是候选，连这一轮的结果也清（小心 [:-0] 是空的）"),
        args=(62_000, range(1, 16), 15, SimParams(keep=0)),
        expect=list(range(1, 16)),
        returns=list,
        decides=('older-than-the-newest-keep',),
    ),
    CheckCase(
        N_("至少清 20,000、第 36 轮：上下文 62,850，可清 26–31 共 6 个，"
        "只能腾出 6 × 2,990 = 17,940，不够，先不清"),
        args=(62_850, range(26, 37), 36, CLEAR_AT_LEAST_20K),
        expect=[],
        returns=list,
        decides=('enough-to-free',),
    ),
    CheckCase(
        N_("至少清 20,000、第 37 轮：上下文 66,450，可清 26–32 共 7 个，"
        "7 × 2,990 = 20,930，够了"),
        args=(66_450, range(26, 38), 37, CLEAR_AT_LEAST_20K),
        expect=[26, 27, 28, 29, 30, 31, 32],
        returns=list,
        decides=('enough-to-free',),
    ),
    CheckCase(
        N_("正好等于阈值不算超过：第 15 轮，上下文正好 60,000，什么都不清"),
        args=(60_000, range(1, 16), 15, LESSON),
        expect=[],
        returns=list,
        decides=('not-over-the-threshold',),
    ),
    CheckCase(
        N_("腾出的量正好等于 clear_at_least 也够：至少清 29,900，可清 1–10 共 10 个，10 × 2,990 = 29,900"),
        args=(62_000, range(1, 16), 15, SimParams(clear_at_least=29_900)),
        expect=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        returns=list,
        decides=('enough-to-free',),
    ),
    CheckCase(
        N_("换一个占位符：placeholder 1,000、至少清 20,001；可清 1–10 共 10 个，"
        "只能腾出 10 × (3,000 − 1,000) = 20,000，不够"),
        args=(62_000, range(1, 16), 15, SimParams(placeholder=1_000, clear_at_least=20_001)),
        expect=[],
        returns=list,
        decides=('freed-per-turn',),
    ),
    CheckCase(
        N_("uncleared_turns 是 list：[11, 12, …, 23]，第 23 轮，上下文 60,900，"
           "清掉 11–18（不要改动传进来的 list）"),
        args=(60_900, list(range(11, 24)), 23, LESSON),
        expect=[11, 12, 13, 14, 15, 16, 17, 18],
        returns=list,
        decides=('oldest-first-as-a-list',),
    ),
)

#: The visible cases of ``request_cost``.
REQUEST_COST_CASES: tuple[CheckCase, ...] = stating(A_NUMBER, (
    CheckCase(
        N_("第 1 轮：第一次请求，输入 11,600 全部写进缓存：1.25 × 11,600"),
        args=(11_600, None, False, LESSON),
        expect=14_500.0,
        tol=FLOAT_TOL,
        decides=('first-or-rewrite-writes-all',),
    ),
    CheckCase(
        N_("第 2 轮：命中缓存，0.1 × 11,600 + 1.25 × (15,200 − 11,600)"),
        args=(15_200, 11_600, False, LESSON),
        expect=5_660.0,
        tol=FLOAT_TOL,
        decides=('read-previous-write-new',),
    ),
    CheckCase(
        N_("第 15 轮：刚清除过（改写），清除后的 32,100 重新整段写入：1.25 × 32,100"),
        args=(32_100, 58_400, True, LESSON),
        expect=40_125.0,
        tol=FLOAT_TOL,
        decides=('first-or-rewrite-writes-all',),
    ),
    CheckCase(
        N_("第 16 轮：又能命中缓存，0.1 × 32,100 + 1.25 × (35,700 − 32,100)"),
        args=(35_700, 32_100, False, LESSON),
        expect=7_710.0,
        tol=FLOAT_TOL,
        decides=('read-previous-write-new',),
    ),
    CheckCase(
        N_("压缩那一轮：上下文变成 8,000 + 2,000 + 5 × 3,600 = 28,000，整段写入：1.25 × 28,000"),
        args=(28_000, 58_400, True, LESSON),
        expect=35_000.0,
        tol=FLOAT_TOL,
        decides=('first-or-rewrite-writes-all',),
    ),
    CheckCase(
        N_("换一套价格（写入 2.0×，读取 0.5×）：0.5 × 11,600 + 2.0 × 3,600"),
        args=(15_200, 11_600, False, OTHER_PRICES),
        expect=13_000.0,
        tol=FLOAT_TOL,
        decides=('prices-from-params',),
    ),
))



#: The notebook these exercises belong to.
NOTEBOOK = '06-strategies'

#: The rules ``select_to_clear``'s text states (rules.py; the cases and hidden tests that decide one name it).
SELECT_TO_CLEAR_RULES: tuple[Rule, ...] = (
    Rule(
        'not-over-the-threshold',
        N_('**不超过** `threshold`'),
        generated=('at-the-threshold',),
    ),
    Rule(
        'older-than-the-newest-keep',
        N_('轮次 `≤ turn − keep` 的'),
        generated=('keep-boundary',),
    ),
    Rule(
        'enough-to-free',
        N_('腾不出 `clear_at_least` 个 token'),
        generated=('clear-at-least',),
    ),
    Rule(
        'freed-per-turn',
        N_('每个腾出 `tool_result − placeholder`'),
        generated=('placeholder-sizes',),
    ),
    Rule(
        'oldest-first-as-a-list',
        N_('按从旧到新的顺序放进一个 `list`'),
        generated=('lists-and-ranges', 'at-the-threshold', 'keep-boundary', 'clear-at-least', 'placeholder-sizes'),
    ),
)

#: The rules ``request_cost``'s text states (rules.py; the cases and hidden tests that decide one name it).
REQUEST_COST_RULES: tuple[Rule, ...] = (
    Rule(
        'first-or-rewrite-writes-all',
        N_('或者这一轮改写过：`cache_write × input_tokens`'),
        generated=('first-or-rewrite',),
    ),
    Rule(
        'read-previous-write-new',
        N_('`cache_read × previous_input + cache_write × (input_tokens − previous_input)`'),
        generated=('cache-hit',),
    ),
    Rule(
        'prices-from-params',
        N_('用 `params` 里的价格'),
        generated=('other-prices',),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'select_to_clear', NOTEBOOK,
        references=(select_to_clear,),
        cases=SELECT_TO_CLEAR_CASES,
        rules=SELECT_TO_CLEAR_RULES,
        compare=Generated(returns=list),
    ),
    Exercise(
        'request_cost', NOTEBOOK,
        references=(request_cost,),
        cases=REQUEST_COST_CASES,
        rules=REQUEST_COST_RULES,
        compare=Generated(tol=FLOAT_TOL, places=6,
                                                                                        numbers=A_NUMBER),
    ),
)
