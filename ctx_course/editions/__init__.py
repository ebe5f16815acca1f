"""The editions: a notebook in another language, from its one source and a catalogue.

It runs when a maintainer translates or releases (``python -m ctx_course i18n``, ``release``), on
their machine; ``translate`` also runs in the grading run and the sandbox, to tell which edition a
submission is in. Catalogues are kept up to date and compiled here, and the English edition is
checked and run against the Chinese. The modules are listed in CONTRIBUTING.md.

Import the modules themselves (``from ctx_course.editions.translate import EDITIONS``): this file
imports none of them.
"""
