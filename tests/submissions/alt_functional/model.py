from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class _Stack(nn.Module):
    layer_cls = None

    def __init__(self, vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6, max_len=5000,
                 dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(self.layer_cls(d_model, num_heads, d_ff, dropout, norm_first, activation)
                                    for _ in range(num_layers))
        if norm_first:
            self.norm = LayerNorm(d_model)

    def _run(self, tokens, *args):
        x = self.pos_enc(self.embed(tokens))
        for layer in self.layers:
            x = layer(x, *args)
        return self.norm(x) if "norm" in self._modules else x


class Encoder(_Stack):
    layer_cls = EncoderLayer

    def forward(self, src, src_mask=None):
        return self._run(src, src_mask)


class Decoder(_Stack):
    layer_cls = DecoderLayer

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self._run(tgt, memory, tgt_mask, memory_mask)


class Transformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_heads=8, d_ff=2048, num_layers=6,
                 max_len=5000, dropout=0.1, norm_first=False, activation="relu"):
        super().__init__()
        rest = (d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation)
        self.encoder = Encoder(src_vocab_size, *rest)
        self.decoder = Decoder(tgt_vocab_size, *rest)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        [nn.init.xavier_uniform_(p) for p in self.parameters() if p.dim() > 1]

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        return self.output_proj(self.decode(tgt, self.encode(src, src_mask), tgt_mask, src_mask))
