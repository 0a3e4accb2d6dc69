import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"RoPE needs an even head_dim (got {head_dim})")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        seq_len = x.shape[-2]
        half = self.head_dim // 2
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        xw = x.to(work)
        out = torch.empty_like(xw)
        positions = torch.arange(offset, offset + seq_len, device=x.device, dtype=work)
        for i in range(half):
            theta = self.base ** (-2.0 * i / self.head_dim)
            angle = positions * theta  # [L]
            c, s = torch.cos(angle), torch.sin(angle)
            a, b = xw[..., i], xw[..., i + half]
            out[..., i] = a * c - b * s
            out[..., i + half] = a * s + b * c
        return out.to(x.dtype)
