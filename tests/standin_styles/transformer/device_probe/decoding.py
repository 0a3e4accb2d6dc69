"""Greedy decoding that asks the model for its device (next(model.parameters())), switches it to eval() for
the loop and restores its training flag afterwards."""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        src = src.to(device)
        src_mask = padding_mask(src, pad_idx)
        memory = model.encode(src, src_mask)
        out = torch.full((src.shape[0], 1 + max_len), pad_idx, dtype=torch.long, device=device)
        out[:, 0] = bos_idx
        alive = torch.ones(src.shape[0], dtype=torch.bool, device=device)
        length = 1
        while length <= max_len and alive.any():
            ys = out[:, :length]
            token = model.output_proj(model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)[:, -1]).argmax(-1)
            out[:, length] = torch.where(alive, token, torch.full_like(token, pad_idx))
            alive &= out[:, length] != eos_idx
            length += 1
        return out[:, :length].clone()
    finally:
        model.train(was_training)
