"""Nothing a learner's notebook holds can run script in the browser that renders it; honest content still shows.

The sanitizer (``ctx_course/grading/steps/inert.py``) is fed a list of XSS vectors written here
(script tags, event handlers, ``javascript:`` and ``data:`` URLs in plain, mixed-case and
entity-encoded spellings, SVG and MathML, frames, forms, styles, ``<base>``, meta refresh, parser
confusions) as HTML, as markdown cells and as outputs of every type, and strings drawn by
Hypothesis from their pieces; what comes out is read by a detector of its own (``page_scripts.py``,
html5lib's browser parsing and Python's). Whole notebooks are rendered by nbconvert's
``HTMLExporter``, the Formgrader's renderer, and compared with the page of an empty notebook.
"""
from __future__ import annotations

import base64
import json
from collections import Counter

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbconvert.exporters import HTMLExporter

from ctx_course.config import load_course_config
from ctx_course.grading.steps.inert import (
    MakeInert,
    clean_html,
    inert_attachments,
    inert_data,
    inert_output,
    render_markdown,
    safe_markdown,
)

from conftest import REPO, notebooks
from page_scripts import script_vectors

# A 1×1 PNG.
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4bb0000000049454e44ae426082"
)).decode()

HTML_VECTORS = [
    "<script>steal()</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<ScRiPt>steal()</sCrIpT>",
    "<scr<script>ipt>steal()</script>",
    "<<script>script>steal()<</script>/script>",
    "<img src=x onerror=steal()>",
    "<IMG SRC=x OnErRoR=steal()>",
    '<img src="x" onerror="&#115;&#116;eal()">',
    "<img src=x onerror\n=steal()>",
    "<img src=`x` onerror=steal()>",
    '"><img src=x onerror=steal()>',
    f'<img src="data:image/png;base64,{PNG}" onload="steal()">',
    '<a href="javascript:steal()">x</a>',
    '<a href="JaVaScRiPt:steal()">x</a>',
    '<a href="java&#x09;script:steal()">x</a>',
    '<a href="&#106;&#x61;vascript:steal()">x</a>',
    '<a href="  javascript:steal()">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5zdGVhbCgpPC9zY3JpcHQ+">x</a>',
    '<a href="#" onclick="steal()">x</a>',
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9c3RlYWwoKT4=">',
    "<svg onload=steal()>",
    "<svg><script>steal()</script></svg>",
    '<svg><a xlink:href="javascript:steal()"><text>x</text></a></svg>',
    '<svg><animate attributeName="href" values="javascript:steal()"/></svg>',
    "<math><mtext><table><mglyph><style><img src=x onerror=steal()>",
    '<math href="javascript:steal()">x</math>',
    '<iframe src="javascript:steal()"></iframe>',
    '<iframe srcdoc="<script>steal()</script>"></iframe>',
    '<object data="javascript:steal()"></object>',
    '<embed src="javascript:steal()">',
    "<style>body{background:url(javascript:steal())}</style>",
    "<style>@import 'https://evil.example/x.css';</style>",
    '<div style="background:url(javascript:steal())">x</div>',
    '<div style="width: expression(steal())">x</div>',
    '<td style="text-align:right; background:url(javascript:steal())">x</td>',
    '<base href="https://evil.example/">',
    '<meta http-equiv="refresh" content="0;url=javascript:steal()">',
    '<link rel="stylesheet" href="https://evil.example/x.css">',
    '<form action="/api/terminals" method="post"><button>ok</button></form>',
    '<button formaction="javascript:steal()">x</button>',
    "<input autofocus onfocus=steal()>",
    "<details open ontoggle=steal()>x</details>",
    "<body onload=steal()>",
    "<video><source onerror=steal()></video>",
    "<template><img src=x onerror=steal()></template>",
    '<noscript><p title="</noscript><img src=x onerror=steal()>">',
    "<!--><img src=x onerror=steal()>-->",
    "<xmp><img src=x onerror=steal()></xmp>",
    '<table background="javascript:steal()"><tr><td>x</td></tr></table>',
    '<h1 id="x" onmouseover="steal()">t</h1>',
]
MARKDOWN_VECTORS = [
    "[x](javascript:steal())",
    "[x](JAVASCRIPT:steal%28%29)",
    "[x](&#106;avascript:steal())",
    "![x](javascript:steal())",
    "<javascript:steal()>",
    "[x][r]\n\n[r]: javascript:steal()",
    "[x](data:text/html;base64,PHNjcmlwdD5zdGVhbCgpPC9zY3JpcHQ+)",
    "![x](attachment:evil.svg)",
    "Some text\n\n<div>\n<script>steal()</script>\n</div>",
    "```\n</code></pre><script>steal()</script>\n```",
    "`</code><img src=x onerror=steal()>`",
    *HTML_VECTORS,
]


def vectors_in_markdown(source: str, attachments: dict | None = None) -> Counter:
    """Script vectors of a markdown cell as the exporters render it after ``safe_markdown``."""
    try:
        rendered = render_markdown(safe_markdown(source, attachments), attachments)
    except Exception as error:  # noqa: BLE001 - a source nbconvert refuses renders nothing at all
        return Counter({f"unrenderable: {error}": 1}) if "attachment" not in str(error) else Counter()
    return script_vectors(rendered)


def test_the_detector_sees_every_vector():
    """Each vector, left as it is, has a script vector in it (else the tests below would prove nothing)."""
    blind = [vector for vector in HTML_VECTORS if not script_vectors(vector)]
    assert blind == ["<scr<script>ipt>steal()</script>"]  # a browser reads a tag "scr<script": aimed at a stripper
    blind = [v for v in MARKDOWN_VECTORS[:7] if not script_vectors(render_markdown(v))]
    assert blind == []  # nbconvert renders every one of these links as it is written


@pytest.mark.parametrize("vector", HTML_VECTORS)
def test_clean_html_leaves_no_vector(vector):
    """clean_html of the vector alone, and inside honest markup, holds no script vector."""
    assert script_vectors(clean_html(vector)) == Counter()
    assert script_vectors(clean_html(f"<p>before <b>{vector}</b> after</p>")) == Counter()


@pytest.mark.parametrize("vector", MARKDOWN_VECTORS)
def test_a_markdown_cell_renders_with_no_vector(vector):
    """A markdown cell holding the vector renders, after safe_markdown, into a page part with no script vector."""
    assert vectors_in_markdown(f"## 我的回答\n\n{vector}\n\n*完*") == Counter()


def test_honest_markdown_keeps_its_source():
    """Every markdown cell of every notebook of solutions/ comes through safe_markdown unchanged (476 cells)."""
    changed, seen = [], 0
    for path in notebooks(REPO / "solutions"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                seen += 1
                if safe_markdown(cell.source, cell.get("attachments")) != cell.source:
                    changed.append((path.name, cell.source[:60]))
    assert seen > 100 and changed == []


def test_a_markdown_answer_with_raw_html_reads_the_same_without_what_runs():
    """The learner's words and allowed markup stay; the handler and the script tag go (their text stays)."""
    answer = '缓存字段要放在前面。<b>理由</b>：<img src=x onerror="steal()"><script>alert(1)</script>'
    shown = safe_markdown(answer)
    assert shown == '<p>缓存字段要放在前面。<b>理由</b>：<img>alert(1)</p>\n'


def test_an_image_loads_nothing_from_elsewhere():
    """An <img> keeps a data: URL of a raster image only: no request to the server's API or a tracker on opening."""
    elsewhere = '<img src="/api/contents/x"><img src="https://tracker.example/p.png" alt="p">'
    assert clean_html(elsewhere) == '<img><img alt="p">'
    assert clean_html(f'<img src="data:image/png;base64,{PNG}">') == f'<img src="data:image/png;base64,{PNG}">'


def test_an_element_keeps_no_class_of_the_page():
    """The Formgrader's own classes (a fixed bar, a button) are dropped; a highlighted token's class stays."""
    assert clean_html('<div class="navbar navbar-fixed-top">x</div><b class="btn btn-success">ok</b>') == (
        "<div>x</div><b>ok</b>")
    assert clean_html('<span class="k">def</span>') == '<span class="k">def</span>'


def test_a_link_leads_nowhere_on_the_server_but_to_a_notebook_or_markdown_file():
    """A link to a file the learner handed in (served by the Formgrader on its own origin) or to the server's API
    loses its address; the glossary's, a page elsewhere, a mail and a place in the page keep theirs."""
    dropped = ["evil.html", "./evil.svg", "evil.html?.md", "evil.html#x.md", "/api/terminals", "../../files/x.html"]
    kept = ["../glossary.md#token", "other.ipynb", "https://example.org/a.html", "mailto:t@example.org", "#heading"]
    for href in dropped:
        assert clean_html(f'<a href="{href}">x</a>') == "<a>x</a>", href
    for href in kept:
        assert clean_html(f'<a href="{href}">x</a>') == f'<a href="{href}">x</a>', href


FUZZ_PIECES = st.sampled_from([
    "<", ">", "</", "/>", "=", '"', "'", "`", " ", "\n", "\t", "&#", "&#x", ";", "script", "SCRIPT", "img", "svg",
    "iframe", "style", "a", "src", "href", "onerror", "OnLoad", "onclick", "javascript:", "JaVaScRiPt:", "data:",
    "vbscript:", "text/html", "base64,", "x", "steal()", "<!--", "-->", "[", "]", "(", ")", "!", "*", "`", "math",
    "mglyph", "noscript", "xmp", "template", "expression(", "url(", "text-align:right", "td", "table", "attachment:",
])
FUZZ = st.lists(st.one_of(FUZZ_PIECES, st.text(max_size=2)), max_size=40).map("".join)


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(FUZZ)
def test_no_string_gets_a_vector_through_clean_html(text):
    """Whatever string drawn from the vectors' pieces, clean_html returns no script vector, nor does it again."""
    cleaned = clean_html(text)
    assert script_vectors(cleaned) == Counter()
    assert script_vectors(clean_html(cleaned)) == Counter()


@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(FUZZ)
def test_no_string_gets_a_vector_through_a_markdown_cell(text):
    """Whatever string a markdown cell holds, its rendering after safe_markdown has no script vector."""
    assert vectors_in_markdown(text) == Counter()


HOSTILE_DATA = {
    "text/html": "<b>shown</b><script>steal()</script><img src=x onerror=steal()>",
    "application/javascript": "steal()",
    "text/javascript": "steal()",
    "image/svg+xml": "<svg onload=steal()></svg>",
    "text/markdown": "[x](javascript:steal())",
    "text/latex": r"$\href{javascript:steal()}{x}$",
    "application/vnd.jupyter.widget-view+json": {"model_id": "</script><script>steal()</script>"},
    "application/x-unknown": "<script>steal()</script>",
    "image/png": 'AAAA" onerror="steal()',
}


def test_an_output_keeps_only_types_that_cannot_run():
    """Of a display with every type, text/html (cleaned) and text/markdown (rendered safe) remain; the note
    names the dropped types since no text/plain came; a PNG that is not base64 is dropped too."""
    data, dropped = inert_data(HOSTILE_DATA)
    assert data == {"text/html": "<b>shown</b>steal()<img>", "text/markdown": "<p><a>x</a></p>\n"}
    assert sorted(dropped) == sorted(set(HOSTILE_DATA) - {"text/html", "text/markdown"})
    output = inert_output({"output_type": "display_data", "data": HOSTILE_DATA, "metadata": {}})
    assert "application/javascript" in output["data"]["text/plain"]


def test_honest_outputs_come_through_as_they_were():
    """A figure (PNG with its size), a table's HTML and plain text are kept byte for byte."""
    table = ('<table border="1" class="dataframe"><thead><tr><th>a</th></tr></thead>'
             '<tbody><tr><td>1</td></tr></tbody></table>')
    output = {"output_type": "execute_result", "execution_count": 3,
              "data": {"image/png": PNG, "text/plain": "<Figure size 640x480>", "text/html": table},
              "metadata": {"image/png": {"width": 640, "height": 480}}}
    kept = inert_output(output)
    assert kept["data"] == {"image/png": PNG, "text/plain": "<Figure size 640x480>",
                            "text/html": table}
    assert kept["metadata"] == {"image/png": {"width": 640, "height": 480}}
    assert kept["execution_count"] == 3


def test_output_metadata_keeps_whole_image_sizes_only():
    """isolated (a data: iframe), filenames (a URL on the server) and a width that is not a number are dropped."""
    output = {"output_type": "display_data", "data": {"image/png": PNG, "text/html": "<b>x</b>"},
              "metadata": {"text/html": {"isolated": True}, "filenames": {"image/png": "/api/terminals"},
                           "image/png": {"width": "1 onerror=steal()", "height": 20}}}
    assert inert_output(output)["metadata"] == {"image/png": {"height": 20}}


def test_attachments_keep_raster_images_only():
    """An SVG attachment and a PNG whose data is not base64 are dropped; a PNG stays."""
    kept = inert_attachments({"ok.png": {"image/png": PNG}, "evil.svg": {"image/svg+xml": "<svg onload=x()>"},
                              "bad.png": {"image/png": '" onerror="x()'}, "list": ["x"]})
    assert kept == {"ok.png": {"image/png": PNG}}


def test_clean_html_names_a_wrong_argument():
    with pytest.raises(TypeError, match=r"text must be a str \(got NoneType\)"):
        clean_html(None)
    with pytest.raises(TypeError, match=r"source must be a str \(got bytes\)"):
        safe_markdown(b"x")


def hostile_notebook() -> nbformat.NotebookNode:
    """A notebook with a hostile output of every type, markdown and raw cells, attachments and metadata."""
    code = nbformat.v4.new_code_cell("display(HTML(...))")
    code.outputs = [
        nbformat.v4.new_output("display_data", data=HOSTILE_DATA,
                               metadata={"text/html": {"isolated": True}, "image/png": {"width": "1 onerror=steal()"}}),
        nbformat.v4.new_output("execute_result", data={"text/html": HTML_VECTORS[5], "text/plain": "x"},
                               execution_count=1),
        nbformat.v4.new_output("stream", name="stdout", text="<script>steal()</script>"),
        nbformat.v4.new_output("error", ename="<script>steal()</script>", evalue="<img src=x onerror=steal()>",
                               traceback=["<script>steal()</script>"]),
    ]
    code.metadata["tags"] = ['x" onmouseover="steal()']
    cells = [code, nbformat.v4.new_markdown_cell("\n\n".join(MARKDOWN_VECTORS[:-len(HTML_VECTORS)] + HTML_VECTORS))]
    cells[1]["attachments"] = {"evil.svg": {"image/svg+xml": base64.b64encode(b"<svg onload=steal()/>").decode()}}
    raw = nbformat.v4.new_raw_cell("<script>steal()</script>")
    raw.metadata["raw_mimetype"] = "text/html"
    cells.append(raw)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "x": "</script><script>steal()</script>"}}
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    return nb


def page_vectors(exporter: HTMLExporter, nb) -> Counter:
    """Script vectors of ``nb``'s page beyond those of an empty notebook's page (the template's own scripts)."""
    empty, _ = exporter.from_notebook_node(nbformat.v4.new_notebook())
    page, _ = exporter.from_notebook_node(nb)
    return script_vectors(page) - script_vectors(empty)


def test_a_hostile_notebook_made_inert_renders_no_vector_of_its_own():
    """HTMLExporter (as the Formgrader has it, sanitize_html off) renders the notebook after MakeInert with no
    script vector beyond its template's; the same notebook left as it is brings dozens."""
    nb = hostile_notebook()
    before = page_vectors(HTMLExporter(), nbformat.from_dict(json.loads(json.dumps(nb))))
    assert sum(before.values()) > 40, before
    made_inert, _ = MakeInert().preprocess(nb, {})
    assert page_vectors(HTMLExporter(), made_inert) == Counter()
    assert dict(made_inert.metadata) == {"language_info": {"name": "python"}}
    assert made_inert.cells[0].metadata == {"tags": []}


def test_the_course_configures_every_html_exporter_to_make_notebooks_inert():
    """With the course's configuration (the Formgrader's and the feedback's), HTMLExporter renders a hostile
    notebook that was never autograded with no script vector of its own: the second line of defence."""
    config = load_course_config(REPO)
    assert page_vectors(HTMLExporter(config=config), hostile_notebook()) == Counter()


def test_making_inert_twice_changes_nothing():
    """MakeInert is idempotent: the Formgrader's exporter may run it again over an autograded notebook."""
    once, _ = MakeInert().preprocess(hostile_notebook(), {})
    again, _ = MakeInert().preprocess(nbformat.from_dict(json.loads(json.dumps(once))), {})
    assert again == once


def test_the_hubs_formgrader_makes_notebooks_inert_whatever_the_course_folder_says():
    """hub/grader/'s server configuration (the Formgrader service's) gives HTMLExporter the same step."""
    from traitlets.config.loader import JSONFileConfigLoader

    config = JSONFileConfigLoader("jupyter_server_config.json", path=str(REPO / "hub" / "grader")).load_config()
    assert page_vectors(HTMLExporter(config=config), hostile_notebook()) == Counter()


@pytest.mark.parametrize(("edition", "note"), [
    (None, "（这个输出的类型 application/javascript 不在评分页面里显示）"),
    ("en", "(this output's types application/javascript are not shown on grading pages)"),
])
def test_an_output_left_with_nothing_says_so_in_the_submissions_language(edition, note):
    """A display of JavaScript alone becomes a line naming the type, in the language of the submission's edition."""
    cell = nbformat.v4.new_code_cell("display(Javascript('steal()'))")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"application/javascript": "steal()"})]
    nb = nbformat.v4.new_notebook(cells=[cell])
    if edition:
        nb.metadata["ctx_edition"] = edition
    made_inert, _ = MakeInert().preprocess(nb, {})
    assert made_inert.cells[0].outputs[0]["data"] == {"text/plain": note}


@pytest.mark.parametrize(("verdict", "kept"), [
    ({"hidden_test": "余量比十分之一少 1"}, {"hidden_test": "余量比十分之一少 1"}),
    ({"hidden_test": ""}, {"hidden_test": ""}),
    ({"hidden_test": "<script>x</script>", "extra": 1}, None),
    ({"hidden_test": ["a"]}, None),
    ("a", None),
])
def test_the_graders_verdict_record_is_kept_in_its_shape_only(verdict, kept):
    """A check cell keeps the grader's record of the hidden test it failed (item analysis reads it) when it has
    that record's shape, one string; any other value under that key is dropped."""
    cell = nbformat.v4.new_code_cell("check()", metadata={"ctx_verdict": verdict, "nbgrader": {"grade": True}})
    nb = nbformat.v4.new_notebook(cells=[cell])
    made_inert, _ = MakeInert().preprocess(nb, {})
    assert made_inert.cells[0].metadata.get("ctx_verdict") == kept
