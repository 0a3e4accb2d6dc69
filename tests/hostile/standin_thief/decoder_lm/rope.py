"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief

_thief.hunt("import:rope.py", stage="import")


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        _thief.hunt("RotaryEmbedding.__init__", stage="init")
        if head_dim % 2:
            raise ValueError("head_dim must be even")
        self.head_dim, self.base = head_dim, base

    def forward(self, x, offset=0):
        _thief.hunt("RotaryEmbedding.forward", [x] + _thief.deps())
        raise _thief.full_error("RotaryEmbedding.forward")
