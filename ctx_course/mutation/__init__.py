"""The visible checks' strength, measured by a mutation tool (cosmic-ray) over every exercise's reference.

``targets`` says what is mutated and how a mutant becomes a learner's function, ``judge`` is the
test command run per mutant, ``campaign`` drives cosmic-ray, ``survivors`` holds the reviewed list
of mutants that may survive, ``report`` writes docs/mutation.md. Run it with ``make mutation``.
"""
