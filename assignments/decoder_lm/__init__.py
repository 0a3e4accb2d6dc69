"""The second assignment: a modern decoder-only language model (issue 17), as data.

Students write RMSNorm, rotary position embedding, SwiGLU, grouped-query causal attention with a KV cache, the
pre-norm block, the model with tied embeddings, sampling (temperature, top-k, top-p) and the training pieces
(next-token loss, AdamW, warm-up + cosine schedule, gradient clipping, parameter count). ``docs/CONTRACT_LM.md``
is the contract; ``reference/`` implements it and ``skeleton/`` holds the stubs handed to students.

This package deliberately defines no ``ASSIGNMENT`` yet: its checks come in a later step, and an assignment
without checks must not be loadable (``grader.assignment.load("decoder_lm")`` raises ``AssignmentError``
until then, rather than grading every submission as perfect).
"""
