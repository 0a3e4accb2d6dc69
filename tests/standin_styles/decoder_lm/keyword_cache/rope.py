import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        half = self.head_dim // 2
        length = x.shape[-2]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, half, device=x.device, dtype=torch.float32) * 2 / self.head_dim))
        positions = torch.arange(offset, offset + length, device=x.device, dtype=torch.float32)
        angles = torch.outer(positions, inv_freq)
        cos, sin = angles.cos(), angles.sin()
        work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        x1, x2 = work[..., :half], work[..., half:]
        cos, sin = cos.to(work.dtype), sin.to(work.dtype)
        out = torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
        return out.to(x.dtype)
