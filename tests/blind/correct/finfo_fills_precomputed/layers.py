"""Encoder and decoder layers."""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def _sublayer(self, x, norm, fn):
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x, mask=None):
        x = self._sublayer(x, self.norm1, lambda h: self.self_attn(h, h, h, mask))
        x = self._sublayer(x, self.norm2, self.ffn)
        return x


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def _sublayer(self, x, norm, fn):
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self._sublayer(x, self.norm1, lambda h: self.self_attn(h, h, h, tgt_mask))
        x = self._sublayer(x, self.norm2, lambda h: self.cross_attn(h, memory, memory, memory_mask))
        x = self._sublayer(x, self.norm3, self.ffn)
        return x
