import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        h = x.double() if x.dtype == torch.float64 else x.float()
        d = h - h.mean(dim=-1, keepdim=True)
        y = d / (d.pow(2).mean(dim=-1, keepdim=True) + self.eps) ** 0.5
        return torch.addcmul(self.bias, y, self.weight).to(x.dtype)
