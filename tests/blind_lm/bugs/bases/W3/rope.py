import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    """Each pair (x[i], x[i + Dh/2]) is multiplied by the 2x2 rotation matrix of its angle."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        self.head_dim = head_dim
        self.base = base

    def rotation(self, positions):
        half = self.head_dim // 2
        theta = self.base ** (-torch.arange(half, dtype=positions.dtype, device=positions.device) * 2 / self.head_dim)
        ang = positions[:, None] * theta[None, :]  # [L, Dh/2]
        c, s = torch.cos(ang), torch.sin(ang)
        # R = [[c, -s], [s, c]], shape [L, Dh/2, 2, 2]
        return torch.stack([torch.stack([c, -s], dim=-1), torch.stack([s, c], dim=-1)], dim=-2)

    def forward(self, x, offset=0):
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        L = x.shape[-2]
        R = self.rotation(torch.arange(L, device=x.device, dtype=work) + offset)
        pairs = x.to(work).unflatten(-1, (2, self.head_dim // 2)).transpose(-1, -2)  # [..., L, Dh/2, 2]
        rotated = torch.einsum("lfij,...lfj->...lfi", R, pairs)
        return rotated.transpose(-1, -2).flatten(-2).to(x.dtype)
