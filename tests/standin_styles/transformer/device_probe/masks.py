import torch


def padding_mask(tokens, pad_idx):
    return torch.ne(tokens, pad_idx).reshape(tokens.shape[0], 1, 1, tokens.shape[1])


def causal_mask(size, device=None):
    i = torch.arange(size, device=device)
    return torch.ge(i.view(-1, 1), i.view(1, -1)).view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return torch.logical_and(padding_mask(tgt, pad_idx), causal_mask(tgt.shape[1], device=tgt.device))
