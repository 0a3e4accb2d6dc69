"""Keep-masks: True = may attend, False = blocked."""

import torch


def padding_mask(tokens, pad_idx):
    keep = tokens != pad_idx
    return keep.unsqueeze(1).unsqueeze(2)


def causal_mask(size, device=None):
    idx = torch.arange(size, device=device)
    rows = idx.unsqueeze(1)
    cols = idx.unsqueeze(0)
    mask = cols >= rows
    return mask.unsqueeze(0).unsqueeze(0)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(1), device=tgt.device)
