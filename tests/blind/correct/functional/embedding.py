import math

import torch
import torch.nn.functional as F
from torch import nn


def sinusoid_table(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    freq = torch.exp(-math.log(10000.0) * two_i / d_model)
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        return F.embedding(tokens, self.embed.weight) * self.scale


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        self.register_buffer("pe", sinusoid_table(max_len, d_model).unsqueeze(0))
        self.p = float(dropout)

    def forward(self, x):
        pe = self.pe[:, : x.size(1)].to(dtype=x.dtype, device=x.device)
        return F.dropout(x + pe, p=self.p, training=self.training)
