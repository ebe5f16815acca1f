"""The maintainer's drawing tools: what writes the bank, never imported in a learner's kernel.

Covers: the Hypothesis strategies that draw each exercise's generated cases (``strategies/``), the
writer that calls each exercise's reference on them and stores the bank (``write_bank.py``, run as
``python -m ctx_reference.checks.bank``), and the references called as the learner's function is
(``signatures.py``, for the bank's oracles and the mutation campaign's mutants).

Leaves out: everything a check cell runs (the rest of ``ctx_reference.checks``): nothing there
imports this package or Hypothesis (``tests/test_imports.py`` holds the rule), so a learner's
kernel needs neither.
"""
