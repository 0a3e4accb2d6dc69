r"""The SwiGLU feed-forward network (Shazeer 2020, "GLU Variants Improve Transformer").

    SwiGLU(x) = W_down (silu(W_gate x) ⊙ W_up x),   silu(a) = a · sigmoid(a)

A gated linear unit: one projection (``up``) carries the content, the other (``gate``), through SiLU,
decides how much of each hidden feature passes. Three matrices instead of two, no biases (as in Llama).
"""

import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    """The gated feed-forward block of Llama-style models.

    Args:
        dim: model width D.
        hidden_dim: hidden width F, used as given.

    Parameters, all ``nn.Linear`` without bias: ``gate_proj`` (D -> F), ``up_proj`` (D -> F),
    ``down_proj`` (F -> D).

    ``forward(x [..., D]) -> [..., D]`` = ``down_proj(silu(gate_proj(x)) * up_proj(x))``.

    Hints:
        The SiLU goes on the gate only; the product is element-wise.
    """

    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))  # (..., F) -> (..., D)
