"""Encoder and decoder layers built from sublayer connections."""

import copy

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


def clones(module, N):
    "Produce N identical layers."
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


class SublayerConnection(nn.Module):
    """A residual connection around a sublayer, with its LayerNorm passed in.

    Holds only the residual dropout (no parameters): the norm belongs to the
    layer (norm1/norm2/norm3) and is handed over at call time.
    """

    def __init__(self, size, dropout, norm_first=False):
        super().__init__()
        self.size = size
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer, norm):
        "Apply residual connection to any sublayer with the same size."
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


class EncoderLayer(nn.Module):
    "Encoder is made up of self-attn and feed forward (defined below)"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.sublayer = clones(SublayerConnection(d_model, dropout, norm_first), 2)
        self.size = d_model
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask), self.norm1)
        return self.sublayer[1](x, self.ffn, self.norm2)


class DecoderLayer(nn.Module):
    "Decoder is made of self-attn, src-attn, and feed forward (defined below)"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.size = d_model
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.sublayer = clones(SublayerConnection(d_model, dropout, norm_first), 3)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        m = memory
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask), self.norm1)
        x = self.sublayer[1](x, lambda x: self.cross_attn(x, m, m, memory_mask), self.norm2)
        return self.sublayer[2](x, self.ffn, self.norm3)
