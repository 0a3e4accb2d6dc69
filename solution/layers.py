r"""Encoder and decoder layers: sublayers wrapped in residual + LayerNorm.

Post-LN (``norm_first=False``, the paper):   x = LayerNorm(x + Dropout(Sublayer(x)))
Pre-LN  (``norm_first=True``):               x = x + Dropout(Sublayer(LayerNorm(x)))

Pre-LN departs from the paper; it trains more stably without warm-up and is
what most modern models use. The dropout here is the "residual dropout" of
the paper (section 5.4).
"""

from torch import nn

from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .norm import LayerNorm


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with residual + norm.

    Args:
        d_model: D.
        num_heads: H.
        d_ff: F, the feed-forward hidden size.
        dropout: dropout probability (attention weights, feed-forward, residual).
        norm_first: ``False`` for Post-LN (the paper), ``True`` for Pre-LN.
        activation: ``"relu"`` or ``"gelu"``.

    Submodules ``self_attn`` (MultiHeadAttention), ``ffn`` (FeedForward),
    ``norm1``, ``norm2`` (LayerNorm).
    ``forward(x [B, L, D], mask=None)`` returns ``[B, L, D]``.

    Hints:
        Post-LN: ``x = norm1(x + drop(self_attn(x, x, x, mask)))``, then
        ``x = norm2(x + drop(ffn(x)))``. Pre-LN: ``n = norm1(x)``,
        ``x = x + drop(self_attn(n, n, n, mask))``, then
        ``x = x + drop(ffn(norm2(x)))``. Keep the residual: add the input back.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        if self.norm_first:
            n = self.norm1(x)  # [B, L, D]
            x = x + self.dropout(self.self_attn(n, n, n, mask))  # [B, L, D]
            x = x + self.dropout(self.ffn(self.norm2(x)))  # [B, L, D]
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))  # [B, L, D]
            x = self.norm2(x + self.dropout(self.ffn(x)))  # [B, L, D]
        return x


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder, feed-forward.

    Args:
        d_model: D.
        num_heads: H.
        d_ff: F.
        dropout: dropout probability.
        norm_first: ``False`` for Post-LN, ``True`` for Pre-LN.
        activation: ``"relu"`` or ``"gelu"``.

    Submodules ``self_attn``, ``cross_attn``, ``ffn``, ``norm1``, ``norm2``, ``norm3``.
    ``forward(x [B, Lt, D], memory [B, Ls, D], tgt_mask=None, memory_mask=None)``
    returns ``[B, Lt, D]``.

    Hints:
        Cross-attention takes its query from ``x`` and its key and value from
        ``memory``, with ``memory_mask``. In Pre-LN only the query side is
        normalised, never ``memory``.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        if self.norm_first:
            n = self.norm1(x)  # [B, Lt, D]
            x = x + self.dropout(self.self_attn(n, n, n, tgt_mask))  # [B, Lt, D]
            n = self.norm2(x)
            x = x + self.dropout(self.cross_attn(n, memory, memory, memory_mask))  # [B, Lt, D] (memory [B, Ls, D])
            x = x + self.dropout(self.ffn(self.norm3(x)))  # [B, Lt, D]
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)))  # [B, Lt, D]
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, memory_mask)))  # [B, Lt, D]
            x = self.norm3(x + self.dropout(self.ffn(x)))  # [B, Lt, D]
        return x
