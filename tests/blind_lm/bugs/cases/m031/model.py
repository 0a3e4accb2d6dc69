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
        self.config = dict(vocab_size=vocab_size, dim=dim, num_layers=num_layers)
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base))
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.reset_parameters()
        self.lm_head.weight = self.embed.weight

    @torch.no_grad()
    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.normal_(mean=0.0, std=0.02)

    def forward(self, tokens, caches=None):
        hidden = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            hidden = layer(hidden, caches[i] if caches is not None else None)
        return self.lm_head(hidden)

    def new_cache(self):
        return [KVCache() for _ in range(self.config["num_layers"])]
