r"""Scaled dot-product attention and multi-head attention.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

    MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W_O
        head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

Masks are keep-masks: ``True`` means "may attend", ``False`` means "blocked".
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    """Attend from every query position to every key position.

    Args:
        query: ``[..., Lq, Dk]``.
        key: ``[..., Lk, Dk]``.
        value: ``[..., Lk, Dv]``.
        mask: optional bool keep-mask broadcastable to ``[..., Lq, Lk]``;
            ``True`` = may attend, ``False`` = blocked.
        dropout: optional ``nn.Dropout`` applied to the attention weights
            before they multiply ``value``.

    Returns:
        ``(output [..., Lq, Dv], weights [..., Lq, Lk])``: the weights are
        softmax(q kᵀ / √Dk) over the keys, exactly 0 where blocked, and are
        the ones that multiplied ``value`` (after dropout, if any).

    Hints:
        Scale by the square root of the *key* dimension (the last dimension
        of ``query``), not of d_model. Fill blocked scores with a very
        negative number before the softmax, never with 0. The softmax runs
        over the last dimension (the keys).
    """
    # TODO(sdpa): scores = q kᵀ / √d_k; blocked scores -> very negative; softmax over keys; optional dropout; weights @ value.
    raise NotImplementedError("sdpa: scaled_dot_product_attention is not implemented yet")


class MultiHeadAttention(nn.Module):
    """H attention heads of size Dh = D / H, run in parallel and merged.

    Args:
        d_model: model width D.
        num_heads: number of heads H; must divide ``d_model``
            (``ValueError`` otherwise).
        dropout: dropout probability on the attention weights.

    Parameters ``w_q``, ``w_k``, ``w_v``, ``w_o``: ``nn.Linear(D, D)`` with bias.

    ``forward(query [B, Lq, D], key [B, Lk, D], value [B, Lk, D], mask=None)``
    returns ``[B, Lq, D]``. ``mask`` is a bool keep-mask, 4-D
    ``[B or 1, 1, Lq or 1, Lk]`` or 2-D ``[Lq, Lk]``.

    Hints:
        Split heads with ``view(B, L, H, Dh).transpose(1, 2)``: view alone
        (without the transpose) mixes positions and heads. Merging back needs
        ``transpose(1, 2)`` then ``contiguous()`` before ``view``
        (or ``reshape``). Don't forget the output projection ``w_o``.
    """

    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        # TODO(mha): check divisibility (ValueError), create w_q, w_k, w_v, w_o as nn.Linear(D, D) and a dropout.
        raise NotImplementedError("mha: MultiHeadAttention.__init__ is not implemented yet")

    def forward(self, query, key, value, mask=None):
        # TODO(mha): project, split into heads [B, H, L, Dh], attend, merge heads back to [B, Lq, D], apply w_o.
        raise NotImplementedError("mha: MultiHeadAttention.forward is not implemented yet")
