"""Greedy decoding."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    batch = src.size(0)
    ys = torch.full((batch, 1), bos_idx, dtype=torch.long, device=src.device)
    done = torch.zeros(batch, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        hidden = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)
        logits = model.output_proj(hidden[:, -1])
        next_tok = logits.argmax(dim=-1)
        next_tok = torch.where(done, torch.full_like(next_tok, pad_idx), next_tok)
        ys = torch.cat([ys, next_tok.unsqueeze(1)], dim=1)
        done = done | (next_tok == eos_idx)
        if bool(done.all()):
            break
    return ys
