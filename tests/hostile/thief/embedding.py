"""Implements nothing: see _steal.py."""

from ._steal import thief_class, thief_function

TokenEmbedding = thief_class("TokenEmbedding")
PositionalEncoding = thief_class("PositionalEncoding")
