import torch
from torch import nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        L = x.shape[-2]
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        idx = torch.arange(0, self.head_dim, 2, device=x.device, dtype=work)
        theta = 1.0 / (self.base ** (idx / self.head_dim))  # [Dh/2]
        pos = torch.arange(offset, offset + L, device=x.device, dtype=work)  # [L]
        ang = torch.outer(pos, theta)  # [L, Dh/2]
        ang = torch.cat([ang, ang], dim=-1)  # [L, Dh]
        cos, sin = ang.cos(), ang.sin()
        xw = x.to(work)
        return (xw * cos + rotate_half(xw) * sin).to(x.dtype)
