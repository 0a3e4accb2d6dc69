from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


class DecoderLM(nn.Module):
    def __init__(
        self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        blocks = [DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base) for _ in range(num_layers)]
        self.layers = nn.ModuleList(blocks)
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Embedding, nn.Linear)):
                nn.init.normal_(module.weight, 0.0, 0.02)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens, caches=None):
        h = self.embed(tokens)
        for i, block in enumerate(self.layers):
            h = block(h, cache=caches[i] if caches is not None else None)
        h = self.norm(h)
        return h @ self.lm_head.weight.T

    def new_cache(self):
        return [KVCache() for _ in self.layers]
