import math

import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    inputs = logits[:, :-1].flatten(0, 1)  # [B*(L-1), V]
    targets = tokens[:, 1:].flatten()
    ignore = -100 if pad_id is None else pad_id
    return F.nll_loss(F.log_softmax(inputs, dim=-1), targets, ignore_index=ignore)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for group in optimizer.param_groups:
            group.update(lr=lr)
    for p in model.parameters():
        p.grad = None
    loss = lm_loss(model(tokens), tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
    head_dim = dim // num_heads
    shapes = {
        "attn_norm": (dim,),
        "ffn_norm": (dim,),
        "q_proj": (num_heads * head_dim, dim),
        "k_proj": (num_kv_heads * head_dim, dim),
        "v_proj": (num_kv_heads * head_dim, dim),
        "o_proj": (dim, num_heads * head_dim),
        "gate_proj": (hidden_dim, dim),
        "up_proj": (hidden_dim, dim),
        "down_proj": (dim, hidden_dim),
    }
    per_layer = sum(math.prod(s) for s in shapes.values())
    return vocab_size * dim + num_layers * per_layer + dim
