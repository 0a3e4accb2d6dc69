"""Implements nothing: see _steal.py."""

from ._steal import thief_class, thief_function

padding_mask = thief_function("padding_mask")
causal_mask = thief_function("causal_mask")
target_mask = thief_function("target_mask")
