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


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        pos = np.arange(max_len)[:, None].astype(np.float64)
        i = np.arange(d_model)[None, :]
        angles = pos / np.power(10000.0, (2 * (i // 2)) / d_model)
        table = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
        self.register_buffer("pe", torch.from_numpy(table).float()[None], persistent=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        length = x.shape[1]
        return self.drop(x + self.pe[:, :length].to(x.dtype))
