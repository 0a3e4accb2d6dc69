"""Greedy decoding as a generator: each step yields the sequence so far; the caller stops it."""

import itertools

import torch

from .masks import padding_mask, target_mask


def _steps(model, memory, src_mask, ys, *, eos_idx, pad_idx):
    finished = torch.zeros(ys.shape[0], dtype=torch.bool, device=ys.device)
    while True:
        hidden = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)
        best = model.output_proj(hidden[:, -1, :]).argmax(-1)
        best = torch.where(finished, torch.full_like(best, pad_idx), best)
        finished = finished | best.eq(eos_idx)
        ys = torch.cat((ys, best[:, None]), dim=1)
        yield ys, finished


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    ys = src.new_full((src.shape[0], 1), bos_idx)
    for ys, finished in itertools.islice(_steps(model, memory, src_mask, ys, eos_idx=eos_idx, pad_idx=pad_idx),
                                         max_len):
        if finished.all():
            break
    return ys
