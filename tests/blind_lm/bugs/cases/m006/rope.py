import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    """Half-split RoPE as a complex product: z = x[:Dh/2] + i x[Dh/2:], z' = z e^{i p theta}."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError("head_dim must be even")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        L = x.shape[-2]
        half = self.head_dim // 2
        real = torch.float64 if x.dtype == torch.float64 else torch.float32
        theta = torch.pow(self.base, -torch.arange(0, half, device=x.device, dtype=real) / self.head_dim)
        pos = torch.arange(L, device=x.device, dtype=real) + offset
        phase = torch.polar(torch.ones(L, half, device=x.device, dtype=real), torch.outer(pos, theta))
        xr = x.to(real)
        z = torch.complex(xr[..., :half], xr[..., half:]) * phase
        return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
