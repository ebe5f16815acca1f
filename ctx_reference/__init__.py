"""Reference implementation of the context-engineering workbook."""
from .window import remaining
