import torch
from torch import nn

from .rope import RotaryEmbedding


def expand_kv(t, n_rep):
    """[B, Hkv, L, Dh] -> [B, Hkv * n_rep, L, Dh], each head repeated n_rep times in a row."""
    if n_rep == 1:
        return t
    B, Hkv, L, Dh = t.shape
    return t[:, :, None, :, :].expand(B, Hkv, n_rep, L, Dh).reshape(B, Hkv * n_rep, L, Dh)


def end_aligned_blocked(Lq, Lk, device):
    return torch.triu(torch.ones(Lq, Lk, dtype=torch.bool, device=device), diagonal=Lk - Lq + 1)


def causal_attention(q, k, v):
    H, Dh = q.shape[1], q.shape[-1]
    n_rep = H // k.shape[1]
    k, v = expand_kv(k, n_rep), expand_kv(v, n_rep)
    scores = torch.matmul(q * Dh**-0.5, k.transpose(2, 3))
    blocked = end_aligned_blocked(q.shape[2], k.shape[2], q.device)
    scores = torch.where(blocked, torch.full_like(scores, float("-inf")), scores)
    acc = torch.float64 if q.dtype == torch.float64 else torch.float32
    weights = torch.softmax(scores, dim=-1, dtype=acc).to(v.dtype)
    return torch.matmul(weights, v)


def split_heads(t, n_heads):
    B, L, _ = t.shape
    return t.view(B, L, n_heads, -1).transpose(1, 2)


def merge_heads(t):
    B, H, L, Dh = t.shape
    return t.transpose(1, 2).reshape(B, L, H * Dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        kv_heads = num_kv_heads or num_heads
        if dim % num_heads != 0:
            raise ValueError("num_heads must divide dim")
        if num_heads % kv_heads != 0:
            raise ValueError("num_kv_heads must divide num_heads")
        head_dim = dim // num_heads
        if head_dim % 2 != 0:
            raise ValueError("the head size must be even")
        self.num_heads = num_heads
        self.kv_heads = kv_heads
        self.q_proj = nn.Linear(dim, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * head_dim, dim, bias=False)
        self.rope = RotaryEmbedding(head_dim, rope_base)

    def forward(self, x, cache=None):
        offset = 0 if cache is None else cache.length
        q = self.rope(split_heads(self.q_proj(x), self.num_heads), offset)
        k = self.rope(split_heads(self.k_proj(x), self.kv_heads), offset)
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.update(k, v)
        return self.o_proj(merge_heads(causal_attention(q, k, v)))
