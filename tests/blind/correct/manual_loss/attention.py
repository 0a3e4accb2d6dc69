"""Scaled dot-product attention and multi-head attention (keep-masks: True = attend)."""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
from torch import Tensor, nn


def scaled_dot_product_attention(
    query: Tensor,                     # [..., Lq, Dk]
    key: Tensor,                       # [..., Lk, Dk]
    value: Tensor,                     # [..., Lk, Dv]
    mask: Optional[Tensor] = None,     # bool, broadcastable to [..., Lq, Lk]
    dropout: Optional[nn.Dropout] = None,
) -> Tuple[Tensor, Tensor]:
    d_k: int = query.shape[-1]
    scores: Tensor = query @ key.transpose(-2, -1) / math.sqrt(d_k)   # [..., Lq, Lk]
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights: Tensor = scores.softmax(dim=-1)                            # [..., Lq, Lk]
    if dropout is not None:
        weights = dropout(weights)
    output: Tensor = weights @ value                                    # [..., Lq, Dv]
    return output, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1) -> None:
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.d_model: int = d_model
        self.h: int = num_heads
        self.d_k: int = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(p=dropout)

    def forward(
        self,
        query: Tensor,                  # [B, Lq, D]
        key: Tensor,                    # [B, Lk, D]
        value: Tensor,                  # [B, Lk, D]
        mask: Optional[Tensor] = None,  # [B|1, 1, Lq|1, Lk] or [Lq, Lk]
    ) -> Tensor:
        B, Lq, _ = query.shape
        Lk: int = key.shape[1]
        q = self.w_q(query).reshape(B, Lq, self.h, self.d_k).transpose(1, 2)   # [B, H, Lq, Dh]
        k = self.w_k(key).reshape(B, Lk, self.h, self.d_k).transpose(1, 2)     # [B, H, Lk, Dh]
        v = self.w_v(value).reshape(B, Lk, self.h, self.d_k).transpose(1, 2)   # [B, H, Lk, Dh]
        ctx, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_drop)  # [B, H, Lq, Dh]
        ctx = ctx.transpose(1, 2).reshape(B, Lq, self.d_model)                # [B, Lq, D]
        return self.w_o(ctx)
