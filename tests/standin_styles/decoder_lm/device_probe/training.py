import torch
import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    V = logits.size(-1)
    pred = logits.narrow(1, 0, logits.size(1) - 1).reshape(-1, V)
    gold = tokens.narrow(1, 1, tokens.size(1) - 1).reshape(-1)
    logp = torch.log_softmax(pred.to(torch.promote_types(pred.dtype, torch.float32)), dim=-1)
    nll = -logp.gather(1, gold.unsqueeze(1)).squeeze(1)
    if pad_id is None:
        return nll.mean().to(logits.dtype)
    keep = gold != pad_id
    return (nll[keep].sum() / keep.sum()).to(logits.dtype)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    """Moves the batch to the model's device; clips a generator of the trainable parameters."""
    tokens = tokens.to(next(model.parameters()).device)
    if lr is not None:
        for i in range(len(optimizer.param_groups)):
            optimizer.param_groups[i]["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = lm_loss(model(tokens), tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_((p for p in model.parameters() if p.requires_grad), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    head_dim = dim // num_heads
    kv_width = (num_kv_heads if num_kv_heads is not None else num_heads) * head_dim
    block = (2 * dim) + (dim * dim) * 2 + (dim * kv_width) * 2 + 3 * dim * hidden_dim
    return vocab_size * dim + block * num_layers + dim
