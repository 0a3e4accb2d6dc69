"""Scaled token embeddings and a sinusoidal table."""

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.scale = float(d_model) ** 0.5

    def forward(self, tokens):
        return self.embed(tokens) * self.scale


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        pos = torch.arange(max_len, dtype=torch.float32)
        expo = torch.arange(0, d_model, 2, dtype=torch.float32) / d_model
        denom = torch.pow(10000.0, expo)  # 10000^(2i/D)
        angles = pos[:, None] / denom[None, :]  # [max_len, D/2]
        table = torch.stack((angles.sin(), angles.cos()), dim=-1).reshape(max_len, d_model)
        table = table.unsqueeze(0).to(torch.get_default_dtype())
        self.register_buffer("pe", table, persistent=False)

    def forward(self, x):
        return self.drop(x + self.pe[:, : x.shape[1]])
