"""The exporter of the feedback pages: the document nbconvert's HTMLExporter writes, for less CPU.

Covers: ``FeedbackExporter``, which nbgrader's ``generate_feedback`` uses in place of
HTMLExporter (``GenerateFeedback.exporter_class``), and ``describe_images``. Two costs of
HTMLExporter that a class's feedback pays again and again are paid less often:

- every exporter compiles its Jinja templates anew, and nbgrader makes one exporter per
  assignment; here the compiled templates are kept in memory for every exporter of the process
  with the same template folders (Jinja's bytecode cache, which checks each template's source,
  so an edited template is compiled again);
- after rendering, HTMLExporter parses the whole page with BeautifulSoup, gives every image
  without one an alternative text and every cell of a JupyterLab page a ``tabindex``, and
  writes the page out again: about a third of the cost of a page. Here the images get the same
  text in the page as rendered (``describe_images``), and the page is not parsed again.

The feedback template (nbgrader's, on nbconvert's classic one) has no JupyterLab cells, so the
page is the same document as HTMLExporter's; ``tests/test_feedback_page.py`` checks that by
parsing both. Leaves out: what the page shows (nbgrader's template, ``preprocessors.py``).
"""
from __future__ import annotations

import re

import jinja2
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

# The text HTMLExporter gives an image that has none (nbconvert's own words, kept for equality).
MISSING_ALT = "No description has been provided for this image"
# An <img> start tag: its attributes, quoted values may hold ">".
IMG_TAG = re.compile(r"""<img\b((?:[^>"']|"[^"]*"|'[^']*')*)>""", re.IGNORECASE)
# One attribute of a start tag: its name, then perhaps "=" and a value (quoted or not).
ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?""")
_BYTECODE: dict[tuple, _MemoryBytecodeCache] = {}


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates in this process's memory (Jinja checks each one against its source)."""

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if (code := self.store.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.store[bucket.key] = bucket.bytecode_to_string()


def describe_images(html: str) -> str:
    """Give every ``<img>`` tag without an ``alt`` attribute HTMLExporter's alternative text.

    >>> describe_images('<p><img src="a.png"><img alt="plot" src="b.png"/></p>')
    '<p><img alt="No description has been provided for this image" src="a.png"><img alt="plot" src="b.png"/></p>'
    """
    def described(tag: re.Match) -> str:
        if any(name.group(1).lower() == "alt" for name in ATTRIBUTE.finditer(tag.group(1))):
            return tag.group(0)
        return f'<img alt="{MISSING_ALT}"{tag.group(1)}>'

    return IMG_TAG.sub(described, html)


class FeedbackExporter(HTMLExporter):
    """HTMLExporter whose templates are compiled once per process and whose page is not parsed again."""

    def _create_environment(self):
        environment = super()._create_environment()
        key = (tuple(self.template_paths), tuple(sorted(environment.extensions)), environment.is_async)
        environment.bytecode_cache = _BYTECODE.setdefault(key, _MemoryBytecodeCache())
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter's own steps before rendering (nbconvert 7), then the template's page as it is.
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return describe_images(html), resources
