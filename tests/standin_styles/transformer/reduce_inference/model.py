"""The Transformer: stacks filled by append / map, run with functools.reduce.

The decoder's stack is a subclass of nn.ModuleList with a helper method. Initialisation walks
self.parameters() after everything is built and Xavier-initialises every matrix it finds.
"""

import functools

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class _Stack(nn.ModuleList):
    def run(self, x, *args):
        return functools.reduce(lambda h, layer: layer(h, *args), self, x)


class Encoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation))
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, src, src_mask=None):
        x = functools.reduce(lambda h, layer: layer(h, src_mask), self.layers, self.pos_enc(self.embed(src)))
        norm = getattr(self, "norm", None)
        return x if norm is None else norm(x)


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = _Stack(map(lambda _: DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation),
                                 range(num_layers)))
        self.norm_first = norm_first
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.layers.run(self.pos_enc(self.embed(tgt)), memory, tgt_mask, memory_mask)
        if self.norm_first:
            x = self.norm(x)
        return x


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        args = (d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation)
        self.encoder = Encoder(src_vocab_size, *args)
        self.decoder = Decoder(tgt_vocab_size, *args)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        return self.output_proj(self.decoder(tgt, self.encoder(src, src_mask), tgt_mask, src_mask))
