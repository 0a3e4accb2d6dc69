r"""The pre-norm decoder block.

    h   = x + Attention(RMSNorm(x))
    out = h + SwiGLU(RMSNorm(h))

Pre-norm (the norm inside the residual branch, as in GPT-2 and Llama) leaves the residual stream an
identity path from the embeddings to the last layer, which is what lets deep stacks train without warm-up
tricks; the model then needs one final norm after the last block.
"""

from torch import nn

from .attention import CausalSelfAttention
from .feedforward import SwiGLU
from .norm import RMSNorm


class DecoderBlock(nn.Module):
    """Causal self-attention and a SwiGLU feed-forward, each in a pre-norm residual branch.

    Args:
        dim: model width D.
        num_heads: query heads H.
        hidden_dim: SwiGLU's hidden width F.
        num_kv_heads: key/value heads (default ``None``: H).
        eps: both RMSNorms' ``eps``.
        rope_base: RoPE's ``base``.

    Submodules ``attn_norm`` (RMSNorm), ``attn`` (CausalSelfAttention), ``ffn_norm`` (RMSNorm),
    ``ffn`` (SwiGLU).

    ``forward(x [B, L, D], cache=None) -> [B, L, D]``: ``h = x + attn(attn_norm(x), cache)``, then
    ``h + ffn(ffn_norm(h))``. ``cache`` is this layer's ``KVCache`` (or ``None``).

    Hints:
        The residual adds the un-normalised ``x``: only the branch's input is normalised.
    """

    def __init__(self, dim, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(dim, eps)
        self.attn = CausalSelfAttention(dim, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(dim, eps)
        self.ffn = SwiGLU(dim, hidden_dim)

    def forward(self, x, cache=None):
        h = x + self.attn(self.attn_norm(x), cache)  # (B, L, D)
        return h + self.ffn(self.ffn_norm(h))  # (B, L, D)
