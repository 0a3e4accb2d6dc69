"""Token embedding and sinusoidal positions."""

import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.factor = math.sqrt(d_model)

    def forward(self, tokens):
        return self.factor * self.embed(tokens)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        table = torch.empty(max_len, d_model, dtype=torch.float64)
        positions = torch.arange(max_len, dtype=torch.float64)
        for i in range(0, d_model, 2):
            freq = 1.0 / (10000.0 ** (i / d_model))
            table[:, i] = torch.sin(positions * freq)
            table[:, i + 1] = torch.cos(positions * freq)
        self.register_buffer("pe", table[None].to(torch.get_default_dtype()))

    def forward(self, x):
        length = x.shape[1]
        return self.dropout(x + self.pe.narrow(1, 0, length))
