import torch
import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    predictions = logits[:, :-1, :].flatten(0, 1)
    targets = tokens[:, 1:].flatten()
    if pad_id is None:
        return F.cross_entropy(predictions, targets)
    keep = targets != pad_id
    per_token = F.cross_entropy(predictions, targets.masked_fill(~keep, 0), reduction="none")
    return torch.where(keep, per_token, torch.zeros_like(per_token)).sum() / keep.sum()


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    """lr set with dict.update, zero_grad() with its default, clipping over a list of the parameters."""
    if lr is not None:
        for group in optimizer.param_groups:
            group.update(lr=lr)
    optimizer.zero_grad()
    logits = model(tokens)
    loss = lm_loss(logits, tokens, pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(list(model.parameters()), max_grad_norm)
    optimizer.step()
    return float(loss.item())


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    hkv = num_kv_heads or num_heads
    dh = dim // num_heads
    attention = dim * dim * 2 + dim * hkv * dh * 2
    return vocab_size * dim + num_layers * (2 * dim + attention + 3 * dim * hidden_dim) + dim
