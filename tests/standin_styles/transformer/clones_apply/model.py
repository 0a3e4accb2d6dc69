"""The encoder-decoder Transformer.

The stacks are built the Annotated Transformer's way: one layer is built, then deep-copied N times
(clones). Initialisation walks the whole tree with Module.apply and Xavier-initialises the weight of every
nn.Linear and nn.Embedding (the contract names those as the only parameters with more than one dimension).
"""

import copy

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class Encoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        prototype = EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first,
                                 activation=activation)
        self.layers = clones(prototype, num_layers)
        if norm_first:
            self.norm = LayerNorm(d_model)
        self.norm_first = norm_first

    def forward(self, src, src_mask=None):
        x = self.pos_enc(self.embed(src))
        for layer in self.layers:
            x = layer(x, mask=src_mask)
        return self.norm(x) if self.norm_first else x


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        prototype = DecoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first,
                                 activation=activation)
        self.layers = clones(prototype, num_layers)
        if norm_first:
            self.norm = LayerNorm(d_model)
        self.norm_first = norm_first

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc(self.embed(tgt))
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
        return self.norm(x) if self.norm_first else x


def _xavier(module):
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.xavier_uniform_(module.weight)


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        shared = dict(d_model=d_model, num_heads=num_heads, d_ff=d_ff, num_layers=num_layers, max_len=max_len,
                      dropout=dropout, norm_first=norm_first, activation=activation)
        self.encoder = Encoder(src_vocab_size, **shared)
        self.decoder = Decoder(tgt_vocab_size, **shared)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        self.apply(_xavier)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask=src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        memory = self.encode(src, src_mask=src_mask)
        return self.output_proj(self.decode(tgt, memory, tgt_mask=tgt_mask, memory_mask=src_mask))
