"""Attention, written from the contract (one mistake: see the folder's name)."""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not a multiple of num_heads={num_heads}")
        self.h = num_heads
        self.dh = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def _heads(self, x):
        b, n, _ = x.shape
        return x.reshape(b, self.h, n, self.dh)

    def forward(self, query, key, value, mask=None):
        b, lq, _ = query.shape
        q, k, v = self._heads(self.w_q(query)), self._heads(self.w_k(key)), self._heads(self.w_v(value))
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None]
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.drop)
        out = out.transpose(1, 2).reshape(b, lq, self.h * self.dh)
        return self.w_o(out)
