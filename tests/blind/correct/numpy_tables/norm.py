"""Layer normalisation written out by hand."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        in_dtype = x.dtype
        # half precision: do the statistics in float32, cast back at the end
        if in_dtype in (torch.float16, torch.bfloat16):
            x = x.float()
        mean = x.mean(dim=-1, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(dim=-1, keepdim=True)
        y = centred / torch.sqrt(var + self.eps)
        y = y * self.weight.to(y.dtype) + self.bias.to(y.dtype)
        return y.to(in_dtype)
