"""Keep-masks (True = may attend)."""

import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx).unsqueeze(-2).unsqueeze(-2)


def causal_mask(size, device=None):
    "Mask out subsequent positions."
    attn_shape = (1, 1, size, size)
    subsequent = torch.triu(torch.ones(attn_shape, device=device), diagonal=1).type(torch.uint8)
    return subsequent == 0


def target_mask(tgt, pad_idx):
    "Create a mask to hide padding and future words."
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(-1), device=tgt.device)
