import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        h = x.to(torch.float32) if x.element_size() < 4 else x
        rms = torch.sqrt(torch.mean(h * h, dim=-1, keepdim=True) + self.eps)
        return (h / rms).to(x.dtype) * self.weight.to(x.dtype)
