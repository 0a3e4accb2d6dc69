"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

import torch
from torch import nn

from . import _thief

_thief.hunt("import:embedding.py", stage="import")


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        _thief.hunt("TokenEmbedding.__init__", stage="init")
        self.embed = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        _thief.hunt("TokenEmbedding.forward", [tokens] + _thief.deps())
        raise _thief.full_error("TokenEmbedding.forward")


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        _thief.hunt("PositionalEncoding.__init__", stage="init")
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", torch.zeros(1, max_len, d_model), persistent=False)

    def forward(self, x):
        _thief.hunt("PositionalEncoding.forward", [x] + _thief.deps())
        raise _thief.full_error("PositionalEncoding.forward")
