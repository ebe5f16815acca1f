"""Course operations for the workbook: generate the student release and grade a class.

The lessons themselves live in ``solutions/`` (source) and ``lessons/`` (release); this package
drives nbgrader over them through its Python API. Run ``python -m ctx_course --help``.
"""
