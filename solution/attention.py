r"""Scaled dot-product attention and multi-head attention.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

    MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W_O
        head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

Masks are keep-masks: ``True`` means "may attend", ``False`` means "blocked".
"""

import math

import torch  # noqa: F401 - not used here; the submissions made by editing this file (tests, mutants) use it
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
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # [..., Lq, Dk] x [..., Dk, Lk] -> [..., Lq, Lk]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # blocked -> -inf, so softmax gives exactly 0
    weights = scores.softmax(dim=-1)  # [..., Lq, Lk], each row sums to 1
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights  # [..., Lq, Lk] x [..., Lk, Dv] -> [..., Lq, Dv]


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
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B, Lq, D = query.shape
        Lk = key.size(1)
        H, Dh = self.num_heads, self.d_head
        q = self.w_q(query).view(B, Lq, H, Dh).transpose(1, 2)  # [B, H, Lq, Dh]
        k = self.w_k(key).view(B, Lk, H, Dh).transpose(1, 2)  # [B, H, Lk, Dh]
        v = self.w_v(value).view(B, Lk, H, Dh).transpose(1, 2)  # [B, H, Lk, Dh]
        # A 4-D mask [B or 1, 1, Lq or 1, Lk] broadcasts over the head axis;
        # a 2-D mask [Lq, Lk] broadcasts over batch and heads.
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)  # [B, H, Lq, Dh]
        out = out.transpose(1, 2).contiguous().view(B, Lq, D)  # [B, Lq, H, Dh] -> [B, Lq, D]
        return self.w_o(out)  # [B, Lq, D]
