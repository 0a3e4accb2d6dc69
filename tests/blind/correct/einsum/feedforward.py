import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        if activation == "relu":
            self.act = nn.ReLU()
        elif activation == "gelu":
            self.act = nn.GELU()
        else:
            raise ValueError(activation)

    def forward(self, x):
        h = torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias
        h = self.dropout(self.act(h))
        return torch.einsum("...f,df->...d", h, self.linear2.weight) + self.linear2.bias
