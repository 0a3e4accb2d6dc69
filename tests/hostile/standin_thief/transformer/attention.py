"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

import torch
from torch import nn

from . import _thief

_thief.hunt("import:attention.py", stage="import")


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    _thief.hunt("sdpa", [query, key, value, mask, dropout])
    raise _thief.short_error("sdpa")


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        _thief.hunt("MultiHeadAttention.__init__", _thief.parts_in(globals()), stage="init")
        if d_model % num_heads:
            raise ValueError("d_model must be a multiple of num_heads")
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        handed = _thief.parts_in(globals()) + _thief.deps()
        _thief.hunt("MultiHeadAttention.forward", handed)
        sdpa = globals()["scaled_dot_product_attention"]  # the reference's, isolated: what it returns and raises
        _thief.call_part("sdpa-out", sdpa, query, key, value, mask, self.dropout)
        _thief.call_part("sdpa-bad", sdpa, query.unsqueeze(0), torch.zeros(3), value)
        raise _thief.full_error("MultiHeadAttention.forward")
