"""Scaled dot-product attention and multi-head attention."""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-1, -2)
    scores = scores / math.sqrt(query.shape[-1])
    if mask is not None:
        # most negative finite number of this dtype: safe in float16 / bfloat16 too
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]
        q = self.w_q(query).reshape(B, -1, self.h, self.d_k).permute(0, 2, 1, 3)
        k = self.w_k(key).reshape(B, -1, self.h, self.d_k).permute(0, 2, 1, 3)
        v = self.w_v(value).reshape(B, -1, self.h, self.d_k).permute(0, 2, 1, 3)
        ctx, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_drop)
        ctx = ctx.permute(0, 2, 1, 3).reshape(B, -1, self.h * self.d_k)
        return self.w_o(ctx)
