import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) * (1.0 / math.sqrt(query.size(-1)))
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.einsum("...qk,...kd->...qd", weights, value), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        if d_model % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide d_model={d_model}")
        super().__init__()
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.num_heads = num_heads
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        h = self.num_heads

        def split(t):
            b, n, d = t.shape
            return t.reshape(b, n, h, d // h).transpose(1, 2)

        out, _ = scaled_dot_product_attention(split(self.w_q(query)), split(self.w_k(key)), split(self.w_v(value)),
                                              mask, self.dropout)
        b, _, n, dh = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, n, h * dh))
