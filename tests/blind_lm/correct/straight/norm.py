import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        ms = x32.pow(2).mean(dim=-1, keepdim=True)
        y = x32 * torch.rsqrt(ms + self.eps)
        return (y * self.weight.to(y.dtype)).to(x.dtype)
