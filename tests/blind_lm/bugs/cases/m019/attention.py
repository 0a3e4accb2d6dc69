import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def _softmax(scores):
    """Softmax by hand, stable: subtract the row max; exp(-inf) = 0 for blocked keys."""
    z = scores - scores.amax(dim=-1, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    G = H // Hkv
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    qg = q.to(work).view(B, Hkv, G, Lq, Dh)
    s = torch.einsum("bngqd,bnkd->bngqk", qg, k.to(work)) * (1.0 / math.sqrt(Dh))
    qpos = torch.arange(Lk - Lq, Lk, device=q.device)
    kpos = torch.arange(Lk, device=q.device)
    visible = kpos[None, :] <= qpos[:, None]
    s = torch.where(visible, s, torch.full_like(s, float("-inf")))
    o = torch.einsum("bngqk,bnkd->bngqd", _softmax(s), v.to(work))
    return o.reshape(B, H, Lq, Dh).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if dim % self.num_heads != 0:
            raise ValueError("num_heads must divide dim")
        if self.num_heads % self.num_kv_heads != 0:
            raise ValueError("num_kv_heads must divide num_heads")
        self.head_dim = dim // num_heads
        if self.head_dim % 2 == 1:
            raise ValueError("head_dim must be even")
        self.q_proj = nn.Linear(dim, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, self.num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, self.num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, dim, bias=False)
        self.rope = RotaryEmbedding(self.head_dim, base=rope_base)

    def _shape(self, t, heads):
        B, L, _ = t.shape
        return t.reshape(B, L, heads, self.head_dim).transpose(1, 2)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        past = 0 if cache is None else cache.length
        q = self.rope(self._shape(self.q_proj(x), self.num_heads), offset=past)
        k = self.rope(self._shape(self.k_proj(x), self.num_kv_heads), offset=past)
        v = self._shape(self.v_proj(x), self.num_kv_heads)
        if cache is not None:
            k, v = cache.update(k, v)
        att = causal_attention(q, k, v)  # [B, H, L, Dh]
        return self.o_proj(att.reshape(B, L, self.num_heads * self.head_dim))
