"""Visible check cases of the notebook on window math (literals from SPEC)."""
from .runner import CheckCase

CASES: dict[str, tuple[CheckCase, ...]] = {}
