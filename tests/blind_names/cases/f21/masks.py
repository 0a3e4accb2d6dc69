"""Keep-masks: True = may attend, False = blocked."""

import torch


def padding_mask(tokens, pad_idx):
    return tokens[:, None, None, :] != 0


def causal_mask(size, device=None):
    mask = torch.tril(torch.ones(size, size, dtype=torch.bool, device=device))
    return mask.unsqueeze(0).unsqueeze(0)


def target_mask(tgt, pad_idx):
    pad = padding_mask(tgt, pad_idx)
    causal = causal_mask(tgt.size(1), device=tgt.device)
    return pad & causal
