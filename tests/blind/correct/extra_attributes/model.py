"""The encoder-decoder Transformer."""

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer, clones
from .norm import LayerNorm


class Encoder(nn.Module):
    "Core encoder is a stack of N layers"

    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        layer = EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
        self.layers = clones(layer, num_layers)
        if self.layers[0].norm_first:
            self.norm = LayerNorm(self.layers[0].size)

    def forward(self, src, src_mask=None):
        "Pass the input (and mask) through each layer in turn."
        x = self.pos_enc(self.embed(src))
        for layer in self.layers:
            x = layer(x, src_mask)
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Decoder(nn.Module):
    "Generic N layer decoder with masking."

    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        layer = DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
        self.layers = clones(layer, num_layers)
        if self.layers[0].norm_first:
            self.norm = LayerNorm(self.layers[0].size)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc(self.embed(tgt))
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Transformer(nn.Module):
    """
    A standard Encoder-Decoder architecture. Base for this and many
    other models.
    """

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, d_model, num_heads, d_ff, num_layers, max_len,
                               dropout, norm_first, activation)
        self.decoder = Decoder(tgt_vocab_size, d_model, num_heads, d_ff, num_layers, max_len,
                               dropout, norm_first, activation)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        # This was important from their code.
        # Initialize parameters with Glorot / fan_avg.
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        "Take in and process masked src and target sequences."
        return self.output_proj(self.decode(tgt, self.encode(src, src_mask), tgt_mask, src_mask))
