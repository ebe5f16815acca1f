"""Lint for tool definitions: a tool's name, description and parameters are prompt text too.

What the model covers: a few mechanical checks on tool definitions in the shape most APIs take
(``{"name", "description", "input_schema": {"properties": {...}, "required": [...]}}``): a name
that says nothing (``helper``, ``do_stuff``), a description too short to tell the model what
the tool does, a description that never says when to use the tool (or when not to), a parameter
without a description, a required parameter that is not defined, two tools with the same name,
and two tools whose descriptions overlap so much that the model cannot tell them apart --
overlapping, vaguely described tools being the commonest reason an agent picks the wrong one.

What it leaves out: whether the description is *true* or *useful*; any check needs a person to
review what it cannot see. The thresholds are conventions of this workbook, not standards.

Vocabulary:
- description length: characters after stripping spaces (a Chinese character counts as one).
- overlap: Jaccard similarity of the two descriptions' sets of character bigrams (spaces removed),
  so it works for Chinese and English alike.

The warnings are messages in the reader's language; what they are about is in the names they
quote (``'helper'``, ``'lines'``), the same in both editions.

Used by the render notebook (07), section "工具描述也是提示词".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ctx_reference.i18n import _

__all__ = [
    "MIN_DESCRIPTION_CHARS",
    "MIN_PARAMETER_CHARS",
    "OVERLAP_THRESHOLD",
    "VAGUE_NAME_WORDS",
    "WHEN_MARKERS",
    "description_overlap",
    "lint_tool",
    "lint_tools",
]

#: A description shorter than this (characters, spaces removed) cannot say what, when and how.
MIN_DESCRIPTION_CHARS = 20
#: A parameter description shorter than this (characters) documents nothing.
MIN_PARAMETER_CHARS = 4
#: Two descriptions at or above this bigram overlap (0..1) are too alike to choose between.
OVERLAP_THRESHOLD = 0.5
#: Name parts that say nothing about what a tool does.
VAGUE_NAME_WORDS = ("tool", "helper", "util", "utils", "do", "stuff", "process", "handle", "misc", "thing", "data",
                    "run")
#: Words that tell the model when (not) to use a tool; a description needs at least one.
WHEN_MARKERS = ("用于", "当", "适合", "不要用", "不适合", "需要", "时使用", "时调用",  # data
                "when", "use ", "only for")


def _description(tool: Mapping) -> str:
    text = tool.get("description", "")
    if not isinstance(text, str):
        raise ValueError(f"tool {tool.get('name')!r}: description must be a str (got {text!r})")
    return text


def _check_tool(tool: object) -> Mapping:
    if not isinstance(tool, Mapping):
        raise ValueError(f"tool must be a mapping with a name (got {tool!r})")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool name must be a non-empty str (got {name!r})")
    schema = tool.get("input_schema", {})
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties", {}), Mapping):
        raise ValueError(f"tool {name!r}: input_schema must be a mapping with a 'properties' mapping (got {schema!r})")
    return tool


def _bigrams(text: str) -> set[str]:
    squeezed = re.sub(r"\s+", "", text.lower())
    return {squeezed[i:i + 2] for i in range(len(squeezed) - 1)}


def description_overlap(a: str, b: str) -> float:
    """Return the Jaccard similarity (0..1) of the character bigrams of two descriptions.

    >>> description_overlap("在代码库里搜索文本", "在代码库里搜索文本")
    1.0
    >>> description_overlap("读取文件", "发送邮件")
    0.0
    """
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0
    return len(x & y) / len(x | y)


def lint_tool(tool: Mapping) -> list[str]:
    """Return the warnings (in the reader's language, one per finding, each naming the tool) for one tool definition.

    >>> lint_tool({"name": "helper", "description": "搜索"})
    ["工具 'helper'：名字说不清它做什么（helper）",
     "工具 'helper'：描述只有 2 个字，说不清做什么、什么时候用",
     "工具 'helper'：描述没有说什么时候该用（或不该用）"]
    """
    _check_tool(tool)
    name = tool["name"]
    warnings = []
    parts = [p for p in re.split(r"[_\-\s]+", name.lower()) if p]
    vague = [p for p in parts if p in VAGUE_NAME_WORDS]
    if parts and len(vague) == len(parts):          # every part of the name is a filler word
        warnings.append(_("工具 {name!r}：名字说不清它做什么（{words}）").format(name=name, words=_("、").join(vague)))
    description = _description(tool)
    length = len(re.sub(r"\s+", "", description))
    if length < MIN_DESCRIPTION_CHARS:
        warnings.append(_("工具 {name!r}：描述只有 {length} 个字，说不清做什么、什么时候用").format(
            name=name, length=length))
    lowered = description.lower()
    if not any(marker in lowered for marker in WHEN_MARKERS):
        warnings.append(_("工具 {name!r}：描述没有说什么时候该用（或不该用）").format(name=name))
    schema = tool.get("input_schema", {})
    properties = schema.get("properties", {})
    for param, spec in properties.items():
        text = spec.get("description", "") if isinstance(spec, Mapping) else ""
        if not isinstance(text, str) or len(text.strip()) < MIN_PARAMETER_CHARS:
            warnings.append(_("工具 {name!r}：参数 {param!r} 没有说明（格式、单位或例子）").format(
                name=name, param=param))
    for param in schema.get("required", []):
        if param not in properties:
            warnings.append(_("工具 {name!r}：必填参数 {param!r} 没有定义").format(name=name, param=param))
    return warnings


def lint_tools(tools: Sequence[Mapping]) -> list[str]:
    """Return the warnings for a set of tools: each tool's own, then duplicate names and overlapping pairs.

    Two tools whose descriptions overlap by `OVERLAP_THRESHOLD` or more get one warning naming both.

    >>> a = {"name": "search_code", "description": "在代码库里按关键词搜索文本，用于定位函数定义"}
    >>> b = {"name": "find_code", "description": "在代码库里按关键词搜索文本，用于定位函数调用"}
    >>> lint_tools([a, b])[-1]
    "工具 'search_code' 和 'find_code' 的描述太像（重合 0.83），模型分不清该用哪个"

    Used by the render notebook (07).
    """
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise ValueError(f"tools must be a list of tool definitions (got {tools!r})")
    checked = [_check_tool(t) for t in tools]
    warnings = [w for t in checked for w in lint_tool(t)]
    seen = set()
    for t in checked:
        if t["name"] in seen:
            warnings.append(_("工具名 {name!r} 重复了").format(name=t["name"]))
        seen.add(t["name"])
    for i, a in enumerate(checked):
        for b in checked[i + 1:]:
            overlap = description_overlap(_description(a), _description(b))
            if overlap >= OVERLAP_THRESHOLD:
                warnings.append(
                    _("工具 {first!r} 和 {second!r} 的描述太像（重合 {overlap:.2f}），模型分不清该用哪个").format(
                        first=a["name"], second=b["name"], overlap=overlap))
    return warnings
