"""Encoder-decoder Transformer."""

from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class Encoder(nn.Module):
    def __init__(self, vocab_size: int, d_model: int = 512, num_heads: int = 8, d_ff: int = 2048,
                 num_layers: int = 6, max_len: int = 5000, dropout: float = 0.1,
                 norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)
        )
        self.norm: Optional[LayerNorm] = LayerNorm(d_model) if norm_first else None

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None) -> Tensor:   # [B, Ls] -> [B, Ls, D]
        x = self.pos_enc(self.embed(src))
        for layer in self.layers:
            x = layer(x, src_mask)
        return self.norm(x) if self.norm is not None else x


class Decoder(nn.Module):
    def __init__(self, vocab_size: int, d_model: int = 512, num_heads: int = 8, d_ff: int = 2048,
                 num_layers: int = 6, max_len: int = 5000, dropout: float = 0.1,
                 norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)
        )
        self.norm: Optional[LayerNorm] = LayerNorm(d_model) if norm_first else None

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None) -> Tensor:   # [B, Lt] -> [B, Lt, D]
        x = self.pos_enc(self.embed(tgt))
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)
        return self.norm(x) if self.norm is not None else x


class Transformer(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_model: int = 512, num_heads: int = 8,
                 d_ff: int = 2048, num_layers: int = 6, max_len: int = 5000, dropout: float = 0.1,
                 norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.encoder = Encoder(src_vocab_size, d_model, num_heads, d_ff, num_layers, max_len,
                               dropout, norm_first, activation)
        self.decoder = Decoder(tgt_vocab_size, d_model, num_heads, d_ff, num_layers, max_len,
                               dropout, norm_first, activation)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src: Tensor, src_mask: Optional[Tensor] = None) -> Tensor:
        return self.encoder(src, src_mask)                                   # [B, Ls, D]

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
               memory_mask: Optional[Tensor] = None) -> Tensor:
        return self.decoder(tgt, memory, tgt_mask, memory_mask)              # [B, Lt, D]

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Optional[Tensor] = None,
                tgt_mask: Optional[Tensor] = None) -> Tensor:
        memory = self.encode(src, src_mask)                                  # [B, Ls, D]
        hidden = self.decode(tgt, memory, tgt_mask, src_mask)                # [B, Lt, D]
        return self.output_proj(hidden)                                      # [B, Lt, V_tgt]
