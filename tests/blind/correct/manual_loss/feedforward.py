"""Position-wise feed-forward network: linear2(dropout(act(linear1(x))))."""

from __future__ import annotations

from typing import Callable, Dict

import torch.nn.functional as F
from torch import Tensor, nn

_ACTIVATIONS: Dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1, activation: str = "relu") -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)    # D -> F
        self.linear2 = nn.Linear(d_ff, d_model)    # F -> D
        self.drop = nn.Dropout(dropout)
        self.act: Callable[[Tensor], Tensor] = _ACTIVATIONS[activation]

    def forward(self, x: Tensor) -> Tensor:        # [..., D] -> [..., D]
        h: Tensor = self.act(self.linear1(x))      # [..., F]
        return self.linear2(self.drop(h))
