"""RoPE with the inverse frequencies computed once, in float64, and kept as a plain attribute (not a buffer:
.half() would round a buffer to float16, which cannot place position 2049)."""

import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError("RotaryEmbedding needs an even head_dim")
        self.head_dim = head_dim
        exponents = torch.arange(head_dim // 2, dtype=torch.float64) * 2.0 / head_dim
        self.inv_freq = torch.pow(float(base), -exponents)

    @staticmethod
    def _rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, x, offset=0):
        inv_freq = self.inv_freq.to(device=x.device, dtype=torch.float32)
        pos = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32) + offset
        freqs = pos[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        h = x.float() if x.element_size() < 4 else x
        y = h * emb.cos().to(h.dtype) + self._rotate_half(h) * emb.sin().to(h.dtype)
        return y.to(x.dtype)
