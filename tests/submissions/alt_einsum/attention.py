"""Attention written with einsum, fused QKV projection."""

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    inv_scale = query.shape[-1] ** -0.5
    scores = torch.einsum("...id,...jd->...ij", query, key) * inv_scale
    if mask is not None:
        blocked = mask == False  # noqa: E712  (bool keep-mask -> blocked positions)
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1)
    if dropout is not None:
        probs = dropout(probs)
    out = torch.einsum("...ij,...jd->...id", probs, value)
    return out, probs


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if num_heads <= 0 or d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.h = num_heads
        self.dk = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)

    def _project(self, query, key, value):
        lins = (self.w_q, self.w_k, self.w_v)
        if query is key and key is value:
            # self-attention: a single fused matmul for Q, K and V
            w = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight])
            b = torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias])
            return F.linear(query, w, b).chunk(3, dim=-1)
        if key is value:
            q = F.linear(query, self.w_q.weight, self.w_q.bias)
            w = torch.cat([self.w_k.weight, self.w_v.weight])
            b = torch.cat([self.w_k.bias, self.w_v.bias])
            k, v = F.linear(key, w, b).chunk(2, dim=-1)
            return q, k, v
        return tuple(F.linear(t, lin.weight, lin.bias) for t, lin in zip((query, key, value), lins))

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dk).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q, k, v = (self._split(t) for t in self._project(query, key, value))
        ctx, _ = scaled_dot_product_attention(q, k, v, mask=mask, dropout=self.attn_drop)
        b, _, n, _ = ctx.shape
        merged = ctx.permute(0, 2, 1, 3).reshape(b, n, self.h * self.dk)
        return self.w_o(merged)
