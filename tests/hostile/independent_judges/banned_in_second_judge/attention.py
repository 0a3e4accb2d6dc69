import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.h = num_heads
        self.dk = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        b = query.size(0)

        def split(x, lin):
            return lin(x).view(b, -1, self.h, self.dk).transpose(1, 2)

        q, k, v = split(query, self.w_q), split(key, self.w_k), split(value, self.w_v)
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None]
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        out = out.transpose(1, 2).reshape(b, -1, self.h * self.dk)
        return self.w_o(out)
