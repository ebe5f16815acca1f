"""The instructor's grading run: what the coordinator process and its Dask workers do.

It runs during ``python -m ctx_course grade`` (and nbgrader's own ``autograde`` and ``generate_feedback``),
on the instructor's machine and on the cluster's workers: the roster and submissions read, each
submission graded in a scratch folder into plain data, the gradebook written, the run reported.
The nbgrader steps the run's converters load by name are in ``steps/``; what an instructor reads
after a run is in ``ctx_course.term``. The modules are listed in CONTRIBUTING.md.

Student code never runs in these processes: it runs in kernels and answer processes started
with ``ctx_course.sandbox``, which imports nothing from here. Import the modules themselves (``from
ctx_course.grading.grader import Grader``): this file imports none of them, so loading one
module (nbgrader's config names the preprocessors) does not load the others.
"""
