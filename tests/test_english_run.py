"""The English edition re-executed, notebook by notebook, as nbval re-executes the Chinese one.

``editions.check.run_assignment`` builds the English source notebook (``solutions/`` with its
catalogue), runs it with ``CTX_LANG=en`` in a kernel of its own and compares every code cell with
the Chinese stored outputs (which nbval checks): the same errors, and the same numbers in its text.
"""
from __future__ import annotations

import pytest

from ctx_course.config import assignments
from ctx_course.editions.check import run_assignment

from conftest import REPO

pytestmark = [pytest.mark.heavy]


@pytest.mark.parametrize("assignment", assignments(REPO))
def test_the_english_edition_runs_as_the_chinese_one(assignment):
    assert run_assignment(REPO, assignment) == []
