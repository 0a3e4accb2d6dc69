"""Greedy decoding."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_idx, dtype=torch.long, device=src.device)
    done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        out = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)
        next_tok = model.output_proj(out[:, -1]).argmax(dim=-1)
        next_tok = next_tok.masked_fill(done, pad_idx)
        ys = torch.cat([ys, next_tok.unsqueeze(1)], dim=1)
        done = done | (next_tok == eos_idx)
        if bool(done.all()):
            break
    return ys
