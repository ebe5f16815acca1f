"""The projections notebook 04's check cell imports by this path (the released notebooks name it).

Covers: turning what the learner's function returned into the plain data its cases compare, or into a
sentence saying what came back instead.

Leaves out: the cases (``exercises/w04_*.py``), which use these projections too.
"""
from __future__ import annotations

from ..i18n import _


def summary(result) -> tuple[list[str], int, list[tuple[str, str]]]:
    """Return (kept names in output order, used, sorted [(dropped name, reason)]) of an Assembly.

    For the lesson's example: (['rules', 'tools', 'memory', 'doc A', 'doc B', 'time', 'question'],
    10920, [('doc A (copy)', 'duplicate'), ('doc C', 'no room')]). Used by notebook 04's checks.
    """
    if not all(hasattr(result, field) for field in ("items", "used", "dropped")):
        raise TypeError(
            _("返回值应该是 Assembly(items=..., used=..., dropped=...)，而不是 {kind}").format(
                kind=type(result).__name__)
        )
    names = [item.name for item in result.items]
    dropped = sorted((item.name, reason) for item, reason in result.dropped)
    return names, result.used, dropped
