"""The Transformer. Each stack checks the input length against its positional table (pos_enc.pe, whose
shape the contract fixes) and reads its width from the embedding; initialisation walks self.modules() and
Xavier-initialises every matrix each module owns directly."""

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class _Stack(nn.Module):
    layer_type = None

    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList([self.layer_type(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                     for _ in range(num_layers)])
        if norm_first:
            self.norm = LayerNorm(d_model)
        self.d_model = self.embed.embed.embedding_dim

    def _embed(self, tokens):
        if tokens.shape[1] > self.pos_enc.pe.shape[1]:
            raise ValueError(f"sequence of {tokens.shape[1]} tokens is longer than the positional table")
        return self.pos_enc(self.embed(tokens))

    def _finish(self, x):
        return self.norm(x) if "norm" in self._modules else x


class Encoder(_Stack):
    layer_type = EncoderLayer

    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__(vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation)

    def forward(self, src, src_mask=None):
        x = self._embed(src)
        for layer in self.layers:
            x = layer(x, src_mask)
        return self._finish(x)


class Decoder(_Stack):
    layer_type = DecoderLayer

    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__(vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self._embed(tgt)
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)
        return self._finish(x)


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        kw = dict(d_model=d_model, num_heads=num_heads, d_ff=d_ff, num_layers=num_layers, max_len=max_len,
                  dropout=dropout, norm_first=norm_first, activation=activation)
        self.encoder = Encoder(src_vocab_size, **kw)
        self.decoder = Decoder(tgt_vocab_size, **kw)
        self.output_proj = nn.Linear(self.decoder.d_model, tgt_vocab_size)
        for module in self.modules():
            for param in module.parameters(recurse=False):
                if param.dim() > 1:
                    nn.init.xavier_uniform_(param)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        return self.output_proj(self.decode(tgt, self.encode(src, src_mask), tgt_mask, src_mask))
