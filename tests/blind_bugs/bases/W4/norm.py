import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mu = x.mean(dim=-1, keepdim=True)
        centred = x - mu
        var = (centred * centred).mean(dim=-1, keepdim=True)
        return centred / torch.sqrt(var + self.eps) * self.weight + self.bias
