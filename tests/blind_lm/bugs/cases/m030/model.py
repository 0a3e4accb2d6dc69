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
        self.layers = nn.ModuleList(
            DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base) for _ in range(num_layers)
        )
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight") or name == "embed.weight":
                nn.init.normal_(p, 0.0, 0.02)
        nn.init.normal_(self.lm_head.weight, 0.0, 0.02)

    def forward(self, tokens, caches=None):
        x = self.embed(tokens)
        for idx, layer in enumerate(self.layers):
            x = layer(x, None if caches is None else caches[idx])
        return F.linear(self.norm(x), self.lm_head.weight)

    def new_cache(self):
        return [KVCache() for _ in range(len(self.layers))]
