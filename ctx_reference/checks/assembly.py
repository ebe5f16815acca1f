"""Visible check cases of the notebook on assembly (literals from SPEC)."""
from .runner import CheckCase

CASES: dict[str, tuple[CheckCase, ...]] = {}
