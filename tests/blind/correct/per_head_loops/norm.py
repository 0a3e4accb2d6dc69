import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        x32 = x.to(torch.float32)
        var, mean = torch.var_mean(x32, dim=-1, unbiased=False, keepdim=True)
        y = (x32 - mean) / torch.sqrt(var + self.eps)
        y = y * self.weight.to(torch.float32) + self.bias.to(torch.float32)
        return y.to(x.dtype)
