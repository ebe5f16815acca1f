"""The learner's side: their copy of the release and the JupyterLab they work in.

It runs on the learner's machine, from ``python -m ctx_course workspace``, ``lab``, ``update`` and ``progress``
(``make lab``, ``make update``, ``make progress``): the workspace made from ``lessons/`` or ``lessons-en/``, its
start page, a new release merged into it, JupyterLab started there with the Jupyter configuration of
``jupyter_config/``, and the learner's progress read from its saved notebooks. Nothing
here imports the grading run. The modules are listed in CONTRIBUTING.md.

Import the modules themselves (``from ctx_course.learner.lab import exec_lab``): this file imports
none of them.
"""
