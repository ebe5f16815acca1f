"""The exercises of notebook 10, sessions (hand-written literals, costs worked out by hand).

Both exercises return lists of ``Record``; every case projects them with `record_rows` to plain
``(kind, turn, text)`` tuples, so a ✓ or × line shows what was kept. Costs are ``estimate_tokens``
of a record's line ``[kind] t<turn>: <text>``: ASCII characters four to a token (rounded up), every
other character one token. ``[done] t1: 建好用户表`` is 3 + 5 = 8, ``[failed] t2: 缓存加锁：死锁``
4 + 7 = 11, ``[next] t3: 给导出接口加分页`` 3 + 8 = 11, ``[decision] t5: 用游标分页`` 4 + 5 = 9.

``write_progress(records, budget)`` -- one case per rule of the prompt:

1. only the newest ``next`` is kept, by turn, wherever it stands in the list (two cases), the first
   of two with the same turn;
2. kinds go next → failed → decision → done (budgets 19, 25, 30 with four kinds, and 9);
   within a kind the newest turn first (three done, budget 16), equal turns in input order;
3. a record that does not fit is skipped and a smaller one after it may still fit (budget 19),
   a record that fits exactly goes in and the header line is not counted (budget 30);
4. the kept records come back in input order, as a new list, the argument unchanged (every case
   checks the argument; budget 30 checks the new list); budget 0 and no records give [].

``restore(progress_text)`` -- header, comment and blank lines skipped; lines stripped of
surrounding spaces; file order kept; the turn read as an ``int``; a text holding an ASCII colon
kept whole; a returned ``list``; a malformed line or an unknown kind refused with ValueError whose
message gives the line number and the line.
"""
from ...i18n import N_
from ...sessions import Record, parse_record
from ...sessions import restore as reference_restore
from ...sessions import write_progress as reference_write_progress
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase
from ..sessions import record_rows

# Their costs: done 3 + 5 = 8 tokens, failed 4 + 7 = 11, next 3 + 8 = 11, decision 4 + 5 = 9.
_DONE = Record("done", 1, "建好用户表")  # data
_FAILED = Record("failed", 2, "缓存加锁：死锁")  # data
_NEXT = Record("next", 3, "给导出接口加分页")  # data
_DECISION = Record("decision", 5, "用游标分页")  # data

D = ("done", 1, "建好用户表")  # data
F = ("failed", 2, "缓存加锁：死锁")  # data
N = ("next", 3, "给导出接口加分页")  # data
C = ("decision", 5, "用游标分页")  # data


#: The visible cases of ``write_progress``.
WRITE_PROGRESS_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("预算 30：三条（8 + 11 + 11 = 30，标题行不算）正好都放得下，按原来的顺序返回一个新列表"),
        args=([_DONE, _FAILED, _NEXT], 30),
        expect=[D, F, N],
        project=record_rows,
        returns=list,
        fresh=True,
        decides=('an-exact-fit-goes-in', 'header-not-counted', 'input-order-in-a-new-list', 'records-unchanged'),
    ),
    CheckCase(
        N_("预算 25：先放 next（11），再放 failed（11），done（8）放不进剩下的 3"),
        args=([_DONE, _FAILED, _NEXT], 25),
        expect=[F, N],
        project=record_rows,
        decides=('kind-priority', 'input-order-in-a-new-list'),
    ),
    CheckCase(
        N_("预算 19：放了 next 剩 8，failed（11）放不下就跳过，done（8）正好放得下"),
        args=([_DONE, _FAILED, _NEXT], 19),
        expect=[D, N],
        project=record_rows,
        decides=('skip-what-does-not-fit', 'an-exact-fit-goes-in', 'input-order-in-a-new-list'),
    ),
    CheckCase(
        N_("四种各一条，预算 30：next、failed 之后剩 8，decision（9）放不下，done（8）放得下"),
        args=([_DONE, _DECISION, _FAILED, _NEXT], 30),
        expect=[D, F, N],
        project=record_rows,
        decides=('kind-priority', 'input-order-in-a-new-list'),
    ),
    CheckCase(
        N_("done（8）和 decision（9），预算 9：decision 优先"),
        args=([_DONE, _DECISION], 9),
        expect=[C],
        project=record_rows,
        decides=('kind-priority',),
    ),
    CheckCase(
        N_("两条 next（第 20 轮在前、第 40 轮在后），预算充足：只留最新的一条"),
        args=([Record("next", 20, "写接口"), Record("next", 40, "写测试")], 1_000),  # data
        expect=[("next", 40, "写测试")],  # data
        project=record_rows,
        decides=('newest-next-only',),
    ),
    CheckCase(
        N_("两条 next（第 40 轮在前、第 20 轮在后）：看轮次，不看谁排在后面"),
        args=([Record("next", 40, "写测试"), Record("next", 20, "写接口")], 1_000),  # data
        expect=[("next", 40, "写测试")],  # data
        project=record_rows,
        decides=('newest-next-only',),
    ),
    CheckCase(
        # "[next] t7: " is 11 ASCII characters (3 tokens) + 3 characters = 6 tokens each
        N_("两条 next 都是第 7 轮（写测试在前、写文档在后），预算充足：轮次相同，留先出现的那条"),
        args=([Record("next", 7, "写测试"), Record("next", 7, "写文档")], 100),  # data
        expect=[("next", 7, "写测试")],  # data
        project=record_rows,
        decides=('first-next-on-a-tie',),
    ),
    CheckCase(
        N_("三条 done（第 1、2、3 轮）各 8 token，预算 16：留最新的两条"),
        args=([Record("done", t, "建好用户表") for t in (1, 2, 3)], 16),  # data
        expect=[("done", 2, "建好用户表"), ("done", 3, "建好用户表")],  # data
        project=record_rows,
        decides=('newest-first-within-a-kind',),
    ),
    CheckCase(
        N_("两条 failed 都是第 5 轮、各 11 token，预算 11：轮次相同，先出现的优先"),
        args=([Record("failed", 5, "加全局锁：死锁"), Record("failed", 5, "缓存加锁：死锁")], 11),  # data
        expect=[("failed", 5, "加全局锁：死锁")],  # data
        project=record_rows,
        decides=('first-on-a-tie-within-a-kind',),
    ),
    CheckCase(N_("预算 0：什么都不留"), args=([_DONE, _FAILED, _NEXT], 0), expect=[], project=record_rows),
    CheckCase(N_("没有记录：返回空列表"), args=([], 100), expect=[], project=record_rows, returns=list),
)

#: The visible cases of ``restore``.
RESTORE_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("标题行和空行跳过，按文件里的顺序读回"),
        args=("# progress\n[next] t3: 给导出接口加分页\n\n[done] t1: 建好用户表",),  # data
        expect=[N, D],
        project=record_rows,
        returns=list,
        decides=('blank-and-comment-lines-skipped', 'a-list-in-file-order'),
    ),
    CheckCase(N_("只有标题行：没有记录，返回空列表"), args=("# progress",), expect=[], project=record_rows,
              returns=list, decides=('blank-and-comment-lines-skipped',)),
    CheckCase(
        N_("一行 failed 记录：种类、轮次（整数 12）、文字都要读对"),
        args=("# progress\n[failed] t12: 改成异步：测试不稳定",),  # data
        expect=[("failed", 12, "改成异步：测试不稳定")],  # data
        project=record_rows,
        decides=('record-format',),
    ),
    CheckCase(
        N_("行首行尾有空格的记录去掉空格再读，中间的 # 注释行跳过，文字里的英文冒号照原样保留"),
        args=(
            "# progress\n  [done] t9: 补上了边界用例  \n"  # data
            "# 下面是决定\n[decision] t40: 错误码格式: E 加四位数字",  # data
        ),
        expect=[("done", 9, "补上了边界用例"), ("decision", 40, "错误码格式: E 加四位数字")],  # data
        project=record_rows,
        decides=('blank-and-comment-lines-skipped', 'stripped-first', 'record-format'),
    ),
    CheckCase(
        N_("第 2 行格式不对（TODO: 写测试）：报 ValueError，消息里写出行号 2 和这一行"),
        args=("# progress\nTODO: 写测试",),  # data
        raises=ValueError,
        message_has=("2", "TODO: 写测试"),  # data
        decides=('bad-line-raises',),
    ),
    CheckCase(
        N_("种类区分大小写（[Done] t1: 写测试）：不是四种之一，报 ValueError"),
        args=("# progress\n[Done] t1: 写测试",),  # data
        raises=ValueError,
        message_has=("2", "[Done] t1: 写测试"),  # data
        decides=('kinds-case-sensitive', 'bad-line-raises'),
    ),
    CheckCase(
        N_("不认识的种类（[todo] t1: 写测试）：报 ValueError"),
        args=("# progress\n[done] t1: 建好用户表\n[todo] t1: 写测试",),  # data
        raises=ValueError,
        message_has=("3", "[todo] t1: 写测试"),  # data
        decides=('kinds-case-sensitive', 'bad-line-raises'),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '10-sessions'

#: The rules ``write_progress``'s text states (rules.py; the cases and hidden tests that decide one name it).
WRITE_PROGRESS_RULES: tuple[Rule, ...] = (
    Rule(
        'newest-next-only',
        N_('**`next` 只留最新的一条**（轮次最大的'),
        generated=('several-nexts', 'long-list'),
    ),
    Rule(
        'first-next-on-a-tie',
        N_('轮次相同时，留先出现的那条'),
        generated=('several-nexts',),
    ),
    Rule(
        'kind-priority',
        N_('`next` → `failed` → `decision` → `done`'),
        generated=('mixed-kinds', 'tight-budgets'),
    ),
    Rule(
        'newest-first-within-a-kind',
        N_('同一种类里，**轮次新的优先**'),
        generated=('one-kind',),
    ),
    Rule(
        'first-on-a-tie-within-a-kind',
        N_('（轮次相同时，先出现的优先）'),
        generated=('one-kind',),
    ),
    Rule(
        'skip-what-does-not-fit',
        N_('放不下就**跳过**'),
        generated=('tight-budgets', 'mixed-kinds'),
    ),
    Rule(
        'an-exact-fit-goes-in',
        N_('不超过剩下的预算就放进去'),
        generated=('exact-budgets',),
    ),
    Rule(
        'header-not-counted',
        N_('标题行不算'),
        generated=('exact-budgets',),
    ),
    Rule(
        'input-order-in-a-new-list',
        N_('**按它们在 `records` 里原来的顺序**，放在一个新的 `list` 里'),
        generated=('mixed-kinds', 'several-nexts', 'exact-budgets'),
    ),
    Rule(
        'records-unchanged',
        N_('不要改动传进来的列表'),
        generated=('mixed-kinds', 'one-kind', 'several-nexts', 'exact-budgets', 'tight-budgets', 'long-list'),
    ),
)

#: The rules ``restore``'s text states (rules.py; the cases and hidden tests that decide one name it).
RESTORE_RULES: tuple[Rule, ...] = (
    Rule(
        'blank-and-comment-lines-skipped',
        N_('空行和以 `#` 开头的行（标题、注释）跳过'),
        generated=('no-records', 'well-formed'),
    ),
    Rule(
        'stripped-first',
        N_('每一行先去掉首尾空白'),
        generated=('padded-lines',),
    ),
    Rule(
        'record-format',
        N_('`[种类] t轮次: 文字`'),
        generated=('well-formed',),
    ),
    Rule(
        'kinds-case-sensitive',
        N_('区分大小写：`[Done]` 不算'),
        generated=('wrong-kind',),
    ),
    Rule(
        'bad-line-raises',
        N_('消息里写出是第几行、内容是什么'),
        generated=('malformed-line', 'wrong-kind'),
    ),
    Rule(
        'a-list-in-file-order',
        N_('**按文件里的顺序**'),
        generated=('well-formed', 'padded-lines'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'write_progress', NOTEBOOK,
        references=(reference_write_progress,),
        cases=WRITE_PROGRESS_CASES,
        rules=WRITE_PROGRESS_RULES,
        compare=Generated(project=record_rows),
    ),
    Exercise(
        'restore', NOTEBOOK,
        references=(reference_restore, parse_record),
        cases=RESTORE_CASES,
        rules=RESTORE_RULES,
        compare=Generated(project=record_rows),
    ),
)
