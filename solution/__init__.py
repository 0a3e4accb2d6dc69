"""The reference Transformer: the implementation every submission is graded against.

One file per concept, in the order a student builds them:
attention -> embedding -> norm -> feedforward -> masks -> layers -> model -> decoding -> training.
"""
