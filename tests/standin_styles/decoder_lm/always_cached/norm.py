import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        upcast = x.dtype in (torch.float16, torch.bfloat16)
        h = x.float() if upcast else x
        inv_rms = (h.square().sum(-1, keepdim=True) / self.dim + self.eps).rsqrt()
        return (h * inv_rms * self.weight).to(x.dtype)
