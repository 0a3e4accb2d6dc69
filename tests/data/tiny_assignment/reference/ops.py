"""Reference for the tiny assignment."""

import torch
from torch import nn


def stable_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, numerically stable."""
    shifted = x - x.max(dim=-1, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


class Attend(nn.Module):
    """``stable_softmax(proj(x) @ x^T) @ x``."""

    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return stable_softmax(self.proj(x) @ x.transpose(-2, -1)) @ x
