"""The position-wise feed-forward network."""

import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"unknown activation {activation!r}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation
        self.act = nn.ReLU() if activation == "relu" else nn.GELU()

    def forward(self, x):
        h = self.act(self.linear1(x))
        h = self.dropout(h)
        out = self.linear2(h)
        out = self.act(out)
        return out
