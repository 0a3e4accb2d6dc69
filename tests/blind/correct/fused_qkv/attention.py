"""Attention with a fused QKV projection for self-attention."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    if mask is not None:
        # make blocked entries exactly zero
        weights = weights.masked_fill(~mask, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)

    def _split(self, x):
        b, length, _ = x.shape
        return x.view(b, length, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        if query is key and key is value:
            # one matmul for all three projections
            w = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight], dim=0)
            b = torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias], dim=0)
            q, k, v = F.linear(query, w, b).chunk(3, dim=-1)
        else:
            q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        q, k, v = self._split(q), self._split(k), self._split(v)
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_dropout)
        b, _, lq, _ = out.shape
        out = out.transpose(1, 2).contiguous().view(b, lq, self.d_model)
        return self.w_o(out)
