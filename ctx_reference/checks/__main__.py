"""Print docs/rules.md, the rules of every exercise: ``python -m ctx_reference.checks > docs/rules.md``."""
from . import NOTEBOOKS, RULES
from .rules import all_tables, rules_markdown

print(rules_markdown(all_tables(RULES, NOTEBOOKS)), end="")
