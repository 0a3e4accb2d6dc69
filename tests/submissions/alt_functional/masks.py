import torch


def padding_mask(tokens, pad_idx):
    return tokens.ne(pad_idx)[:, None, None]


def causal_mask(size, device=None):
    return torch.ones(1, 1, size, size, dtype=torch.bool, device=device).tril_()


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx).logical_and(causal_mask(tgt.size(1), tgt.device))
