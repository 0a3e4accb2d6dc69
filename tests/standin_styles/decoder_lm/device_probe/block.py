from torch import nn

from .attention import CausalSelfAttention
from .feedforward import SwiGLU
from .norm import RMSNorm


class DecoderBlock(nn.Module):
    """Checks the input width against its norm's weight (a contract attribute) before running."""

    def __init__(self, dim, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(dim, eps)
        self.attn = CausalSelfAttention(dim, num_heads, num_kv_heads=num_kv_heads, rope_base=rope_base)
        self.ffn_norm = RMSNorm(dim, eps)
        self.ffn = SwiGLU(dim, hidden_dim)

    def forward(self, x, cache=None):
        if x.shape[-1] != self.attn_norm.weight.shape[0]:
            raise ValueError(f"expected width {self.attn_norm.weight.shape[0]}, got {x.shape[-1]}")
        residual = x
        x = residual + self.attn(self.attn_norm(x), cache)
        return x + self.ffn(self.ffn_norm(x))
