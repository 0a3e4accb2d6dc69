import torch


def padding_mask(tokens, pad_idx):
    return tokens.ne(pad_idx)[:, None, None, :]


def causal_mask(size, device=None):
    rows = torch.arange(size, device=device)
    return (rows[None, :] <= rows[:, None])[None, None]


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx).logical_and(causal_mask(tgt.shape[1], tgt.device))
