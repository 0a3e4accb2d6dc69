"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

from torch import nn

from . import _thief, attention, feedforward, norm

_thief.hunt("import:block.py", stage="import")


class DecoderBlock(nn.Module):
    def __init__(self, dim, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0):
        super().__init__()
        _thief.hunt("DecoderBlock.__init__", _thief.deps(), stage="init")
        self.attn_norm = norm.RMSNorm(dim, eps)
        self.attn = attention.CausalSelfAttention(dim, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = norm.RMSNorm(dim, eps)
        self.ffn = feedforward.SwiGLU(dim, hidden_dim)

    def forward(self, x, cache=None):
        _thief.hunt("DecoderBlock.forward", [self, x, cache, self.attn, self.ffn, self.attn_norm] + _thief.deps())
        for part in (self.attn_norm, self.ffn):
            _thief.call_part("DecoderBlock.part-out", part, x)
        raise _thief.full_error("DecoderBlock.forward")
