r"""The encoder-decoder Transformer.

    memory = Encoder(src)             = Layers_N(PE(Embed(src)))
    hidden = Decoder(tgt, memory)     = Layers_N(PE(Embed(tgt)), memory)
    logits = hidden W_out + b_out

Departures from the paper: with Pre-LN (``norm_first=True``) a final LayerNorm
follows the last layer of each stack, because Pre-LN layers leave the residual
stream un-normalised; the output projection is not tied to the embeddings; and
every matrix starts Xavier-uniform (as in the Annotated Transformer and
PyTorch's ``nn.Transformer``).
"""

from torch import nn

from .embedding import PositionalEncoding, TokenEmbedding
from .layers import DecoderLayer, EncoderLayer
from .norm import LayerNorm


class Encoder(nn.Module):
    """Embed, add positions, run ``num_layers`` encoder layers.

    Args:
        vocab_size: source vocabulary size.
        d_model, num_heads, d_ff, num_layers: sizes.
        max_len: longest sequence the positional table covers.
        dropout: dropout probability.
        norm_first: Pre-LN when ``True``; then a final ``norm`` follows the last layer.
        activation: ``"relu"`` or ``"gelu"``.

    Submodules ``embed`` (TokenEmbedding), ``pos_enc`` (PositionalEncoding),
    ``layers`` (``nn.ModuleList`` of EncoderLayer) and ``norm`` (LayerNorm),
    the last only when ``norm_first``.
    ``forward(src [B, Ls] long, src_mask=None)`` returns ``memory [B, Ls, D]``.

    Hints:
        Build a new layer for each position in the stack: ``[layer] * N``
        makes N references to one layer that share their weights.
    """

    def __init__(
        self,
        vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)
        )
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, src, src_mask=None):
        x = self.pos_enc(self.embed(src))  # [B, Ls] -> [B, Ls, D]
        for layer in self.layers:
            x = layer(x, src_mask)  # [B, Ls, D]
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Decoder(nn.Module):
    """Embed, add positions, run ``num_layers`` decoder layers over the memory.

    Args: as ``Encoder``, with ``vocab_size`` the target vocabulary size.

    Submodules ``embed``, ``pos_enc``, ``layers`` (``nn.ModuleList`` of
    DecoderLayer), and ``norm`` only when ``norm_first``.
    ``forward(tgt [B, Lt] long, memory [B, Ls, D], tgt_mask=None, memory_mask=None)``
    returns ``[B, Lt, D]``.
    """

    def __init__(
        self,
        vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.embed = TokenEmbedding(vocab_size, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)
        )
        if norm_first:
            self.norm = LayerNorm(d_model)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        x = self.pos_enc(self.embed(tgt))  # [B, Lt] -> [B, Lt, D]
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)  # [B, Lt, D]
        if hasattr(self, "norm"):
            x = self.norm(x)
        return x


class Transformer(nn.Module):
    """Encoder, decoder and an output projection to target-vocabulary logits.

    Args:
        src_vocab_size, tgt_vocab_size: vocabulary sizes.
        d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first,
        activation: as for ``Encoder``.

    Submodules ``encoder``, ``decoder``, ``output_proj``: ``nn.Linear(D, V_tgt)``.
    Every parameter with more than one dimension starts Xavier-uniform.

    ``encode(src, src_mask=None)`` returns ``memory [B, Ls, D]``;
    ``decode(tgt, memory, tgt_mask=None, memory_mask=None)`` returns ``[B, Lt, D]``;
    ``forward(src, tgt, src_mask=None, tgt_mask=None)`` returns
    ``logits [B, Lt, V_tgt]``; ``src_mask`` is also the decoder's ``memory_mask``.

    Hints:
        Return logits, not probabilities: the loss applies the softmax.
    """

    def __init__(
        self,
        src_vocab_size,
        tgt_vocab_size,
        d_model=512,
        num_heads=8,
        d_ff=2048,
        num_layers=6,
        max_len=5000,
        dropout=0.1,
        norm_first=False,
        activation="relu",
    ):
        super().__init__()
        self.encoder = Encoder(
            src_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation
        )
        self.decoder = Decoder(
            tgt_vocab_size, d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first, activation
        )
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask=None):
        return self.encoder(src, src_mask)  # [B, Ls] -> [B, Ls, D]

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return self.decoder(tgt, memory, tgt_mask, memory_mask)  # [B, Lt] -> [B, Lt, D]

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        memory = self.encode(src, src_mask)  # [B, Ls, D]
        hidden = self.decode(tgt, memory, tgt_mask, src_mask)  # [B, Lt, D]
        return self.output_proj(hidden)  # [B, Lt, V_tgt]
