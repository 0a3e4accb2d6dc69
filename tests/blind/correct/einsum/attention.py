"""Attention with every matrix product written as torch.einsum."""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    output = torch.einsum("...qk,...kd->...qd", weights, value)
    return output, weights


def _project(x, linear):
    # x [B, L, D_in], weight [D_out, D_in]
    return torch.einsum("bli,oi->blo", x, linear.weight) + linear.bias


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.h = num_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, x):
        b, l, _ = x.shape
        return x.reshape(b, l, self.h, self.d_head).permute(0, 2, 1, 3)  # [B, H, L, Dh]

    def forward(self, query, key, value, mask=None):
        b, lq, d = query.shape
        q = self._heads(_project(query, self.w_q))
        k = self._heads(_project(key, self.w_k))
        v = self._heads(_project(value, self.w_v))
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        out = out.permute(0, 2, 1, 3).reshape(b, lq, d)
        return _project(out, self.w_o)
