import torch.nn.functional as F
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
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base))
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens, caches=None):
        x = F.embedding(tokens, self.embed.weight)
        caches = caches if caches is not None else [None] * len(self.layers)
        for layer, c in zip(self.layers, caches):
            x = layer(x, c)
        return F.linear(self.norm(x), self.embed.weight)

    def new_cache(self):
        return [KVCache() for _ in self.layers]
