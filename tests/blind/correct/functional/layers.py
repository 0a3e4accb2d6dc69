import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


def residual(x, sublayer, norm, p, training, norm_first):
    """One residual block, Post-LN or Pre-LN."""
    if norm_first:
        return x + F.dropout(sublayer(norm(x)), p=p, training=training)
    return norm(x + F.dropout(sublayer(x), p=p, training=training))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.p = float(dropout)
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        x = residual(x, lambda h: self.self_attn(h, h, h, mask), self.norm1, self.p, self.training, self.norm_first)
        x = residual(x, self.ffn, self.norm2, self.p, self.training, self.norm_first)
        return x


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.p = float(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = residual(x, lambda h: self.self_attn(h, h, h, tgt_mask), self.norm1, self.p, self.training, self.norm_first)
        x = residual(x, lambda h: self.cross_attn(h, memory, memory, memory_mask), self.norm2, self.p,
                     self.training, self.norm_first)
        x = residual(x, self.ffn, self.norm3, self.p, self.training, self.norm_first)
        return x
