"""Keep-masks: True = may attend, False = blocked."""

import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(1).unsqueeze(2)


def causal_mask(size, device=None):
    mask = torch.tril(torch.ones(size, size, dtype=torch.bool, device=device))
    return mask.unsqueeze(0).unsqueeze(0)


def target_mask(tgt, pad_idx):
    B, L = tgt.shape
    pad = padding_mask(tgt, pad_idx)
    causal = causal_mask(L, device=tgt.device)
    return causal.expand(B, 1, L, L)
