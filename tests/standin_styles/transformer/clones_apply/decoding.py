"""Greedy decoding through model.encode / model.decode / model.output_proj, inside torch.no_grad()."""

import torch

from .masks import padding_mask, target_mask


def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    with torch.no_grad():
        src_mask = padding_mask(src, pad_idx)
        memory = model.encode(src, src_mask=src_mask)
        ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            hidden = model.decode(ys, memory, tgt_mask=target_mask(ys, pad_idx), memory_mask=src_mask)
            next_token = model.output_proj(hidden[:, -1]).argmax(dim=-1)
            next_token = next_token.masked_fill(finished, pad_idx)
            ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
            finished = finished | (next_token == eos_idx)
            if bool(finished.all()):
                break
    return ys
