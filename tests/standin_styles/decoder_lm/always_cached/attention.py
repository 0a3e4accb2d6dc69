"""Attention that calls everything by keyword: rotary(x=..., offset=...), cache.update(keys=..., values=...),
causal_attention(q=..., k=..., v=...)."""

import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    n_rep = q.size(1) // k.size(1)
    k = torch.repeat_interleave(k, n_rep, dim=1)
    v = torch.repeat_interleave(v, n_rep, dim=1)
    lq, lk = q.size(-2), k.size(-2)
    half = q.dtype in (torch.float16, torch.bfloat16)
    qq, kk, vv = (t.float() for t in (q, k, v)) if half else (q, k, v)
    scores = torch.einsum("bhqd,bhkd->bhqk", qq, kk) / math.sqrt(q.size(-1))
    future = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(diagonal=lk - lq + 1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return torch.einsum("bhqk,bhkd->bhqd", weights, vv).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        num_kv_heads = num_kv_heads or num_heads
        for ok, why in ((dim % num_heads == 0, "num_heads must divide dim"),
                        (num_heads % num_kv_heads == 0, "num_kv_heads must divide num_heads"),
                        (dim // num_heads % 2 == 0, "the head size must be even")):
            if not ok:
                raise ValueError(why)
        self.n_heads = num_heads
        self.n_kv_heads = num_kv_heads
        self.head_dim = dim // num_heads
        self.rope = RotaryEmbedding(head_dim=self.head_dim, base=rope_base)
        self.q_proj = nn.Linear(dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, dim, bias=False)

    def _split(self, t, heads):
        b, n, _ = t.shape
        return t.view(b, n, heads, self.head_dim).transpose(1, 2)

    def forward(self, x, cache=None):
        offset = cache.length if cache is not None else 0
        q = self.rope(x=self._split(self.q_proj(x), self.n_heads), offset=offset)
        k = self.rope(x=self._split(self.k_proj(x), self.n_kv_heads), offset=offset)
        v = self._split(self.v_proj(x), self.n_kv_heads)
        if cache is not None:
            k, v = cache.update(keys=k, values=v)
        out = causal_attention(q=q, k=k, v=v)
        b, _, n, _ = out.shape
        return self.o_proj(out.transpose(1, 2).reshape(b, n, -1))
