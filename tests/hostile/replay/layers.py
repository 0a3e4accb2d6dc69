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
        # TODO(encoder_layer): create self_attn, ffn, norm1, norm2 and a dropout; remember norm_first.
        raise NotImplementedError("encoder_layer: EncoderLayer.__init__ is not implemented yet")

    def forward(self, x, mask=None):
        # TODO(encoder_layer): self-attention then feed-forward, each with residual + norm (Post-LN or Pre-LN).
        raise NotImplementedError("encoder_layer: EncoderLayer.forward is not implemented yet")


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
        # TODO(decoder_layer): create self_attn, cross_attn, ffn, norm1, norm2, norm3 and a dropout; remember norm_first.
        raise NotImplementedError("decoder_layer: DecoderLayer.__init__ is not implemented yet")

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        # TODO(decoder_layer): masked self-attention, cross-attention over memory, feed-forward; each with residual + norm.
        raise NotImplementedError("decoder_layer: DecoderLayer.forward is not implemented yet")
