"""Attention written in a functional style: parameters live in nn.Linear
modules, but the forward passes call torch.nn.functional directly."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def _blocked_fill(scores):
    # most negative finite number of the scores' dtype: safe in fp16 / bf16
    return torch.finfo(scores.dtype).min


def attention_weights(query, key, mask=None):
    """softmax(q k^T / sqrt(d_k)) over the keys, blocked entries 0."""
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, _blocked_fill(scores))
    weights = F.softmax(scores, dim=-1)
    if mask is not None:
        # make blocked entries exactly zero
        weights = weights.masked_fill(~mask, 0.0)
    return weights


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    weights = attention_weights(query, key, mask)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


def split_heads(x, num_heads):
    b, l, d = x.shape
    return x.view(b, l, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    b, h, l, dh = x.shape
    return x.transpose(1, 2).contiguous().view(b, l, h * dh)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.p = 0.1  # attention dropout of the paper

    def forward(self, query, key, value, mask=None):
        q = split_heads(F.linear(query, self.w_q.weight, self.w_q.bias), self.num_heads)
        k = split_heads(F.linear(key, self.w_k.weight, self.w_k.bias), self.num_heads)
        v = split_heads(F.linear(value, self.w_v.weight, self.w_v.bias), self.num_heads)
        weights = attention_weights(q, k, mask)
        weights = F.dropout(weights, p=self.p, training=self.training)
        out = merge_heads(torch.matmul(weights, v))
        return F.linear(out, self.w_o.weight, self.w_o.bias)
