"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

import torch
from torch import nn

from . import _thief

_thief.hunt("import:norm.py", stage="import")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        _thief.hunt("RMSNorm.__init__", stage="init")
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        _thief.hunt("RMSNorm.forward", [x] + _thief.deps())
        raise _thief.full_error("RMSNorm.forward")
