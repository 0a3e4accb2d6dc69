"""A Transformer whose stacks are run with functools.reduce and whose decoding runs in inference mode."""
