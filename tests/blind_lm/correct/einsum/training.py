import torch
import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    B, L, V = logits.shape
    targets = tokens[:, 1:]
    per_token = F.cross_entropy(logits[:, :-1].reshape(B * (L - 1), V), targets.reshape(-1), reduction="none")
    if pad_id is None:
        return per_token.mean()
    keep = (targets.reshape(-1) != pad_id).to(per_token.dtype)
    return torch.sum(per_token * keep) / torch.sum(keep)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.zero_grad()
    logits = model(tokens)
    loss = lm_loss(logits, tokens, pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.item())


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    Hkv = num_kv_heads if num_kv_heads is not None else num_heads
    Dh = dim // num_heads
    attention = 2 * dim * dim + 2 * dim * Hkv * Dh
    mlp = 3 * dim * hidden_dim
    norms = 2 * dim
    return vocab_size * dim + num_layers * (attention + mlp + norms) + dim
