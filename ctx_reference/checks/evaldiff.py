"""Visible check cases of the notebook on evaldiff (literals from SPEC)."""
from .runner import CheckCase

CASES: dict[str, tuple[CheckCase, ...]] = {}
