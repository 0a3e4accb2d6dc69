from torch import nn

from .attention import CausalSelfAttention
from .feedforward import SwiGLU
from .norm import RMSNorm


class DecoderBlock(nn.Module):
    """Calls each part's forward() directly, positionally."""

    def __init__(self, dim, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(dim, eps)
        self.attn = CausalSelfAttention(dim, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(dim, eps)
        self.ffn = SwiGLU(dim, hidden_dim)

    def forward(self, x, cache=None):
        h = x + self.attn.forward(self.attn_norm.forward(x), cache)
        return h + self.ffn.forward(self.ffn_norm.forward(h))
