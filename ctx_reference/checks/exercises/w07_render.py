"""The exercises of notebook 07, Render (literals from docs/models.md §7 and worked by hand).

What is compared: the full rendered text of a small spec (line by line), the last lines of the
lesson's seed spec, and the NUMBER of warnings of specs built to contain exactly zero, one or two
findings of one kind. The wording of a warning is the learner's own and is never compared; a
warning only has to be a non-empty string.
"""
import importlib

from ...i18n import N_
from ...render import PromptSpec
from ..exercise import Exercise
from ..generated import Generated
from ..render import SAME_TEXT, last_lines, lines_and_count, same_text_as, warning_count
from ..rules import Rule
from ..runner import CheckCase

reference = importlib.import_module("ctx_reference.render")  # the package re-exports a function named render


# The lesson's seed spec (docs/models.md §7): one finding of each kind, so 3 warnings.
SEED = PromptSpec(
    role="你是代码审查助手",  # data
    task="审查 {{diff}}",  # data
    rules=("不要输出客套话", "不要直接改代码，而是给出建议"),  # data
    dynamic={"time": "2026-10-14", "user": "duang777"},
)

# The same spec after the lesson's three fixes: 0 warnings.
SEED_FIXED = PromptSpec(
    role="你是代码审查助手",  # data
    task="审查用户给出的 diff",  # data
    rules=("不要输出客套话，改为直接给结论", "不要直接改代码，而是给出建议"),  # data
    output="Markdown 列表",  # data
    dynamic={"time": "2026-10-14", "user": "duang777"},
)

# A small clean spec whose full text is written out below; dynamic keys are given out of order.
SMALL = PromptSpec(
    role="你是翻译助手",  # data
    task="把用户给出的中文句子译成英文",  # data
    rules=("人名和产品名保留原文", "不要意译成长句，而是逐句对应"),  # data
    examples=("输入：你好 → 输出：Hello",),  # data
    output="只输出译文",  # data
    dynamic={"user": "amy", "date": "2026-10-14"},
)

SMALL_TEXT = (
    "<role>你是翻译助手</role>\n"  # data
    "<task>把用户给出的中文句子译成英文</task>\n"  # data
    "<rules>\n"
    "- 人名和产品名保留原文\n"  # data
    "- 不要意译成长句，而是逐句对应\n"  # data
    "</rules>\n"
    '<example index="1">输入：你好 → 输出：Hello</example>\n'  # data
    "<output_format>只输出译文</output_format>\n"  # data
    "<context>\n"
    "date: 2026-10-14\n"
    "user: amy\n"
    "</context>"
)

# The smallest spec: no rules, no examples, empty output, empty dynamic.
BARE = PromptSpec(role="R", task="T")
BARE_TEXT = "<role>R</role>\n<task>T</task>\n<rules>\n</rules>\n<output_format></output_format>\n<context>\n</context>"

# Two examples, numbered from 1.
TWO_EXAMPLES = PromptSpec(role="R", task="T", examples=("甲", "乙"), output="O")  # data
TWO_EXAMPLES_TEXT = (
    "<role>R</role>\n<task>T</task>\n<rules>\n</rules>\n"
    '<example index="1">甲</example>\n<example index="2">乙</example>\n'  # data
    "<output_format>O</output_format>\n<context>\n</context>"
)

#: The visible cases of ``render``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("原课的 spec（任务里有 {{diff}}、没写输出格式、第 1 条规则只说“不要”）：警告条数"),
        args=(SEED,),
        expect=3,
        project=warning_count,
        decides=('a-list-of-warnings',),
    ),
    CheckCase(
        N_("原课的 spec：文本最后 4 行是排好序的 <context> 块"),
        args=(SEED,),
        expect=["<context>", "time: 2026-10-14", "user: duang777", "</context>"],
        project=last_lines(4),
        decides=('no-trailing-newline', 'dynamic-sorted'),
    ),
    CheckCase(
        N_("原课的 spec 改好以后（任务去掉变量、加上输出格式、第 1 条规则补上“改为……”）：警告条数"),
        args=(SEED_FIXED,),
        expect=0,
        project=warning_count,
        decides=('an-alternative-excuses',),
    ),
    CheckCase(
        N_("翻译助手 spec（dynamic 写成 user 在前、date 在后）：完整文本"),
        args=(SMALL,),
        expect=SAME_TEXT,
        message=True,
        project=same_text_as(SMALL_TEXT),
        decides=('no-trailing-newline', 'dynamic-sorted'),
    ),
    CheckCase(
        N_("翻译助手 spec：警告条数（第 2 条规则有“而是”，不算问题）"),
        args=(SMALL,),
        expect=0,
        project=warning_count,
        decides=('an-alternative-excuses',),
    ),
    CheckCase(
        N_("只有一个问题：一条规则里写了 {{ lang }}"),
        args=(PromptSpec("你是翻译助手", "把句子译成目标语言", rules=("译成 {{ lang }}",),  # data
                         output="只输出译文"),),  # data
        expect=1,
        project=warning_count,
        decides=('spaces-inside-braces',),
    ),
    CheckCase(
        N_("只有一个问题：output 只有空格"),
        args=(PromptSpec("你是翻译助手", "把句子译成英文", output="   "),),  # data
        expect=1,
        project=warning_count,
        decides=('blank-output',),
    ),
    CheckCase(
        # one field, two variables: the rule counts fields, not variables
        N_("一个字段里有两个模板变量：task 是“把 {{src}} 译成 {{lang}}”，只算一条警告"),
        args=(PromptSpec("你是翻译助手", "把 {{src}} 译成 {{lang}}", output="只输出译文"),),  # data
        expect=1,
        project=warning_count,
        decides=('one-warning-per-field',),
    ),
    CheckCase(
        N_("两条规则都只说“不要”：每条一条警告"),
        args=(PromptSpec("你是翻译助手", "把句子译成英文", rules=("不要加解释", "不要改人名"),  # data
                         output="只输出译文"),),  # data
        expect=2,
        project=warning_count,
        decides=('one-warning-per-rule',),
    ),
    CheckCase(
        # the rule does not start with 不要: no warning, though 不要 is in it
        N_("规则“回答要简短，不要啰嗦”不是以“不要”开头：不算问题"),
        args=(PromptSpec("你是翻译助手", "把句子译成英文", rules=("回答要简短，不要啰嗦",),  # data
                         output="只输出译文"),),  # data
        expect=0,
        project=warning_count,
        decides=('starts-with-buyao',),
    ),
    CheckCase(
        N_("{{draft}} 出现在 dynamic 里：动态区本来就会变，不算问题"),
        args=(PromptSpec("你是翻译助手", "把句子译成英文", output="只输出译文",  # data
                         dynamic={"note": "{{draft}}"}),),
        expect=0,
        project=warning_count,
        decides=('dynamic-not-checked',),
    ),
    CheckCase(
        N_("最小的 spec：没有规则、没有示例、output 为空、dynamic 为空：完整文本"),
        args=(BARE,),
        expect=SAME_TEXT,
        message=True,
        project=same_text_as(BARE_TEXT),
        decides=('no-trailing-newline', 'empty-sections'),
    ),
    CheckCase(
        N_("最小的 spec：警告条数（只有 output 为空这一处）"),
        args=(BARE,),
        expect=1,
        project=warning_count,
        decides=('blank-output',),
    ),
    CheckCase(
        N_("两个示例：从 1 开始编号，完整文本"),
        args=(TWO_EXAMPLES,),
        expect=SAME_TEXT,
        message=True,
        project=same_text_as(TWO_EXAMPLES_TEXT),
        decides=('examples-from-one',),
    ),
    CheckCase(
        N_("每个含模板变量的字段各一条：role 里有 {{name}}、一个示例里有 {{x}}、output 是 {{fmt}}"),
        args=(PromptSpec("你是 {{name}}", "T", examples=("输入 {{x}}",), output="{{fmt}}"),),  # data
        expect=3,
        project=warning_count,
        decides=('one-warning-per-field',),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '07-render'

#: The rules ``render``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'no-trailing-newline',
        N_('最后的 `</context>` 后面**没有**换行'),
        generated=('layout',),
    ),
    Rule(
        'empty-sections',
        N_('没有规则时 `<rules>` 和 `</rules>` 两行紧挨着'),
        generated=('empty-sections',),
    ),
    Rule(
        'examples-from-one',
        N_('示例从 1 开始编号'),
        generated=('examples',),
    ),
    Rule(
        'dynamic-sorted',
        N_('`dynamic` 按键排序，与字典的插入顺序无关'),
        generated=('dynamic-order',),
    ),
    Rule(
        'a-list-of-warnings',
        N_('**警告**是一个字符串列表'),
        generated=(
            'layout',
            'empty-sections',
            'examples',
            'dynamic-order',
            'template-variables',
            'blank-output',
            'prohibitions',
            'anything',
        ),
    ),
    Rule(
        'one-warning-per-field',
        N_('**每个**含模板变量的字段一条'),
        generated=('template-variables', 'anything'),
    ),
    Rule(
        'spaces-inside-braces',
        N_('名字两边可以有空格'),
        generated=('template-variables',),
    ),
    Rule(
        'dynamic-not-checked',
        N_('`dynamic` 不检查'),
        generated=('dynamic-order', 'anything'),
    ),
    Rule(
        'blank-output',
        N_('`output` 为空或只有空白：一条'),
        generated=('blank-output',),
    ),
    Rule(
        'one-warning-per-rule',
        N_('**每条**以"不要"开头'),
        generated=('prohibitions',),
    ),
    Rule(
        'starts-with-buyao',
        N_('以"不要"开头'),
        generated=('prohibitions',),
    ),
    Rule(
        'an-alternative-excuses',
        N_('既不含"而是"也不含"改为"'),
        generated=('prohibitions',),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'render', NOTEBOOK,
        references=(
            reference.render,
            reference.render_text,
            reference.lint,
            reference.template_warnings,
            reference.output_warnings,
            reference.rule_warnings,
            reference.is_prohibition_only,
            reference.template_variables,
        ),
        cases=CASES,
        rules=RULES,
        compare=Generated(project=lines_and_count),
    ),
)
