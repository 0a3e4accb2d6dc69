import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    smask = padding_mask(src, pad_idx)
    mem = model.encode(src, smask)
    ys = src.new_full((src.size(0), 1), bos_idx, dtype=torch.long)
    alive = torch.ones(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        tok = model.output_proj(model.decode(ys, mem, target_mask(ys, pad_idx), smask)[:, -1]).argmax(-1)
        tok = torch.where(alive, tok, torch.full_like(tok, pad_idx))
        ys = torch.cat((ys, tok[:, None]), 1)
        alive &= tok != eos_idx
        if not alive.any():
            break
    return ys
