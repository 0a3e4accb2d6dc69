import math

import numpy as np
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model

    def forward(self, tokens):
        return self.embed(tokens) * math.sqrt(self.d_model)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        pos = np.arange(max_len)[:, None].astype(np.float64)
        i2 = np.arange(0, d_model, 2).astype(np.float64)
        angles = pos / np.power(10000.0, i2 / d_model)
        table = np.empty((max_len, d_model), dtype=np.float64)
        table[:, 0::2] = np.sin(angles)
        table[:, 1::2] = np.cos(angles)
        self.register_buffer("pe", torch.from_numpy(table).float()[None], persistent=False)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.shape[1]].to(x))
