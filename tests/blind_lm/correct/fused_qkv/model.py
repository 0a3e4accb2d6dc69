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
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(
            DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads=num_kv_heads, eps=eps, rope_base=rope_base)
            for _ in range(num_layers)
        )
        self.norm = RMSNorm(dim, eps=eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        with torch.no_grad():
            for _name, p in self.named_parameters():
                if p.dim() == 2:
                    p.normal_(0.0, 0.02)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens, caches=None):
        x = self.embed(tokens)
        for i in range(len(self.layers)):
            x = self.layers[i](x, caches[i] if caches else None)
        x = self.norm(x)
        return self.lm_head(x)

    def new_cache(self):
        return [KVCache() for _ in range(len(self.layers))]
