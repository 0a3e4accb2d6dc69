import torch
from torch import nn


class RMSNorm(nn.Module):
    """RMS via the L2 norm: rms(x) = ||x|| / sqrt(D)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        work = torch.promote_types(x.dtype, torch.float32)
        xw = x.to(work)
        ms = torch.linalg.vector_norm(xw, ord=2, dim=-1, keepdim=True).square() / x.shape[-1]
        out = xw / torch.sqrt(ms + self.eps)
        return (out * self.weight.to(work)).to(x.dtype)
