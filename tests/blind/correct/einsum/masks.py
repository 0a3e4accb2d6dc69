import torch


def padding_mask(tokens, pad_idx):
    return (tokens != pad_idx)[:, None, None, :]


def causal_mask(size, device=None):
    idx = torch.arange(size, device=device)
    return (idx[None, :] <= idx[:, None])[None, None]


def target_mask(tgt, pad_idx):
    return padding_mask(tgt, pad_idx) & causal_mask(tgt.shape[1], tgt.device)
