"""Keep-masks: True = may attend, False = blocked."""

from __future__ import annotations

from typing import Optional, Union

import torch
from torch import Tensor


def padding_mask(tokens: Tensor, pad_idx: int) -> Tensor:
    # tokens [B, L] -> [B, 1, 1, L]
    return (tokens != pad_idx)[:, None, None, :]


def causal_mask(size: int, device: Optional[Union[torch.device, str]] = None) -> Tensor:
    # [1, 1, L, L], True on and below the diagonal
    future = torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)
    return (~future)[None, None]


def target_mask(tgt: Tensor, pad_idx: int) -> Tensor:
    # tgt [B, L] -> [B, 1, L, L]
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.shape[1], tgt.device)
