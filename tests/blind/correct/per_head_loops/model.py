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
        layers = []
        for _ in range(num_layers):
            layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation))
        self.layers = nn.ModuleList(layers)
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, src, src_mask=None):
        x = self.pos_enc(self.embed(src))
        for layer in self.layers:
            x = layer(x, mask=src_mask)
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        layers = []
        for _ in range(num_layers):
            layers.append(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation))
        self.layers = nn.ModuleList(layers)
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc(self.embed(tgt))
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        kw = dict(d_model=d_model, num_heads=num_heads, d_ff=d_ff, num_layers=num_layers,
                  max_len=max_len, dropout=dropout, norm_first=norm_first, activation=activation)
        self.encoder = Encoder(src_vocab_size, **kw)
        self.decoder = Decoder(tgt_vocab_size, **kw)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        for name, p in self.named_parameters():
            if p.ndim > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        memory = self.encoder(src, src_mask)
        hidden = self.decoder(tgt, memory, tgt_mask, src_mask)
        return self.output_proj(hidden)
