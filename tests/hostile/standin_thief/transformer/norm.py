"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

import torch
from torch import nn

from . import _thief

_thief.hunt("import:norm.py", stage="import")


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        _thief.hunt("LayerNorm.__init__", stage="init")
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        _thief.hunt("LayerNorm.forward", [x] + _thief.deps())
        raise _thief.full_error("LayerNorm.forward")
