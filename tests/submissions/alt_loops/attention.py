"""Attention with bmm on flattened batches and a per-head loop."""

import math

import torch
from torch import nn


def _batched_matmul(a, b):
    """a [..., n, m] @ b [..., m, p] via torch.bmm, broadcasting the leading dims."""
    lead = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    count = math.prod(lead)
    a3 = a.expand(*lead, *a.shape[-2:]).reshape(count, a.shape[-2], a.shape[-1])
    b3 = b.expand(*lead, *b.shape[-2:]).reshape(count, b.shape[-2], b.shape[-1])
    return torch.bmm(a3, b3).reshape(*lead, a.shape[-2], b.shape[-1])


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scale = 1.0 / math.sqrt(query.shape[-1])
    scores = _batched_matmul(query * scale, key.transpose(-1, -2))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return _batched_matmul(weights, value), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide d_model={d_model}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    @staticmethod
    def _head_mask(mask, h):
        if mask is None or mask.dim() < 4:
            return mask  # 2-D [Lq, Lk] broadcasts against [B, Lq, Lk]
        return mask[:, h if mask.shape[1] > 1 else 0]  # [B or 1, Lq or 1, Lk]

    def forward(self, query, key, value, mask=None):
        q_all = self.w_q(query)
        k_all = self.w_k(key)
        v_all = self.w_v(value)
        outputs = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            out_h, _ = scaled_dot_product_attention(
                q_all[..., cols], k_all[..., cols], v_all[..., cols],
                mask=self._head_mask(mask, h), dropout=self.dropout,
            )
            outputs.append(out_h)
        return self.w_o(torch.cat(outputs, dim=-1))
