"""Attention that calls its rotary module with offset= and the cache's update with keys=/values=."""

import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    heads, kv_heads = q.shape[1], k.shape[1]
    lq, lk = q.shape[2], k.shape[2]
    if heads != kv_heads:
        k = k.repeat_interleave(heads // kv_heads, dim=1)
        v = v.repeat_interleave(heads // kv_heads, dim=1)
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    scores = torch.matmul(q.to(work), k.to(work).transpose(-2, -1)) / math.sqrt(q.shape[-1])
    allowed = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril(diagonal=lk - lq)
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v.to(work)).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads != 0:
            raise ValueError("num_heads must divide dim")
        if num_heads % num_kv_heads != 0:
            raise ValueError("num_kv_heads must divide num_heads")
        head_dim = dim // num_heads
        if head_dim % 2 != 0:
            raise ValueError("the head size must be even for RoPE")
        self.num_heads, self.num_kv_heads, self.head_dim = num_heads, num_kv_heads, head_dim
        self.rotary = RotaryEmbedding(head_dim=head_dim, base=rope_base)
        self.q_proj = nn.Linear(dim, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * head_dim, dim, bias=False)

    def forward(self, x, cache=None):
        batch, length, _ = x.shape
        offset = 0 if cache is None else cache.length
        q = self.q_proj(x).view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, self.num_kv_heads, self.head_dim).transpose(1, 2)
        q = self.rotary(q, offset=offset)
        k = self.rotary(k, offset=offset)
        if cache is not None:
            k, v = cache.update(keys=k, values=v)
        out = causal_attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, self.num_heads * self.head_dim))
