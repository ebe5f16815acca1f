"""The steps of nbgrader's converters that ``nbgrader_config.py`` names: preprocessors and the feedback exporter.

They run inside one submission's autograde or feedback conversion, in the grading process (a Dask
worker or the coordinator), or in nbgrader's own commands and the formgrader on the same config.
Each step is one idea in one file; it takes what it needs through nbgrader's configuration (the
sandbox policy, the reference builds, the evaluations one step starts and the next scores) and
never imports the run that drives it (``grader``, ``engine``, ``worker``). Steps share no state at
module level. The modules are listed in CONTRIBUTING.md.

nbgrader loads each step by its dotted name, so this file imports none of them.
"""
