"""The encoder-decoder Transformer."""

import torch
from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class Encoder(nn.Module):
    def __init__(
        self,
        vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)]
        )
        self.norm_first = norm_first
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, src, src_mask=None):
        x = self.pos_enc(self.embed(src))
        for layer in self.layers:
            x = layer(x, src_mask)
        if self.norm_first:
            x = self.norm(x)
        return x


class Decoder(nn.Module):
    def __init__(
        self,
        vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            [DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)]
        )
        self.norm_first = norm_first
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc(self.embed(tgt))
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)
        if self.norm_first:
            x = self.norm(x)
        return x


class Transformer(nn.Module):
    def __init__(
        self,
        src_vocab_size,
        tgt_vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.encoder = Encoder(
            src_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation
        )
        self.decoder = Decoder(
            tgt_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation
        )
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)

        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        memory = self.encode(src, src_mask)
        out = self.decode(tgt, memory, tgt_mask, src_mask)
        logits = self.output_proj(out)
        return torch.softmax(logits, dim=-1)
