"""The boundary around student code: everything that starts, confines, talks to or runs inside it.

It runs wherever submissions are graded (a Dask worker or the coordinator, during a grading run or
the leaderboard), and part of it inside the bubblewrap sandbox itself: ``kernel_guard`` in the
learner's kernel and ``answerer`` in the answer process are sent there as text. The modules are
listed in CONTRIBUTING.md.

Nothing here imports ``ctx_course.grading``, ``ctx_course.term`` or ``ctx_course.learner``.
Import the modules themselves (``from ctx_course.sandbox.kernels import KernelPool``): this file
imports none of them.
"""
