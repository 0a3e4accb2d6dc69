import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    d_k = query.shape[-1]
    work = query.float() if query.dtype in (torch.float16, torch.bfloat16) else query
    scores = work @ key.to(work.dtype).transpose(-1, -2)
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    weights = weights.to(query.dtype)
    if dropout is not None:
        weights = dropout.forward(weights)
    return weights @ value, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.heads = num_heads
        self.d_head = d_model // num_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model, bias=True))
        self.drop = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        batch = query.shape[0]
        projected = []
        for linear, x in ((self.w_q, query), (self.w_k, key), (self.w_v, value)):
            projected.append(linear.forward(x).reshape(batch, x.shape[1], self.heads, self.d_head).permute(0, 2, 1, 3))
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None, :, :]
        out, _ = scaled_dot_product_attention(*projected, mask, self.drop)
        out = out.permute(0, 2, 1, 3).reshape(batch, query.shape[1], self.heads * self.d_head)
        return self.w_o.forward(out)
