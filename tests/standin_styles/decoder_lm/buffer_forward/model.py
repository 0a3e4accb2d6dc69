"""DecoderLM: layers from a generator expression; N(0, 0.02²) for every matrix found by named_parameters();
the tie by assignment afterwards; logits by F.linear on the embedding matrix itself (the head's weight)."""

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
        self.layers = nn.ModuleList(DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base)
                                    for _ in range(num_layers))
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        for _name, param in self.named_parameters():
            if param.dim() >= 2:
                nn.init.normal_(param, mean=0.0, std=0.02)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens, caches=None):
        x = self.embed.forward(tokens)
        per_layer = caches if caches is not None else [None] * len(self.layers)
        for layer, cache in zip(self.layers, per_layer):
            x = layer.forward(x, cache)
        return F.linear(self.norm.forward(x), self.embed.weight)

    def new_cache(self):
        return [KVCache() for _ in range(len(self.layers))]
