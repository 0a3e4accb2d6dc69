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
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, x, mask):
        return self.dropout(self.self_attn(x, x, x, mask))

    def _ff(self, x):
        return self.dropout(self.ffn(x))

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self._sa(self.norm1(x), mask)
            x = x + self._ff(self.norm2(x))
        else:
            x = self.norm1(x + self._sa(x, mask))
            x = self.norm2(x + self._ff(x))
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
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        sublayers = [
            lambda h: self.self_attn(h, h, h, tgt_mask),
            lambda h: self.cross_attn(h, memory, memory, memory_mask),
            self.ffn,
        ]
        norms = [self.norm1, self.norm2, self.norm3]
        for sub, norm in zip(sublayers, norms):
            if self.norm_first:
                x = x + self.dropout(sub(norm(x)))
            else:
                x = norm(x + self.dropout(sub(x)))
        return x
