"""Keep-masks from index comparisons."""

import torch


def padding_mask(tokens, pad_idx):
    b, length = tokens.shape
    return tokens.ne(pad_idx).reshape(b, 1, 1, length)


def causal_mask(size, device=None):
    rows = torch.arange(size, device=device).view(size, 1)
    cols = torch.arange(size, device=device).view(1, size)
    return (cols <= rows).view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return causal_mask(tgt.shape[1], tgt.device) & padding_mask(tgt, pad_idx)
