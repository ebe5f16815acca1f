"""Course operations for the workbook, run by the instructor, the maintainer and the learner's lab.

Each folder is one place and one time of running: ``learner/`` (the learner's lab), ``editions/``
(translation and release), ``grading/`` and ``grading/steps/`` (a grading run and nbgrader's steps in it),
``sandbox/`` (around student code), ``term/`` (after a run); the modules here are shared by them.
The lessons themselves live in ``solutions/`` (source) and ``lessons/`` (release); this package
drives nbgrader over them through its Python API. Run ``python -m ctx_course --help``.

Importing the package defers the IRI grammar jsonschema would build at start-up (``deferred_iri.py``).
"""
from .deferred_iri import defer as _defer_iri_grammar

_defer_iri_grammar()
