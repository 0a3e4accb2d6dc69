import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    G = H // Hkv
    work = torch.promote_types(q.dtype, torch.float32)
    qg = q.reshape(B, Hkv, G, Lq, Dh).to(work)  # consecutive query heads form one group
    scores = torch.einsum("bkgqd,bksd->bkgqs", qg, k.to(work)) / math.sqrt(Dh)
    i = torch.arange(Lq, device=q.device)[:, None] + (Lk - Lq)
    j = torch.arange(Lk, device=q.device)[None, :]
    bias = torch.zeros(Lq, Lk, dtype=work, device=q.device).masked_fill(j > i, float("-inf"))
    probs = torch.softmax(scores + bias, dim=-1)
    out = torch.einsum("bkgqs,bksd->bkgqd", probs, v.to(work))
    return out.reshape(B, H, Lq, Dh).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if dim % num_heads:
            raise ValueError(f"dim={dim} is not a multiple of num_heads={num_heads}")
        if num_heads % num_kv_heads:
            raise ValueError(f"num_heads={num_heads} is not a multiple of num_kv_heads={num_kv_heads}")
        head_dim = dim // num_heads
        if head_dim % 2:
            raise ValueError(f"head size {head_dim} is odd")
        self.n_head, self.n_kv, self.head_dim = num_heads, num_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * head_dim, dim, bias=False)
        self.rotary = RotaryEmbedding(head_dim, rope_base)

    def _heads(self, t, n):
        return t.unflatten(-1, (n, self.head_dim)).permute(0, 2, 1, 3)  # [B, n, L, Dh]

    def forward(self, x, cache=None):
        B, L, D = x.shape
        start = 0 if cache is None else cache.length
        q = self.rotary(self._heads(self.q_proj(x), self.n_head), offset=start)
        k = self.rotary(self._heads(self.k_proj(x), self.n_kv), offset=start)
        v = self._heads(self.v_proj(x), self.n_kv)
        if cache is not None:
            k, v = cache.update(k, v)
        y = causal_attention(q, k, v)
        y = y.permute(0, 2, 1, 3).flatten(2)  # [B, L, H*Dh]
        return self.o_proj(y)
