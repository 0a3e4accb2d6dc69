"""Layers that find their norms by name (getattr(self, f"norm{i}")) and mix positional and keyword calls."""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        for i in (1, 2):
            setattr(self, f"norm{i}", LayerNorm(d_model))
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sublayers(self, mask):
        yield lambda y: self.self_attn(y, y, y, mask=mask)
        yield lambda y: self.ffn(y)

    def forward(self, x, mask=None):
        for i, sublayer in enumerate(self._sublayers(mask), start=1):
            norm = getattr(self, f"norm{i}")
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        for i in (1, 2, 3):
            setattr(self, f"norm{i}", LayerNorm(d_model))
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        sublayers = (
            lambda y: self.self_attn(y, y, y, mask=tgt_mask),
            lambda y: self.cross_attn(y, memory, memory, mask=memory_mask),
            lambda y: self.ffn(y),
        )
        for i, sublayer in enumerate(sublayers, start=1):
            norm = getattr(self, f"norm{i}")
            x = x + self.dropout(sublayer(norm(x))) if self.norm_first else norm(x + self.dropout(sublayer(x)))
        return x
