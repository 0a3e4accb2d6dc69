"""Encoder, decoder and the full model."""

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class Encoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        stack = []
        for _ in range(num_layers):
            stack.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation))
        self.layers = nn.ModuleList(stack)
        if norm_first:
            self.add_module("norm", LayerNorm(d_model))

    def forward(self, src, src_mask=None):
        out = self.pos_enc(self.embed(src))
        for i in range(len(self.layers)):
            out = self.layers[i](out, src_mask)
        norm = self._modules.get("norm")
        if norm is not None:
            out = norm(out)
        return out


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        stack = []
        for _ in range(num_layers):
            stack.append(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation))
        self.layers = nn.ModuleList(stack)
        if norm_first:
            self.add_module("norm", LayerNorm(d_model))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        out = self.pos_enc(self.embed(tgt))
        for i in range(len(self.layers)):
            out = self.layers[i](out, memory, tgt_mask, memory_mask)
        norm = self._modules.get("norm")
        if norm is not None:
            out = norm(out)
        return out


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.encoder = Encoder(vocab_size=src_vocab_size, d_model=d_model, num_heads=num_heads, d_ff=d_ff,
                               num_layers=num_layers, max_len=max_len, dropout=dropout,
                               norm_first=norm_first, activation=activation)
        self.decoder = Decoder(vocab_size=tgt_vocab_size, d_model=d_model, num_heads=num_heads, d_ff=d_ff,
                               num_layers=num_layers, max_len=max_len, dropout=dropout,
                               norm_first=norm_first, activation=activation)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        self._init_weights()

    def _init_weights(self):
        for module in self.modules():
            for p in module.parameters(recurse=False):
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        memory = self.encode(src, src_mask)
        out = self.decode(tgt, memory, tgt_mask, memory_mask=src_mask)
        return self.output_proj(out)
