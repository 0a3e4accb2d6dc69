"""The tiny assignment: fill in both tasks."""

import torch
from torch import nn


def stable_softmax(x: torch.Tensor) -> torch.Tensor:
    """Task `softmax`: the softmax of ``x`` over its last dimension.

    It must be numerically stable: inputs with entries in the thousands give finite results (subtract each row's
    maximum before exponentiating). Do not use ``torch.softmax`` or ``F.softmax``. Do not modify ``x``.
    """
    raise NotImplementedError("stable_softmax")


class Attend(nn.Module):
    """Task `attend`: one ``nn.Linear(dim, dim)`` named ``proj``; ``forward(x)`` returns
    ``stable_softmax(proj(x) @ x.transpose(-2, -1)) @ x`` for ``x`` of shape ``(..., n, dim)``."""

    def __init__(self, dim: int):
        super().__init__()
        raise NotImplementedError("Attend.__init__")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("Attend.forward")
