import torch
import torch.nn.functional as F

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    logp = F.log_softmax(logits[:, :-1].float() if logits.dtype != torch.float64 else logits[:, :-1], dim=-1)
    target = tokens[:, 1:]
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # [B, L-1]
    if pad_id is None:
        mask = torch.ones_like(nll)
    else:
        mask = (target != pad_id).to(nll.dtype)
    return ((nll * mask).sum() / mask.sum()).to(logits.dtype)


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    if lr is not None:
        for g in optimizer.param_groups:
            g["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    logits = model(tokens)
    loss = lm_loss(logits, tokens, pad_id=pad_id)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    H = num_heads
    Hkv = H if num_kv_heads is None else num_kv_heads
    Dh = dim // H
    norms = 2 * dim
    attn = dim * H * Dh + dim * Hkv * Dh * 2 + H * Dh * dim
    ffn = 3 * dim * hidden_dim
    return vocab_size * dim + num_layers * (norms + attn + ffn) + dim
