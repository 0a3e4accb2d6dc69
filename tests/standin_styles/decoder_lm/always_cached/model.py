"""DecoderLM that always runs its layers with caches: without caches it makes fresh ones (new_cache()) and
drops them afterwards, which computes the same function. The head is tied before initialising; apply()
then initialises the shared matrix (twice, harmlessly)."""

from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


class DecoderLM(nn.Module):
    def __init__(
        self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0
    ):
        super().__init__()
        self.num_layers = num_layers
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads=num_kv_heads, eps=eps,
                                            rope_base=rope_base))
        self.norm = RMSNorm(dim, eps=eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, nn.Linear) or isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens, caches=None):
        if caches is None:
            caches = self.new_cache()
        h = self.embed(tokens)
        for layer, cache in zip(self.layers, caches):
            h = layer(x=h, cache=cache)
        return self.lm_head(self.norm(h))

    def new_cache(self):
        return [KVCache() for _ in range(self.num_layers)]
