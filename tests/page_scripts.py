"""Find what in a piece of HTML could run script in a browser: the tests' detector, apart from the sanitizer.

``script_vectors`` parses HTML twice, with html5lib's tree builder (the parsing algorithm browsers
follow, as vendored by bleach) and with Python's ``html.parser``, and names every element that runs
or loads code, takes over the page or sends a request by itself, every event-handler attribute, every
``style`` but a table cell's alignment, and every URL attribute whose scheme runs code
(``javascript:``, ``vbscript:``, a ``data:`` URL other than an ``<img>``'s raster image), once per
occurrence, so that a page's own scripts can be counted apart from the learner's.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from html.parser import HTMLParser

from bleach._vendor import html5lib

# Elements that run, load or embed code, change where the page's links go, submit, or restyle the page.
ACTIVE_TAGS = frozenset({
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "link", "style",
    "form", "button", "input", "textarea", "select", "svg", "math", "template", "portal", "animate", "set",
    "handler", "listener", "noscript", "xmp", "plaintext",
})
URL_ATTRIBUTES = frozenset({
    "href", "src", "action", "formaction", "data", "background", "poster", "dynsrc", "lowsrc", "srcdoc",
    "xlink:href", "codebase", "cite", "longdesc", "ping", "srcset", "content", "http-equiv",
})
ALIGNMENT = re.compile(r"text-align:\s*(left|right|center);?")
RASTER_DATA_URL = re.compile(r"data:image/(png|jpeg|gif);base64,[a-z0-9+/=]*")
_NOISE = re.compile(r"[`\x00-\x20\x7f-\xa0\s]+")


def _attribute_vector(tag: str, name: str, value: str | None) -> str | None:
    name = name.lower().split("}")[-1]
    value = value or ""
    if name.startswith("on"):
        return f"{tag}[{name}]"
    if name == "style" and not ALIGNMENT.fullmatch(value.strip()):
        return f"{tag}[style]"
    if name in ("srcdoc", "http-equiv", "formaction", "action", "xlink:href", "href") and tag in ACTIVE_TAGS:
        return f"{tag}[{name}]"
    if name in URL_ATTRIBUTES:
        url = _NOISE.sub("", html.unescape(value)).lower()
        if url.startswith(("javascript:", "vbscript:", "livescript:")):
            return f"{tag}[{name}=script]"
        if url.startswith("data:") and not (tag == "img" and name == "src" and RASTER_DATA_URL.fullmatch(url)):
            return f"{tag}[{name}=data]"
    return None


def _vectors(elements) -> Counter:
    found: Counter = Counter()
    for tag, attributes in elements:
        tag = tag.lower().split("}")[-1]
        if tag in ACTIVE_TAGS:
            found[f"<{tag}>"] += 1
        for name, value in attributes:
            vector = _attribute_vector(tag, name, value)
            if vector:
                found[vector] += 1
    return found


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))

    handle_startendtag = handle_starttag


def script_vectors(text: str) -> Counter:
    """Return the script vectors of ``text``, counted, as either parser sees them (the larger count of each).

    >>> sorted(script_vectors('<p>ok</p><img src=x onerror=go()><a href=" JaVa&#83;cript:go()">x</a>'))
    ['a[href=script]', 'img[onerror]']
    """
    tree = html5lib.parseFragment(text, treebuilder="etree", namespaceHTMLElements=False)
    browser = _vectors((element.tag, element.attrib.items()) for element in tree.iter()
                       if isinstance(element.tag, str))
    parser = _Elements()
    parser.feed(text)
    parser.close()
    return browser | _vectors(parser.found)
