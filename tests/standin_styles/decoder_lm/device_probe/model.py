"""DecoderLM: tied first, then initialised by a state_dict round trip (every entry with 2 or more dimensions
redrawn from N(0, 0.02²); the tied matrix appears under both names and is drawn twice). new_cache maps
KVCache over the layers."""

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
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList([
            DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base) for _ in range(num_layers)
        ])
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight
        state = self.state_dict()
        for name, tensor in state.items():
            if tensor.dim() >= 2:
                state[name] = torch.randn_like(tensor) * 0.02
        self.load_state_dict(state)

    def forward(self, tokens, caches=None):
        x = self.embed(tokens)
        for i in range(len(self.layers)):
            x = self.layers[i](x, None if caches is None else caches[i])
        return self.lm_head(self.norm(x))

    def new_cache(self):
        return list(map(lambda _layer: KVCache(), self.layers))
