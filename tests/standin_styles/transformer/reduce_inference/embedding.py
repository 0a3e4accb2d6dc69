import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model

    def forward(self, tokens):
        return math.sqrt(self.d_model) * self.embed(tokens)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float32)
        inv = 1.0 / torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        angles = torch.outer(pos, inv)
        # interleave sin and cos: [..., i, 2] -> [..., 2i], [..., 2i + 1]
        pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
        self.register_buffer("pe", pe.unsqueeze(0))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(x + self.pe[:, : x.size(1)].type_as(x))
