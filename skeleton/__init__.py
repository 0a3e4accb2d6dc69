"""The assignment: a Transformer written by hand, one file per concept.

Fill in every function and method that raises ``NotImplementedError``; the
message names its task id (``sdpa``, ``mha``, ...). Suggested order:
attention -> embedding -> norm -> feedforward -> masks -> layers -> model ->
decoding -> training. Check your work with ``gradekit check skeleton``
(or on a copy of this folder).
"""
