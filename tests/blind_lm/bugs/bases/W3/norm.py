import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = x.to(torch.float32) if x.dtype != torch.float64 else x
        scale = (h.square().mean(dim=-1, keepdim=True) + self.eps) ** -0.5
        return (h * scale * self.weight.to(h.dtype)).to(x.dtype)
