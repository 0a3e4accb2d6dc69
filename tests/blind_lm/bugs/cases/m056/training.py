import torch

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    pred = logits[:, :-1]
    target = tokens[:, 1:]
    logp = torch.log_softmax(pred, dim=-1)
    nll = -torch.gather(logp, -1, target.unsqueeze(-1)).squeeze(-1)  # [B, L-1]
    if pad_id is None:
        return nll.mean()
    valid = target != pad_id
    return nll[valid].sum() / valid.sum()


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for g in optimizer.param_groups:
            g["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = lm_loss(model(tokens), tokens, pad_id)
    loss.backward()
    optimizer.step()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    return loss.detach().item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    if num_kv_heads is None:
        num_kv_heads = num_heads
    head_dim = dim // num_heads
    q = dim * num_heads * head_dim
    kv = 2 * dim * num_kv_heads * head_dim
    o = num_heads * head_dim * dim
    mlp = 3 * dim * hidden_dim
    return vocab_size * dim + num_layers * (q + kv + o + mlp + 2 * dim) + dim
