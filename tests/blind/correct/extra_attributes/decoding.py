"""Greedy decoding."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    ys = torch.zeros(src.size(0), 1, dtype=torch.long, device=src.device).fill_(bos_idx)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for i in range(max_len):
        out = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)
        prob = model.output_proj(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_word.unsqueeze(1).long()], dim=1)
        finished = finished | next_word.eq(eos_idx)
        if finished.all():
            break
    return ys
