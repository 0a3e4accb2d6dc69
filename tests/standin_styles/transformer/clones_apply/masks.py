"""Keep-masks: True = may attend."""

import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(1).unsqueeze(2)


def causal_mask(size, device=None):
    return torch.ones(size, size, dtype=torch.bool, device=device).tril().view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(1), device=tgt.device)
