import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    H, Lq, Dh = q.shape[1], q.shape[2], q.shape[3]
    Hkv, Lk = k.shape[1], k.shape[2]
    k = torch.repeat_interleave(k, H // Hkv, dim=1)
    v = torch.repeat_interleave(v, H // Hkv, dim=1)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(Dh)
    visible = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(Lk - Lq)
    scores = torch.where(visible, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=q.device))
    if q.dtype in (torch.float16, torch.bfloat16):
        w = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    else:
        w = torch.softmax(scores, dim=-1)
    return torch.einsum("bhqk,bhkd->bhqd", w, v)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        if num_kv_heads is None:
            num_kv_heads = num_heads
        if dim % num_heads:
            raise ValueError("dim % num_heads != 0")
        if num_heads % num_kv_heads:
            raise ValueError("num_heads % num_kv_heads != 0")
        if (dim // num_heads) % 2:
            raise ValueError("odd head dim")
        self.h, self.hkv, self.dh = num_heads, num_kv_heads, dim // num_heads
        self.q_proj = nn.Linear(dim, self.h * self.dh, bias=False)
        self.k_proj = nn.Linear(dim, self.hkv * self.dh, bias=False)
        self.v_proj = nn.Linear(dim, self.hkv * self.dh, bias=False)
        self.o_proj = nn.Linear(self.h * self.dh, dim, bias=False)
        self.rope = RotaryEmbedding(self.dh, rope_base)

    def forward(self, x, cache=None):
        B, L, D = x.shape
        t0 = cache.length if cache is not None else 0
        q = torch.einsum("bld,ed->ble", x, self.q_proj.weight).view(B, L, self.h, self.dh)
        k = torch.einsum("bld,ed->ble", x, self.k_proj.weight).view(B, L, self.hkv, self.dh)
        v = torch.einsum("bld,ed->ble", x, self.v_proj.weight).view(B, L, self.hkv, self.dh)
        q = self.rope(torch.einsum("blhd->bhld", q), t0)
        k = self.rope(torch.einsum("blhd->bhld", k), t0)
        v = torch.einsum("blhd->bhld", v)
        if cache is not None:
            k, v = cache.update(k, v)
        o = torch.einsum("bhld->blhd", causal_attention(q, k, v)).reshape(B, L, self.h * self.dh)
        return torch.einsum("ble,de->bld", o, self.o_proj.weight)
