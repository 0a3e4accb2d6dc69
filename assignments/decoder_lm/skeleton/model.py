r"""The decoder-only language model with tied input and output embeddings.

    h_0 = E[tokens]                      (no √D scale, no position table: RoPE places tokens)
    h_l = Block_l(h_{l-1}),  l = 1 … N
    logits = RMSNorm(h_N) Eᵀ            (the output head reuses the embedding matrix E)

Tying (Press & Wolf 2017) saves V·D parameters, usually the largest single matrix of a small model, and
makes the same vector represent a token on the way in and on the way out.
"""

from torch import nn

from .block import DecoderBlock  # noqa: F401 - for your code
from .cache import KVCache  # noqa: F401 - for your code
from .norm import RMSNorm  # noqa: F401 - for your code


class DecoderLM(nn.Module):
    """A stack of pre-norm decoder blocks between a token embedding and a tied output head.

    Args:
        vocab_size: V.
        dim: model width D.
        num_layers: number of ``DecoderBlock``.
        num_heads: query heads H.
        hidden_dim: SwiGLU's hidden width F.
        num_kv_heads: key/value heads (default ``None``: H).
        eps: every RMSNorm's ``eps``.
        rope_base: RoPE's ``base``.

    Submodules ``embed`` (``nn.Embedding(V, D)``), ``layers`` (``nn.ModuleList`` of DecoderBlock),
    ``norm`` (RMSNorm after the last layer), ``lm_head`` (``nn.Linear(D, V, bias=False)`` whose
    ``weight`` is ``embed.weight``: one tensor, listed once by ``named_parameters()``, as ``embed.weight``).
    Every ``nn.Linear`` weight and the embedding start ``N(0, 0.02²)``; RMSNorm weights start at ones.

    ``forward(tokens [B, L] long, caches=None) -> logits [B, L, V]``: ``caches`` is ``None`` or a list of
    one ``KVCache`` per layer (``caches[i]`` for ``layers[i]``); with caches, positions continue from their
    length. ``new_cache() -> list[KVCache]``: ``num_layers`` empty caches.

    Hints:
        Tie by assigning the parameter (``self.lm_head.weight = self.embed.weight``), after initialising.
        Do not scale the embeddings by √D (the first assignment did; this model does not).
    """

    def __init__(
        self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0
    ):
        super().__init__()
        # TODO(model): embed, layers (nn.ModuleList of DecoderBlock), norm, lm_head; N(0, 0.02²) init; then
        #   tie lm_head.weight to embed.weight.
        raise NotImplementedError("model: DecoderLM.__init__ is not implemented yet")

    def forward(self, tokens, caches=None):
        # TODO(model): embed (no √D), each layer with its cache (or None), final norm, lm_head.
        raise NotImplementedError("model: DecoderLM.forward is not implemented yet")

    def new_cache(self):
        # TODO(model): one empty KVCache per layer.
        raise NotImplementedError("model: DecoderLM.new_cache is not implemented yet")
