"""Rough token counts for budgets and alarms.

What this covers: a character-class estimate of how many tokens a piece of text
will occupy (ASCII characters run about four to a token, every other character,
CJK included, about one token each), and the small ``Tokenizer`` interface that
the context ledger accepts, with ``FakeTokenizer`` as its deterministic stand-in.

What it leaves out: real tokenization. A provider's tokenizer splits text into
pieces learned from data, so the true count depends on the model and can differ
from these estimates by tens of percent. The estimate is good enough to decide
"will this fit?" or "are we getting close to the window?", and it is never the
number to bill by or to reconcile an invoice against; for that, read the usage
that the API reports with each response.

Vocabulary:
    token      -- the unit a model's window and price are measured in (not a character).
    ASCII      -- a character with code point below 128 (English letters, digits, code).
    non-ASCII  -- every other character (Chinese, Japanese, emoji, accented letters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ctx_reference._validate import require_str

ASCII_CHARS_PER_TOKEN = 4  # ASCII characters per token, rounded up per text
NON_ASCII_TOKENS_PER_CHAR = 1  # tokens per non-ASCII character
ASCII_LIMIT = 128  # code points below this are ASCII
FAKE_CHARS_PER_TOKEN = 4  # characters per token for FakeTokenizer (any script)


def estimate_tokens(text: str) -> int:
    """Return the estimated token count: ceil(ASCII chars / 4) + non-ASCII chars.

    A budget and alarm estimate, never a billing figure.

    >>> estimate_tokens("")
    0
    >>> estimate_tokens("hello world")  # 11 ASCII characters -> ceil(11 / 4)
    3
    >>> estimate_tokens("上下文工程")  # 5 Chinese characters, one token each
    5
    >>> estimate_tokens("token 预算")  # 6 ASCII -> 2, plus 2 Chinese -> 4
    4

    Used by notebook 01-window-math to size prompts before sending them.
    """
    require_str(text, "text")
    ascii_chars = sum(1 for ch in text if ord(ch) < ASCII_LIMIT)
    non_ascii_chars = len(text) - ascii_chars
    ascii_tokens = -(-ascii_chars // ASCII_CHARS_PER_TOKEN)  # ceiling division
    return ascii_tokens + non_ascii_chars * NON_ASCII_TOKENS_PER_CHAR


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that can count the tokens of a text.

    The context ledger takes a Tokenizer so that tests can inject a fixed ruler
    and real runs can plug in a provider's counter.
    """

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...


@dataclass(frozen=True)
class FakeTokenizer:
    """A deterministic Tokenizer: ``len(text) // 4`` for text in any script.

    It is the ruler of the context-ledger lesson: cheap, repeatable, and honest
    about being fake. Absolute numbers are not a real tokenizer's, but shares of
    the window, zones and the call where a limit is crossed keep their meaning.
    For Chinese text it undercounts (a real tokenizer spends about one token per
    character), so do not use it to decide whether Chinese prompts fit.
    """

    def count(self, text: str) -> int:
        """Return ``len(text) // 4``.

        >>> FakeTokenizer().count("a" * 552 * 4)
        552
        >>> FakeTokenizer().count("abc")  # fewer than 4 characters count as 0
        0

        Used by notebook 09-context-ledger as the default ruler.
        """
        require_str(text, "text")
        return len(text) // FAKE_CHARS_PER_TOKEN
