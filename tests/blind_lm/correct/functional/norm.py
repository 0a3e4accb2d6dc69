import torch
from torch import nn


def rms_norm(x, weight, eps):
    dtype = x.dtype
    x = x.to(torch.float64 if dtype == torch.float64 else torch.float32)
    inv_rms = 1.0 / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps)
    return (x * inv_rms * weight.to(x.dtype)).to(dtype)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
