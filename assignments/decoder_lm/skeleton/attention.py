r"""Causal self-attention with grouped-query attention (GQA, Ainslie et al. 2023) and rotary positions.

    Attention(Q, K, V) = softmax(Q Kᵀ / √Dh + causal) V

H query heads share Hkv key/value heads (Hkv divides H): query head h reads key/value head h // (H / Hkv).
Hkv = H is plain multi-head attention; Hkv = 1 is multi-query attention. Fewer key/value heads mean a
smaller KV cache, which is what limits decoding speed.

The causal mask is aligned to the end: with Lq queries and Lk >= Lq keys, query i is at position
Lk - Lq + i and sees keys 0 … Lk - Lq + i. (PyTorch's ``is_causal=True`` aligns to the top-left corner,
which differs when Lq < Lk: new tokens attending to a cache.)
"""

import math  # noqa: F401 - for your code

import torch  # noqa: F401 - for your code
from torch import nn

from .rope import RotaryEmbedding  # noqa: F401 - for your code


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
    # TODO(gqa): repeat k and v per query head (repeat_interleave), scores q kᵀ / √Dh, end-aligned causal mask,
    #   softmax, @ v.
    raise NotImplementedError("gqa: causal_attention is not implemented yet")


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
        # TODO(attention): num_kv_heads default; ValueError checks; RotaryEmbedding(Dh, rope_base); q_proj,
        #   k_proj, v_proj, o_proj without bias.
        raise NotImplementedError("attention: CausalSelfAttention.__init__ is not implemented yet")

    def forward(self, x, cache=None):
        # TODO(attention): offset = cache length; project and split heads; RoPE on q and k; cache.update;
        #   causal_attention; merge heads; o_proj.
        raise NotImplementedError("attention: CausalSelfAttention.forward is not implemented yet")
