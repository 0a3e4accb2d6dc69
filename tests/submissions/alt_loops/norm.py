"""LayerNorm from explicit sums."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.d_model = d_model
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        # accumulate in at least float32 so half-precision sums cannot overflow
        work = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(work)
        n = x.shape[-1]
        mean = torch.sum(xf, dim=-1, keepdim=True) / n
        dev = xf - mean
        var = torch.sum(dev * dev, dim=-1, keepdim=True) / n
        normed = (dev / torch.sqrt(var + self.eps)).to(x.dtype)
        return normed * self.weight + self.bias
