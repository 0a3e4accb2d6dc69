"""Layers that call every sublayer's forward() directly, positionally."""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        if self.norm_first:
            n = self.norm1.forward(x)
            x = x + self.drop1.forward(self.self_attn.forward(n, n, n, mask))
            x = x + self.drop2.forward(self.ffn.forward(self.norm2.forward(x)))
        else:
            x = self.norm1.forward(x + self.drop1.forward(self.self_attn.forward(x, x, x, mask)))
            x = self.norm2.forward(x + self.drop2.forward(self.ffn.forward(x)))
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
        self.drops = nn.ModuleList([nn.Dropout(dropout) for _ in range(3)])
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        d1, d2, d3 = self.drops
        if self.norm_first:
            n = self.norm1.forward(x)
            x = x + d1.forward(self.self_attn.forward(n, n, n, tgt_mask))
            n = self.norm2.forward(x)
            x = x + d2.forward(self.cross_attn.forward(n, memory, memory, memory_mask))
            x = x + d3.forward(self.ffn.forward(self.norm3.forward(x)))
        else:
            x = self.norm1.forward(x + d1.forward(self.self_attn.forward(x, x, x, tgt_mask)))
            x = self.norm2.forward(x + d2.forward(self.cross_attn.forward(x, memory, memory, memory_mask)))
            x = self.norm3.forward(x + d3.forward(self.ffn.forward(x)))
        return x
