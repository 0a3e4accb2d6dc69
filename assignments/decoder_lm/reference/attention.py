r"""Causal self-attention with grouped-query attention (GQA, Ainslie et al. 2023) and rotary positions.

    Attention(Q, K, V) = softmax(Q Kᵀ / √Dh + causal) V

H query heads share Hkv key/value heads (Hkv divides H): query head h reads key/value head h // (H / Hkv).
Hkv = H is plain multi-head attention; Hkv = 1 is multi-query attention. Fewer key/value heads mean a
smaller KV cache, which is what limits decoding speed.

The causal mask is aligned to the end: with Lq queries and Lk >= Lq keys, query i is at position
Lk - Lq + i and sees keys 0 … Lk - Lq + i. (PyTorch's ``is_causal=True`` aligns to the top-left corner,
which differs when Lq < Lk: new tokens attending to a cache.)
"""

import math

import torch
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    """Causal scaled dot-product attention with grouped key/value heads.

    Args:
        q: ``[B, H, Lq, Dh]`` queries.
        k: ``[B, Hkv, Lk, Dh]`` keys, ``Hkv`` divides ``H``, ``Lq <= Lk``.
        v: ``[B, Hkv, Lk, Dh]`` values.

    Returns:
        ``[B, H, Lq, Dh]``: query head ``h`` attends with key/value head ``h // (H // Hkv)``; weights
        ``softmax(q kᵀ / √Dh)`` over the keys; query ``i`` sees keys ``0 … Lk - Lq + i`` only (its
        weights on later keys are exactly 0).

    Hints:
        ``repeat_interleave(H // Hkv, dim=1)`` gives every query head its key/value head (``repeat``
        would pair them wrongly). ``torch.ones(Lq, Lk).tril(diagonal=Lk - Lq)`` is the end-aligned
        causal pattern. Fill blocked scores with ``-inf`` before the softmax.
    """
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    k = k.repeat_interleave(H // Hkv, dim=1)  # (B, Hkv, Lk, Dh) -> (B, H, Lk, Dh): heads h*Hkv/H share one
    v = v.repeat_interleave(H // Hkv, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)  # (B, H, Lq, Dh) x (B, H, Dh, Lk) -> (B, H, Lq, Lk)
    keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(diagonal=Lk - Lq)  # (Lq, Lk)
    weights = scores.masked_fill(~keep, float("-inf")).softmax(dim=-1)  # (B, H, Lq, Lk)
    return weights @ v  # (B, H, Lq, Lk) x (B, H, Lk, Dh) -> (B, H, Lq, Dh)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with H query heads, Hkv key/value heads, RoPE and an optional cache.

    Args:
        dim: model width D.
        num_heads: query heads H; must divide ``dim``.
        num_kv_heads: key/value heads Hkv (default ``None``: H); must divide ``num_heads``.
        rope_base: RoPE's ``base``.
    ``ValueError`` when a division fails or when the head size ``Dh = dim // num_heads`` is odd.

    Parameters, all ``nn.Linear`` without bias: ``q_proj`` (D -> H·Dh), ``k_proj`` (D -> Hkv·Dh),
    ``v_proj`` (D -> Hkv·Dh), ``o_proj`` (H·Dh -> D). Head ``h`` is columns ``h·Dh … (h+1)·Dh - 1`` of a
    projection's output.

    ``forward(x [B, L, D], cache=None) -> [B, L, D]``: project; split heads; rotate ``q`` and ``k`` (not
    ``v``) with ``RotaryEmbedding`` at positions ``offset … offset + L - 1``, ``offset`` = ``cache.length``
    before this call (0 without a cache); with a cache, append the rotated keys and the values to it
    (``cache.update``) and attend over all it holds; ``causal_attention``; merge heads; ``o_proj``.

    Hints:
        Split with ``view(B, L, heads, Dh).transpose(1, 2)``. Read the offset before updating the cache.
        The cache stores ``Hkv`` heads: repeat them for the query heads only inside the attention.
    """

    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if dim % num_heads:
            raise ValueError(f"num_heads must divide dim, got dim={dim}, num_heads={num_heads}")
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_kv_heads must divide num_heads, got num_heads={num_heads}, num_kv_heads={num_kv_heads}"
            )
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = dim // num_heads
        self.rope = RotaryEmbedding(self.head_dim, rope_base)  # ValueError for an odd head size
        self.q_proj = nn.Linear(dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(dim, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, dim, bias=False)

    def _split(self, x, heads):
        B, L, _ = x.shape
        return x.view(B, L, heads, self.head_dim).transpose(1, 2)  # (B, L, heads*Dh) -> (B, heads, L, Dh)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        offset = 0 if cache is None else cache.length  # positions of this call: offset … offset + L - 1
        q = self.rope(self._split(self.q_proj(x), self.num_heads), offset)  # (B, H, L, Dh)
        k = self.rope(self._split(self.k_proj(x), self.num_kv_heads), offset)  # (B, Hkv, L, Dh)
        v = self._split(self.v_proj(x), self.num_kv_heads)  # (B, Hkv, L, Dh)
        if cache is not None:
            k, v = cache.update(k, v)  # (B, Hkv, offset + L, Dh)
        y = causal_attention(q, k, v)  # (B, H, L, Dh)
        y = y.transpose(1, 2).reshape(B, L, self.num_heads * self.head_dim)  # (B, L, H*Dh)
        return self.o_proj(y)  # (B, L, D)
