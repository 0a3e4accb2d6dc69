from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class _Residual(nn.Module):
    """Shared residual logic; the norms themselves are passed in by the owning layer."""

    def __init__(self, dropout, norm_first):
        super().__init__()
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)

    def sublayer(self, x, norm, fn):
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


class EncoderLayer(_Residual):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__(dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1, self.norm2 = LayerNorm(d_model), LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.sublayer(x, self.norm1, lambda y: self.self_attn(y, y, y, mask))
        return self.sublayer(x, self.norm2, self.ffn)


class DecoderLayer(_Residual):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__(dropout, norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model) for _ in range(3))

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.sublayer(x, self.norm1, lambda y: self.self_attn(y, y, y, tgt_mask))
        x = self.sublayer(x, self.norm2, lambda y: self.cross_attn(y, memory, memory, memory_mask))
        return self.sublayer(x, self.norm3, self.ffn)
