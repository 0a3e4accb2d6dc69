import math

import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        w = self.embed.weight
        return w[tokens] * math.sqrt(w.shape[1])


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        pe = torch.empty(max_len, d_model)
        for i in range(0, d_model, 2):
            freq = 10000.0 ** (-i / d_model)
            angle = torch.arange(max_len, dtype=torch.float64) * freq
            pe[:, i] = torch.sin(angle).float()
            pe[:, i + 1] = torch.cos(angle).float()
        self.register_buffer("pe", pe.unsqueeze(0), persistent=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.shape[1]].to(x.dtype))
