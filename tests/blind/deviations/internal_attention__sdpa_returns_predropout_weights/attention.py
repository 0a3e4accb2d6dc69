"""Scaled dot-product attention and multi-head attention."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    p_attn = weights
    if dropout is not None:
        p_attn = dropout(weights)
    output = torch.matmul(p_attn, value)
    return output, weights


class ScaledDotProductAttention(nn.Module):
    """Parameter-free attention block: owns its dropout on the weights."""

    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = (q @ k.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(mask == False, float("-inf"))  # noqa: E712
        attn = torch.softmax(scores, dim=-1)
        attn = self.dropout(attn)
        return attn @ v, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attention = ScaledDotProductAttention(dropout)

    def _split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        b, lq, _ = query.shape
        q = self._split(self.w_q(query))
        k = self._split(self.w_k(key))
        v = self._split(self.w_v(value))
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None]
        out, _ = self.attention(q, k, v, mask)
        out = out.transpose(1, 2).contiguous().view(b, lq, self.d_model)
        return self.w_o(out)
