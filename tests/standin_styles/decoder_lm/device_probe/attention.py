"""Attention that keeps no rotary submodule: it builds RotaryEmbedding(Dh, rope_base) on each call (a
parameter-free helper) and rotates with it; the new keys/values go to the cache positionally."""

import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    compute = torch.promote_types(q.dtype, torch.float32)
    out = torch.empty(B, H, Lq, Dh, dtype=compute, device=q.device)
    blocked = torch.arange(Lk, device=q.device)[None, :] > torch.arange(Lq, device=q.device)[:, None] + (Lk - Lq)
    per_group = H // Hkv
    for g in range(Hkv):
        qs = q[:, g * per_group:(g + 1) * per_group].to(compute)
        ks, vs = k[:, g: g + 1].to(compute), v[:, g: g + 1].to(compute)
        scores = qs @ ks.transpose(-1, -2) / math.sqrt(Dh)
        scores = scores.masked_fill(blocked, float("-inf"))
        out[:, g * per_group:(g + 1) * per_group] = torch.softmax(scores, dim=-1) @ vs
    return out.to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads != 0 or num_heads % num_kv_heads != 0:
            raise ValueError("incompatible head counts")
        if (dim // num_heads) % 2 != 0:
            raise ValueError("odd head size")
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = dim // num_heads
        self.rope_base = rope_base
        self.q_proj = nn.Linear(dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, dim, bias=False)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        rotary = RotaryEmbedding(self.head_dim, self.rope_base)
        start = 0
        if cache is not None:
            start = cache.length
        q = self.q_proj(x).unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)
        k = self.k_proj(x).unflatten(-1, (self.num_kv_heads, self.head_dim)).transpose(1, 2)
        v = self.v_proj(x).unflatten(-1, (self.num_kv_heads, self.head_dim)).transpose(1, 2)
        q, k = rotary(q, start), rotary(k, start)
        if cache is not None:
            k, v = cache.update(k, v)
        return self.o_proj(causal_attention(q, k, v).transpose(1, 2).flatten(2))
