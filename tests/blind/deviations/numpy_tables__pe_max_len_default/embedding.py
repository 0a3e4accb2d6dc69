"""Token embeddings and a sinusoidal positional table computed with NumPy."""

import math

import numpy as np
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        return self.embed(tokens) * self.scale


def sinusoid_table(max_len, d_model):
    """[max_len, d_model] float64 NumPy array of sin/cos positions."""
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]          # [L, 1]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[np.newaxis, :]       # [1, D/2]
    angles = positions / np.power(10000.0, two_i / d_model)                 # [L, D/2]
    table = np.zeros((max_len, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512, dropout=0.1):
        super().__init__()
        table = sinusoid_table(max_len, d_model)
        self.register_buffer("pe", torch.from_numpy(table).float().unsqueeze(0))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        length = x.size(1)
        pe = self.pe[:, :length].to(device=x.device, dtype=x.dtype)
        return self.dropout(x + pe)
