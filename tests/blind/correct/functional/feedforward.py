import torch.nn.functional as F
from torch import nn

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.p = float(dropout)
        self.activation = activation

    def forward(self, x):
        h = _ACTIVATIONS[self.activation](F.linear(x, self.linear1.weight, self.linear1.bias))
        h = F.dropout(h, p=self.p, training=self.training)
        return F.linear(h, self.linear2.weight, self.linear2.bias)
