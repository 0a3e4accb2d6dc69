import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError("odd head_dim")
        self.head_dim = head_dim
        self.base = base
        self.register_buffer("inv_freq", self._inv_freq(torch.device("cpu")), persistent=False)

    def _inv_freq(self, device):
        exponents = torch.arange(0, self.head_dim, 2, dtype=torch.float64, device=device) / self.head_dim
        return 1.0 / self.base**exponents

    def forward(self, x, offset=0):
        L = x.shape[-2]
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        inv = self.inv_freq
        if inv.dtype not in (torch.float32, torch.float64) or inv.device != x.device:
            inv = self._inv_freq(x.device)  # the buffer was cast to half precision or moved away
        inv = inv.to(work)
        pos = torch.arange(offset, offset + L, device=x.device, dtype=work)
        ang = torch.einsum("l,f->lf", pos, inv)  # [L, Dh/2]
        cos, sin = ang.cos(), ang.sin()
        xw = x.to(work)
        x1, x2 = xw.unflatten(-1, (2, -1)).unbind(-2)
        y = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-2).flatten(-2)
        return y.to(x.dtype)
