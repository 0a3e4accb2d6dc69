import math

import torch
import torch.nn.functional as F
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    """One head at a time."""
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.size(1), k.size(2)
    per_kv = H // Hkv
    blocked = torch.triu(torch.ones(Lq, Lk, device=q.device), diagonal=Lk - Lq + 1).bool()
    half = q.dtype in (torch.float16, torch.bfloat16)
    outs = []
    for h in range(H):
        kv = h // per_kv
        qh, kh, vh = q[:, h], k[:, kv], v[:, kv]
        if half:
            qh, kh, vh = qh.float(), kh.float(), vh.float()
        s = torch.matmul(qh, kh.transpose(-1, -2)) * (1.0 / math.sqrt(Dh))  # [B, Lq, Lk]
        s = s.masked_fill(blocked, -math.inf)
        outs.append(torch.matmul(F.softmax(s, dim=-1), vh).to(q.dtype))
    return torch.stack(outs, dim=1)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads != 0 or num_heads % num_kv_heads != 0:
            raise ValueError("bad head configuration")
        if (dim // num_heads) % 2 != 0:
            raise ValueError("RoPE needs an even head size")
        self.H = num_heads
        self.Hkv = num_kv_heads
        self.Dh = dim // num_heads
        self.q_proj = nn.Linear(dim, self.H * self.Dh, bias=False)
        self.k_proj = nn.Linear(dim, self.Hkv * self.Dh, bias=False)
        self.v_proj = nn.Linear(dim, self.Hkv * self.Dh, bias=False)
        self.o_proj = nn.Linear(self.H * self.Dh, dim, bias=False)
        self.rope = RotaryEmbedding(self.Dh, base=rope_base)

    def forward(self, x, cache=None):
        B, L, D = x.shape
        pos0 = cache.length if cache is not None else 0
        # fused QKV: one matmul with the three weights stacked
        w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight], dim=0)
        qkv = x @ w.t()
        q, k, v = qkv.split([self.H * self.Dh, self.Hkv * self.Dh, self.Hkv * self.Dh], dim=-1)
        q = q.reshape(B, L, self.H, self.Dh).transpose(1, 2)
        k = k.reshape(B, L, self.Hkv, self.Dh).transpose(1, 2)
        v = v.reshape(B, L, self.Hkv, self.Dh).transpose(1, 2)
        q, k = self.rope(q, offset=pos0), self.rope(k, offset=pos0)
        if cache is not None:
            k, v = cache.update(k, v)
        y = causal_attention(q, k, v).transpose(1, 2).contiguous().view(B, L, self.H * self.Dh)
        return self.o_proj(y)
