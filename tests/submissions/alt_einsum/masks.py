"""Keep-masks (True = may attend)."""

import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, None, :]


def causal_mask(size, device=None):
    lower = torch.tril(torch.ones(size, size, device=device))
    return (lower > 0)[None, None]


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.shape[-1], device=tgt.device)
