import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    groups = H // Hkv
    k = k.repeat_interleave(groups, dim=1)  # [B, H, Lk, Dh]
    v = v.repeat_interleave(groups, dim=1)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(Dh)  # [B, H, Lq, Lk]
    allowed = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(diagonal=Lk - Lq)
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads != 0:
            raise ValueError("dim must be divisible by num_heads")
        if num_heads % num_kv_heads != 0:
            raise ValueError("num_heads must be divisible by num_kv_heads")
        self.head_dim = dim // num_heads
        if self.head_dim % 2 != 0:
            raise ValueError("head dim must be even for RoPE")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.rope = RotaryEmbedding(self.head_dim, rope_base)
        self.q_proj = nn.Linear(dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, dim, bias=False)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        offset = cache.length if cache is not None else 0
        q = self.q_proj(x).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, L, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, L, self.num_kv_heads, self.head_dim).transpose(1, 2)
        q = self.rope(q, offset)
        k = self.rope(k, offset)
        if cache is not None:
            k, v = cache.update(k, v)
        out = causal_attention(q, k, v)  # [B, H, L, Dh]
        out = out.transpose(1, 2).reshape(B, L, self.num_heads * self.head_dim)
        return self.o_proj(out)
