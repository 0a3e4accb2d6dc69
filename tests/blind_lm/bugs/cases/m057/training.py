import torch
import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    V = logits.shape[-1]
    shifted_logits = logits[:, :-1].contiguous().view(-1, V)
    shifted_targets = tokens[:, 1:].contiguous().view(-1)
    losses = F.cross_entropy(shifted_logits, shifted_targets, reduction="none")
    if pad_id is not None:
        weights = (shifted_targets != pad_id).to(losses.dtype)
    else:
        weights = torch.ones_like(losses)
    return (losses * weights).sum() / weights.sum()


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.zero_grad()
    loss = lm_loss(model(tokens), tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    kv_heads = num_heads if num_kv_heads is None else num_kv_heads
    head_dim = dim // num_heads
    per_block = 2 * dim + 2 * dim * dim + 2 * dim * kv_heads * head_dim + 3 * dim * hidden_dim
    return 2 * vocab_size * dim + num_layers * per_block + dim
