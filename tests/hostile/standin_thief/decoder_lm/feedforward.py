"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief

_thief.hunt("import:feedforward.py", stage="import")


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        _thief.hunt("SwiGLU.__init__", stage="init")
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        _thief.hunt("SwiGLU.forward", [x] + _thief.deps())
        raise _thief.full_error("SwiGLU.forward")
