import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim & 1:
            raise ValueError("head_dim must be even")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        dh = self.head_dim
        compute = torch.promote_types(x.dtype, torch.float32)
        idx = torch.arange(0, dh, 2, device=x.device, dtype=compute)
        theta = torch.exp(-idx / dh * torch.log(torch.tensor(float(self.base), dtype=compute, device=x.device)))
        pos = torch.arange(offset, offset + x.shape[-2], device=x.device, dtype=compute)
        ang = pos.unsqueeze(-1) * theta
        cos, sin = torch.cos(ang), torch.sin(ang)
        h = x.to(compute)
        a, b = h.split(dh // 2, dim=-1)
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1).to(x.dtype)
