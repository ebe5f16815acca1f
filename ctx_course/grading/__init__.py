"""The instructor's grading run: everything the coordinator process and its Dask workers do.

Modules: ``records`` (what a run returns), ``submissions`` (the roster and the submitted folders),
``grader`` (the ``Grader``: the coordinator of a run), ``autograde`` (``SubmissionGrader``: one
submission in a scratch folder, graded into plain data), ``diagnosis`` (one line per submission
that failed), ``engine`` (the one interface a run grades through: in this process, or on a Dask
cluster that grades submissions at once), ``worker`` (what runs on a Dask worker),
``gradebook_writer`` (the coordinator's writes of what the engines send back), ``assignment_rows``
(an assignment's gradebook rows, copied into a worker's scratch gradebook), ``fingerprint`` (the
digest a worker's course must match), ``report`` (progress lines, summary, grades CSV),
``csv_files`` (the one CSV writer), ``stopping`` (SIGTERM and SIGINT), ``preprocessors`` and
``metadata`` (the nbgrader steps of grading and feedback), ``feedback_page`` (the exporter of the
feedback pages), ``behaviour``
(check cells judged here, on what the learner's functions return), ``reference_build``
(``ctx_reference`` without a notebook's exercise functions),
``hand_grades`` (hand grades kept through a regrade), ``deadlines`` (due dates, extensions, late
penalties); and what an instructor reads after a run: ``export`` (Canvas and long CSVs, also as
nbgrader export plugins), ``item_analysis`` (per check cell and hidden test) and ``similarity``
(answers alike each other or the model answer).

Student code never runs in these processes: it runs in kernels and answer processes started
with ``ctx_course.sandbox``, which imports nothing from here. Import the modules themselves (``from
ctx_course.grading.grader import Grader``): this file imports none of them, so loading one
module (nbgrader's config names the preprocessors) does not load the others.
"""
