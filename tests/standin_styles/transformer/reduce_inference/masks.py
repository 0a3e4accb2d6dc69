import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx).view(tokens.size(0), 1, 1, tokens.size(1))


def causal_mask(size, device=None):
    return ~torch.triu(torch.ones(1, 1, size, size, dtype=torch.bool, device=device), diagonal=1)


def target_mask(tgt, pad_idx):
    return causal_mask(tgt.size(-1), device=tgt.device) & padding_mask(tgt, pad_idx)
