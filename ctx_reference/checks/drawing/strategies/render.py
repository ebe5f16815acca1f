"""Strategies of notebook 07's exercise ``render(spec)``.

The text's domain ("Write a function ``render(spec)`` that takes a ``PromptSpec`` like the ones above
and returns two values, ``(text, warnings)``"; "sort ``dynamic`` by key, whatever the dictionary's
insertion order") is any ``PromptSpec``: a role and a task, zero or more rules and examples, an
output format that may be empty or blank, and a ``dynamic`` dict given in any order. The
strategies draw fields of any characters (``_wide.any_text``), with samples as extra weight (CJK,
ASCII, emoji, accented letters, ``#``, ``<``, quotes, colons, surrounding spaces, a line break),
none to three rules and examples (equal ones too), dynamic keys of any characters, weighted towards
keys that sort differently from their insertion order (upper and lower case, a key that is a prefix
of another, CJK), template variables of every form the text names (``{{x}}``, spaces inside the
braces, two in one field, names of any characters the text's hint ``\\w+`` matches, in any script, inside
any text) beside near misses that are not variables (one pair of braces, empty
braces, two names, an unclosed pair), blank output formats (any characters ``str.isspace``
accepts: "输出格式为空或只有空白" is blank, whichever whitespace it is), and rules that start with
不要 (or a near miss), after any whitespace or none, or hold it later, with and without 而是 or 改为.

Narrower than the text: no dotted name such as ``{{user.name}}``, which the reference counts as a variable and
the text's hint (``\\w+``) does not: the text ("两对花括号包住一个名字") does not say which.
"""
from __future__ import annotations

import re

from hypothesis import strategies as st

from ....render import PromptSpec, render
from . import Call, call
from ._wide import any_text, characters, weighted, whitespace

_PLAIN = weighted(["R", "T", "你是翻译助手", "审查 diff", "a: b", "#1", "<b>", '"q"', "🙂", "café",
                   " 两边有空格 ", "x\ny", ""], any_text(max_size=6))
# A name is what the text's hint matches between the braces (``\w+``): letters and digits of any script and "_".
_NAMES = st.text(weighted("ab_x1名字é", characters().filter(lambda ch: re.fullmatch(r"\w", ch) is not None)),
                 min_size=1, max_size=6)
_VARIABLE = st.builds(lambda before, name, after: f"{{{{{before}{name}{after}}}}}",
                      st.text(" ", max_size=2), _NAMES, st.text(" ", max_size=2))
_VARIABLES = weighted(["{{x}}", "{{ lang }}", "{{  lang  }}", "{{diff}}", "{{a}}{{b}}", "把 {{src}} 译成 {{lang}}",
                       "{{user_name}}", "{{ x}}", "你是 {{名字}}"],
                      st.builds(lambda before, variable, after: before + variable + after, _PLAIN, _VARIABLE, _PLAIN))
_NOT_VARIABLES = st.sampled_from(["{x}", "{{}}", "{{ }}", "{{x y}}", "{{x", "x}}", "{ {x} }", "{{-}}"])
_FIELDS = st.one_of(_PLAIN, _PLAIN, _VARIABLES, _NOT_VARIABLES)
_OUTPUTS = st.sampled_from(["", " ", "\n", "\t", " \n ", "O", "Markdown 列表", " O "]) | whitespace(1, 4) | _FIELDS
# Rules that read like prohibitions: 不要 (or a near miss) at the start, after any whitespace or none, any text
# after it, with or without what to do instead; the author's samples weighted.
_PROHIBITION_SHAPES = st.builds(lambda pad, head, rest, instead: pad + head + rest + instead,
                                whitespace(0, 2), st.sampled_from(["不要", "不要", "不 要", "别", "要"]),
                                any_text(max_size=4), st.sampled_from(["", "，而是先问", "，改为 x", "而是"]))
_PROHIBITIONS = weighted([
    "不要输出客套话", "不要啰嗦", "不要", "不要猜，改为先问清楚", "不要直接改代码，而是给出建议",
    "回答要简短，不要啰嗦", "要简短", " 不要空格开头", "\t不要制表符开头", "而是先不要", "不 要分开写",
    "别客套", "不要改为", "不要而是", "人名保留原文", "不要 {{x}}",
], _PROHIBITION_SHAPES)
_RULES = _PROHIBITIONS | _FIELDS
_KEYS = weighted(["a", "b", "B", "ab", "a1", "a_b", "time", "user", "User", "时间", "z"],
                 any_text(min_size=1, max_size=4))
_DYNAMIC = st.dictionaries(_KEYS, _FIELDS, max_size=4)


@st.composite
def _spec(draw, role=_FIELDS, task=_FIELDS, rules=_RULES, examples=_FIELDS, output=_OUTPUTS, dynamic=_DYNAMIC) -> Call:
    """A spec of the given fields; ``rules`` or ``examples`` None: there are none."""
    return call(PromptSpec(
        role=draw(role), task=draw(task), rules=tuple(draw(st.lists(rules, max_size=3))) if rules is not None else (),
        examples=tuple(draw(st.lists(examples, max_size=3))) if examples is not None else (), output=draw(output),
        dynamic=draw(dynamic)))


_NO_FINDINGS = st.one_of(_PLAIN, _NOT_VARIABLES)

ORACLES = {"render": render}

STRATEGIES = {
    "render": {
        "layout": _spec(role=_PLAIN, task=_PLAIN, rules=_PLAIN, examples=_PLAIN, output=_PLAIN),
        "empty-sections": _spec(role=_PLAIN, task=_PLAIN, rules=None, examples=None,
                                output=st.sampled_from(["", "O"]), dynamic=st.just({})),
        "examples": _spec(role=_PLAIN, task=_PLAIN, rules=None, examples=_PLAIN, output=st.just("O"),
                          dynamic=st.just({})),
        "dynamic-order": _spec(role=_PLAIN, task=_PLAIN, rules=None, examples=None,
                               output=st.just("O"), dynamic=st.dictionaries(_KEYS, _FIELDS, min_size=2, max_size=5)),
        "template-variables": _spec(rules=_FIELDS, output=_FIELDS),
        "blank-output": _spec(role=_NO_FINDINGS, task=_NO_FINDINGS, rules=None, examples=_NO_FINDINGS),
        "prohibitions": _spec(role=_NO_FINDINGS, task=_NO_FINDINGS, rules=_PROHIBITIONS, examples=_NO_FINDINGS,
                              output=st.just("O")),
        "anything": _spec(),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"render": 375}
