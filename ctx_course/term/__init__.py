"""The term's tools: what an instructor runs on a class after its grading run.

They run on the instructor's machine, from ``python -m ctx_course export``, ``items``,
``similarity`` and ``leaderboard`` (and nbgrader's ``export`` through the export plugins), and
read the gradebook, the autograded notebooks and the graded class they leave. The leaderboard
alone runs student code again, in the sandbox's kernels, through the grading run's engine.
Nothing of the learner's side is imported here. The modules are listed in CONTRIBUTING.md.

Import the modules themselves (``from ctx_course.term.export import CanvasExport``): this file
imports none of them.
"""
