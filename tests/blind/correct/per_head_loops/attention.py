"""Multi-head attention computed one head at a time."""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query @ key.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask == False, float("-inf"))  # noqa: E712
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    output = weights @ value
    return output, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        q = self.w_q(query)  # [B, Lq, D]
        k = self.w_k(key)    # [B, Lk, D]
        v = self.w_v(value)  # [B, Lk, D]
        if mask is not None and mask.dim() == 4:
            # [B or 1, 1, Lq or 1, Lk] -> [B or 1, Lq or 1, Lk]: one head at a time
            mask = mask[:, 0]
        heads = []
        for h in range(self.num_heads):
            lo, hi = h * self.head_dim, (h + 1) * self.head_dim
            out_h, _ = scaled_dot_product_attention(
                q[:, :, lo:hi], k[:, :, lo:hi], v[:, :, lo:hi], mask, self.dropout
            )
            heads.append(out_h)
        return self.w_o(torch.cat(heads, dim=-1))
