import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    d_k = query.shape[-1]
    logits = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(d_k)
    if mask is not None:
        logits = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
    attn = torch.softmax(logits, dim=-1)
    if mask is not None:
        attn = attn.masked_fill(~mask, 0.0)
    if dropout is not None:
        attn = dropout(attn)
    out = torch.einsum("...qk,...kv->...qv", attn, value)
    return out, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} not divisible by num_heads={num_heads}")
        self.h = num_heads
        self.dh = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        b, lq, _ = query.shape
        q = self._heads(self.w_q(query))
        k = self._heads(self.w_k(key))
        v = self._heads(self.w_v(value))
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None]
        ctx, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_drop)
        ctx = ctx.permute(0, 2, 1, 3).reshape(b, lq, self.h * self.dh)
        return self.w_o(ctx)
