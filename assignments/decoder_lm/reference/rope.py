r"""Rotary position embedding (RoPE, Su et al. 2021), half-split pairing.

For a head of size Dh, coordinate i is paired with coordinate i + Dh/2 (i < Dh/2), and the pair is turned
by the angle p·θ_i at position p, with θ_i = base^(-2i/Dh):

    y[i]        = x[i] · cos(p θ_i) - x[i + Dh/2] · sin(p θ_i)
    y[i + Dh/2] = x[i] · sin(p θ_i) + x[i + Dh/2] · cos(p θ_i)

A rotation keeps norms, and rotating a query at position m and a key at position n turns their dot product
into a function of m - n only: attention sees relative positions. The paper pairs (2i, 2i + 1) instead
("interleaved"); the two differ by a fixed reordering of the coordinates. Half-split is what Llama and most
open models use, and it is written with two contiguous halves.
"""

import torch
from torch import nn


def _rotate_half(x):
    """``[x1, x2] -> [-x2, x1]`` over the last dimension: the 90° turn of every (i, i + Dh/2) pair."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class RotaryEmbedding(nn.Module):
    """Rotate each head vector by angles that grow with its position.

    Args:
        head_dim: the size Dh of a head; must be even (``ValueError`` otherwise).
        base: the wavelength base (default ``10000.0``): θ_i = base^(-2i/Dh).

    No parameters. ``forward(x [..., L, Dh], offset=0) -> [..., L, Dh]`` rotates row ``l`` (the
    second-to-last dimension) by the angles of position ``offset + l``; pairing is half-split: coordinate
    ``i`` with ``i + Dh/2``.

    Hints:
        Build the positions with ``torch.arange`` on ``x.device``, and the angles as an outer product
        positions × θ. ``offset`` is where the positions start: the length of the KV cache when decoding.
        Compute angles in at least ``float32`` (``float16`` cannot tell position 2049 from 2050).
    """

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"RoPE pairs coordinates: head_dim must be even, got head_dim={head_dim}")
        self.head_dim = head_dim
        self.base = base

    def forward(self, x, offset=0):
        L, Dh = x.shape[-2], x.shape[-1]
        compute = torch.promote_types(x.dtype, torch.float32)
        theta = self.base ** (-torch.arange(0, Dh, 2, device=x.device, dtype=compute) / Dh)  # (Dh/2,)
        positions = torch.arange(offset, offset + L, device=x.device, dtype=compute)  # (L,)
        angles = torch.outer(positions, theta)  # (L, Dh/2)
        angles = torch.cat([angles, angles], dim=-1)  # (L, Dh): pair i and i + Dh/2 share an angle
        xc = x.to(compute)
        return (xc * angles.cos() + _rotate_half(xc) * angles.sin()).to(x.dtype)  # (..., L, Dh)
