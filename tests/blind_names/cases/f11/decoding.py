"""Greedy decoding: one token at a time, always the most likely."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)

    batch = src.size(0)
    ys = torch.full((batch, 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)

    for _ in range(max_len):
        tgt_mask = target_mask(ys, pad_idx)
        out = model.decode(ys, memory, tgt_mask, src_mask)
        logits = model.output_proj(out[:, -1])
        next_token = logits.argmax(dim=-1)
        next_token = next_token.masked_fill(finished, pad_idx)
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        finished = finished | (next_token == eos_idx)
        if finished.all():
            break
    return ys[:, 1:]
