import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), tokens[:, 1:].reshape(-1),
                           ignore_index=-100 if pad_id is None else pad_id)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = lm_loss(model(tokens), tokens, pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    kv_heads = num_heads if num_kv_heads is None else num_kv_heads
    head_dim = dim // num_heads
    per_layer = 2 * dim + 2 * dim * dim + 2 * dim * kv_heads * head_dim + 3 * dim * hidden_dim
    return vocab_size * dim + num_layers * per_layer + dim
