"""The learner's side: their copy of the release and the JupyterLab they work in.

It runs on the learner's machine, from ``python -m ctx_course workspace``, ``lab`` and ``update``
(``make lab``, ``make update``): the workspace made from ``lessons/`` or ``lessons-en/``, a new release merged into
it, and JupyterLab started there with the Jupyter configuration of ``jupyter_config/``. Nothing
here imports the grading run. The modules are listed in CONTRIBUTING.md.

Import the modules themselves (``from ctx_course.learner.lab import exec_lab``): this file imports
none of them.
"""
