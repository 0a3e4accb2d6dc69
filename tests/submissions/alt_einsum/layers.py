"""Encoder and decoder layers."""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.pre = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.res_drop = nn.Dropout(dropout)

    def _sa(self, y, mask):
        return self.res_drop(self.self_attn(y, y, y, mask))

    def _ff(self, y):
        return self.res_drop(self.ffn(y))

    def forward(self, x, mask=None):
        if not self.pre:
            x = self.norm1(x + self._sa(x, mask))
            return self.norm2(x + self._ff(x))
        x = x + self._sa(self.norm1(x), mask)
        return x + self._ff(self.norm2(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.pre = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.res_drop = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        blocks = (
            (self.norm1, lambda y: self.self_attn(y, y, y, tgt_mask)),
            (self.norm2, lambda y: self.cross_attn(y, memory, memory, memory_mask)),
            (self.norm3, self.ffn),
        )
        for norm, fn in blocks:
            if self.pre:
                x = x + self.res_drop(fn(norm(x)))
            else:
                x = norm(x + self.res_drop(fn(x)))
        return x
