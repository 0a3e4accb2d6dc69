"""Greedy decoding."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    device = src.device
    # computed once, reused at every step
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)

    out = torch.full((src.shape[0], 1), bos_idx, dtype=torch.long, device=device)
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=device)
    pad = torch.tensor(pad_idx, dtype=torch.long, device=device)
    for _ in range(max_len):
        dec = model.decode(out, memory, target_mask(out, pad_idx), src_mask)
        nxt = model.output_proj(dec[:, -1, :]).argmax(-1)
        nxt = torch.where(finished, pad, nxt)
        out = torch.cat((out, nxt[:, None]), dim=1)
        finished |= nxt == eos_idx
        if finished.all():
            break
    return out
