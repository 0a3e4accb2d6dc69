"""Feed-forward sublayer."""

import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        if activation == "relu":
            self.kind = 0
        elif activation == "gelu":
            self.kind = 1
        else:
            raise ValueError("activation must be relu or gelu")

    def forward(self, x):
        h = self.linear1(x)
        if self.kind == 0:
            h = torch.clamp_min(h, 0)
        else:
            h = h * 0.5 * (1.0 + torch.erf(h / 1.4142135623730951))
        return self.linear2(self.dropout(h))
