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
        work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mean = work.mean(dim=-1, keepdim=True)
        centred = work - mean
        var = (centred * centred).mean(dim=-1, keepdim=True)
        y = centred / torch.sqrt(var + self.eps)
        return (y * self.weight + self.bias).to(x.dtype)
