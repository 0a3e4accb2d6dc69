import math

import numpy as np
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        # the width is read from the embedding itself
        return self.embed.forward(tokens) * math.sqrt(self.embed.embedding_dim)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        pos = np.arange(max_len)[:, None]
        i = np.arange(0, d_model, 2)[None, :]
        angle = pos / np.power(10000.0, i / d_model)
        table = np.empty((max_len, d_model))
        table[:, 0::2] = np.sin(angle)
        table[:, 1::2] = np.cos(angle)
        self.register_buffer("pe", torch.from_numpy(table).float()[None], persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout.forward(x + self.pe[:, : x.shape[1], :].to(x))
