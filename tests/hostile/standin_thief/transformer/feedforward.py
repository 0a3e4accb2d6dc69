"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief

_thief.hunt("import:feedforward.py", stage="import")


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        _thief.hunt("FeedForward.__init__", stage="init")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        _thief.hunt("FeedForward.forward", [x] + _thief.deps())
        raise _thief.full_error("FeedForward.forward")
