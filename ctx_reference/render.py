"""Render a structured system prompt and lint it (the lesson's exercise 2).

What the model covers: a prompt is split into blocks that each hold one kind of
thing -- role, task, rules, examples, output format -- followed by the dynamic
context that changes on every request. `render` writes the blocks as XML-style
tags in a fixed order, with the dynamic part last and its keys sorted, so the
same spec always renders to the same bytes (a stable prefix keeps the prompt
cache warm). Alongside the text it returns lint warnings for three habits the
lesson warns about:

1. a template variable such as ``{{ diff }}`` left in the stable part, which
   makes the "stable" prefix differ per request and breaks caching;
2. no output format;
3. a rule that only forbids ("不要……") without saying what to do instead
   (it contains neither "而是" nor "改为").

What it leaves out: the lint is a deliberately crude heuristic (a rule phrased
"别……" or "禁止……" passes unnoticed; a rule that says what to do in other words
is still flagged). It does not escape tag-like text inside fields, does not
count tokens, and does not judge whether the rules are good -- it only turns a
team's known pitfalls into checks that can run in CI.

Vocabulary:
- stable part: role, task, rules, examples and output -- identical across requests.
- dynamic part: ``dynamic``, a mapping of key -> value rendered last in ``<context>``.
- warning: one Chinese sentence per finding, meant for the prompt's author.

Used by the notebook on prompt structure (exercise 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from ctx_reference._validate import require_str

from .i18n import _

__all__ = [
    "PromptSpec",
    "render",
    "render_text",
    "lint",
    "template_variables",
    "template_warnings",
    "output_warnings",
    "is_prohibition_only",
    "rule_warnings",
    "lesson_spec",
    "lesson_spec_fixed",
    "TEMPLATE_VARIABLE",
    "PROHIBITION_PREFIX",
    "REDIRECT_MARKERS",
    "STABLE_FIELDS",
]

#: A template variable: two braces around a name, spaces allowed, e.g. ``{{diff}}``, ``{{ user.name }}``.
TEMPLATE_VARIABLE = re.compile(r"\{\{\s*\w+(?:\.\w+)*\s*\}\}")

#: A rule starting with this only says what not to do ...
PROHIBITION_PREFIX = "不要"  # data

#: ... unless it also contains one of these, which introduce what to do instead.
REDIRECT_MARKERS = ("而是", "改为")  # data

#: The fields of `PromptSpec` that form the stable part, in render order.
STABLE_FIELDS = ("role", "task", "rules", "examples", "output")


def _check_str_sequence(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a list or tuple of str, not a single value (got {value!r})")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{i}] must be a str (got {item!r})")
    return tuple(value)


def _check_str_mapping(name: str, value: object) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping of str to str (got {value!r})")
    for key, item in value.items():
        if not isinstance(key, str):
            raise ValueError(f"{name} keys must be str (got key {key!r})")
        if not isinstance(item, str):
            raise ValueError(f"{name}[{key!r}] must be a str (got {item!r})")
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class PromptSpec:
    """The blocks of one system prompt; `dynamic` holds what changes per request.

    Lists passed by the caller are copied into tuples and `dynamic` into a
    read-only mapping, so changing the caller's objects later never changes
    the spec.

    >>> spec = PromptSpec("你是代码审查助手", "审查用户给出的 diff", rules=["不要输出客套话，改为直接给结论"])
    >>> spec.rules
    ('不要输出客套话，改为直接给结论',)

    Used by the notebook on prompt structure.
    """

    role: str
    task: str
    rules: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    output: str = ""
    # Excluded from the hash (a mapping is unhashable) but still compared by ==.
    dynamic: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)

    def __post_init__(self) -> None:
        require_str(self.role, "role")
        require_str(self.task, "task")
        require_str(self.output, "output")
        object.__setattr__(self, "rules", _check_str_sequence("rules", self.rules))
        object.__setattr__(self, "examples", _check_str_sequence("examples", self.examples))
        object.__setattr__(self, "dynamic", _check_str_mapping("dynamic", self.dynamic))

    def __deepcopy__(self, memo: dict) -> PromptSpec:
        """Return the spec itself: it cannot change (strings, tuples, a read-only mapping), so a copy is the same."""
        return self


def _check_spec(spec: object) -> PromptSpec:
    if not isinstance(spec, PromptSpec):
        raise ValueError(f"spec must be a PromptSpec (got {spec!r})")
    return spec


def template_variables(text: str) -> list[str]:
    """Return the template variables found in `text`, in order of appearance.

    >>> template_variables("审查 {{diff}}")
    ['{{diff}}']

    Used by the notebook on prompt structure.
    """
    require_str(text, "text")
    return TEMPLATE_VARIABLE.findall(text)


def _stable_parts(spec: PromptSpec) -> list[tuple[str, str]]:
    """(label, text) for every piece of the stable part, in render order."""
    parts = [("role", spec.role), ("task", spec.task)]
    parts += [(f"rules[{i}]", rule) for i, rule in enumerate(spec.rules)]
    parts += [(f"examples[{i}]", example) for i, example in enumerate(spec.examples)]
    parts.append(("output", spec.output))
    return parts


def template_warnings(spec: PromptSpec) -> list[str]:
    """Return one warning per stable field that contains a template variable.

    >>> template_warnings(lesson_spec())
    ['稳定区的 task 含模板变量 {{diff}}：每次请求的前缀都会不同，缓存因此失效；请把会变的内容移到 dynamic。']

    Used by the notebook on prompt structure.
    """
    _check_spec(spec)
    warnings = []
    for label, text in _stable_parts(spec):
        found = template_variables(text)
        if found:
            names = _("、").join(found)
            warnings.append(
                _("稳定区的 {label} 含模板变量 {names}：每次请求的前缀都会不同，"
                  "缓存因此失效；请把会变的内容移到 dynamic。").format(label=label, names=names)
            )
    return warnings


def output_warnings(spec: PromptSpec) -> list[str]:
    """Return a one-item list when the output format is empty or blank, else [].

    >>> output_warnings(lesson_spec())
    ['没有写输出格式（output 为空）：模型只能自己猜答案该长什么样。']

    Used by the notebook on prompt structure.
    """
    _check_spec(spec)
    if spec.output.strip():
        return []
    return [_("没有写输出格式（output 为空）：模型只能自己猜答案该长什么样。")]


def is_prohibition_only(rule: str) -> bool:
    """Return True when `rule` starts with 不要 and names no alternative (no 而是 / 改为).

    "Starts with" as the notebook states it: the rule's first two characters are 不要, so a
    rule written with a space before 不要 is not flagged.

    >>> is_prohibition_only("不要输出客套话")
    True
    >>> is_prohibition_only("不要输出客套话，改为直接给结论")
    False

    Used by the notebook on prompt structure.
    """
    require_str(rule, "rule")
    return rule.startswith(PROHIBITION_PREFIX) and not any(m in rule for m in REDIRECT_MARKERS)


def rule_warnings(spec: PromptSpec) -> list[str]:
    """Return one warning per rule that only forbids, naming the rule by number (1-based).

    >>> rule_warnings(lesson_spec())
    ['第 1 条规则「不要输出客套话」只说了不能做什么：请接着写出该怎么做（用“而是……”或“改为……”）。']

    Used by the notebook on prompt structure.
    """
    _check_spec(spec)
    return [
        _("第 {number} 条规则「{rule}」只说了不能做什么：请接着写出该怎么做（用“而是……”或“改为……”）。").format(
            number=i, rule=rule)
        for i, rule in enumerate(spec.rules, start=1)
        if is_prohibition_only(rule)
    ]


def lint(spec: PromptSpec) -> list[str]:
    """Return all warnings for `spec`: template variables, then output format, then rules.

    The lesson's seed spec has one finding of each kind:

    >>> len(lint(lesson_spec())), len(lint(lesson_spec_fixed()))
    (3, 0)

    Used by the notebook on prompt structure.
    """
    _check_spec(spec)
    return template_warnings(spec) + output_warnings(spec) + rule_warnings(spec)


def render_text(spec: PromptSpec) -> str:
    """Return the prompt text: role, task, rules, examples, output format, then sorted context.

    >>> spec = PromptSpec("R", "T", rules=["r"], examples=["e"], output="O", dynamic={"b": "2", "a": "1"})
    >>> print(render_text(spec))
    <role>R</role>
    <task>T</task>
    <rules>
    - r
    </rules>
    <example index="1">e</example>
    <output_format>O</output_format>
    <context>
    a: 1
    b: 2
    </context>

    Used by the notebook on prompt structure.
    """
    _check_spec(spec)
    lines = [f"<role>{spec.role}</role>", f"<task>{spec.task}</task>", "<rules>"]
    lines += [f"- {rule}" for rule in spec.rules]
    lines.append("</rules>")
    lines += [f'<example index="{i}">{example}</example>' for i, example in enumerate(spec.examples, start=1)]
    lines.append(f"<output_format>{spec.output}</output_format>")
    lines.append("<context>")
    # Sorted keys: the same spec must render to the same text, whatever the dict's insertion order.
    lines += [f"{key}: {spec.dynamic[key]}" for key in sorted(spec.dynamic)]
    lines.append("</context>")
    return "\n".join(lines)


def render(spec: PromptSpec) -> tuple[str, list[str]]:
    """Return (text, warnings) for `spec`; see `render_text` and `lint`.

    >>> text, warnings = render(lesson_spec())
    >>> len(warnings)
    3
    >>> text.endswith("<context>\\ntime: 2026-10-14\\nuser: duang777\\n</context>")
    True

    Used by the notebook on prompt structure (exercise 2).
    """
    _check_spec(spec)
    return render_text(spec), lint(spec)


def lesson_spec() -> PromptSpec:
    """Return the lesson's seed spec, which has one problem of each kind (3 warnings).

    >>> lesson_spec().task
    '审查 {{diff}}'

    Used by the notebook on prompt structure.
    """
    return PromptSpec(
        role="你是代码审查助手",  # data
        task="审查 {{diff}}",  # data
        rules=("不要输出客套话", "不要直接改代码，而是给出建议"),  # data
        dynamic={"time": "2026-10-14", "user": "duang777"},
    )


def lesson_spec_fixed() -> PromptSpec:
    """Return the seed spec after the lesson's three fixes (0 warnings).

    The task no longer holds a variable, an output format is given, and the
    first rule says what to do instead.

    >>> lesson_spec_fixed().rules[0]
    '不要输出客套话，改为直接给结论'

    Used by the notebook on prompt structure.
    """
    seed = lesson_spec()
    return replace(
        seed,
        task="审查用户给出的 diff",  # data
        output="Markdown 列表",  # data
        rules=("不要输出客套话，改为直接给结论",) + seed.rules[1:],  # data
    )
