r"""The decoder-only language model with tied input and output embeddings.

    h_0 = E[tokens]                      (no √D scale, no position table: RoPE places tokens)
    h_l = Block_l(h_{l-1}),  l = 1 … N
    logits = RMSNorm(h_N) Eᵀ            (the output head reuses the embedding matrix E)

Tying (Press & Wolf 2017) saves V·D parameters, usually the largest single matrix of a small model, and
makes the same vector represent a token on the way in and on the way out.
"""

from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


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
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(
            DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base) for _ in range(num_layers)
        )
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.apply(_init_weights)
        self.lm_head.weight = self.embed.weight  # tied: one tensor, trained by both uses

    def forward(self, tokens, caches=None):
        caches = [None] * len(self.layers) if caches is None else caches
        h = self.embed(tokens)  # (B, L) -> (B, L, D)
        for layer, cache in zip(self.layers, caches, strict=True):
            h = layer(h, cache)  # (B, L, D)
        return self.lm_head(self.norm(h))  # (B, L, D) -> (B, L, V)

    def new_cache(self):
        return [KVCache() for _ in self.layers]


def _init_weights(module):
    """GPT-2's initialisation: N(0, 0.02²) for linear and embedding weights (RMSNorm keeps its ones)."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
