"""Encoder and decoder layers.

Every sublayer is called with keyword arguments (query=, key=, value=, mask=, x=), and the residual wiring
is one helper that takes the norm module and a closure.
"""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


def _residual(x, norm, sublayer, drop, norm_first):
    if norm_first:
        return x + drop(sublayer(norm(x=x)))
    return norm(x=x + drop(sublayer(x)))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout, activation=activation)
        self.norm1 = LayerNorm(d_model=d_model)
        self.norm2 = LayerNorm(d_model=d_model)
        self.residual_dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        x = _residual(x, self.norm1, lambda y: self.self_attn(query=y, key=y, value=y, mask=mask),
                      self.residual_dropout, self.norm_first)
        return _residual(x, self.norm2, lambda y: self.ffn(x=y), self.residual_dropout, self.norm_first)


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.ffn = FeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout, activation=activation)
        self.norm1 = LayerNorm(d_model=d_model)
        self.norm2 = LayerNorm(d_model=d_model)
        self.norm3 = LayerNorm(d_model=d_model)
        self.residual_dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        drop, first = self.residual_dropout, self.norm_first
        x = _residual(x, self.norm1, lambda y: self.self_attn(query=y, key=y, value=y, mask=tgt_mask), drop, first)
        x = _residual(x, self.norm2,
                      lambda y: self.cross_attn(query=y, key=memory, value=memory, mask=memory_mask), drop, first)
        return _residual(x, self.norm3, lambda y: self.ffn(x=y), drop, first)
