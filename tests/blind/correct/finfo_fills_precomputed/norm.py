"""Layer normalisation over the last dimension."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        # statistics in float32 for half-precision inputs, result back in x's dtype
        xf = x.float()
        mu = xf.mean(-1, keepdim=True)
        centered = xf - mu
        var = (centered * centered).mean(-1, keepdim=True)
        y = centered * torch.rsqrt(var + self.eps)
        y = y * self.weight.float() + self.bias.float()
        return y.to(x.dtype)
