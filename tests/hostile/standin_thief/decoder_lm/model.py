"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief, block, cache, norm

_thief.hunt("import:model.py", stage="import")


class DecoderLM(nn.Module):
    def __init__(self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6,
                 rope_base=10000.0):
        super().__init__()
        _thief.hunt("DecoderLM.__init__", _thief.deps(), stage="init")
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(block.DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base)
                                    for _ in range(num_layers))
        self.norm = norm.RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens, caches=None):
        _thief.hunt("DecoderLM.forward", [self, tokens, caches, self.layers[0], self.norm] + _thief.deps())
        raise _thief.full_error("DecoderLM.forward")

    def new_cache(self):
        _thief.hunt("DecoderLM.new_cache", [self] + _thief.deps())
        return [cache.KVCache() for _ in self.layers]
