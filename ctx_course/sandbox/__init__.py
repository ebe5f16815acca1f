"""Everything that starts, confines, talks to or runs inside a student's kernel.

Modules: ``policy`` (the bubblewrap sandbox and its limits), ``kernels`` (the kernel managers, the
``KernelPool`` that launches them one notebook ahead, ``course_pool``), ``execute`` (nbgrader's
Execute running notebooks in the pool's kernels), ``kernel_guard`` (runs inside the kernel; the
grader sends it as text and never imports it), ``answerer`` (runs the learner's cells in notebook
order in a sandboxed process of their own, stops where each check cell stands, and answers calls
with plain data; the grader sends it as text, and imports it only for the codec both ends share)
and ``answer_session`` (the grader's end of that protocol: starts the process, walks it from
check cell to check cell, calls the learner's functions).

This is the whole boundary around student code: nothing here imports ``ctx_course.grading``.
Import the modules themselves (``from ctx_course.sandbox.kernels import KernelPool``): this file
imports none of them.
"""
