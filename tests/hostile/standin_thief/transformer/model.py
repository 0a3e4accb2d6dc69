"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief, embedding, layers, norm

_thief.hunt("import:model.py", stage="import")


class Encoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000, dropout=0.1,
                 norm_first=False, activation="relu"):
        super().__init__()
        _thief.hunt("Encoder.__init__", _thief.deps(), stage="init")
        self.embed = embedding.TokenEmbedding(vocab_size, d_model)
        self.pos_enc = embedding.PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(layers.EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                    for _ in range(num_layers))
        if norm_first:
            self.norm = norm.LayerNorm(d_model)

    def forward(self, src, src_mask=None):
        _thief.hunt("Encoder.forward", [self, src, self.embed, self.pos_enc, *self.layers] + _thief.deps())
        raise _thief.full_error("Encoder.forward")


class Decoder(nn.Module):
    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000, dropout=0.1,
                 norm_first=False, activation="relu"):
        super().__init__()
        _thief.hunt("Decoder.__init__", _thief.deps(), stage="init")
        self.embed = embedding.TokenEmbedding(vocab_size, d_model)
        self.pos_enc = embedding.PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(layers.DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                    for _ in range(num_layers))
        if norm_first:
            self.norm = norm.LayerNorm(d_model)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        _thief.hunt("Decoder.forward", [self, tgt, memory, self.embed, *self.layers] + _thief.deps())
        raise _thief.full_error("Decoder.forward")


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        _thief.hunt("Transformer.__init__", _thief.deps(), stage="init")
        args = (d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation)
        self.encoder = Encoder(src_vocab_size, *args)
        self.decoder = Decoder(tgt_vocab_size, *args)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)

    def encode(self, src, src_mask=None):
        _thief.hunt("Transformer.encode", [self, src] + _thief.deps())
        raise _thief.full_error("Transformer.encode")

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        _thief.hunt("Transformer.decode", [self, tgt, memory] + _thief.deps())
        raise _thief.full_error("Transformer.decode")

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        _thief.hunt("Transformer.forward", [self, src, tgt, self.encoder.layers[0]] + _thief.deps())
        raise _thief.full_error("Transformer.forward")
