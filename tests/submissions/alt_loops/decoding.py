"""Greedy decoding into a preallocated buffer, one column per step."""

import torch

from .masks import padding_mask, target_mask


def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    with torch.no_grad():
        batch = src.shape[0]
        src_mask = padding_mask(src, pad_idx)
        memory = model.encode(src, src_mask)
        seq = torch.full((batch, 1 + max_len), pad_idx, dtype=torch.long, device=src.device)
        seq[:, 0] = bos_idx
        finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
        length = 1
        for t in range(1, max_len + 1):
            prefix = seq[:, :t]
            hidden = model.decode(prefix, memory, target_mask(prefix, pad_idx), src_mask)
            nxt = model.output_proj(hidden[:, t - 1]).argmax(dim=-1)
            seq[:, t] = torch.where(finished, pad_idx, nxt)
            finished = finished | (seq[:, t] == eos_idx)
            length = t + 1
            if finished.all().item():
                break
        return seq[:, :length].clone()
