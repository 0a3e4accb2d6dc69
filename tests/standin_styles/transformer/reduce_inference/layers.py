"""Layers as a list of (norm, sublayer) pairs walked in order."""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class _Residual:
    """Post-LN or Pre-LN residual wiring around any callable."""

    def __init__(self, norm_first):
        self.norm_first = norm_first

    def __call__(self, x, norm, fn, drop):
        return x + drop(fn(norm(x))) if self.norm_first else norm(x + drop(fn(x)))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.norm1, self.norm2 = LayerNorm(d_model), LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.wire = _Residual(norm_first)

    def forward(self, x, mask=None):
        steps = ((self.norm1, lambda n: self.self_attn(n, n, n, mask)), (self.norm2, self.ffn))
        for norm, fn in steps:
            x = self.wire(x, norm, fn, self.dropout)
        return x


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.norm1, self.norm2, self.norm3 = LayerNorm(d_model), LayerNorm(d_model), LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.wire = _Residual(norm_first)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        steps = (
            (self.norm1, lambda n: self.self_attn(n, n, n, tgt_mask)),
            (self.norm2, lambda n: self.cross_attn(n, memory, memory, memory_mask)),
            (self.norm3, self.ffn),
        )
        for norm, fn in steps:
            x = self.wire(x, norm, fn, self.dropout)
        return x
