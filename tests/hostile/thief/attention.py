"""Implements nothing: see _steal.py."""

from ._steal import thief_class, thief_function

scaled_dot_product_attention = thief_function("scaled_dot_product_attention")
MultiHeadAttention = thief_class("MultiHeadAttention")
