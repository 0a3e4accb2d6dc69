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

import torch  # noqa: F401 - for your code
from torch import nn


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
        # TODO(rope): ValueError for an odd head_dim; keep head_dim and base (no parameters).
        raise NotImplementedError("rope: RotaryEmbedding.__init__ is not implemented yet")

    def forward(self, x, offset=0):
        # TODO(rope): θ_i = base^(-2i/Dh); angles = positions (offset … offset+L-1) ⊗ θ; y = x·cos +
        #   rotate_half(x)·sin, half-split.
        raise NotImplementedError("rope: RotaryEmbedding.forward is not implemented yet")
