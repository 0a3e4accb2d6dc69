import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    """Half-split RoPE written with complex numbers: (x[i], x[i + Dh/2]) is the complex x[i] + j x[i + Dh/2]."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"RotaryEmbedding needs an even head_dim, got {head_dim}")
        self.head_dim = head_dim
        self.base = float(base)
        # integer exponents 0, 2, 4, ...: an integer buffer survives model.half() untouched
        self.register_buffer("exponents", torch.arange(0, head_dim, 2), persistent=False)

    def freqs(self, positions):
        inv_freq = self.base ** (-self.exponents.to(positions.device, positions.dtype) / self.head_dim)
        return positions[:, None] * inv_freq[None, :]  # [L, Dh/2]

    def forward(self, x, offset=0):
        L = x.shape[-2]
        half = self.head_dim // 2
        real = torch.float64 if x.dtype == torch.float64 else torch.float32
        pos = torch.arange(L, device=x.device, dtype=real) + offset
        angles = self.freqs(pos)
        rot = torch.polar(torch.ones_like(angles), angles)  # e^{j angle}, [L, Dh/2]
        xr = x.to(real)
        z = torch.view_as_complex(torch.stack([xr[..., :half], xr[..., half:]], dim=-1).contiguous())
        z = z * rot
        return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
