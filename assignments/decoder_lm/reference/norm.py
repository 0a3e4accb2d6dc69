r"""Root-mean-square layer normalisation (RMSNorm, Zhang & Sennrich 2019).

    RMSNorm(x) = x / sqrt(mean(x², last dim) + eps) · weight

Unlike LayerNorm there is no mean subtracted and no bias: only the scale of each vector is normalised.
``eps`` sits inside the square root.
"""

import torch
from torch import nn


class RMSNorm(nn.Module):
    """Scale every vector to unit root mean square, then by a learned per-feature ``weight``.

    Args:
        dim: the size D of the last dimension.
        eps: added to the mean square, inside the square root (default ``1e-6``).

    Parameter ``weight``: shape ``[D]``, starts at ones. No bias.

    ``forward(x [..., D]) -> [..., D]``, the dtype and device of ``x``.

    Hints:
        The mean of the squares runs over the last dimension only (``keepdim=True`` to broadcast back).
        Half-precision inputs overflow when squared: compute in at least ``float32`` and cast the
        result back to the input's dtype.
    """

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        compute = torch.promote_types(x.dtype, torch.float32)  # float16/bfloat16 -> float32; float64 stays
        xc = x.to(compute)
        inv_rms = torch.rsqrt(xc.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return (xc * inv_rms * self.weight.to(compute)).to(x.dtype)  # (..., D)
