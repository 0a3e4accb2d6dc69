"""The Transformer, built with list comprehensions; layers run by index through .forward().

Widths are read back from the parts (the contract fixes their attribute names): the output projection's
input size is the decoder embedding's width. `norm` is None when the stack has no final norm. The
Xavier initialisation is a state_dict round trip: fresh tensors for every parameter with more than one
dimension, loaded with load_state_dict.
"""

import torch
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
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                     for _ in range(num_layers)])
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(self, src, src_mask=None):
        x = self.pos_enc.forward(self.embed.forward(src))
        for i in range(len(self.layers)):
            x = self.layers[i].forward(x, src_mask)
        if self.norm is not None:
            x = self.norm.forward(x)
        return x


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList([DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                     for _ in range(num_layers)])
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc.forward(self.embed.forward(tgt))
        for i in range(len(self.layers)):
            x = self.layers[i].forward(x, memory, tgt_mask, memory_mask)
        if self.norm is not None:
            x = self.norm.forward(x)
        return x


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first,
                               activation)
        self.decoder = Decoder(tgt_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first,
                               activation)
        width = self.decoder.embed.embed.weight.shape[1]
        self.output_proj = nn.Linear(width, tgt_vocab_size)
        state = self.state_dict()
        for name, param in self.named_parameters():
            if param.dim() > 1:
                fresh = torch.empty_like(param)
                nn.init.xavier_uniform_(fresh)
                state[name] = fresh
        self.load_state_dict(state)

    def encode(self, src, src_mask=None):
        return self.encoder.forward(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder.forward(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        return self.output_proj.forward(self.decode(tgt, self.encode(src, src_mask), tgt_mask, src_mask))
