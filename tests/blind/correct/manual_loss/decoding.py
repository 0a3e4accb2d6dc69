"""Greedy decoding."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model: nn.Module, src: Tensor, *, max_len: int, bos_idx: int, eos_idx: int,
                  pad_idx: int) -> Tensor:
    B: int = src.shape[0]
    src_mask = padding_mask(src, pad_idx)                                    # [B, 1, 1, Ls]
    memory = model.encode(src, src_mask)                                     # [B, Ls, D]
    out = src.new_full((B, 1), bos_idx, dtype=torch.long)                    # [B, 1]
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)          # [B]
    for _ in range(max_len):
        hidden = model.decode(out, memory, target_mask(out, pad_idx), src_mask)   # [B, t, D]
        logits = model.output_proj(hidden[:, -1, :])                         # [B, V]
        nxt = torch.where(finished, torch.full_like(finished, pad_idx, dtype=torch.long),
                          logits.argmax(dim=-1))                             # [B]
        out = torch.cat((out, nxt[:, None]), dim=1)                          # [B, t + 1]
        finished |= nxt == eos_idx
        if finished.all():
            break
    return out
