"""The reference decoder-only language model: the implementation every submission is graded against.

One file per concept, in the order a student builds them:
norm -> rope -> feedforward -> attention -> cache -> block -> model -> sampling -> optim -> training.
``docs/CONTRACT_LM.md`` is the contract these files implement.
"""
