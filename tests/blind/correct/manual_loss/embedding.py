"""Token embeddings (scaled by sqrt(D)) and the sinusoidal positional table."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d_model: int = d_model

    def forward(self, tokens: Tensor) -> Tensor:     # [B, L] long -> [B, L, D]
        return self.embed(tokens) * math.sqrt(self.d_model)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.1) -> None:
        super().__init__()
        pos = np.arange(max_len, dtype=np.float64)[:, None]                 # [max_len, 1]
        two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]         # [1, D/2]
        angle = pos / np.power(10000.0, two_i / d_model)                    # [max_len, D/2]
        table = np.empty((max_len, d_model), dtype=np.float64)
        table[:, 0::2] = np.sin(angle)
        table[:, 1::2] = np.cos(angle)
        self.register_buffer("pe", torch.from_numpy(table).float().unsqueeze(0), persistent=False)  # [1, max_len, D]
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:          # [B, L, D] -> [B, L, D]
        L: int = x.shape[1]
        return self.drop(x + self.pe[:, :L].to(x))
