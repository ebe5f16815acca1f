"""The visible checks' strength, measured by a mutation tool (cosmic-ray) over every exercise's reference.

``targets`` says what is mutated and how a mutant becomes a learner's function,
``learner_operators`` adds to cosmic-ray's core operators mutations modelled on learners' mistakes
(a plugin pyproject.toml registers), ``judge`` is the test command run per mutant, ``campaign``
drives cosmic-ray, ``survivors`` holds the reviewed list of mutants that may survive, ``compare``
calls a survivor beside its reference on drawn calls (the evidence for a review), ``report`` writes
docs/mutation.md. Run it with ``make mutation``.
"""
