import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float() if x.element_size() < 4 else x
        ms = torch.einsum("...d,...d->...", xf, xf).unsqueeze(-1) / xf.shape[-1]
        return torch.einsum("...d,d->...d", xf * torch.rsqrt(ms + self.eps), self.weight.to(xf.dtype)).to(x.dtype)
