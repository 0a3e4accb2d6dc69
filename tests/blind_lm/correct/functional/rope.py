import torch
from torch import nn


def inv_freq(head_dim, base, device, dtype):
    i = torch.arange(head_dim // 2, device=device, dtype=dtype)
    return torch.pow(torch.tensor(base, device=device, dtype=dtype), -2.0 * i / head_dim)


def rotate_half(x):
    """[x1, x2] -> [-x2, x1] with an index permutation and a sign vector."""
    d = x.shape[-1]
    perm = torch.arange(d, device=x.device).roll(d // 2)
    sign = torch.ones(d, device=x.device, dtype=x.dtype)
    sign[: d // 2] = -1
    return x[..., perm] * sign


def apply_rope(x, positions, base):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    ang = positions.to(work)[:, None] * inv_freq(x.shape[-1], base, x.device, work)[None, :]  # [L, Dh/2]
    cos = ang.cos().repeat(1, 2)  # [L, Dh]: the same angle for i and i + Dh/2
    sin = ang.sin().repeat(1, 2)
    xw = x.to(work)
    return (xw * cos + rotate_half(xw) * sin).to(x.dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim={head_dim} must be even")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        positions = torch.arange(offset, offset + x.shape[-2], device=x.device)
        return apply_rope(x, positions, self.base)
