"""Position-wise feed-forward network."""

from torch import nn

_ACTS = {"relu": nn.ReLU, "gelu": nn.GELU}


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        if activation not in _ACTS:
            raise ValueError(f"unknown activation {activation!r}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = _ACTS[activation]()
        self.drop = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.drop(self.act(self.linear1(x))))
