"""Grouped attention by broadcasting (no repeat); queries and keys rotated in one rotary call; the cache's
contents read back through its keys/values attributes after update()."""

import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    b, h, lq, dh = q.shape
    hkv, lk = k.shape[1], k.shape[2]
    group = h // hkv
    work = torch.float32 if q.element_size() < 4 else q.dtype
    qg = q.to(work).reshape(b, hkv, group, lq, dh)
    kg = k.to(work).unsqueeze(2)
    vg = v.to(work).unsqueeze(2)
    scores = (qg @ kg.transpose(-1, -2)) * (dh ** -0.5)
    i = torch.arange(lq, device=q.device)[:, None] + (lk - lq)
    j = torch.arange(lk, device=q.device)[None, :]
    scores = scores.masked_fill(j > i, -math.inf)
    out = scores.softmax(dim=-1) @ vg
    return out.reshape(b, h, lq, dh).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        kv = num_heads if num_kv_heads is None else num_kv_heads
        if dim % num_heads or num_heads % kv or (dim // num_heads) % 2:
            raise ValueError(f"bad attention shape: dim={dim}, num_heads={num_heads}, num_kv_heads={kv}")
        self.h, self.hkv, self.dh = num_heads, kv, dim // num_heads
        self.rope = RotaryEmbedding(self.dh, rope_base)
        self.q_proj = nn.Linear(dim, self.h * self.dh, bias=False)
        self.k_proj = nn.Linear(dim, self.hkv * self.dh, bias=False)
        self.v_proj = nn.Linear(dim, self.hkv * self.dh, bias=False)
        self.o_proj = nn.Linear(self.h * self.dh, dim, bias=False)

    def forward(self, x, cache=None):
        b, n, _ = x.shape
        start = cache.length if cache is not None else 0
        q = self.q_proj.forward(x).view(b, n, self.h, self.dh).transpose(1, 2)
        k = self.k_proj.forward(x).view(b, n, self.hkv, self.dh).transpose(1, 2)
        v = self.v_proj.forward(x).view(b, n, self.hkv, self.dh).transpose(1, 2)
        q, k = self.rope.forward(torch.cat((q, k), dim=1), start).split((self.h, self.hkv), dim=1)
        if cache is not None:
            cache.update(k, v)
            k, v = cache.keys, cache.values
        out = causal_attention(q, k, v)
        return self.o_proj.forward(out.transpose(1, 2).reshape(b, n, self.h * self.dh))
