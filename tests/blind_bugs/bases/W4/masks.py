import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, None, :]


def causal_mask(size, device=None):
    m = torch.ones(size, size, dtype=torch.bool, device=device).tril()
    return m.view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.size(1), device=tgt.device)
