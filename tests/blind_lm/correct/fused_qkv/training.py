import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    V = logits.size(-1)
    targets = tokens[:, 1:].reshape(-1)
    flat = logits[:, :-1].reshape(-1, V)
    if pad_id is None:
        return F.cross_entropy(flat, targets, reduction="mean")
    total = F.cross_entropy(flat, targets, ignore_index=pad_id, reduction="sum")
    count = (targets != pad_id).sum()
    return total / count


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    for group in optimizer.param_groups:
        if lr is not None:
            group["lr"] = lr
    model.zero_grad()
    optimizer.zero_grad()
    loss = lm_loss(model(tokens), tokens, pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    kv = num_kv_heads or num_heads
    head = dim // num_heads
    block = 2 * dim + 2 * dim**2 + 2 * dim * kv * head + 3 * dim * hidden_dim
    return int(vocab_size * dim + num_layers * block + dim)
