"""LayerNorm over the last dimension (biased variance, eps inside the sqrt)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))   # [D]
        self.bias = nn.Parameter(torch.zeros(d_model))    # [D]
        self.eps: float = eps

    def forward(self, x: Tensor) -> Tensor:               # [..., D] -> [..., D]
        xf = x.float()                                    # statistics in float32
        mu = xf.mean(dim=-1, keepdim=True)                # [..., 1]
        var = (xf - mu).pow(2).mean(dim=-1, keepdim=True) # [..., 1], biased
        y = (xf - mu) / torch.sqrt(var + self.eps)
        return (y * self.weight.float() + self.bias.float()).to(x.dtype)
