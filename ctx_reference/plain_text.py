"""Turn a phrase of a notebook's Markdown (with its LaTeX math) into the plain text a person reads.

Covers: the inline Markdown a rule's phrase carries (``**strong**``, ``*emphasis*``, ```code```,
``[links](…)``, backslash escapes) and the LaTeX of the notebooks' formulas, inside ``$…$`` or a
phrase quoted from inside one: ``\\frac{a}{b}`` as ``(a) / b`` (parentheses only where a side has
more than one term), ``\\text{…}`` and its kin as their words, ``^{…}`` and ``_{…}`` as ``^…`` and
``_…``, the operators and spaces the notebooks use (``\\cdot``, ``\\times``, ``\\le``, ``\\,``,
``\\ ``) as characters.

Leaves out: block Markdown (headings, lists, tables), HTML, and LaTeX beyond inline formulas (an
unknown command keeps its name, without the backslash). The text inside a code span is kept as
written.

Vocabulary: a *math span* is the text between two ``$`` (or ``$$``); a *group* is a ``{…}`` with
its braces balanced.
"""
from __future__ import annotations

import re

SYMBOLS = {
    "cdot": "·", "times": "×", "div": "÷", "pm": "±", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "ne": "≠", "neq": "≠", "approx": "≈", "to": "→", "rightarrow": "→", "infty": "∞", "ldots": "…",
    "cdots": "…", "dots": "…", "min": "min", "max": "max", "log": "log", "exp": "exp", "sum": "Σ",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "lambda": "λ", "mu": "μ", "sigma": "σ",
}
"""LaTeX commands without an argument, and the characters they stand for."""
SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": " ", "qquad": " "}
"""LaTeX spacing commands (``\\,``, ``\\ ``, ``\\quad`` …) and what is left of them."""
WORDS = ("text", "textrm", "textit", "textbf", "mathrm", "mathit", "mathbf", "operatorname", "mathsf", "texttt")
"""LaTeX commands whose one argument is shown as it is."""
DROPPED = ("left", "right", "displaystyle", "big", "Big")
"""LaTeX commands that only size or place what follows them."""

_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def _group(text: str, start: int) -> tuple[str, int]:
    """Return the argument at ``start`` (a balanced ``{…}`` group, else one character) and the index after it."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        return "", start
    if text[start] != "{":
        if text[start] == "\\":
            match = _COMMAND.match(text, start)
            if match is not None:
                return match.group(0), match.end()
        return text[start], start + 1
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 1:index], index + 1
    return text[start + 1:], len(text)  # an unclosed group: the rest is its argument


def _operand(text: str) -> str:
    """Return a side of a fraction, in parentheses when it is more than one term."""
    return f"({text})" if re.search(r"[ +\-−·×/]", text.strip()) else text.strip()


def latex_to_text(math: str) -> str:
    r"""Return a LaTeX formula as plain text.

    >>> latex_to_text(r"x = \frac{pos + 0.5}{n}")
    'x = (pos + 0.5) / n'
    >>> latex_to_text(r"(n / \text{half\_at})^{\text{steep}}")
    '(n / half_at)^steep'
    >>> latex_to_text(r"[1,\ -4x(1-x),\ -x]")
    '[1, -4x(1-x), -x]'
    """
    out: list[str] = []
    index = 0
    while index < len(math):
        char = math[index]
        if char == "\\":
            match = _COMMAND.match(math, index)
            name = match.group(1) if match is not None else ""
            index = match.end() if match is not None else index + 1
            if name == "frac":
                top, index = _group(math, index)
                bottom, index = _group(math, index)
                out.append(f"{_operand(latex_to_text(top))} / {_operand(latex_to_text(bottom))}")
            elif name in WORDS:
                word, index = _group(math, index)
                out.append(latex_to_text(word))
            elif name == "sqrt":
                radicand, index = _group(math, index)
                out.append(f"√{_operand(latex_to_text(radicand))}")
            elif name in SPACES:
                out.append(SPACES[name])
            elif name in SYMBOLS:
                out.append(SYMBOLS[name])
            elif name not in DROPPED:
                out.append(name)  # an escaped character (\_ \{ \%) or a command this module does not know
        elif char in "^_" and index + 1 < len(math) and math[index + 1] == "{":
            argument, index = _group(math, index + 1)
            inner = latex_to_text(argument)
            out.append(char + (inner if len(inner) <= 1 or inner.isalnum() else f"({inner})"))
        elif char in "{}":
            index += 1
        else:
            out.append(char)
            index += 1
    return re.sub(r" {2,}", " ", "".join(out))


_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_STRONG = re.compile(r"\*\*(.+?)\*\*|__(?=\S)(.+?)(?<=\S)__", re.S)
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", re.S)
_HELD = "\ue000"  # a private-use character: marks where a code span goes back
_LATEX = re.compile(r"\\(?:[A-Za-z]+|[ ,;:!_{}%$&#^])")


def _prose(text: str) -> str:
    """Plain text of Markdown outside code spans: math spans, links, emphasis and escapes."""
    text = _MATH.sub(lambda m: latex_to_text(m.group(1) if m.group(1) is not None else m.group(2)), text)
    if _LATEX.search(text):  # a phrase quoted from inside a formula, without its dollars
        text = latex_to_text(text)
    text = _LINK.sub(r"\1", text)
    text = _STRONG.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _EMPHASIS.sub(r"\1", text)
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def plain_text(markdown: str) -> str:
    r"""Return a phrase of Markdown (and LaTeX) as the plain text a person reads.

    >>> plain_text("**Output order: stable first, dynamic after**")
    'Output order: stable first, dynamic after'
    >>> plain_text("If `context_tokens` does **not exceed** `threshold`")
    'If context_tokens does not exceed threshold'
    >>> plain_text(r"one row $[1,\ -4x(1-x),\ -x]$ per measured point")
    'one row [1, -4x(1-x), -x] per measured point'
    """
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a str (got {type(markdown).__name__}: {markdown!r})")
    codes: list[str] = []

    def hold(match: re.Match) -> str:  # a code span waits aside, as written, while its Markdown is read
        codes.append(match.group(2).strip() if match.group(2).strip() else match.group(2))
        return f"{_HELD}{len(codes) - 1}{_HELD}"

    text = _prose(_CODE.sub(hold, markdown.replace(_HELD, "")))
    return re.sub(f"{_HELD}(\\d+){_HELD}", lambda m: codes[int(m.group(1))], text)


__all__ = ["latex_to_text", "plain_text"]
