"""The projections notebook 08's check cell imports by this path (the released notebooks name it).

Covers: turning what the learner's function returned into the plain data its cases compare, or into a
sentence saying what came back instead.

Leaves out: the cases (``exercises/w08_*.py``), which use these projections too.
"""
from __future__ import annotations

from ..i18n import _


def as_lists(result):
    """Project a diff result to (fixed, broke) as two lists (or a description of the problem)."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return _("返回值应该是 (fixed, broke) 两个列表，实际是 {result!r}").format(result=result)
    fixed, broke = result
    if type(fixed) is not list or type(broke) is not list:
        return _("fixed 和 broke 都应该是用例 id 的列表（list），实际是 {result!r}").format(result=result)
    return (fixed, broke)
