import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    logits = logits[:, :-1, :]
    targets = tokens[:, 1:]
    if pad_id is None:
        pad_id = -100
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=pad_id)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
    optimizer.zero_grad()
    logits = model(tokens)
    loss = lm_loss(logits, tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    if num_kv_heads is None:
        num_kv_heads = num_heads
    head_dim = dim // num_heads
    embed = vocab_size * dim
    attn = 4 * dim * (num_heads * head_dim)
    ffn = 3 * dim * hidden_dim
    norms = 2 * dim
    return embed + num_layers * (attn + ffn + norms) + dim
