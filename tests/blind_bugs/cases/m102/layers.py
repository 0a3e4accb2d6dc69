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
        self.resid_drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        if self.norm_first:
            n = self.norm1(x)
            x = x + self.resid_drop(self.self_attn(n, n, n, mask))
            x = x + self.resid_drop(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self.resid_drop(self.self_attn(x, x, x, mask)))
            x = self.norm2(self.resid_drop(self.ffn(x)))
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
        self.resid_drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            n = self.norm1(x)
            x = x + self.resid_drop(self.self_attn(n, n, n, tgt_mask))
            n = self.norm2(x)
            x = x + self.resid_drop(self.cross_attn(n, memory, memory, memory_mask))
            x = x + self.resid_drop(self.ffn(self.norm3(x)))
        else:
            x = self.norm1(x + self.resid_drop(self.self_attn(x, x, x, tgt_mask)))
            x = self.norm2(x + self.resid_drop(self.cross_attn(x, memory, memory, memory_mask)))
            x = self.norm3(x + self.resid_drop(self.ffn(x)))
        return x
