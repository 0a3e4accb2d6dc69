"""Scaled dot-product attention and multi-head attention."""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)

    def _heads(self, linear, x):
        b, n, _ = x.shape
        return linear(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q = self._heads(self.w_q, query)
        k = self._heads(self.w_k, key)
        v = self._heads(self.w_v, value)
        out, _ = scaled_dot_product_attention(q, k, v, mask=mask, dropout=self.attn_dropout)
        b, _, n, _ = out.shape
        return self.w_o(out.transpose(1, 2).contiguous().view(b, n, self.num_heads * self.head_dim))
