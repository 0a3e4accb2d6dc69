"""Greedy decoding: one token at a time, always the most likely."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    B = src.size(0)
    bos = torch.full((B, 1), bos_idx, dtype=torch.long, device=src.device)
    generated = bos.new_empty((B, 0))
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        ys = torch.cat([bos, generated], dim=1)
        tgt_mask = target_mask(ys, pad_idx)
        hidden = model.decode(ys, memory, tgt_mask, src_mask)
        logits = model.output_proj(hidden[:, -1])
        next_tok = logits.argmax(dim=-1)
        next_tok = torch.where(finished, torch.full_like(next_tok, pad_idx), next_tok)
        generated = torch.cat([generated, next_tok.unsqueeze(1)], dim=1)
        finished = finished | (next_tok == eos_idx)
        if finished.all():
            break
    return generated
