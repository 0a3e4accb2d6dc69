"""Keep-masks: True = may attend, False = blocked."""

from functools import lru_cache

import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, None, :]


@lru_cache(maxsize=64)
def _cached_causal(size, device):
    # built once per (size, device); callers only read it (never modified in place)
    return torch.tril(torch.ones(size, size, dtype=torch.bool, device=device))[None, None]


def causal_mask(size, device=None):
    if device is not None:
        device = torch.device(device)
    return _cached_causal(int(size), device)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.shape[1], tgt.device)
