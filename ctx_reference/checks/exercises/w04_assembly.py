"""The exercises of notebook 04, context assembly (literals from docs/models.md §5).

The learner's ``assemble(items, budget)`` returns an ``Assembly``; each case projects it into
plain data — (kept names in output order, tokens used, sorted (name, reason) drop log) — so the
feedback line shows names and numbers instead of nested dataclass reprs. The drop log is sorted
because the lesson does not fix its order (the reference reports it in input order).
"""
from ...assemble import Assembly, BudgetError, Item
from ...assemble import assemble as reference_assemble
from ...i18n import N_
from ..assembly import summary
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

_DOC_A = "文档 A：缓存命中按基础输入价格的一成计费。"  # data

# The lesson's nine candidates, in the lesson's order (docs/models.md §5), written out here rather than
# taken from `lesson_items()` so that the check's input does not come from the code under test.
_LESSON_ITEMS = [
    Item("rules", 3_000, required=True, stable=True, text="系统规则"),  # data
    Item("tools", 2_000, required=True, stable=True, text="工具定义"),  # data
    Item("memory", 800, priority=3, stable=True, text="长期记忆"),  # data
    Item("doc A", 2_500, priority=2, text=_DOC_A),
    Item("doc B", 2_500, priority=2, text="文档 B：窗口包括输入和本轮输出。"),  # data
    Item("doc A (copy)", 2_500, priority=2, text=_DOC_A),
    Item("doc C", 1_500, priority=1, text="文档 C：工具结果可以清理成占位符。"),  # data
    Item("time", 20, required=True, text="当前时间"),  # data
    Item("question", 100, required=True, text="用户问题"),  # data
]

#: The visible cases of ``assemble``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        # required 3,000 + 2,000 + 20 + 100 = 5,120; + memory 800 + A 2,500 + B 2,500 = 10,920;
        # A's copy repeats A's text; C would make 12,420 > 11,000
        N_("原课的例子：九个候选项，预算 11,000"),
        args=(_LESSON_ITEMS, 11_000),
        expect=(
            ["rules", "tools", "memory", "doc A", "doc B", "time", "question"],
            10_920,
            [("doc A (copy)", "duplicate"), ("doc C", "no room")],
        ),
        project=summary,
        returns=Assembly,
        decides=('returns-an-assembly', 'same-text-is-a-duplicate', 'duplicate-before-no-room', 'items-unchanged'),
    ),
    CheckCase(
        # required 5,120 fill the budget; doc A does not fit, so its copy is not a copy of anything kept
        N_("原课的九个候选项，预算 5,120：只放得下必需项；doc A 没放进去，它的副本就只是放不下，不算重复"),
        args=(_LESSON_ITEMS, 5_120),
        expect=(
            ["rules", "tools", "time", "question"],
            5_120,
            [("doc A", "no room"), ("doc A (copy)", "no room"), ("doc B", "no room"), ("doc C", "no room"),
             ("memory", "no room")],
        ),
        project=summary,
        returns=Assembly,
        decides=('duplicate-of-a-kept-item-only',),
    ),
    CheckCase(
        N_("必需项 rules 3,000 + tools 2,000 = 5,000，预算只有 4,000"),
        args=(
            [
                Item("rules", 3_000, required=True, stable=True),
                Item("tools", 2_000, required=True, stable=True),
            ],
            4_000,
        ),
        raises=BudgetError,
        error_has={"required_tokens": 5_000, "budget": 4_000},
        decides=('required-over-budget-raises',),
    ),
    CheckCase(
        N_("必需项正好等于预算不算超：规则 5,120（必需、稳定）、文档 1（优先级 1），预算 5,120"),
        args=(
            [Item("规则", 5_120, required=True, stable=True), Item("文档", 1, priority=1)],  # data
            5_120,
        ),
        expect=(["规则"], 5_120, [("文档", "no room")]),  # data
        project=summary,
        returns=Assembly,
        decides=('required-over-budget-raises',),
    ),
    CheckCase(
        N_("优先级高的先放：旧日志 800（优先级 1）在前、相关文档 800（优先级 5）在后，预算 1,000"),
        args=([Item("旧日志", 800, priority=1), Item("相关文档", 800, priority=5)], 1_000),  # data
        expect=(["相关文档"], 800, [("旧日志", "no room")]),  # data
        project=summary,
        returns=Assembly,
        decides=('by-priority',),
    ),
    CheckCase(
        # 100 + 1,000 > 1,000, so the big item is skipped; 100 + 500 = 600 still fits
        N_("放不下就跳过、继续看下一项：问题 100（必需）、大文档 1,000（优先级 3）、"
        "小文档 500（优先级 1），预算 1,000"),
        args=(
            [
                Item("问题", 100, required=True),  # data
                Item("大文档", 1_000, priority=3),  # data
                Item("小文档", 500, priority=1),  # data
            ],
            1_000,
        ),
        expect=(["问题", "小文档"], 600, [("大文档", "no room")]),  # data
        project=summary,
        returns=Assembly,
        decides=('fit-or-skip',),
    ),
    CheckCase(
        N_("稳定的排在前面：输入顺序是 问题（必需）、检索文档（优先级 1）、规则（必需、稳定），预算 1,000"),
        args=(
            [
                Item("问题", 100, required=True),  # data
                Item("检索文档", 300, priority=1),  # data
                Item("规则", 200, required=True, stable=True),  # data
            ],
            1_000,
        ),
        expect=(["规则", "问题", "检索文档"], 600, []),  # data
        project=summary,
        returns=Assembly,
        decides=('stable-first',),
    ),
    CheckCase(
        N_("内容相同才算重复：文档甲和文档乙文字相同、文档丙不同，各 100（优先级 1），预算 1,000"),
        args=(
            [
                Item("文档甲", 100, priority=1, text="同一段话"),  # data
                Item("文档乙", 100, priority=1, text="同一段话"),  # data
                Item("文档丙", 100, priority=1, text="另一段话"),  # data
            ],
            1_000,
        ),
        expect=(["文档甲", "文档丙"], 200, [("文档乙", "duplicate")]),  # data
        project=summary,
        returns=Assembly,
        decides=('same-text-is-a-duplicate',),
    ),
    CheckCase(
        N_("和必需项文字相同也算重复：规则 10（必需，文字“规则”）、副本 10（优先级 1，文字也是“规则”），预算 100"),
        args=(
            [Item("规则", 10, required=True, text="规则"), Item("副本", 10, priority=1, text="规则")],  # data
            100,
        ),
        expect=(["规则"], 10, [("副本", "duplicate")]),  # data
        project=summary,
        returns=Assembly,
        decides=('required-texts-count',),
    ),
    CheckCase(
        # required items are all kept, whatever their text: 10 + 20 = 30, nothing dropped
        N_("必需项之间不判重复：规则甲 10、规则乙 20（都是必需项，文字都是“规则”），预算 100：两个都保留"),
        args=(
            [
                Item("规则甲", 10, required=True, text="规则"),  # data
                Item("规则乙", 20, required=True, text="规则"),  # data
            ],
            100,
        ),
        expect=(["规则甲", "规则乙"], 30, []),  # data
        project=summary,
        returns=Assembly,
        decides=('required-never-duplicates',),
    ),
    CheckCase(
        N_("没有文字（text 是 None）的项不算重复：甲、乙各 10（优先级 1，都没有 text），预算 100"),
        args=([Item("甲", 10, priority=1), Item("乙", 10, priority=1)], 100),  # data
        expect=(["甲", "乙"], 20, []),  # data
        project=summary,
        returns=Assembly,
        decides=('no-text-no-duplicate',),
    ),
    CheckCase(
        N_("优先级相同按输入顺序：x 60、y 60、z 40（优先级都是 1），预算 100：x 先放，y 放不下，z 还放得下"),
        args=([Item("x", 60, priority=1), Item("y", 60, priority=1), Item("z", 40, priority=1)], 100),
        expect=(["x", "z"], 100, [("y", "no room")]),
        project=summary,
        returns=Assembly,
        decides=('ties-in-input-order', 'fit-or-skip'),
    ),
    CheckCase(
        N_("输出顺序只看稳定/动态和输入顺序、与优先级无关："
        "d1（优先级 1）、s1（稳定）、d2（优先级 5）、s2（必需、稳定）"),
        args=(
            [
                Item("d1", 10, priority=1),
                Item("s1", 10, priority=1, stable=True),
                Item("d2", 10, priority=5),
                Item("s2", 10, required=True, stable=True),
            ],
            100,
        ),
        expect=(["s1", "s2", "d1", "d2"], 40, []),
        project=summary,
        returns=Assembly,
        decides=('input-order-within-groups',),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '04-assembly'

#: The rules ``assemble``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'returns-an-assembly',
        N_('返回 `Assembly(items=..., used=..., dropped=...)`'),
        not_generated='every generated case requires an Assembly (its type is compared): no strategy of its own',
    ),
    Rule(
        'required-over-budget-raises',
        N_('光必需项加起来就超过预算，抛出 `BudgetError`'),
        generated=('at-the-required-total',),
    ),
    Rule(
        'by-priority',
        N_('其余的按优先级从高到低尝试'),
        generated=('by-priority',),
    ),
    Rule(
        'ties-in-input-order',
        N_('优先级相同的，按输入顺序'),
        generated=('equal-priorities',),
    ),
    Rule(
        'fit-or-skip',
        N_('放得下就放，放不下就跳过、接着看下一项'),
        generated=('by-priority', 'equal-priorities', 'many-items'),
    ),
    Rule(
        'same-text-is-a-duplicate',
        N_('一字不差的内容只留一份'),
        generated=('same-texts',),
    ),
    Rule(
        'duplicate-before-no-room',
        N_('**先判重复，再判放不下**'),
        generated=('same-texts',),
    ),
    Rule(
        'duplicate-of-a-kept-item-only',
        N_('只"看过"、因为放不下被丢掉的项不算'),
        generated=('same-texts',),
    ),
    Rule(
        'required-texts-count',
        N_('（包括必需项）'),
        generated=('required-texts',),
    ),
    Rule(
        'no-text-no-duplicate',
        N_('它的 `text` 不是 `None`'),
        generated=('same-texts',),
    ),
    Rule(
        'required-never-duplicates',
        N_('必需项之间不判重复'),
        generated=('required-texts',),
    ),
    Rule(
        'stable-first',
        N_('**输出顺序：稳定的在前，动态的在后**'),
        generated=('stable-and-dynamic',),
    ),
    Rule(
        'input-order-within-groups',
        N_('两组内部都保持输入时的顺序'),
        generated=('stable-and-dynamic',),
    ),
    Rule(
        'items-unchanged',
        N_('不要修改传进来的 `items`'),
        generated=('by-priority', 'equal-priorities', 'same-texts', 'required-texts', 'stable-and-dynamic',
                   'at-the-required-total', 'many-items'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'assemble', NOTEBOOK,
        references=(reference_assemble,),
        cases=CASES,
        rules=RULES,
        compare=Generated(project=summary, returns=Assembly),
    ),
)
