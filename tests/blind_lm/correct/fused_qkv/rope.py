import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 == 1:
            raise ValueError("head_dim must be even")
        self.head_dim = head_dim
        self.base = base
        # cos/sin tables kept as plain attributes (not buffers), rebuilt when too short or on another device
        self._cos = None
        self._sin = None

    def _tables(self, n, device, dtype):
        if self._cos is None or self._cos.shape[0] < n or self._cos.device != device or self._cos.dtype != dtype:
            size = max(n, 2 * (0 if self._cos is None else self._cos.shape[0]))
            half = self.head_dim // 2
            theta = self.base ** (-2.0 * torch.arange(half, device=device, dtype=dtype) / self.head_dim)
            t = torch.arange(size, device=device, dtype=dtype)
            freqs = t[:, None] * theta[None, :]
            self._cos, self._sin = freqs.cos(), freqs.sin()
        return self._cos[:n], self._sin[:n]

    def forward(self, x, offset=0):
        L = x.size(-2)
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        cos, sin = self._tables(offset + L, x.device, dtype)
        cos, sin = cos[offset:], sin[offset:]  # [L, Dh/2]
        half = self.head_dim // 2
        x1 = x[..., :half].to(dtype)
        x2 = x[..., half:].to(dtype)
        y1 = x1 * cos - x2 * sin
        y2 = x1 * sin + x2 * cos
        return torch.cat((y1, y2), dim=-1).to(x.dtype)
