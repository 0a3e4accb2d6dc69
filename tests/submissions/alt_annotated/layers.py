"""Encoder / decoder layers with residual helper functions (norms live on the layer)."""

import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


def sublayer_connection(x, norm, sublayer, p, training, norm_first):
    """Residual connection around ``sublayer`` with ``norm`` before (Pre-LN) or after (Post-LN)."""
    if norm_first:
        return x + F.dropout(sublayer(norm(x)), p=p, training=training)
    return norm(x + F.dropout(sublayer(x), p=p, training=training))


class EncoderLayer(nn.Module):
    "Encoder is made up of self-attn and feed forward"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.p = dropout
        self.norm_first = norm_first
        self.size = d_model

    def forward(self, x, mask=None):
        x = sublayer_connection(x, self.norm1, lambda x: self.self_attn(x, x, x, mask),
                                self.p, self.training, self.norm_first)
        return sublayer_connection(x, self.norm2, self.ffn, self.p, self.training, self.norm_first)


class DecoderLayer(nn.Module):
    "Decoder is made of self-attn, src-attn, and feed forward"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.p = dropout
        self.norm_first = norm_first
        self.size = d_model

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        m = memory
        args = (self.p, self.training, self.norm_first)
        x = sublayer_connection(x, self.norm1, lambda x: self.self_attn(x, x, x, tgt_mask), *args)
        x = sublayer_connection(x, self.norm2, lambda x: self.cross_attn(x, m, m, memory_mask), *args)
        return sublayer_connection(x, self.norm3, self.ffn, *args)
