import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    logits = logits[:, :-1]
    targets = tokens[:, 1:]
    kwargs = {} if pad_id is None else {"ignore_index": pad_id}
    return F.cross_entropy(logits.transpose(1, 2), targets, **kwargs)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    """Zeroes through model.zero_grad(set_to_none=True); calls lm_loss and clip_grad_norm_ by keyword."""
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = float(lr)
    model.zero_grad(set_to_none=True)
    loss = lm_loss(logits=model(tokens), tokens=tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(parameters=model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    hkv = num_heads if num_kv_heads is None else num_kv_heads
    head = dim // num_heads
    norms = 2 * dim
    attention = 2 * dim * dim + 2 * dim * hkv * head
    ffn = 3 * dim * hidden_dim
    return vocab_size * dim + num_layers * (norms + attention + ffn) + dim
