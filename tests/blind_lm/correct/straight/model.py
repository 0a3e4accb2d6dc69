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
        self.layers = nn.ModuleList(
            [DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base) for _ in range(num_layers)]
        )
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.apply(self._init_weights)
        self.lm_head.weight = self.embed.weight

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens, caches=None):
        h = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            h = layer(h, None if caches is None else caches[i])
        return self.lm_head(self.norm(h))

    def new_cache(self):
        return [KVCache() for _ in range(self.num_layers)]
