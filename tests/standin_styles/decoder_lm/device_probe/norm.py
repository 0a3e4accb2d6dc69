import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        compute = torch.promote_types(x.dtype, torch.float32)
        h = x.to(compute)
        scale = torch.linalg.vector_norm(h, dim=-1, keepdim=True).pow(2).div(h.shape[-1]).add(self.eps).rsqrt()
        return (h * scale).to(x.dtype) * self.weight.to(x.dtype)
