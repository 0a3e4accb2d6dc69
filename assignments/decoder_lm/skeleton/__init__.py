"""The assignment: a decoder-only language model written by hand, one file per concept.

Fill in every function and method that raises ``NotImplementedError``; the message names its task id
(``rmsnorm``, ``rope``, ...). ``docs/CONTRACT_LM.md`` is the contract: names, shapes, conventions.
Suggested order: norm -> rope -> feedforward -> attention -> cache -> block -> model -> sampling -> optim ->
training.
"""
