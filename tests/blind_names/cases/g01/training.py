"""Loss, learning-rate schedule, one training step, and the parameter count."""

import torch
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    vocab = logits.size(-1)
    logp = F.log_softmax(logits.reshape(-1, vocab), dim=-1)
    tgt = targets.reshape(-1)
    keep = tgt != pad_idx
    # smoothed target distribution: confidence on the gold token, the rest spread over the others
    with torch.no_grad():
        true_dist = torch.full_like(logp, label_smoothing / (vocab - 1))
        true_dist.scatter_(1, tgt.masked_fill(~keep, 0).unsqueeze(1), 1.0 - label_smoothing)
    loss = -(true_dist * logp).sum(dim=-1)
    return loss[keep].mean()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    tgt_in = tgt[:, :-1]
    tgt_out = tgt[:, 1:]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(tgt_in, pad_idx)

    logits = model(src, tgt_in, src_mask, tgt_mask)
    loss = sequence_loss(logits, tgt_out, pad_idx, label_smoothing)

    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, F_ = d_model, d_ff
    attn = 4 * (D * D + D)
    ffn = D * F_ + F_ + F_ * D + D
    norm = 2 * D

    enc_layer = attn + ffn + 2 * norm
    dec_layer = 2 * attn + ffn + 3 * norm

    total = src_vocab_size * D + tgt_vocab_size * D              # embeddings
    total += num_layers * (enc_layer + dec_layer)
    if norm_first:
        total += 2 * norm                                          # final norms of both stacks
    total += D * tgt_vocab_size + tgt_vocab_size                   # output projection
    return total
