import torch


def padding_mask(tokens, pad_idx):
    keep = tokens != pad_idx
    return keep[:, None, None, :]


def causal_mask(size, device=None):
    rows = torch.arange(size, device=device)[:, None]
    cols = torch.arange(size, device=device)[None, :]
    return (cols <= rows)[None, None]


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.shape[1], tgt.device)
