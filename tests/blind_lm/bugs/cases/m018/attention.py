import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    rep = H // Hkv
    acc = torch.float64 if q.dtype == torch.float64 else torch.float32
    qf = q.to(acc).reshape(B * H, Lq, Dh)
    kf = k.to(acc).repeat_interleave(rep, dim=1).reshape(B * H, Lk, Dh)
    vf = v.to(acc).repeat_interleave(rep, dim=1).reshape(B * H, Lk, Dh)
    i = torch.arange(Lq, device=q.device).view(-1, 1)
    j = torch.arange(Lk, device=q.device).view(1, -1)
    bias = torch.zeros(Lq, Lk, dtype=acc, device=q.device)
    bias[j.expand(Lq, Lk) > (i + Lk - Lq).expand(Lq, Lk)] = float("-inf")
    scores = torch.baddbmm(bias.expand(B * H, Lq, Lk), qf, kf.transpose(1, 2), alpha=1.0 / math.sqrt(Dh))
    out = torch.bmm(torch.softmax(scores, dim=-1), vf)
    return out.view(B, H, Lq, Dh).to(q.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if dim % num_heads or num_heads % num_kv_heads or (dim // num_heads) % 2:
            raise ValueError(f"invalid sizes: dim={dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
        self.nh, self.nkv, self.hd = num_heads, num_kv_heads, dim // num_heads
        self.q_proj = nn.Linear(dim, self.nh * self.hd, bias=False)
        self.k_proj = nn.Linear(dim, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(dim, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, dim, bias=False)
        self.rotary = RotaryEmbedding(self.hd, base=rope_base)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        start = cache.length if cache is not None else 0
        w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        q, k, v = torch.split(x @ w.T, [self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], dim=-1)
        q = q.view(B, L, self.nh, self.hd).permute(0, 2, 1, 3)
        k = k.view(B, L, self.nkv, self.hd).permute(0, 2, 1, 3)
        v = v.view(B, L, self.nkv, self.hd).permute(0, 2, 1, 3)
        q = self.rotary(q, start)
        if cache is not None:
            k, v = cache.update(k, v)
            k = self.rotary(k, 0)
        else:
            k = self.rotary(k, start)
        y = causal_attention(q, k, v).permute(0, 2, 1, 3).reshape(B, L, self.nh * self.hd)
        return self.o_proj(y)
