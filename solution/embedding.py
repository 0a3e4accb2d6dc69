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
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        return self.embed(tokens) * math.sqrt(self.d_model)  # [B, L] -> [B, L, D]


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
        self.dropout = nn.Dropout(dropout)
        position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # [max_len, 1]
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # [D/2]
        angle = position / 10000.0 ** (two_i / d_model)  # [max_len, D/2]
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle)
        # Computed in float64 so that the table is exact to float64 precision;
        # stored in the default dtype, and converted along with the module by .to()/.double().
        self.register_buffer("pe", pe.unsqueeze(0).to(torch.get_default_dtype()))  # [1, max_len, D]

    def forward(self, x):
        L = x.size(1)
        return self.dropout(x + self.pe[:, :L])  # [B, L, D] + [1, L, D] -> [B, L, D]
