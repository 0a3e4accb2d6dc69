"""Keep-masks: True = may attend, False = blocked."""

import torch


def padding_mask(tokens, pad_idx):
    batch, length = tokens.shape
    return tokens.ne(pad_idx).view(batch, 1, 1, length)


def causal_mask(size, device=None):
    mask = torch.tril(torch.ones(size, size, dtype=torch.bool, device=device))
    return mask.unsqueeze(0).unsqueeze(0)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(1), device=tgt.device)
