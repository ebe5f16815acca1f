"""Tests for ctx_reference.tools_lint: warnings on tool names, descriptions, parameters and overlaps."""

import pytest

from ctx_course.editions.translate import has_chinese
from ctx_reference import i18n
from ctx_reference.tools_lint import description_overlap, lint_tool, lint_tools

GOOD = {
    "name": "search_code",
    "description": ("在代码库里按正则表达式搜索，返回匹配的文件和行号。"
                    "用于定位函数或配置的位置；要读整个文件时不要用它，改用 read_file。"),
    "input_schema": {
        "properties": {"pattern": {"type": "string", "description": "正则表达式，例如 def \\w+_total"}},
        "required": ["pattern"],
    },
}


def test_a_well_described_tool_has_no_warnings():
    """Specific name, a description saying what and when, every parameter documented: no warning."""
    assert lint_tool(GOOD) == []


def test_vague_name_short_description_and_no_when():
    """helper / "搜索": a filler name, a 2-character description, nothing about when to use it: three warnings."""
    warnings = lint_tool({"name": "helper", "description": "搜索"})
    assert len(warnings) == 3
    assert "名字说不清" in warnings[0] and "只有 2 个字" in warnings[1] and "什么时候" in warnings[2]


def test_warnings_read_in_the_readers_language_and_quote_the_names():
    """In English the same three warnings of helper / "搜索" hold no Chinese and quote the tool's name."""
    with i18n.using("en"):
        warnings = lint_tool({"name": "helper", "description": "搜索"})
    assert len(warnings) == 3
    assert all("'helper'" in w and not has_chinese(w) for w in warnings), warnings
    assert "2 characters" in warnings[1]


def test_a_name_with_one_specific_word_is_not_vague():
    """run_tests has a filler word (run) but says what it runs; do_stuff is all filler."""
    assert not any("名字" in w for w in lint_tool({**GOOD, "name": "run_tests"}))
    assert any("名字" in w for w in lint_tool({**GOOD, "name": "do_stuff"}))


def test_undocumented_and_undefined_parameters():
    """A parameter without a description and a required parameter that is not defined each get a warning."""
    tool = {**GOOD, "input_schema": {"properties": {"path": {"type": "string"}}, "required": ["path", "mode"]}}
    warnings = lint_tool(tool)
    assert any("'path' 没有说明" in w for w in warnings)
    assert any("'mode' 没有定义" in w for w in warnings)


def test_description_overlap_by_hand():
    """Identical texts overlap 1.0; no shared bigram gives 0.0; 19 shared of 23 bigrams gives 19/23."""
    assert description_overlap("在代码库里搜索", "在代码库里搜索") == 1.0
    assert description_overlap("读取文件", "发送邮件") == 0.0
    a = "在代码库里按关键词搜索文本，用于定位函数定义"
    b = "在代码库里按关键词搜索文本，用于定位函数调用"
    assert description_overlap(a, b) == 19 / 23


def test_overlapping_tools_and_duplicate_names_are_reported():
    """Two near-identical descriptions get an overlap warning naming both; a repeated name is reported."""
    twin = {**GOOD, "name": "find_code"}
    warnings = lint_tools([GOOD, twin, GOOD])
    assert any("'search_code' 和 'find_code'" in w and "太像" in w for w in warnings)
    assert any("'search_code' 重复" in w for w in warnings)


def test_different_tools_do_not_overlap():
    """search_code and a mail tool share no description: no overlap warning."""
    mail = {"name": "send_mail", "description": "给值班同事发邮件通知。只在排查结论确定后使用，不要用来发草稿。",
            "input_schema": {"properties": {"to": {"description": "收件人邮箱地址"}}}}
    assert lint_tools([GOOD, mail]) == []


@pytest.mark.parametrize("bad, name", [("search", "tools"), ([{"description": "x"}], "name"),
                                       ([{"name": "a", "description": 3}], "description"),
                                       ([{"name": "a", "input_schema": []}], "input_schema")])
def test_bad_input_raises_value_error_naming_it(bad, name):
    """Malformed tool lists raise ValueError naming the faulty part."""
    with pytest.raises(ValueError, match=name):
        lint_tools(bad)
