r"""Token embeddings and sinusoidal positional encoding.

Embed(t) = E[t] · √d_model

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
"""

import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    """Look up a vector per token and scale it by √D.

    Args:
        vocab_size: V, number of token ids.
        d_model: D, the vector size.

    Parameter ``embed``: ``nn.Embedding(V, D)``.
    ``forward(tokens [B, L] long)`` returns ``[B, L, D]``.

    Hints:
        Multiply by √D (``math.sqrt(d_model)``), not by D: the scale keeps
        the embeddings on the same footing as the positional table.
    """

    def __init__(self, vocab_size, d_model):
        super().__init__()
        # TODO(embedding): create self.embed = nn.Embedding(vocab_size, d_model).
        raise NotImplementedError("embedding: TokenEmbedding.__init__ is not implemented yet")

    def forward(self, tokens):
        # TODO(embedding): look up the tokens and multiply by √d_model.
        raise NotImplementedError("embedding: TokenEmbedding.forward is not implemented yet")


class PositionalEncoding(nn.Module):
    """Add the fixed sinusoidal position table, then apply dropout.

    Args:
        d_model: D, even.
        max_len: longest sequence the table covers.
        dropout: dropout probability on the sum.

    The table lives in a buffer (not a parameter) named ``pe`` of shape
    ``[1, max_len, D]``, so it moves with ``.to()`` and is never trained.
    ``forward(x [B, L, D])`` returns ``dropout(x + pe[:, :L])``.

    Hints:
        Even columns (0, 2, 4, ...) take sin, odd columns take cos, and the
        pair (2i, 2i+1) shares one frequency 1 / 10000^(2i/D). Positions
        start at 0. ``register_buffer`` is what makes a tensor a buffer.
    """

    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        # TODO(positional): build the [1, max_len, D] sin/cos table and register it as the buffer 'pe'; create the dropout.
        raise NotImplementedError("positional: PositionalEncoding.__init__ is not implemented yet")

    def forward(self, x):
        # TODO(positional): add pe[:, :L] to x and apply dropout.
        raise NotImplementedError("positional: PositionalEncoding.forward is not implemented yet")
