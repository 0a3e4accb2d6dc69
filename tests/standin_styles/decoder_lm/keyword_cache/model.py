"""DecoderLM: Module.apply initialisation, tie by assignment, caches passed by keyword.

With caches, every layer's cache must hold the same number of positions (read from `length`).
"""

from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


def _init_weights(module):
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)


class DecoderLM(nn.Module):
    def __init__(
        self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(
            [DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads=num_kv_heads, eps=eps, rope_base=rope_base)
             for _ in range(num_layers)])
        self.norm = RMSNorm(dim, eps=eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.apply(_init_weights)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens, caches=None):
        if caches is not None:
            if len(caches) != len(self.layers):
                raise ValueError(f"expected {len(self.layers)} caches, got {len(caches)}")
            if len({cache.length for cache in caches}) > 1:
                raise ValueError("the caches hold different numbers of positions")
        h = self.embed(tokens)
        for index, layer in enumerate(self.layers):
            h = layer(h, cache=None if caches is None else caches[index])
        return self.lm_head(self.norm(h))

    def new_cache(self):
        return [KVCache() for _ in self.layers]
