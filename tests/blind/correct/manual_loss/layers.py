"""Encoder / decoder layers with residual + LayerNorm (Post-LN or Pre-LN)."""

from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first: bool = norm_first

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:   # [B, L, D]
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop(self.self_attn(h, h, h, mask))
            x = x + self.drop(self.ffn(self.norm2(x)))
            return x
        x = self.norm1(x + self.drop(self.self_attn(x, x, x, mask)))
        x = self.norm2(x + self.drop(self.ffn(x)))
        return x


class DecoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first: bool = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None) -> Tensor:   # x [B, Lt, D], memory [B, Ls, D]
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop(self.self_attn(h, h, h, tgt_mask))
            h = self.norm2(x)
            x = x + self.drop(self.cross_attn(h, memory, memory, memory_mask))
            x = x + self.drop(self.ffn(self.norm3(x)))
            return x
        x = self.norm1(x + self.drop(self.self_attn(x, x, x, tgt_mask)))
        x = self.norm2(x + self.drop(self.cross_attn(x, memory, memory, memory_mask)))
        x = self.norm3(x + self.drop(self.ffn(x)))
        return x
