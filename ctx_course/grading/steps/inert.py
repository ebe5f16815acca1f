"""Everything of a learner's notebook that an instructor's browser renders, made inert: no script can run.

An autograded notebook is shown as HTML in the Formgrader (nbgrader renders it with nbconvert's
``HTMLExporter`` on the Jupyter server's own origin, where a script could call the server's API as
the instructor) and becomes the learner's feedback page. Everything in it that the learner's code
or hands wrote is hostile: the outputs of every cell, the markdown and raw cells, the attachments,
the metadata the templates read. ``MakeInert`` keeps of it only what cannot run:

- an output keeps ``text/plain``, raster images (PNG, JPEG, GIF, as base64 and nothing else),
  ``text/html`` passed through ``clean_html`` and ``text/markdown`` through ``safe_markdown``;
  every other type (JavaScript, SVG, LaTeX, widgets, any unknown type) is dropped, and an output
  left with nothing to show says which types were left out. Of an output's metadata only the
  whole-number width and height of an image are kept;
- a markdown cell keeps its source when nbconvert renders it into markup that ``clean_html``
  leaves as it is, and becomes that cleaned HTML otherwise (it reads the same, without what
  could run); a raw cell's source is cleaned and its format forgotten (raw cells are then not
  rendered into the page at all);
- an attachment keeps its raster images only; cell metadata keeps ``nbgrader`` (put back from
  the gradebook before grading, ``metadata.py``) and plain ``tags``; notebook metadata keeps the
  kernel's and language's names and the edition.

``clean_html`` is bleach's sanitizer with a closed list of tags and attributes: no ``script``,
``style``, ``iframe``, ``object``, ``form``, ``base``, ``meta`` or ``svg``; no ``on*`` attribute, no
``style`` but a table cell's alignment, no ``class`` but those of highlighted code, heading anchors
and pandas tables (none of the page's own); links only to ``http``, ``https``, ``mailto``, the page
itself and notebook or markdown files (the glossary), never to a file of the learner's that the
server would send as a page of its own origin; images only from a ``data:`` URL of a raster image
(an image from elsewhere would send a request as the page opens). What it refuses is removed; a
refused tag's text stays, as text. nbconvert's own ``sanitize_html`` is not used: it writes
paragraphs, headings and table heads out as visible tags.

Covers: ``clean_html``, ``render_markdown``, ``safe_markdown``, ``inert_data``, ``inert_output``,
``inert_attachments``, ``inert_metadata`` (pure functions) and ``MakeInert``, the preprocessor that
applies them to a whole notebook, run by autograding after the output caps
(``AUTOGRADE_PREPROCESSORS``) and by every ``HTMLExporter`` of the course, the Formgrader's and the
feedback's (``c.HTMLExporter.preprocessors`` in ``nbgrader_config.py``; the hub's Formgrader service
in ``hub/grader/jupyter_server_config.json``).

Leaves out: the size of outputs (``CapOutput``), hidden tests in the feedback (``HideHiddenTests``),
the page's own markup and scripts (nbgrader's and nbconvert's templates), and what a reader does
with a link they click.

Vocabulary: *inert* content is content a browser shows without running anything: no script, no
event handler, no URL that runs code, no frame or form, no style.
"""
from __future__ import annotations

import functools
import html
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import bleach
import nbformat
from bleach.css_sanitizer import CSSSanitizer
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbgrader.preprocessors import NbGraderPreprocessor
from pygments.token import STANDARD_TYPES

from ctx_reference.i18n import N_, _, using

from ...editions.translate import submitted_edition
from .behaviour import VERDICT_KEY

# The tags a learner's HTML and rendered markdown may keep: text, lists, tables, code, images.
ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "q", "s",
    "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
    "tr", "u", "ul", "var",
})
# The attributes each may keep ("*": every tag). No on*, no id outside headings, no style but a table's alignment,
# no class but those nbconvert and pandas write (CLASSES: none of the page's own, which could restyle it).
ALLOWED_ATTRIBUTES = {
    "*": {"class", "title", "align"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "ol": {"start"},
    "table": {"border"},
    "td": {"colspan", "rowspan", "style"},  # style: a markdown table's column alignment only (TABLE_ALIGN)
    "th": {"colspan", "rowspan", "style"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto", "data"})  # data: only for an image (``_allowed``)
RASTER_TYPES = ("image/png", "image/jpeg", "image/gif")
# A raster image's data in a notebook: base64 and nothing else.
BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")
# A data: URL an <img> may load: a raster image, in base64.
RASTER_DATA_URL = re.compile(r"data:image/(png|jpeg|gif);base64,[a-z0-9+/=]*")
# What a browser ignores inside a URL's scheme (bleach strips the same before reading it).
_URL_NOISE = re.compile(r"[`\x00-\x20\x7f-\xa0\s]+")
# The classes an element may keep: a highlighted block's and its tokens' (Pygments), a heading's anchor, a table's.
CLASSES = frozenset({"highlight", "anchor-link", "dataframe", *filter(None, STANDARD_TYPES.values())})
HIGHLIGHT_CLASS = re.compile(r"hl-[A-Za-z0-9_+-]{1,40}")  # nbconvert's class naming a block's language
# Where a link may lead: a page elsewhere, a mail, a place in this page, or a notebook or markdown file
# (the glossary), which a server sends as a file, never as a page of its own origin (a learner's .html
# or .svg handed in beside the notebook would be: the Formgrader serves a submission's files).
OUTSIDE_LINK = re.compile(r"(https?|mailto):")
LINKED_FILES = (".md", ".ipynb")
TABLE_ALIGN = re.compile(r"text-align:\s*(left|right|center);?")  # the one style a table cell may keep
SAFE_TAG = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a cell tag kept in the metadata
CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # nbformat's cell id
# Markdown sources whose verdict a process keeps: the release's cells are the same in every learner's notebook,
# and rendering one (with its code highlighted) and cleaning it costs milliseconds.
MARKDOWN_CACHE = 4096
MAX_IMAGE_SIDE = 10_000  # pixels: the largest width or height of an image kept from an output's metadata
# What an output keeps as it is (text/html and text/markdown are kept cleaned).
KEPT_AS_IS = ("text/plain", *RASTER_TYPES)
KEPT_NOTEBOOK_METADATA = {"kernelspec": ("name", "display_name", "language"), "language_info": ("name",)}
# Shown in place of an output whose every type was dropped (in the submission's language).
DROPPED_NOTE = N_("（这个输出的类型 {types} 不在评分页面里显示）")


def _allowed(tag: str, name: str, value: str) -> bool:
    """Whether attribute ``name="value"`` of ``tag`` may stay (bleach then checks a URL's scheme too)."""
    if name not in ALLOWED_ATTRIBUTES["*"] and name not in ALLOWED_ATTRIBUTES.get(tag, ()):
        return False
    if name in ("href", "src"):
        url = _URL_NOISE.sub("", html.unescape(value)).lower()
        if tag == "img":  # no request leaves the page: not to the server's API, not to a tracker
            return RASTER_DATA_URL.fullmatch(url) is not None
        if tag == "a":
            return bool(url.startswith("#") or OUTSIDE_LINK.match(url) or urlsplit(url).path.endswith(LINKED_FILES))
    if name == "class":
        return all(word in CLASSES or HIGHLIGHT_CLASS.fullmatch(word) for word in value.split())
    if name == "style":
        return TABLE_ALIGN.fullmatch(value.strip()) is not None
    if name in ("width", "height", "colspan", "rowspan", "start", "border"):
        return value.strip().isdigit()
    return True


_CLEANER = bleach.Cleaner(
    tags=ALLOWED_TAGS, attributes=_allowed, protocols=ALLOWED_PROTOCOLS, strip=True, strip_comments=True,
    css_sanitizer=CSSSanitizer(allowed_css_properties=["text-align"]),
)


def clean_html(text: str) -> str:
    """Return ``text`` with every tag and attribute outside the allowed lists removed (their text stays).

    >>> clean_html('<p onclick="steal()">ok <b>bold</b></p><script>steal()</script>')
    '<p>ok <b>bold</b></p>steal()'
    >>> clean_html('<a href="javascript:steal()">link</a> <img src="x" onerror="steal()">')
    '<a>link</a> <img>'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (got {type(text).__name__})")
    return _CLEANER.clean(text)


class _Markup(HTMLParser):
    """The start tags of a piece of HTML, each with its attributes in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []

    def handle_starttag(self, tag, attrs):
        # a style as bleach writes it back ("text-align:right;") is the same style
        attrs = [(name, value.rstrip("; ") if name == "style" and value else value) for name, value in attrs]
        self.tags.append((tag, tuple(sorted(attrs, key=lambda pair: pair[0]))))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)


def _markup(text: str) -> list:
    parser = _Markup()
    parser.feed(text)
    parser.close()
    return parser.tags


def render_markdown(source: str, attachments: dict | None = None) -> str:
    """Return the HTML nbconvert's exporters make of a markdown cell's ``source`` (anchors and math as theirs)."""
    renderer = IPythonRenderer(escape=False, attachments=attachments or {}, anchor_link_text="¶")
    return MarkdownWithMath(renderer=renderer).render(source)


def safe_markdown(source: str, attachments: dict | None = None) -> str:
    """Return ``source`` if its rendering holds nothing ``clean_html`` removes, else the cleaned rendering.

    ``attachments`` are the cell's (already ``inert_attachments``). A source nbconvert cannot
    render (an attachment that is not there) becomes its text, escaped.

    >>> safe_markdown("**2** tokens: see [the text](https://example.org)")
    '**2** tokens: see [the text](https://example.org)'
    >>> safe_markdown('hi <img src=x onerror="steal()">')
    '<p>hi <img></p>\\n'
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str (got {type(source).__name__})")
    return _safe_markdown(source, attachments) if attachments else _safe_markdown_alone(source)


@functools.lru_cache(maxsize=MARKDOWN_CACHE)
def _safe_markdown_alone(source: str) -> str:
    return _safe_markdown(source, None)


def _safe_markdown(source: str, attachments: dict | None) -> str:
    try:
        rendered = render_markdown(source, attachments)
    except Exception:  # noqa: BLE001 - whatever nbconvert raises, the page shows the source as text
        return f"<pre>{html.escape(source)}</pre>"
    cleaned = clean_html(rendered)
    return source if _markup(cleaned) == _markup(rendered) else cleaned


def _text(value) -> str | None:
    """Return a notebook text field (a str, or a list of str) as one str; None for anything else."""
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    return value if isinstance(value, str) else None


def _raster(value) -> str | None:
    text = _text(value)
    return text if text is not None and BASE64.fullmatch(text) else None


def _image_metadata(metadata) -> dict:
    """Return the whole-number width and height of each raster image in an output's ``metadata``."""
    kept: dict = {}
    if not isinstance(metadata, dict):
        return kept
    for mime in RASTER_TYPES:
        sizes = metadata.get(mime)
        if isinstance(sizes, dict):
            sides = {side: sizes[side] for side in ("width", "height")
                     if type(sizes.get(side)) is int and 0 < sizes[side] <= MAX_IMAGE_SIDE}
            if sides:
                kept[mime] = sides
    return kept


def inert_data(data) -> tuple[dict, list[str]]:
    """Return what an output's ``data`` keeps (see the module's docstring) and the types it dropped.

    >>> inert_data({"text/plain": "<HTML>", "application/javascript": "steal()", "text/html": "<b>x</b>"})
    ({'text/plain': '<HTML>', 'text/html': '<b>x</b>'}, ['application/javascript'])
    """
    kept: dict = {}
    dropped: list[str] = []
    for mime, value in (data.items() if isinstance(data, dict) else ()):
        text = _raster(value) if mime in RASTER_TYPES else _text(value)
        if text is None or mime not in (*KEPT_AS_IS, "text/html", "text/markdown"):
            dropped.append(str(mime)[:80])
        elif mime == "text/html":
            kept[mime] = clean_html(text)
        elif mime == "text/markdown":
            kept[mime] = safe_markdown(text)
        else:
            kept[mime] = text
    return kept, dropped


def inert_output(output) -> dict | None:
    """Return ``output`` made inert (a new output), or None for an output of no known type.

    >>> inert_output({"output_type": "display_data", "data": {"text/html": "<script>steal()</script>"},
    ...               "metadata": {"text/html": {"isolated": True}}})
    {'output_type': 'display_data', 'metadata': {}, 'data': {'text/html': 'steal()'}}
    """
    kind = output.get("output_type") if isinstance(output, dict) else None
    if kind == "stream":
        name = output.get("name")
        return nbformat.v4.new_output("stream", name=name if name in ("stdout", "stderr") else "stdout",
                                      text=_text(output.get("text")) or "")
    if kind == "error":
        traceback = output.get("traceback")
        lines = [line for line in traceback if isinstance(line, str)] if isinstance(traceback, list) else []
        return nbformat.v4.new_output("error", ename=_text(output.get("ename")) or "", traceback=lines,
                                      evalue=_text(output.get("evalue")) or "")
    if kind not in ("display_data", "execute_result"):
        return None
    data, dropped = inert_data(output.get("data"))
    if dropped and "text/plain" not in data:
        data["text/plain"] = _(DROPPED_NOTE).format(types=", ".join(dropped[:5]))
    new = nbformat.v4.new_output(kind, data=data, metadata=_image_metadata(output.get("metadata")))
    if kind == "execute_result":
        count = output.get("execution_count")
        new["execution_count"] = count if type(count) is int else None
    return new


def inert_attachments(attachments) -> dict:
    """Return the raster images of a cell's ``attachments`` (an attachment with none is dropped).

    >>> inert_attachments({"a.png": {"image/png": "iVBO"}, "b.svg": {"image/svg+xml": "<svg onload=x()>"}})
    {'a.png': {'image/png': 'iVBO'}}
    """
    kept: dict = {}
    for name, bundle in (attachments.items() if isinstance(attachments, dict) else ()):
        if not isinstance(name, str) or not isinstance(bundle, dict):
            continue
        images = {mime: text for mime in RASTER_TYPES if (text := _raster(bundle.get(mime))) is not None}
        if images:
            kept[name] = images
    return kept


def inert_metadata(metadata) -> dict:
    """Return the notebook metadata the pages may read: kernel and language names (strings), the edition.

    >>> inert_metadata({"language_info": {"name": "python", "version": "3"}, "widgets": {"x": 1},
    ...                 "ctx_edition": "en"})
    {'language_info': {'name': 'python'}, 'ctx_edition': 'en'}
    """
    kept: dict = {}
    if not isinstance(metadata, dict):
        return kept
    for key, fields in KEPT_NOTEBOOK_METADATA.items():
        given = metadata.get(key)
        if isinstance(given, dict):
            strings = {name: given[name] for name in fields if isinstance(given.get(name), str)}
            if strings:
                kept[key] = strings
    if isinstance(metadata.get("ctx_edition"), str):
        kept["ctx_edition"] = metadata["ctx_edition"]
    return kept


def _cell_metadata(metadata) -> dict:
    kept: dict = {}
    if not isinstance(metadata, dict):
        return kept
    if isinstance(metadata.get("nbgrader"), dict):
        kept["nbgrader"] = metadata["nbgrader"]
    tags = metadata.get("tags")
    if isinstance(tags, list):
        kept["tags"] = [tag for tag in tags if isinstance(tag, str) and SAFE_TAG.fullmatch(tag)]
    verdict = metadata.get(VERDICT_KEY)  # the grader's record of the hidden test a check cell failed (item analysis)
    if isinstance(verdict, dict) and set(verdict) == {"hidden_test"} and isinstance(verdict["hidden_test"], str):
        kept[VERDICT_KEY] = {"hidden_test": verdict["hidden_test"][:200]}
    return kept


class MakeInert(NbGraderPreprocessor):
    """Make every output, markdown and raw cell, attachment and metadata of a notebook inert (see the module).

    Example: a cell that ran ``display(HTML("<script>steal()</script><b>ok</b>"))`` keeps
    ``<b>ok</b>`` and the text ``steal()``; a markdown answer ``<img src=x onerror=steal()>``
    becomes ``<p><img></p>``.
    """

    def preprocess(self, nb, resources):
        nb.metadata = nbformat.from_dict(inert_metadata(nb.get("metadata")))
        with using(submitted_edition(nb)):  # the note on a dropped output reads in the submission's language
            for index, cell in enumerate(nb.cells):
                nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        cell.metadata = nbformat.from_dict(_cell_metadata(cell.get("metadata")))
        if "id" in cell and not (isinstance(cell.id, str) and CELL_ID.fullmatch(cell.id)):
            cell.id = f"cell-{cell_index}"
        source = _text(cell.get("source")) or ""
        if cell.cell_type == "code":
            cell.pop("attachments", None)
            kept = (inert_output(output) for output in cell.get("outputs", []))
            cell.outputs = [nbformat.from_dict(output) for output in kept if output is not None]
            return cell, resources
        attachments = inert_attachments(cell.get("attachments"))
        if attachments:
            cell.attachments = nbformat.from_dict(attachments)
        else:
            cell.pop("attachments", None)
        cell.source = safe_markdown(source, attachments) if cell.cell_type == "markdown" else clean_html(source)
        return cell, resources
