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
        # TODO(model): create embed, pos_enc, layers (nn.ModuleList of num_layers new EncoderLayers) and, if norm_first, norm.
        raise NotImplementedError("model: Encoder.__init__ is not implemented yet")

    def forward(self, src, src_mask=None):
        # TODO(model): embed, add positions, run every layer with src_mask, final norm when norm_first.
        raise NotImplementedError("model: Encoder.forward is not implemented yet")


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
        # TODO(model): create embed, pos_enc, layers (nn.ModuleList of num_layers new DecoderLayers) and, if norm_first, norm.
        raise NotImplementedError("model: Decoder.__init__ is not implemented yet")

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        # TODO(model): embed, add positions, run every layer with memory and both masks, final norm when norm_first.
        raise NotImplementedError("model: Decoder.forward is not implemented yet")


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
        # TODO(model): create encoder, decoder, output_proj; Xavier-uniform every parameter with more than one dimension.
        raise NotImplementedError("model: Transformer.__init__ is not implemented yet")

    def encode(self, src, src_mask=None):
        # TODO(model): run the encoder.
        raise NotImplementedError("model: Transformer.encode is not implemented yet")

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        # TODO(model): run the decoder.
        raise NotImplementedError("model: Transformer.decode is not implemented yet")

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        # TODO(model): encode with src_mask, decode with tgt_mask and src_mask as memory_mask, project to logits.
        raise NotImplementedError("model: Transformer.forward is not implemented yet")
