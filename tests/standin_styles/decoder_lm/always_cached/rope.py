"""RoPE with angles in float64 (at least float32, as the contract asks), applied with complex numbers."""

import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 == 1:
            raise ValueError(f"odd head_dim {head_dim}")
        self.head_dim = head_dim
        self.base = float(base)

    def forward(self, x, offset=0):
        half = self.head_dim // 2
        theta = self.base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2.0 / self.head_dim)
        pos = torch.arange(x.shape[-2], dtype=torch.float64, device=x.device) + int(offset)
        angle = pos[:, None] * theta[None, :]
        real_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        rot = torch.polar(torch.ones_like(angle), angle).to(torch.complex128 if real_dtype == torch.float64
                                                            else torch.complex64)
        h = x.to(real_dtype)
        z = torch.complex(h[..., :half], h[..., half:]) * rot
        return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)
