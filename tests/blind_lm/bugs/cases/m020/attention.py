import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    _, Hkv, Lk, _ = k.shape
    group = H // Hkv
    rows = torch.arange(Lq, device=q.device).unsqueeze(1)
    cols = torch.arange(Lk, device=q.device).unsqueeze(0)
    blocked = cols > rows + (Lk - Lq)  # [Lq, Lk]
    outputs = []
    for g in range(Hkv):
        qg = q[:, g * group : (g + 1) * group]  # [B, group, Lq, Dh], the query heads of kv head g
        kg = k[:, g : g + 1]
        vg = v[:, g : g + 1]
        att = torch.matmul(qg, kg.transpose(-2, -1)) / math.sqrt(Dh)
        att = att.masked_fill(blocked, float("-inf"))
        att = torch.softmax(att.float(), dim=-2).to(q.dtype) if q.dtype != torch.float64 else att.softmax(-2)
        outputs.append(torch.matmul(att, vg))
    return torch.cat(outputs, dim=1)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads != 0:
            raise ValueError(f"dim {dim} not divisible by num_heads {num_heads}")
        if num_heads % num_kv_heads != 0:
            raise ValueError(f"num_heads {num_heads} not divisible by num_kv_heads {num_kv_heads}")
        if (dim // num_heads) % 2 != 0:
            raise ValueError(f"head_dim {dim // num_heads} is odd")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = dim // num_heads
        self.q_proj = nn.Linear(dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, dim, bias=False)
        self.rope = RotaryEmbedding(self.head_dim, rope_base)

    def forward(self, x, cache=None):
        B, L, _ = x.size()
        offset = 0
        if cache is not None:
            offset = cache.length
        q = self.q_proj(x).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, L, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, L, self.num_kv_heads, self.head_dim).transpose(1, 2)
        q = self.rope(q, offset=offset)
        k = self.rope(k, offset=offset)
        if cache is not None:
            k, v = cache.update(k, v)
        y = causal_attention(q, k, v)
        y = y.transpose(1, 2).contiguous().view(B, L, -1)
        return self.o_proj(y)
