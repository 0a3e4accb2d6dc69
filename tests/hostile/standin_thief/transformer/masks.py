"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from . import _thief

_thief.hunt("import:masks.py", stage="import")


def padding_mask(tokens, pad_idx):
    _thief.hunt("padding_mask", [tokens] + _thief.deps())
    raise _thief.short_error("padding_mask")


def causal_mask(size, device=None):
    _thief.hunt("causal_mask", _thief.deps())
    raise _thief.short_error("causal_mask")


def target_mask(tgt, pad_idx):
    _thief.hunt("target_mask", [tgt] + _thief.deps())
    raise _thief.short_error("target_mask")
