"""Implements nothing: see _steal.py."""

from ._steal import thief_class, thief_function

FeedForward = thief_class("FeedForward")
