import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        upcast = x.dtype in (torch.float16, torch.bfloat16)
        xf = x.float() if upcast else x
        rms = torch.sqrt(torch.mean(torch.square(xf), dim=-1, keepdim=True) + self.eps)
        y = (xf / rms) * self.weight.to(xf.dtype)
        return y.to(x.dtype)
