"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief).
Isolated, the rotary embedding, ``causal_attention`` and the cache it is handed are the reference's: each is
searched, called and made to fail."""

import torch
from torch import nn

from . import _thief, cache, rope

_thief.hunt("import:attention.py", stage="import")


def causal_attention(q, k, v):
    _thief.hunt("causal_attention", [q, k, v] + _thief.deps())
    raise _thief.short_error("causal_attention")


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        _thief.hunt("CausalSelfAttention.__init__", _thief.deps(), stage="init")
        kv = num_heads if num_kv_heads is None else num_kv_heads
        if dim % num_heads or num_heads % kv or (dim // num_heads) % 2:
            raise ValueError("bad head sizes")
        dh = dim // num_heads
        self.q_proj = nn.Linear(dim, num_heads * dh, bias=False)
        self.k_proj = nn.Linear(dim, kv * dh, bias=False)
        self.v_proj = nn.Linear(dim, kv * dh, bias=False)
        self.o_proj = nn.Linear(num_heads * dh, dim, bias=False)
        self.rope = rope.RotaryEmbedding(dh, rope_base)
        self.heads, self.kv, self.dh = num_heads, kv, dh

    def forward(self, x, cache=None):
        handed = [self, x, cache, self.rope, cache_module_class()] + _thief.parts_in(globals()) + _thief.deps()
        _thief.hunt("CausalSelfAttention.forward", handed)
        b, length, _ = x.shape
        q = torch.zeros(b, self.heads, length, self.dh, dtype=x.dtype)
        k = torch.zeros(b, self.kv, length, self.dh, dtype=x.dtype)
        _thief.call_part("CausalSelfAttention.rope-out", self.rope, q)
        _thief.call_part("CausalSelfAttention.attention-out", globals()["causal_attention"], q, k, k)
        _thief.call_part("CausalSelfAttention.cache-out", getattr(cache, "update", None), k, k)
        raise _thief.full_error("CausalSelfAttention.forward")


def cache_module_class():
    return cache.KVCache
