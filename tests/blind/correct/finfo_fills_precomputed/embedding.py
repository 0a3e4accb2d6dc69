"""Token embeddings and sinusoidal positional encoding."""

import math

import numpy as np
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        return self.embed(tokens) * math.sqrt(self.d_model)


def _sinusoid_table(max_len, d_model):
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angles = pos / np.power(10000.0, two_i / d_model)
    table = np.empty((max_len, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        table = torch.from_numpy(_sinusoid_table(max_len, d_model)).float()
        self.register_buffer("pe", table.unsqueeze(0), persistent=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        L = x.shape[1]
        return self.drop(x + self.pe[:, :L].to(x.dtype))
