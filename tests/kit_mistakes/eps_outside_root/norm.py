"""Layer normalisation, written from the contract (one mistake: eps added to the standard deviation)."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        centred = x - x.mean(-1, keepdim=True)
        std = centred.pow(2).mean(-1, keepdim=True).sqrt()
        return self.weight * centred / (std + self.eps) + self.bias
