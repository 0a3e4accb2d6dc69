"""Attention; self-attention (query is key is value) projects q, k and v with one fused matmul of the three
weight matrices."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query * scale) @ key.transpose(-2, -1)
    if mask is not None:
        fill = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(mask == 0, fill)
    weights = F.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model % num_heads != 0")
        self.d_model, self.num_heads = d_model, num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        b, lq, d = query.shape
        h, dh = self.num_heads, d // self.num_heads
        if query is key and key is value:
            weight = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight], dim=0)
            bias = torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias], dim=0)
            q, k, v = F.linear(query, weight, bias).chunk(3, dim=-1)
        else:
            q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        q = q.view(b, lq, h, dh).transpose(1, 2)
        k = k.view(b, -1, h, dh).transpose(1, 2)
        v = v.view(b, -1, h, dh).transpose(1, 2)
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(out.transpose(1, 2).reshape(b, lq, d))
