"""What notebook 09's checks name by this path: the projections its check cell imports, the rulers its bank stores.

Covers: the projections of what the learner's functions returned (``as_zone``, ``entry_counts``,
``entry_in_order``: the plain data the cases compare, or a sentence saying what came back instead),
and the tokenizers a case passes as its ``tokenizer`` argument, other than the lesson's:
``CharTokenizer`` (one token per character) and ``PlusOneTokenizer`` (``len // 4 + 1``). The released
notebooks import ``entry_counts`` from this path and the bank stores the tokenizers by it
(``ctx_reference.checks.ledger.CharTokenizer``), so they stay here.

Leaves out: the cases themselves (``exercises/w09_ledger.py``).
"""
from __future__ import annotations

from ..i18n import _
from ..ledger import Zone


class CharTokenizer:
    """A Tokenizer that counts every character as one token (another ruler to inject)."""

    def count(self, text: str) -> int:
        """Return ``len(text)``: ``CharTokenizer().count("你是研究助理") == 6``."""
        return len(text)

    def __repr__(self) -> str:
        return "CharTokenizer()"


class PlusOneTokenizer:
    """A Tokenizer that adds one token to ``len(text) // 4``, the empty text included (as a start token would)."""

    def count(self, text: str) -> int:
        """Return ``len(text) // 4 + 1``: ``PlusOneTokenizer().count("") == 1``."""
        return len(text) // 4 + 1

    def __repr__(self) -> str:
        return "PlusOneTokenizer()"


def as_zone(value):
    """Return ``value`` if it is a ``Zone`` member, else a sentence saying what came back instead."""
    if isinstance(value, Zone):
        return value
    return _("应该返回 Zone 的成员（例如 Zone.SAFE），实际返回了 {value!r}").format(value=value)


def entry_counts(entry):
    """Project a LedgerEntry to (tokens per bucket as a dict, total, zone), or say what is missing.

    For the lesson's peak call: ({'system': 0, 'task_state': 12, 'tool_results': 540,
    'history': 0}, 552, Zone.SAFE). Used by notebook 09's checks.
    """
    missing = [name for name in ("tokens", "total", "zone") if not hasattr(entry, name)]
    if missing:
        return _("应该返回 LedgerEntry(tokens=..., total=..., zone=..., limit=...)，实际返回了 {entry!r}").format(
            entry=entry)
    return (dict(entry.tokens), entry.total, entry.zone, entry.limit)


def entry_in_order(entry):
    """Project a LedgerEntry to ([(bucket, tokens), ...] in its order, total, zone, limit), or say what is missing.

    The generated cases of notebook 09 compare the buckets' order too (the text asks for the four
    buckets in ``BUCKETS`` order): ([('system', 0), ('task_state', 1), ('tool_results', 0),
    ('history', 0)], 1, Zone.SAFE, 100).
    """
    counts = entry_counts(entry)
    if type(counts) is not tuple:
        return counts
    tokens, total, zone_, limit = counts
    return (list(tokens.items()), total, zone_, limit)
