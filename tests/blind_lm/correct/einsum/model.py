import torch
from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


class DecoderLM(nn.Module):
    def __init__(
        self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0
    ):
        super().__init__()
        self.n_layers = num_layers
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList([])
        for _ in range(num_layers):
            self.layers.append(
                DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads=num_kv_heads, eps=eps, rope_base=rope_base)
            )
        self.norm = RMSNorm(dim, eps=eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight  # tie first; the init below then touches it once
        for m in self.modules():
            if isinstance(m, nn.Linear) and m is not self.lm_head:
                torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)
        torch.nn.init.normal_(self.embed.weight, mean=0.0, std=0.02)

    def forward(self, tokens, caches=None):
        if caches is None:
            caches = [None] * self.n_layers
        h = self.embed(tokens)
        for layer, cache in zip(self.layers, caches):
            h = layer(h, cache)
        return torch.einsum("bld,vd->blv", self.norm(h), self.lm_head.weight)

    def new_cache(self):
        return [KVCache() for _ in range(self.n_layers)]
