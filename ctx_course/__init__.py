"""Course operations for the workbook: generate the student release and grade a class.

The lessons themselves live in ``solutions/`` (source) and ``lessons/`` (release); this package
drives nbgrader over them through its Python API. Run ``python -m ctx_course --help``.

Importing the package defers the IRI grammar jsonschema would build at start-up (``deferred_iri.py``).
"""
from .deferred_iri import defer as _defer_iri_grammar

_defer_iri_grammar()
