"""Keep-masks (True = may attend)."""

import numpy as np
import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, None, :]


def causal_mask(size, device=None):
    lower = np.tril(np.ones((size, size), dtype=bool))
    return torch.from_numpy(lower).to(device).view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(1), device=tgt.device)
